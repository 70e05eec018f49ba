/// @file resident_bandit.cpp
/// @brief Host side of the resident bandit programs (resident_bandit.h, resident_support.h): the
/// state arena and the support pool's layout.
#include "families/bandit/resident_bandit.h"
#include "families/bandit/resident_support.h"

namespace omkl::detail {

BanditStateData::BanditStateData(std::size_t n_kernels, std::size_t n_replicates, bool expansions)
    : K_(n_kernels), R_(n_replicates), expansions_(expansions) {
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
  kernel_mistakes_ = a.reserve<double>(R * K);
  drawn_ = a.reserve<std::uint32_t>(R);
  failed_ = a.reserve<std::uint8_t>(R);
  if (expansions) {
    count_ = a.reserve<std::uint32_t>(R * K);
    scale_ = a.reserve<double>(R * K);
    norm_ = a.reserve<double>(R * K);
    folded_ = a.reserve<std::uint8_t>(R * K);
    used_ = a.reserve<std::uint64_t>(R);
    fold_ = a.reserve<double>(R);
    fold_now_ = a.reserve<std::uint8_t>(R);
  }
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
  s.kernel_mistakes = ByteArena::at<double>(base, kernel_mistakes_);
  s.drawn = ByteArena::at<std::uint32_t>(base, drawn_);
  s.failed = ByteArena::at<std::uint8_t>(base, failed_);
  if (expansions_) {
    s.count = ByteArena::at<std::uint32_t>(base, count_);
    s.scale = ByteArena::at<double>(base, scale_);
    s.norm = ByteArena::at<double>(base, norm_);
    s.folded = ByteArena::at<std::uint8_t>(base, folded_);
    s.used = ByteArena::at<std::uint64_t>(base, used_);
    s.fold = ByteArena::at<double>(base, fold_);
    s.fold_now = ByteArena::at<std::uint8_t>(base, fold_now_);
  }
  return s;
}

SupportLayout::SupportLayout(const SupportTables& tables, std::size_t n_replicates)
    : K_(tables.K), d_(tables.d), capacity_(static_cast<std::size_t>(tables.capacity)) {
  const std::size_t R = n_replicates;
  ByteArena a;
  rows_ = a.reserve<double>(R * capacity_ * d_);
  norm2_ = a.reserve<double>(R * capacity_);
  index_ = a.reserve<std::uint64_t>(R * K_ * capacity_);
  coef_ = a.reserve<double>(R * K_ * capacity_);
  words_ = a.words();
}

SupportArrays SupportLayout::view(void* base) const {
  SupportArrays s;
  s.rows = ByteArena::at<double>(base, rows_);
  s.row_norm2 = ByteArena::at<double>(base, norm2_);
  s.index = ByteArena::at<std::uint64_t>(base, index_);
  s.coef = ByteArena::at<double>(base, coef_);
  return s;
}

}  // namespace omkl::detail
