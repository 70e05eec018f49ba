/// @file resident_support.h
/// @brief The kernelized bandit algorithms (OKS, OKS++, IOKS on kernel expansions; spec/bandit.md
/// §2.1) as a device-resident program: the rule of resident_bandit.h's BanditProgram, with the
/// drawn kernel's hypothesis f_I(x) = s_I Σ_j α̂_j κ_I(x_j, x) evaluated over its support set by
/// the program itself (the walk's OwnsFeatures seam: the whole thread block sums the set on the
/// GPU) and KernelHypotheses::update()'s step — append x with α̂ = step/s_I, the norm recursion
/// and the ball projection on the lazy scale, its fold into the coefficients — in learn() and
/// pair_update().
///
/// Storage (SupportLayout): per repetition a pool of rows, one per round (every round appends x
/// to the drawn kernel's set), and per (repetition, kernel) the pool indices of its entries and
/// their coefficients α̂. The pool is persistent across walks (host memory for the host driver,
/// device memory on the GPU); the counters (entries, s_i, ‖f_i‖, rows used) travel with the
/// rule's state in BanditStateData. The host path's KernelHypotheses is brought up to date from
/// the pool when it is read (checkpoints, predict()): the rows and entries appended since, and
/// the coefficients of a kernel whose scale was folded.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/host_device.h"
#include "core/resident_walk.h"
#include "families/bandit/expansion_step.h"
#include "families/bandit/resident_bandit.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

/// The code of a dictionary kernel in SupportTables::family (support_kernel_value()'s).
inline int support_family(const KernelSpec& kernel) {
  switch (kernel.family) {
    case KernelFamily::Gaussian: return 0;
    case KernelFamily::Laplacian: return 1;
    case KernelFamily::IsotropicLaplacian: return 3;
    default: return 2;  // Cauchy: the bandit family takes only shift-invariant kernels
  }
}

/// κ_i of the dictionary as the walk evaluates it (support_family()): 0 Gaussian
/// exp(−‖a − x‖²/(2σ²)), with the distance from the norms as the host's kernel_rows() forms it;
/// 1 Laplacian exp(−‖a − x‖₁/σ); 2 Cauchy Π_c 1/(1 + ((a_c − x_c)/σ)²); 3 isotropic Laplacian
/// exp(−‖a − x‖₂/σ), the Gaussian's distance under a square root.
template <typename Real>
OMKL_HD double support_kernel_value(int family, double sigma, const double* row, double row_norm2, const Real* x,
                                    double x_norm2, std::size_t d) {
  if (family == 0 || family == 3) {
    double dot = 0.0;
    for (std::size_t c = 0; c < d; ++c) dot += row[c] * static_cast<double>(x[c]);
    double dist = (row_norm2 + x_norm2) - 2.0 * dot;
    if (dist < 0.0) dist = 0.0;
    return family == 0 ? std::exp(-dist / (2.0 * sigma * sigma)) : std::exp(-std::sqrt(dist) / sigma);
  }
  if (family == 1) {
    double l1 = 0.0;
    for (std::size_t c = 0; c < d; ++c) l1 += std::fabs(row[c] - static_cast<double>(x[c]));
    return std::exp(-l1 / sigma);
  }
  double p = 1.0;
  for (std::size_t c = 0; c < d; ++c) {
    const double r = (row[c] - static_cast<double>(x[c])) / sigma;
    p *= 1.0 / (1.0 + r * r);
  }
  return p;
}

/// What every repetition shares: the kernels, the pool's shape and the projection.
struct SupportTables {
  std::uint32_t K = 0, d = 0;
  std::uint64_t capacity = 0;  ///< pool rows (and entries of one kernel) per repetition
  int ball = 0;                ///< project onto ‖f‖ ≤ U (OKS++, IOKS); OKS does not
  double U = 1.0;
  int family[kMaxResidentPairs] = {};
  double sigma[kMaxResidentPairs] = {};
};

/// The persistent arrays: rows R × capacity × d, their squared norms R × capacity, and per
/// (repetition, kernel) capacity entries of pool index and coefficient α̂.
struct SupportArrays {
  double* rows = nullptr;
  double* row_norm2 = nullptr;
  std::uint64_t* index = nullptr;
  double* coef = nullptr;
};

/// Where SupportArrays lie in one block of 64-bit words.
class SupportLayout {
 public:
  SupportLayout() = default;
  SupportLayout(const SupportTables& tables, std::size_t n_replicates);
  SupportArrays view(void* base) const;
  std::size_t words() const { return words_; }
  std::size_t rows_offset(std::size_t r, std::size_t row) const { return rows_ + (r * capacity_ + row) * d_ * 8; }
  std::size_t norm2_offset(std::size_t r, std::size_t row) const { return norm2_ + (r * capacity_ + row) * 8; }
  std::size_t index_offset(std::size_t r, std::size_t k, std::size_t j) const {
    return index_ + ((r * K_ + k) * capacity_ + j) * 8;
  }
  std::size_t coef_offset(std::size_t r, std::size_t k, std::size_t j) const {
    return coef_ + ((r * K_ + k) * capacity_ + j) * 8;
  }

 private:
  std::size_t K_ = 0, d_ = 0, capacity_ = 0, words_ = 0;
  std::size_t rows_ = 0, norm2_ = 0, index_ = 0, coef_ = 0;
};

