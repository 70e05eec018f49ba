/// @file kogd.cpp
/// @brief KogdRule and KogdEnsemble (kogd.h): single-kernel KOGD, AvgMKL, OMKL, OMKL-B, OMKR.
#include "families/exact_kernel/kogd.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/decimal.h"
#include "core/rate_schedule.h"
#include "omkl/error.h"

namespace omkl::detail {

// ---------------------------------------------------------------------------------------------
// KogdRule

double KogdRule::eta_at(std::uint64_t t) const {
  return scheduled_rate(eta, schedule == StepSchedule::InvSqrtT, static_cast<std::int64_t>(t));
}

// ---------------------------------------------------------------------------------------------
// KogdEnsemble

KogdEnsemble::KogdEnsemble(KogdEnsembleConfig config, std::size_t n_features,
                           std::size_t n_replicates)
    : config_(std::move(config)),
      bank_(config_.kernels, config_.averaged_kernel),
      n_features_(n_features),
      n_replicates_(n_replicates),
      support_(n_features, bank_.n_outputs(), config_.budget, config_.capacity_hint),
      scale_(bank_.n_outputs(), 1.0),
      norm2_(bank_.n_outputs(), 0.0),
      x_(static_cast<Eigen::Index>(n_features)),
      xr_(static_cast<Eigen::Index>(n_features)),
      f_(bank_.n_outputs(), 0.0),
      kdiag_(bank_.n_outputs(), 0.0) {
  if (config_.kernels.empty()) throw ConfigError("algorithm '" + config_.name + "': no kernels");
  if (config_.combination == Combination::Learned) weights_.reset(n_learners(), &config_.weights);
}

MetricConvention KogdEnsemble::metric_convention() const {
  MetricConvention m;
  m.first_error_is_one = config_.first_error_is_one;
  return m;
}

std::vector<double> KogdEnsemble::kernel_weights(std::size_t replicate) const {
  if (replicate >= n_replicates_) throw Error("kernel_weights: replicate out of range");
  if (config_.combination != Combination::Learned) return {};
  // No randomness: every replicate is this one.
  std::vector<double> out(weights_.size());
  weights_.normalized(out.data());
  return out;
}

double KogdEnsemble::coefficient(std::size_t learner, std::size_t i) const {
  return scale_[learner] * support_.coefficient(learner, i);
}

double KogdEnsemble::predict_learners(const double* x) {
  x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n_features_));
  x_norm2_ = x_.squaredNorm();
  const std::size_t L = n_learners();
  const auto n = static_cast<Eigen::Index>(support_.size());
  const Eigen::MatrixXd* lent = lent_rows_;
  lent_rows_ = nullptr;  // lent for this call only
  if (n == 0) {
    std::fill(f_.begin(), f_.end(), 0.0);
  } else {
    if (lent) {
      // The support's rows are the lent history's newest n; the same values evaluate() would
      // write (every kernel there is evaluated row by row), into a k_ shaped as it shapes it.
      const auto outputs = static_cast<Eigen::Index>(bank_.n_outputs());
      if (lent->cols() != outputs || lent_available_ < static_cast<std::size_t>(n))
        throw Error("KogdEnsemble: lent kernel rows do not cover the support set");
      shape_kernel_values(k_, static_cast<std::size_t>(n), outputs);
      const auto first = static_cast<Eigen::Index>(lent_available_) - n;
      for (Eigen::Index j = 0; j < outputs; ++j) k_.col(j).head(n) = lent->col(j).segment(first, n);
    } else {
      bank_.evaluate(support_, x_, x_norm2_, k_);
    }
    for (std::size_t p = 0; p < L; ++p)
      f_[p] = scale_[p] * support_.column(p).dot(k_.col(static_cast<Eigen::Index>(p)).head(n));
  }
  switch (config_.combination) {
    case Combination::Single: return f_[0];
    case Combination::Uniform: {
      double sum = 0.0;
      for (double v : f_) sum += v;
      return sum / static_cast<double>(L);
    }
    case Combination::Learned: return weights_.combine(f_.data());
  }
  return 0.0;
}

void KogdEnsemble::predict(const double* x, double* predictions) {
  const double y_hat = predict_learners(x);
  std::fill(predictions, predictions + n_replicates_, y_hat);
}

