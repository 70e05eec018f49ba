/// @file forgetron.cpp
/// @brief MForgetron (forgetron.h).
#include "families/exact_kernel/forgetron.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "omkl/error.h"

namespace omkl::detail {

namespace {
constexpr const char* kForgetronTag = "omkl.exact_kernel.forgetron/1";
}  // namespace

// ---------------------------------------------------------------------------------------------
// MForgetron

MForgetron::MForgetron(ForgetronConfig config, std::size_t n_features, std::size_t n_replicates)
    : config_(std::move(config)),
      bank_(config_.kernels, false),
      n_features_(n_features),
      n_replicates_(n_replicates),
      x_(static_cast<Eigen::Index>(n_features)),
      xr_(static_cast<Eigen::Index>(n_features)),
      f_(config_.kernels.size(), 0.0),
      f_weights_(config_.kernels.size(), 0.0),
      zeros_(config_.kernels.size(), 0.0) {
  if (config_.kernels.empty()) throw ConfigError("algorithm '" + config_.name + "': no kernels");
  if (config_.budget == 0) throw ConfigError("algorithm '" + config_.name + "': budget must be >= 1");
  learners_.resize(config_.kernels.size());
  for (auto& learner : learners_) learner.support = SupportSet(n_features, 1, config_.budget, 0);
  weights_.reset(learners_.size(), &config_.weights);
}

MetricConvention MForgetron::metric_convention() const {
  MetricConvention m;
  m.first_error_is_one = config_.first_error_is_one;
  return m;
}

std::vector<double> MForgetron::kernel_weights(std::size_t replicate) const {
  if (replicate >= n_replicates_) throw Error("kernel_weights: replicate out of range");
  std::vector<double> out(weights_.size());
  weights_.normalized(out.data());
  return out;
}

double MForgetron::evaluate(std::size_t p, const Eigen::VectorXd& x, double x_norm2) {
  const Learner& learner = learners_[p];
  const auto n = static_cast<Eigen::Index>(learner.support.size());
  if (n == 0) return 0.0;
  bank_.evaluate(learner.support, x, x_norm2, k_, static_cast<int>(p));
  return learner.scale *
         learner.support.column(0).dot(k_.col(static_cast<Eigen::Index>(p)).head(n));
}

double MForgetron::predict_learners(const double* x) {
  x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(n_features_));
  x_norm2_ = x_.squaredNorm();
  for (std::size_t p = 0; p < learners_.size(); ++p) f_[p] = evaluate(p, x_, x_norm2_);
  return weights_.combine(f_.data());
}

void MForgetron::predict(const double* x, double* predictions) {
  const double score = predict_learners(x);
  std::fill(predictions, predictions + n_replicates_, score);
}

void MForgetron::rescale(Learner& learner) {
  if (!scale_out_of_range(learner.scale)) return;
  learner.support.column(0) *= learner.scale;
  learner.scale = 1.0;
}

void MForgetron::step(const double* x, double y, double* predictions) {
  if (y != 1.0 && y != -1.0)
    throw InputError("algorithm '" + config_.name + "': labels must be -1 or +1, got " +
                     std::to_string(y));
  const double score = predict_learners(x);
  std::fill(predictions, predictions + n_replicates_, score);
  ++t_;

  // Kernel weights. The mistake indicator 1{y f ≤ 0} is fed to the exp/pow rules as the hinge
  // loss of a stand-in score (y when y f > 0, giving 0; 0 otherwise, giving 1), so the
  // shared KernelWeights code applies (21) to it unchanged.
  const std::size_t P = learners_.size();
  if (config_.weights.rule == WeightRule::Mistake ||
      config_.weight_loss == ForgetronWeightLoss::Hinge) {
    weights_.update(f_.data(), zeros_.data(), y);  // no norm term: the loss is data-only
  } else {
    for (std::size_t p = 0; p < P; ++p) f_weights_[p] = y * f_[p] > 0.0 ? y : 0.0;
    weights_.update(f_weights_.data(), zeros_.data(), y);
  }

  // Self-tuned Forgetron step per learner ([F] via spec §5.6).
  constexpr double kBudgetShare = 15.0 / 32.0;
  for (std::size_t p = 0; p < P; ++p) {
    Learner& learner = learners_[p];
    if (y * f_[p] > 0.0) continue;  // no mistake, no update
    learner.mistakes += 1.0;
    learner.support.push_back(x_, x_norm2_);
    learner.support.coefficient(0, learner.support.size() - 1) = y / learner.scale;
    if (learner.support.size() <= config_.budget) continue;

    // Remove the oldest element r after shrinking every β by the largest φ ∈ (0, 1] that keeps
    // Q + Ψ(φσ_r, φμ_r) ≤ (15/32)M, with f'_r evaluated on S including the new element.
    xr_ = Eigen::Map<const Eigen::VectorXd>(learner.support.row(0),
                                            static_cast<Eigen::Index>(n_features_));
    const double f_r = evaluate(p, xr_, learner.support.norm2(0));
    const double beta_r = learner.scale * learner.support.coefficient(0, 0);
    const double sigma = std::fabs(beta_r);
    const double mu = (beta_r > 0.0 ? 1.0 : -1.0) * f_r;  // y_r = sign(β_r): φ's are positive
    const double aq = sigma * sigma - 2.0 * sigma * mu;
    const double bq = 2.0 * sigma;
    const double cq = learner.q - kBudgetShare * learner.mistakes;  // ≤ 0 by the invariant
    double phi = 1.0;
    if (aq + bq + cq > 0.0) {
      // Stable root of aq φ² + bq φ + cq = 0 (equals −cq/bq when aq = 0).
      const double disc = std::max(0.0, bq * bq - 4.0 * aq * cq);
      phi = -2.0 * cq / (bq + std::sqrt(disc));
    }
    const double a = phi * sigma, b = phi * mu;
    learner.q += a * a + 2.0 * a - 2.0 * a * b;  // Ψ(φσ_r, φμ_r)
    learner.scale *= phi;
    rescale(learner);
    learner.last_phi = phi;
    ++learner.removals;
    learner.support.pop_front();
  }
}

void MForgetron::save_state(StateWriter& out) const {
  out.put_tag(kForgetronTag);
  out.put_string(config_.name);
  out.put_u64(t_);
  out.put_u64(learners_.size());
  for (const auto& learner : learners_) {
    learner.support.save(out);
    out.put_f64(learner.scale);
    out.put_f64(learner.q);
    out.put_f64(learner.mistakes);
    out.put_f64(learner.last_phi);
    out.put_u64(learner.removals);
  }
  weights_.save(out);
}

void MForgetron::load_state(StateReader& in) {
  in.expect_tag(kForgetronTag);
  check_state_owner(in.get_string(), config_.name);
  t_ = in.get_u64();
  const std::uint64_t n = in.get_u64();
  if (n != learners_.size())
    throw InputError("exact-kernel state: " + std::to_string(n) + " Forgetron learners, expected " +
                     std::to_string(learners_.size()));
  for (auto& learner : learners_) {
    learner.support.load(in);
    learner.scale = in.get_f64();
    learner.q = in.get_f64();
    learner.mistakes = in.get_f64();
    learner.last_phi = in.get_f64();
    learner.removals = in.get_u64();
  }
  load_kernel_weights(in, weights_, true);
}

}  // namespace omkl::detail