template <typename Philox>
struct KernelBanditProgram {
  static constexpr bool kOwnFeatures = true;
  BanditProgram<Philox> bandit;  ///< the rule's draw and observation (and the state)
  SupportTables k;
  SupportArrays a;

  OMKL_HD std::size_t plan(std::size_t r, std::int64_t t, ResidentPair* pairs) { return bandit.plan(r, t, pairs); }

  /// The lane's share of Σ_j α̂_j κ_I(x_j, x) over the drawn kernel's entries (unscaled: learn()
  /// applies s_I, as KernelHypotheses does after its sum).
  template <typename Real>
  OMKL_HD void pair_features(std::size_t r, const ResidentPair& pair, const Real* x, unsigned lane, unsigned n_lanes,
                             double& f, double& norm2) const {
    const std::size_t K = k.K, d = k.d, cap = k.capacity, I = pair.kernel;
    const std::size_t n = bandit.states.count[r * K + I];
    double x_norm2 = 0.0;
    if (k.family[I] == 0 || k.family[I] == 3)  // the distance from the norms
      for (std::size_t c = 0; c < d; ++c) x_norm2 += static_cast<double>(x[c]) * static_cast<double>(x[c]);
    const std::uint64_t* index = a.index + (r * K + I) * cap;
    const double* coef = a.coef + (r * K + I) * cap;
    double sum = 0.0;
    for (std::size_t j = lane; j < n; j += n_lanes) {
      const std::size_t row = static_cast<std::size_t>(index[j]);
      sum += coef[j] * support_kernel_value(k.family[I], k.sigma[I], a.rows + (r * cap + row) * d,
                                            a.row_norm2[r * cap + row], x, x_norm2, d);
    }
    f = sum;
    norm2 = 0.0;
  }

  /// The observation and KernelHypotheses::update() with step −λ·ℓ'/p_I: the new entry (its row
  /// is written by pair_update()), the norm recursion ‖f + a·κ(x,·)‖² = ‖f‖² + 2a·F + a², the
  /// projection onto the ball by the lazy scale, and a fold when the scale nears underflow.
  OMKL_HD double learn(std::size_t r, std::int64_t t, double y, const double* f, const double* norm2,
                       ResidentPair* pairs) {
    (void)t;
    (void)norm2;
    const std::size_t K = k.K, cap = k.capacity, I = bandit.states.drawn[r], rk = r * K + I;
    BanditStates& s = bandit.states;
    const double F = s.scale[rk] * f[0];
    double derivative = 0.0, pI = 1.0;
    const double lambda = bandit.observe(r, F, y, derivative, pI);
    const double step = -lambda * derivative / pI;
    const std::uint64_t row = s.used[r]++;
    const std::size_t j = s.count[rk]++;
    a.index[rk * cap + j] = row;
    a.coef[rk * cap + j] = step / s.scale[rk];
    double fold = 1.0;
    const bool folds = k.ball && expansion_ball_step(s.scale[rk], s.norm[rk], step, F, k.U, fold);
    if (folds) s.folded[rk] = 1;
    s.fold_now[r] = folds ? 1 : 0;
    s.fold[r] = fold;
    pairs[0].rate = 0.0;  // no random-feature update
    return F;
  }

  /// x into the pool row of this round's entry, its squared norm, and a fold's factor over the
  /// kernel's coefficients.
  template <typename Real>
  OMKL_HD void pair_update(std::size_t r, const ResidentPair& pair, const Real* x, unsigned lane,
                           unsigned n_lanes) {
    const std::size_t K = k.K, d = k.d, cap = k.capacity, rk = r * K + pair.kernel;
    const BanditStates& s = bandit.states;
    const std::size_t row = static_cast<std::size_t>(s.used[r] - 1);
    double* dst = a.rows + (r * cap + row) * d;
    for (std::size_t c = lane; c < d; c += n_lanes) dst[c] = static_cast<double>(x[c]);
    if (lane == 0) {
      double n2 = 0.0;
      for (std::size_t c = 0; c < d; ++c) n2 += static_cast<double>(x[c]) * static_cast<double>(x[c]);
      a.row_norm2[r * cap + row] = n2;
    }
    if (s.fold_now[r]) {
      double* coef = a.coef + rk * cap;
      for (std::size_t j = lane; j < s.count[rk]; j += n_lanes) coef[j] *= s.fold[r];
    }
  }
};

/// The program on the GPU (resident_bandit.cu; in a build without CUDA src/cuda/no_cuda.cpp's, whose
/// constructor throws): the pool in device memory on a stream of its own, the rule's state and
/// counters uploaded and read back around each walk.
class KernelBanditDeviceWalk {
 public:
  /// Its stream from `contexts` where given, else its own.
  explicit KernelBanditDeviceWalk(DeviceContexts* contexts);
  ~KernelBanditDeviceWalk();
  KernelBanditDeviceWalk(const KernelBanditDeviceWalk&) = delete;
  KernelBanditDeviceWalk& operator=(const KernelBanditDeviceWalk&) = delete;
  /// Replaces the pool with these words.
  void upload(const std::vector<std::uint64_t>& words);
  /// `bytes` bytes of the pool from `offset` into dst.
  void read(std::size_t offset, std::size_t bytes, void* dst) const;
  void walk(const BanditTables& bandit, const SupportTables& tables, const SupportLayout& layout,
            BanditStateData& state, const ResidentWalkArgs<double>& shape, const double* x, const double* y,
            double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace omkl::detail
