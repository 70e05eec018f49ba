/// @file resident_federation.cpp
/// @brief Host side of the resident federation program (resident_federation.h): the state arena.
#include "families/federated/resident_federation.h"

namespace omkl::detail {

FederationStateData::FederationStateData(const FederationTables& c, std::size_t n_replicates) {
  const std::size_t R = n_replicates, N = c.N, K = c.K;
  const std::size_t weights = c.head == 0 ? K * N : c.head == 1 ? N : 0;
  ByteArena arena;
  log_w_ = arena.reserve<double>(R * weights);
  round_loss_ = arena.reserve<double>(c.head == 1 ? R * N : 0);
  kernel_loss_ = arena.reserve<double>(R * K * N);
  norm2_ = arena.reserve<double>(R * N);
  f_ = arena.reserve<double>(R * K * N);
  losses_ = arena.reserve<double>(R * K * N);
  chosen_ = arena.reserve<std::uint8_t>(R * K * N);
  a_ = arena.reserve<double>(R * K * N);
  b_ = arena.reserve<double>(R * K * N);
  ranking_ = arena.reserve<std::uint32_t>(R * K * N);
  q_ = arena.reserve<double>(R * K * c.n_bins);
  bin_ = arena.reserve<std::uint32_t>(R * K);
  probability_ = arena.reserve<double>(R * K);
  n_chosen_ = arena.reserve<std::uint32_t>(R * K);
  updates_ = arena.reserve<RoundUpdate>(R * N * K);
  n_updates_ = arena.reserve<std::uint32_t>(R * N);
  chosen_total_ = arena.reserve<double>(R);
  chosen_max_ = arena.reserve<double>(R);
  bytes_.assign(arena.words(), 0);
}

FederationStates FederationStateData::view(void* base) const {
  FederationStates s;
  s.log_w = ByteArena::at<double>(base, log_w_);
  s.round_loss = ByteArena::at<double>(base, round_loss_);
  s.kernel_loss = ByteArena::at<double>(base, kernel_loss_);
  s.norm2 = ByteArena::at<double>(base, norm2_);
  s.f = ByteArena::at<double>(base, f_);
  s.losses = ByteArena::at<double>(base, losses_);
  s.chosen = ByteArena::at<std::uint8_t>(base, chosen_);
  s.a = ByteArena::at<double>(base, a_);
  s.b = ByteArena::at<double>(base, b_);
  s.ranking = ByteArena::at<std::uint32_t>(base, ranking_);
  s.q = ByteArena::at<double>(base, q_);
  s.bin = ByteArena::at<std::uint32_t>(base, bin_);
  s.probability = ByteArena::at<double>(base, probability_);
  s.n_chosen = ByteArena::at<std::uint32_t>(base, n_chosen_);
  s.updates = ByteArena::at<RoundUpdate>(base, updates_);
  s.n_updates = ByteArena::at<std::uint32_t>(base, n_updates_);
  s.chosen_total = ByteArena::at<double>(base, chosen_total_);
  s.chosen_max = ByteArena::at<double>(base, chosen_max_);
  return s;
}

}  // namespace omkl::detail
