/// @file resident_em_kofl.cpp
/// @brief Host side of the resident eM-KOFL program (resident_em_kofl.h): the state arena.
#include "families/federated/resident_em_kofl.h"

namespace omkl::detail {

EmKoflStateData::EmKoflStateData(const EmKoflTables& tables, std::size_t n_replicates) {
  const std::size_t R = n_replicates, N = tables.N, K = tables.K;
  ByteArena arena;
  server_stream_ = arena.reserve<StreamPosition>(R);
  log_w_ = arena.reserve<double>(R * N);
  round_loss_ = arena.reserve<double>(R * N);
  kernel_loss_ = arena.reserve<double>(R * K * N);
  scratch_ = arena.reserve<double>(R * N);
  sampled_ = arena.reserve<std::uint32_t>(R);
  opening_ = arena.reserve<std::uint8_t>(R);
  bytes_.assign(arena.words(), 0);
}

EmKoflStates EmKoflStateData::view(void* base) const {
  EmKoflStates s;
  s.server_stream = ByteArena::at<StreamPosition>(base, server_stream_);
  s.log_w = ByteArena::at<double>(base, log_w_);
  s.round_loss = ByteArena::at<double>(base, round_loss_);
  s.kernel_loss = ByteArena::at<double>(base, kernel_loss_);
  s.scratch = ByteArena::at<double>(base, scratch_);
  s.sampled = ByteArena::at<std::uint32_t>(base, sampled_);
  s.opening = ByteArena::at<std::uint8_t>(base, opening_);
  return s;
}

}  // namespace omkl::detail
