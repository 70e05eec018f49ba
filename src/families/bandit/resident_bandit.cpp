/// @file resident_bandit.cpp
/// @brief Host side of the resident bandit program (resident_bandit.h): the state arena.
#include "families/bandit/resident_bandit.h"

namespace omkl::detail {

BanditStateData::BanditStateData(std::size_t n_kernels, std::size_t n_replicates) : K_(n_kernels), R_(n_replicates) {
  const std::size_t R = R_, K = K_;
  ByteArena a;
  rng_ = a.reserve<StreamPosition>(R);
  p_ = a.reserve<double>(R * K);
  q_ = a.reserve<double>(R * K);
  sums_ = a.reserve<double>(R * K);
  eta_ = a.reserve<double>(R * K);
  rho_ = a.reserve<double>(R * K);
  C_ = a.reserve<double>(R);
  V_ = a.reserve<double>(R);
  scratch_ = a.reserve<double>(R * 2 * K);
  selected_ = a.reserve<double>(R * K);
  kernel_loss_ = a.reserve<double>(R * K);
  drawn_ = a.reserve<std::uint32_t>(R);
  failed_ = a.reserve<std::uint8_t>(R);
  bytes_.assign(a.words(), 0);
}

BanditStates BanditStateData::view(void* base) const {
  BanditStates s;
  s.rng = ByteArena::at<StreamPosition>(base, rng_);
  s.p = ByteArena::at<double>(base, p_);
  s.q = ByteArena::at<double>(base, q_);
  s.sums = ByteArena::at<double>(base, sums_);
  s.eta = ByteArena::at<double>(base, eta_);
  s.rho = ByteArena::at<double>(base, rho_);
  s.C = ByteArena::at<double>(base, C_);
  s.V = ByteArena::at<double>(base, V_);
  s.scratch = ByteArena::at<double>(base, scratch_);
  s.selected = ByteArena::at<double>(base, selected_);
  s.kernel_loss = ByteArena::at<double>(base, kernel_loss_);
  s.drawn = ByteArena::at<std::uint32_t>(base, drawn_);
  s.failed = ByteArena::at<std::uint8_t>(base, failed_);
  return s;
}

}  // namespace omkl::detail
