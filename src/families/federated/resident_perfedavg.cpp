/// @file resident_perfedavg.cpp
/// @brief Host side of the resident PerFedAvg program (resident_perfedavg.h): the state arena.
#include "families/federated/resident_perfedavg.h"

namespace omkl::detail {

PerFedAvgStateData::PerFedAvgStateData(const PerFedAvgTables& tables, std::size_t n_replicates) {
  const std::size_t R = n_replicates, P = tables.net.n_params, K = tables.K, d = tables.d;
  ByteArena arena;
  model_ = arena.reserve<double>(R * P);
  round_sum_ = arena.reserve<double>(R * P);
  adapted_ = arena.reserve<double>(R * P);
  grad_ = arena.reserve<double>(R * P);
  acts_ = arena.reserve<double>(R * tables.net.activations);
  deltas_ = arena.reserve<double>(R * 2 * tables.net.widest);
  previous_x_ = arena.reserve<double>(R * K * d);
  previous_y_ = arena.reserve<double>(R * K);
  has_previous_ = arena.reserve<std::uint8_t>(R * K);
  y_ = arena.reserve<double>(R);
  client_ = arena.reserve<std::uint32_t>(R);
  bytes_.assign(arena.words(), 0);
}

PerFedAvgStates PerFedAvgStateData::view(void* base) const {
  PerFedAvgStates s;
  s.model = ByteArena::at<double>(base, model_);
  s.round_sum = ByteArena::at<double>(base, round_sum_);
  s.adapted = ByteArena::at<double>(base, adapted_);
  s.grad = ByteArena::at<double>(base, grad_);
  s.acts = ByteArena::at<double>(base, acts_);
  s.deltas = ByteArena::at<double>(base, deltas_);
  s.previous_x = ByteArena::at<double>(base, previous_x_);
  s.previous_y = ByteArena::at<double>(base, previous_y_);
  s.has_previous = ByteArena::at<std::uint8_t>(base, has_previous_);
  s.y = ByteArena::at<double>(base, y_);
  s.client = ByteArena::at<std::uint32_t>(base, client_);
  return s;
}

}  // namespace omkl::detail
