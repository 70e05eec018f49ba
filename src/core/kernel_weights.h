/// @file kernel_weights.h
/// @brief Multiplicative kernel weights of one ensemble of P kernels (spec/raker.md §3.2–3.3).
///
/// Rules:
///  - exp_eta (paper): log-weights a_p ← a_p − η_w ℓ_p, normalised by a max-shifted softmax, so
///    nothing underflows however long the stream.
///  - pow_beta (OMKR tradition): a_p ← a_p + ln(β) ℓ_p, same log-domain storage.
///  - minmax (reference regression): raw u_p; ρ_p = min-max normalised squared error in [−1, 1];
///    u_p ← u_p·0.5^ρ_p + 1e−12; renormalise when max u > 1e10.
///  - mistake (reference classification): u ← u/Σu; u_p ← u_p·0.5^{1{y f_p < 0}} + 1e−4.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "core/host_device.h"
#include "core/loss.h"
#include "core/state_io.h"

namespace omkl::detail {

/// exp(d) for a log-domain weight d ≤ 0 relative to its reference. Below −745.2 the result is
/// +0 anyway; returning it directly skips glibc's slow underflow path, which long streams hit
/// for every losing kernel. Host and device (the resident walk, resident_graph.h).
OMKL_HD double exp_or_zero(double d) { return d < -745.2 ? 0.0 : std::exp(d); }

/// A linear copy exp(log w − ref) of log-domain weights, kept current by multiplying one entry a
/// step, is rebuilt from the log weights (ref moved to their maximum) once its largest entry falls
/// below this: well before that entry, and the others with it, underflow. The graph family's host
/// path (graph_selection.cpp) and resident walk (resident_graph.h) must rebuild at the same step.
constexpr double kLinearWeightRefreshFloor = 1e-200;

enum class WeightRule { ExpEta, PowBeta, MinMax, Mistake };
/// Which loss drives exp_eta / pow_beta.
enum class WeightLoss { RegularizedPre, DataOnly };

WeightRule parse_weight_rule(const std::string& text);
WeightLoss parse_weight_loss(const std::string& text);

struct WeightConfig {
  WeightRule rule = WeightRule::ExpEta;
  WeightLoss weight_loss = WeightLoss::RegularizedPre;
  LossKind loss = LossKind::Squared;
  double eta_w = 0.5;      ///< exp_eta step
  double beta = 0.5;       ///< pow_beta / minmax / mistake base
  double lambda = 0.0;     ///< ridge weight in the regularised loss
  double loss_scale = 1.0; ///< divides ℓ before exp_eta / pow_beta (1 = off)
  double minmax_floor = 1e-12;
  double minmax_renorm_above = 1e10;
  double mistake_floor = 1e-4;
};

class KernelWeights {
 public:
  KernelWeights() = default;
  KernelWeights(std::size_t n_kernels, const WeightConfig* config) { reset(n_kernels, config); }

  /// Uniform weights.
  void reset(std::size_t n_kernels, const WeightConfig* config);
  std::size_t size() const { return values_.size(); }

  /// Normalised weights w̄ (sum 1) into `out` (size()).
  void normalized(double* out) const;
  /// Σ_p w̄_p f_p.
  double combine(const double* f) const;
  /// Updates after y is revealed. @param f per-kernel predictions; @param norm2 per-kernel
  /// squared norms ‖θ_p‖² (or RKHS norms) that the regularised loss uses (only read by
  /// RegularizedPre); @param rate_scale multiplies η_w / −ln β (a decaying weight step).
  void update(const double* f, const double* norm2, double y, double rate_scale = 1.0);
  const std::vector<double>& raw() const { return values_; }
  std::vector<double>& raw() { return values_; }
  /// Writes the weights; ones no run leaves count in out.non_finite(), so that a model whose
  /// weights overflowed is not saved (StateWriter::put_weights()).
  void save(StateWriter& out) const;
  /// Refuses values no run leaves (weights read from a checkpoint): InputError "checkpoint:
  /// WHAT ...". Log-weights must not be all −∞ (their softmax would be 0/0); linear weights
  /// (minmax, mistake) are ≥ 0 with a positive sum (weight_vector_problem()). NaN and +∞ are
  /// left to Learner::load, which refuses any state holding them.
  void check_stored(const std::string& what) const;

 private:
  const WeightConfig* config_ = nullptr;
  std::vector<double> values_;  // log-weights (exp_eta, pow_beta) or raw weights (minmax, mistake)
};

}  // namespace omkl::detail
