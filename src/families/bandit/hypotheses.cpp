/// @file hypotheses.cpp
/// @brief Kernel-expansion and random-feature hypotheses of the bandit family (hypotheses.h).
#include "families/bandit/hypotheses.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "cpu/fast_sincos.h"
#include "cpu/kernel_rows.h"
#include "families/bandit/expansion_step.h"
#include "features/random_features.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

// ---- kernel expansions ---------------------------------------------------------------------------

KernelHypotheses::KernelHypotheses(const Dictionary& kernels, std::size_t n_features, std::size_t capacity_hint)
    : n_features_(n_features),
      norm_(kernels.size(), 0.0),
      ahead_(kernels.size()),
      look_ahead_(cpu::default_simd_level() == cpu::SimdLevel::Avx512) {
  for (const KernelSpec& k : kernels) {
    if (!k.shift_invariant())
      throw ConfigError("bandit kernel selection: " + k.name() + " is not a bounded shift-invariant kernel (κ(x, x) = 1)");
    kernels_.push_back({SupportSet(n_features, 1, 0, capacity_hint), KernelBank({k}, false), 1.0});
  }
}

double KernelHypotheses::weighted_sum(std::size_t i) const {
  const Kernel& k = kernels_[i];
  return k.scale * k.support.column(0).dot(k_.col(0).head(static_cast<Eigen::Index>(k.support.size())));
}

double KernelHypotheses::evaluate(std::size_t i, const double* x) {
  Kernel& k = kernels_[i];
  if (k.support.size() == 0) return 0.0;
  x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n_features_));
  k.bank.evaluate(k.support, x_, x_.squaredNorm(), k_);
  return weighted_sum(i);
}

double KernelHypotheses::evaluate(std::size_t i, const double* x, Upcoming upcoming) {
  Kernel& k = kernels_[i];
  const std::size_t n = k.support.size(), d = n_features_;
  const KernelSpec& spec = k.bank.kernels()[0];
  if (!look_ahead_ || spec.family != KernelFamily::Gaussian || n == 0) return evaluate(i, x);
  AheadProducts& ahead = ahead_[i];
  // Addresses compared as integers: x and the kept samples may lie in different arrays.
  const auto at = reinterpret_cast<std::uintptr_t>(x), first = reinterpret_cast<std::uintptr_t>(ahead.first);
  const std::size_t stride = d * sizeof(double);
  const bool kept = ahead.count > 0 && at >= first && at < first + ahead.count * stride && (at - first) % stride == 0;
  if (!kept && (upcoming.count == 0 || n < kLookAheadRows)) return evaluate(i, x);

  x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(d));
  const double x_norm2 = x_.squaredNorm(), divisor = 2.0 * spec.sigma * spec.sigma;
  const cpu::BlockedRows rows = k.support.blocked();
  const double* dots;
  std::size_t covered;
  if (kept) {
    covered = ahead.covered;
    dots = ahead.dots.data() + (at - first) / stride * covered;
  } else {
    // This sample and up to three upcoming ones in one pass over the rows.
    const std::size_t count = std::min(upcoming.count, cpu::kMaxInnerProducts - 1);
    ahead.first = upcoming.rows;
    ahead.count = count;
    ahead.covered = covered = n;
    ahead.dots.resize(count * n);
    x_dots_.resize(n);
    const double* xs[cpu::kMaxInnerProducts] = {x};
    double* outs[cpu::kMaxInnerProducts] = {x_dots_.data()};
    for (std::size_t q = 0; q < count; ++q) {
      xs[q + 1] = upcoming.rows + q * d;
      outs[q + 1] = ahead.dots.data() + q * n;
    }
    cpu::inner_products(rows, xs, count + 1, outs);
    dots = x_dots_.data();
  }
  shape_kernel_values(k_, n, 1);
  // The same values as the one-pass kernel_rows(…, Gaussian, …) of evaluate(i, x), in two parts:
  // the rows covered by the products, then the rows appended since.
  cpu::gaussian_from_inner_products(rows.norms2 + rows.first, dots, covered, x_norm2, divisor, k_.data());
  if (covered < n)
    cpu::kernel_rows({rows.values, rows.norms2, d, rows.first + covered, n - covered}, x, x_norm2,
                     cpu::RowQuantity::Gaussian, divisor, k_.data() + covered);
  return weighted_sum(i);
}