void KogdEnsemble::renormalize(std::size_t learner) {
  if (!scale_out_of_range(scale_[learner])) return;
  support_.column(learner) *= scale_[learner];
  scale_[learner] = 1.0;
}

void KogdEnsemble::step(const double* x, double y, double* predictions) {
  const double y_hat = predict_learners(x);
  // No randomness: every replicate is this one trajectory.
  std::fill(predictions, predictions + n_replicates_, y_hat);

  const KogdRule& rule = config_.rule;
  const std::size_t L = n_learners();
  ++t_;
  const double eta = rule.eta_at(t_);
  const double c = 1.0 - rule.shrink_scale * eta * rule.lambda;

  // Kernel weights use f_p and ‖f_p‖² of the iterate that made the prediction (spec §3.2 step 5).
  if (config_.combination == Combination::Learned) weights_.update(f_.data(), norm2_.data(), y);
  if (config_.track_norms) bank_.diagonal(x_norm2_, kdiag_.data());

  support_.push_back(x_, x_norm2_);
  const std::size_t newest = support_.size() - 1;
  for (std::size_t p = 0; p < L; ++p) {
    const double alpha = -rule.step_scale * eta * loss_derivative(rule.loss, f_[p], y);
    // f_{t+1} = c f_t + α κ(x_t, ·) ⇒ ‖f_{t+1}‖² = c²‖f_t‖² + 2cα f_t(x_t) + α² κ(x_t, x_t).
    if (config_.track_norms)
      norm2_[p] = c * c * norm2_[p] + 2.0 * c * alpha * f_[p] + alpha * alpha * kdiag_[p];
    scale_[p] *= c;
    renormalize(p);
    support_.coefficient(p, newest) = alpha / scale_[p];
  }

  if (config_.budget > 0 && support_.size() > config_.budget) {
    if (config_.track_norms) {
      // ‖f − α_r κ(x_r, ·)‖² = ‖f‖² − 2α_r f(x_r) + α_r² κ(x_r, x_r), f including r (spec §5.4).
      xr_ = Eigen::Map<const Eigen::VectorXd>(support_.row(0),
                                              static_cast<Eigen::Index>(n_features_));
      const double xr_norm2 = support_.norm2(0);
      bank_.evaluate(support_, xr_, xr_norm2, k_);
      bank_.diagonal(xr_norm2, kdiag_.data());
      const auto n = static_cast<Eigen::Index>(support_.size());
      for (std::size_t p = 0; p < L; ++p) {
        const double alpha_r = coefficient(p, 0);
        const double f_r =
            scale_[p] * support_.column(p).dot(k_.col(static_cast<Eigen::Index>(p)).head(n));
        norm2_[p] += -2.0 * alpha_r * f_r + alpha_r * alpha_r * kdiag_[p];
      }
    }
    support_.pop_front();
  }
}

namespace {
constexpr const char* kKogdTag = "omkl.exact_kernel.kogd/1";
}  // namespace


void KogdEnsemble::save_state(StateWriter& out) const {
  out.put_tag(kKogdTag);
  out.put_string(config_.name);
  out.put_u64(t_);
  support_.save(out);
  out.put_f64s(scale_);
  out.put_f64s(norm2_);
  if (config_.combination == Combination::Learned) weights_.save(out);
  else out.put_f64s(std::vector<double>{});
}

void KogdEnsemble::load_state(StateReader& in) {
  in.expect_tag(kKogdTag);
  check_state_owner(in.get_string(), config_.name);
  t_ = in.get_u64();
  support_.load(in);
  in.get_f64s(scale_.data(), scale_.size());
  // step() leaves every global scale within scale_out_of_range()'s bounds (renormalize()):
  // one outside them (0 among them, which the coefficients are divided by) no run leaves.
  for (double s : scale_)
    if (!unsound(s) && scale_out_of_range(s))  // NaN and +∞: Learner::load refuses them
      throw InputError("exact-kernel state: a learner's global scale " + shortest_decimal(s) +
                       " is outside ±[1e-200, 1e200]");
  in.get_f64s(norm2_.data(), norm2_.size());
  load_kernel_weights(in, weights_, config_.combination == Combination::Learned);
}

}  // namespace omkl::detail