void KernelHypotheses::forget_upcoming() {
  for (AheadProducts& ahead : ahead_) ahead = AheadProducts{};
}

void KernelHypotheses::update(std::size_t i, const double* x, double F, double step, Projection projection,
                              double bound) {
  Kernel& k = kernels_[i];
  x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n_features_));
  // x is appended whenever the kernel is selected, even with step 0 (§2.1).
  k.support.push_back(x_, x_.squaredNorm());
  k.support.coefficient(0, k.support.size() - 1) = step / k.scale;
  if (projection != Projection::Ball) return;
  double fold = 1.0;
  if (expansion_ball_step(k.scale, norm_[i], step, F, bound, fold)) k.support.column(0) *= fold;
}

void KernelHypotheses::append_entry(std::size_t i, const double* row, double row_norm2, double stored_coefficient) {
  Kernel& k = kernels_[i];
  x_ = Eigen::Map<const Eigen::VectorXd>(row, static_cast<Eigen::Index>(n_features_));
  k.support.push_back(x_, row_norm2);
  k.support.coefficient(0, k.support.size() - 1) = stored_coefficient;
}

void KernelHypotheses::set_stored_coefficients(std::size_t i, const double* alpha) {
  Kernel& k = kernels_[i];
  for (std::size_t j = 0; j < k.support.size(); ++j) k.support.coefficient(0, j) = alpha[j];
}

void KernelHypotheses::set_scale_and_norm(std::size_t i, double scale, double norm) {
  kernels_[i].scale = scale;
  norm_[i] = norm;
}

void KernelHypotheses::save(StateWriter& out) const {
  out.put_tag("bandit-kernel-hypotheses/1");
  for (std::size_t i = 0; i < kernels_.size(); ++i) {
    kernels_[i].support.save(out);
    out.put_f64(kernels_[i].scale);
    out.put_f64(norm_[i]);
  }
}

void KernelHypotheses::load(StateReader& in) {
  in.expect_tag("bandit-kernel-hypotheses/1");
  forget_upcoming();
  for (std::size_t i = 0; i < kernels_.size(); ++i) {
    kernels_[i].support.load(in);
    if (kernels_[i].support.n_features() != n_features_ || kernels_[i].support.n_columns() != 1)
      throw InputError("checkpoint: a bandit support set of another shape");
    kernels_[i].scale = in.get_f64();
    norm_[i] = in.get_f64();
    if (!std::isfinite(kernels_[i].scale) || kernels_[i].scale == 0.0 || !(norm_[i] >= 0))
      throw InputError("checkpoint: damaged bandit hypothesis scale or norm");
  }
}

// ---- random features ------------------------------------------------------------------------------

std::vector<double> draw_bandit_omega(std::uint64_t seed, std::uint64_t replicate, std::size_t n_matrices,
                                      std::size_t n_rff, std::size_t n_features) {
  std::vector<double> omega(n_matrices * n_rff * n_features);
  RandomStream rng(seed, replicate, RngPurpose::Frequencies, kBanditOmegaStream);
  rng.normals(omega.data(), omega.size());
  return omega;
}

std::vector<MatrixRecipe> bandit_omega_recipes(const Dictionary& kernels, std::size_t n_features, std::uint64_t seed,
                                               std::uint64_t replicate) {
  // Every kernel's matrix is the one stream's normals × 1/σ_i: draw_frequencies()'s i.i.d.
  // Gaussian rows from that stream (the constructor refuses any other family).
  const RandomStream rng(seed, replicate, RngPurpose::Frequencies, kBanditOmegaStream);
  std::vector<MatrixRecipe> recipes;
  recipes.reserve(kernels.size());
  for (const KernelSpec& kernel : kernels) recipes.push_back(matrix_recipe(kernel, n_features, RfKind::Rf, rng));
  return recipes;
}

FeatureHypotheses::FeatureHypotheses(const Dictionary& kernels, std::size_t n_features, std::size_t n_rff,
                                     std::vector<double> omega, bool independent)
    : n_features_(n_features), n_rff_(n_rff), omega_(std::move(omega)), independent_(independent) {
  for (const KernelSpec& k : kernels) {
    if (k.family != KernelFamily::Gaussian)
      throw ConfigError("bandit random features: " + k.name() + " is not Gaussian (the shared-Ω map of §6.1)");
    inv_sigma_.push_back(1.0 / k.sigma);
  }
  const std::size_t matrices = independent ? kernels.size() : 1;
  if (omega_.size() != matrices * n_rff * n_features) throw Error("bandit random features: Ω of the wrong size");
  w_.assign(kernels.size(), std::vector<double>(2 * n_rff, 0.0));
  angle_.resize(n_rff);
  sin_.resize(n_rff);
  cos_.resize(n_rff);
  z_.resize(2 * n_rff);
}

void FeatureHypotheses::features(std::size_t i, const double* x) {
  const std::size_t D = n_rff_, d = n_features_;
  const double* omega = omega_.data() + (independent_ ? i * D * d : 0);
  const double inv_sigma = inv_sigma_[i];
  for (std::size_t j = 0; j < D; ++j) {
    double a = 0.0;
    for (std::size_t k = 0; k < d; ++k) a += omega[j * d + k] * x[k];
    angle_[j] = a * inv_sigma;
  }
  cpu::fast_sincos(angle_.data(), sin_.data(), cos_.data(), D);
  const double scale = 1.0 / std::sqrt(static_cast<double>(D));
  for (std::size_t j = 0; j < D; ++j) {
    z_[j] = scale * cos_[j];
    z_[D + j] = scale * sin_[j];
  }
  z_kernel_ = i;
}

double FeatureHypotheses::evaluate(std::size_t i, const double* x) {
  features(i, x);
  const std::vector<double>& w = w_[i];
  double f = 0.0;
  for (std::size_t j = 0; j < 2 * n_rff_; ++j) f += w[j] * z_[j];
  return f;
}

void FeatureHypotheses::update(std::size_t i, const double* x, double, double step, Projection projection,
                               double bound) {
  if (z_kernel_ != i) features(i, x);
  z_kernel_ = ~std::size_t{0};
  std::vector<double>& w = w_[i];
  const double box = bound / std::sqrt(static_cast<double>(n_rff_));
  for (std::size_t j = 0; j < 2 * n_rff_; ++j) {
    w[j] += step * z_[j];
    if (projection == Projection::Box) w[j] = std::clamp(w[j], -box, box);
  }
}

void FeatureHypotheses::weights_to_theta(std::size_t i, double* theta) const {
  const std::size_t D = n_rff_;
  const std::vector<double>& w = w_[i];
  for (std::size_t j = 0; j < D; ++j) {
    theta[j] = w[D + j];  // sine part
    theta[D + j] = w[j];  // cosine part
  }
}

void FeatureHypotheses::weights_from_theta(std::size_t i, const double* theta) {
  const std::size_t D = n_rff_;
  std::vector<double>& w = w_[i];
  for (std::size_t j = 0; j < D; ++j) {
    w[j] = theta[D + j];
    w[D + j] = theta[j];
  }
  z_kernel_ = ~std::size_t{0};
}

void FeatureHypotheses::scaled_frequencies(std::size_t i, double* V) const {
  const std::size_t n = n_rff_ * n_features_;
  const double* omega = omega_.data() + (independent_ ? i * n : 0);
  for (std::size_t e = 0; e < n; ++e) V[e] = omega[e] * inv_sigma_[i];
}

void FeatureHypotheses::save(StateWriter& out) const {
  out.put_tag("bandit-feature-hypotheses/1");
  out.put_f64s(omega_);
  for (const auto& w : w_) out.put_f64s(w);
}

void FeatureHypotheses::load(StateReader& in) {
  in.expect_tag("bandit-feature-hypotheses/1");
  in.get_f64s(omega_.data(), omega_.size());
  for (auto& w : w_) in.get_f64s(w.data(), w.size());
  z_kernel_ = ~std::size_t{0};
}

}  // namespace omkl::detail
