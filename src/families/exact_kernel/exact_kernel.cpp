/// @file exact_kernel.cpp
/// @brief Exact-kernel baselines (spec/raker.md §5.1–5.6): KOGD engine, AvgMKL, OMKL, OMKL-B,
/// M-Forgetron, and their registration.
#include "families/exact_kernel/exact_kernel.h"

#include "features/rf_ensemble.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "cpu/fast_exp.h"
#include "cpu/row_dots.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

// Rows are allocated in multiples of 8 so that every column of a column-major scratch or
// coefficient matrix starts on a 64-byte boundary, whatever its length.
std::size_t round8(std::size_t n) { return (n + 7) / 8 * 8; }

// The global scale of a kernel expansion is folded back into the coefficients when it leaves
// this range (spec §5.1: "rescale when the product underflows below 1e−200"); the upper bound
// catches |c| > 1, which a large η·λ can produce.
constexpr double kMinScale = 1e-200;
constexpr double kMaxScale = 1e200;

bool scale_out_of_range(double s) {
  const double a = std::fabs(s);
  return !(a >= kMinScale && a <= kMaxScale);  // also true for NaN
}

// (base)^degree by repeated multiplication, the same order as KernelSpec::evaluate.
double int_power(double base, int degree) {
  double p = 1.0;
  for (int k = 0; k < degree; ++k) p *= base;
  return p;
}

double kernel_diagonal(const KernelSpec& kernel, double x_norm2) {
  switch (kernel.family) {
    case KernelFamily::Gaussian:
    case KernelFamily::Laplacian:
    case KernelFamily::Cauchy: return 1.0;
    case KernelFamily::Linear: return x_norm2;
    case KernelFamily::Polynomial: return int_power(x_norm2 + kernel.offset, kernel.degree);
  }
  return 0.0;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// KogdRule

double KogdRule::eta_at(std::uint64_t t) const {
  if (schedule == StepSchedule::InvSqrtT) return eta / std::sqrt(static_cast<double>(t));
  return eta;
}

// ---------------------------------------------------------------------------------------------
// SupportSet

SupportSet::SupportSet(std::size_t n_features, std::size_t n_columns, std::size_t budget,
                       std::size_t capacity_hint)
    : n_features_(n_features), n_columns_(n_columns), budget_(budget) {
  // A budgeted set holds at most B + 1 rows between push_back and pop_front; twice that lets
  // it slide for B steps between two moves back to row 0.
  const std::size_t capacity =
      budget > 0 ? round8(2 * (budget + 1)) : round8(std::max<std::size_t>(capacity_hint, 8));
  reserve_rows(capacity);
}

void SupportSet::reserve_rows(std::size_t capacity) {
  buffer_.conservativeResize(static_cast<Eigen::Index>(capacity),
                             static_cast<Eigen::Index>(n_features_));
  norms2_.conservativeResize(static_cast<Eigen::Index>(capacity));
  coef_.conservativeResize(static_cast<Eigen::Index>(capacity),
                           static_cast<Eigen::Index>(n_columns_));
}

void SupportSet::push_back(const Eigen::VectorXd& x, double x_norm2) {
  const std::size_t capacity = static_cast<std::size_t>(buffer_.rows());
  if (head_ + count_ == capacity) {
    if (head_ > 0 && head_ >= count_) {
      // Slide back to row 0; source and destination do not overlap because head_ >= count_.
      const auto n = static_cast<Eigen::Index>(count_);
      const auto h = static_cast<Eigen::Index>(head_);
      buffer_.topRows(n) = buffer_.middleRows(h, n);
      norms2_.head(n) = norms2_.segment(h, n);
      coef_.topRows(n) = coef_.middleRows(h, n);
      head_ = 0;
    } else {
      reserve_rows(round8(2 * capacity));
    }
  }
  const auto i = static_cast<Eigen::Index>(head_ + count_);
  buffer_.row(i) = x.transpose();
  norms2_[i] = x_norm2;
  coef_.row(i).setZero();
  ++count_;
}

void SupportSet::pop_front() {
  if (count_ == 0) return;
  ++head_;
  --count_;
  if (count_ == 0) head_ = 0;
}

void SupportSet::save(StateWriter& out) const {
  out.put_u64(n_features_);
  out.put_u64(n_columns_);
  out.put_u64(budget_);
  out.put_u64(static_cast<std::uint64_t>(buffer_.rows()));
  out.put_u64(head_);
  out.put_u64(count_);
  out.put_f64s(count_ ? row(0) : nullptr, count_ * n_features_);
  out.put_f64s(norms2_.data() + head_, count_);
  for (std::size_t j = 0; j < n_columns_; ++j)
    out.put_f64s(coef_.col(static_cast<Eigen::Index>(j)).data() + head_, count_);
}

void SupportSet::load(StateReader& in) {
  const std::uint64_t d = in.get_u64(), columns = in.get_u64(), budget = in.get_u64();
  if (d != n_features_ || columns != n_columns_ || budget != budget_)
    throw InputError("exact-kernel state: support set has d = " + std::to_string(d) + ", " +
                     std::to_string(columns) + " learners, budget " + std::to_string(budget) +
                     "; this learner has d = " + std::to_string(n_features_) + ", " +
                     std::to_string(n_columns_) + " learners, budget " + std::to_string(budget_));
  const std::uint64_t capacity = in.get_u64(), head = in.get_u64(), count = in.get_u64();
  // A saved capacity is the one this learner was built with, or a doubling of it past the rows
  // in use (push_back); anything far larger is damage, and is refused before it is allocated.
  const auto built = static_cast<std::uint64_t>(buffer_.rows());
  if (capacity == 0 || capacity % 8 != 0 || head > capacity || count > capacity - head ||
      (capacity > built && capacity / 4 > head + count + 16))
    throw InputError("exact-kernel state: inconsistent support-set layout");
  // The rows (x, ‖x‖², one coefficient per column, with their length words) must be there too.
  in.require_values(count, sizeof(double) * (n_features_ + 1 + n_columns_));
  buffer_.resize(static_cast<Eigen::Index>(capacity), static_cast<Eigen::Index>(n_features_));
  norms2_.resize(static_cast<Eigen::Index>(capacity));
  coef_.resize(static_cast<Eigen::Index>(capacity), static_cast<Eigen::Index>(n_columns_));
  head_ = head;
  count_ = count;
  in.get_f64s(buffer_.data() + head_ * n_features_, count_ * n_features_);
  in.get_f64s(norms2_.data() + head_, count_);
  for (std::size_t j = 0; j < n_columns_; ++j)
    in.get_f64s(coef_.col(static_cast<Eigen::Index>(j)).data() + head_, count_);
}

// ---------------------------------------------------------------------------------------------
// KernelBank

KernelBank::KernelBank(Dictionary kernels, bool averaged)
    : kernels_(std::move(kernels)), averaged_(averaged) {
  for (const auto& k : kernels_) {
    if (k.family == KernelFamily::Linear || k.family == KernelFamily::Polynomial) any_dot_ = true;
    if (k.family == KernelFamily::Gaussian) any_dist_ = true;
    if (k.family == KernelFamily::Laplacian) any_l1_ = true;
  }
}

void KernelBank::fill(const KernelSpec& kernel, const SupportSet& support,
                      const Eigen::VectorXd& x, Eigen::Ref<Eigen::VectorXd> out) const {
  const auto n = static_cast<Eigen::Index>(support.size());
  switch (kernel.family) {
    case KernelFamily::Gaussian:
      // Most of a baseline's time: exp(−d²/(2σ²)) in one vectorised pass.
      cpu::fast_exp_neg_div(dist2_.data(), 2.0 * kernel.sigma * kernel.sigma, out.data(), static_cast<std::size_t>(n));
      break;
    case KernelFamily::Linear: out = dot_.head(n); break;
    case KernelFamily::Polynomial: {
      const auto base = dot_.head(n).array() + kernel.offset;
      out.array() = base;
      for (int k = 1; k < kernel.degree; ++k) out.array() *= base;
      break;
    }
    case KernelFamily::Laplacian:
      // ‖x_τ − x‖₁ is computed once per call in evaluate() and shared by every Laplacian.
      cpu::fast_exp_neg_div(l1_.data(), kernel.sigma, out.data(), static_cast<std::size_t>(n));
      break;
    case KernelFamily::Cauchy:
      out = ((((support.rows().rowwise() - x.transpose()).array() / kernel.sigma).square() + 1.0)
                 .inverse())
                .rowwise()
                .prod()
                .matrix();
      break;
  }
}

void KernelBank::evaluate(const SupportSet& support, const Eigen::VectorXd& x, double x_norm2,
                          Eigen::MatrixXd& out, int only) {
  const std::size_t n = support.size();
  const auto outputs = static_cast<Eigen::Index>(n_outputs());
  if (static_cast<std::size_t>(out.rows()) < n || out.cols() != outputs)
    out.resize(static_cast<Eigen::Index>(round8(std::max<std::size_t>(n, 2 * out.rows()))), outputs);
  if (n == 0) return;
  const auto m = static_cast<Eigen::Index>(n);

  // Which kernels are needed decides which shared quantities are computed.
  bool need_dot = any_dot_, need_dist = any_dist_, need_l1 = any_l1_;
  if (only >= 0 && !averaged_) {
    const KernelFamily f = kernels_[static_cast<std::size_t>(only)].family;
    need_dot = f == KernelFamily::Linear || f == KernelFamily::Polynomial;
    need_dist = f == KernelFamily::Gaussian;
    need_l1 = f == KernelFamily::Laplacian;
  }
  if (need_l1) {
    if (l1_.size() < m) l1_.resize(out.rows());
    l1_.head(m) = (support.rows().rowwise() - x.transpose()).cwiseAbs().rowwise().sum();
  }
  if (need_dot || need_dist) {
    if (dot_.size() < m) dot_.resize(out.rows());
    // x_τᵀx for every stored row (the GEMV that dominates at large d), vectorised.
    cpu::row_dots(support.rows().data(), n, support.n_features(), x.data(), dot_.data());
  }
  if (need_dist) {
    if (dist2_.size() < m) dist2_.resize(out.rows());
    // Clamped at 0: rounding can make the distance of a repeated sample slightly negative.
    dist2_.head(m).array() =
        (support.norms2().array() + x_norm2 - 2.0 * dot_.head(m).array()).max(0.0);
  }

  if (averaged_) {
    const auto p_count = static_cast<Eigen::Index>(kernels_.size());
    if (per_kernel_.rows() < out.rows() || per_kernel_.cols() != p_count)
      per_kernel_.resize(out.rows(), p_count);
    for (Eigen::Index p = 0; p < p_count; ++p)
      fill(kernels_[static_cast<std::size_t>(p)], support, x, per_kernel_.col(p).head(m));
    // Fixed summation order p = 0..P−1.
    out.col(0).head(m) = per_kernel_.col(0).head(m);
    for (Eigen::Index p = 1; p < p_count; ++p) out.col(0).head(m) += per_kernel_.col(p).head(m);
    out.col(0).head(m) /= static_cast<double>(p_count);
    return;
  }
  for (Eigen::Index j = 0; j < outputs; ++j) {
    if (only >= 0 && j != only) continue;
    fill(kernels_[static_cast<std::size_t>(j)], support, x, out.col(j).head(m));
  }
}

void KernelBank::diagonal(double x_norm2, double* out) const {
  if (averaged_) {
    double sum = 0.0;
    for (const auto& k : kernels_) sum += kernel_diagonal(k, x_norm2);
    out[0] = sum / static_cast<double>(kernels_.size());
    return;
  }
  for (std::size_t j = 0; j < kernels_.size(); ++j) out[j] = kernel_diagonal(kernels_[j], x_norm2);
}

double KernelBank::value(std::size_t output, const double* a, const double* b,
                         std::size_t n_features) const {
  if (averaged_) {
    double sum = 0.0;
    for (const auto& k : kernels_) sum += k.evaluate(a, b, n_features);
    return sum / static_cast<double>(kernels_.size());
  }
  return kernels_[output].evaluate(a, b, n_features);
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
  m.first_error_is_one = config_.profile == Profile::Reference && config_.reference_first_error_is_one;
  return m;
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
      if (k_.rows() < n || k_.cols() != outputs)
        k_.resize(static_cast<Eigen::Index>(round8(std::max<std::size_t>(static_cast<std::size_t>(n), 2 * static_cast<std::size_t>(k_.rows())))),
                  outputs);
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
constexpr const char* kForgetronTag = "omkl.exact_kernel.forgetron/1";

void check_name(const std::string& stored, const std::string& expected) {
  if (stored != expected)
    throw InputError("exact-kernel state was written by '" + stored + "', cannot load into '" +
                     expected + "'");
}

void load_weights(StateReader& in, KernelWeights& weights, bool used) {
  std::vector<double> raw = in.get_f64s();
  if (!used) return;
  if (raw.size() != weights.size())
    throw InputError("exact-kernel state: " + std::to_string(raw.size()) +
                     " kernel weights, expected " + std::to_string(weights.size()));
  weights.raw() = std::move(raw);
}
}  // namespace

void KogdEnsemble::save_state(StateWriter& out) const {
  out.put_tag(kKogdTag);
  out.put_string(config_.name);
  out.put_u64(t_);
  support_.save(out);
  out.put_f64s(scale_);
  out.put_f64s(norm2_);
  out.put_f64s(config_.combination == Combination::Learned ? weights_.raw() : std::vector<double>{});
}

void KogdEnsemble::load_state(StateReader& in) {
  in.expect_tag(kKogdTag);
  check_name(in.get_string(), config_.name);
  t_ = in.get_u64();
  support_.load(in);
  in.get_f64s(scale_.data(), scale_.size());
  in.get_f64s(norm2_.data(), norm2_.size());
  load_weights(in, weights_, config_.combination == Combination::Learned);
}

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
  m.first_error_is_one = config_.profile == Profile::Reference;
  return m;
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
  out.put_f64s(weights_.raw());
}

void MForgetron::load_state(StateReader& in) {
  in.expect_tag(kForgetronTag);
  check_name(in.get_string(), config_.name);
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
  load_weights(in, weights_, true);
}

// ---------------------------------------------------------------------------------------------
// RFOMKR (spec/graph-aided.md §4.3)

namespace {
constexpr const char* kRfomkrTag = "omkl.exact_kernel.rfomkr/1";
}  // namespace

Rfomkr::Rfomkr(RfomkrConfig config, const AlgoContext& context)
    : config_(std::move(config)), n_features_(context.n_features), replicates_(context.replicates) {
  const std::size_t N = config_.dictionary.size();
  if (N == 0) throw ConfigError("algorithm '" + config_.name + "': no kernels");
  const std::size_t twoD = 2 * config_.n_rff;
  reps_.resize(replicates_.size());
  for (Replicate& rep : reps_) {
    rep.V.resize(N);
    rep.theta.assign(N * twoD, 0.0);
    rep.log_w.assign(N, -std::log(static_cast<double>(N)));
  }
  // Same draws as make_rf_ensemble_backend: common random numbers with Raker and the
  // graph-aided methods of the same (seed, replicate).
  const std::size_t size = config_.n_rff * n_features_;
  for_each_frequency_matrix(config_.dictionary, config_.n_rff, config_.rf_kind, config_.numpy_legacy, context,
                            [&](std::size_t r, std::size_t k, const double* V) { reps_[r].V[k].assign(V, V + size); });
  z_.assign(N * twoD, 0.0);
  f_.assign(N, 0.0);
}

double Rfomkr::weight(std::size_t r, std::size_t k) const { return std::exp(reps_[r].log_w[k]); }

const std::vector<double>& Rfomkr::frequencies(std::size_t r, std::size_t k) const {
  return reps_[r].V[k];
}

double Rfomkr::evaluate(std::size_t r, const double* x) {
  const Replicate& rep = reps_[r];
  const std::size_t N = config_.dictionary.size(), twoD = 2 * config_.n_rff;
  double weighted = 0.0, total = 0.0;
  const double top = config_.normalize ? *std::max_element(rep.log_w.begin(), rep.log_w.end()) : 0.0;
  for (std::size_t k = 0; k < N; ++k) {
    double* z = z_.data() + k * twoD;
    feature_map(rep.V[k].data(), config_.n_rff, n_features_, x, config_.feature_scale, z);
    const double* theta = rep.theta.data() + k * twoD;
    double f = 0.0;
    for (std::size_t i = 0; i < twoD; ++i) f += theta[i] * z[i];
    f_[k] = f;
    // Reference (§3 R20): Σ_k w_k f_k with the raw weights (1/N times the Hedge factors), which
    // only shrink; paper: the normalised combination (max-shifted, so nothing underflows).
    const double w = std::exp(rep.log_w[k] - top);
    weighted += w * f;
    total += w;
  }
  return config_.normalize ? weighted / total : weighted;
}

void Rfomkr::predict(const double* x, double* predictions) {
  for (std::size_t r = 0; r < reps_.size(); ++r) predictions[r] = evaluate(r, x);
}

void Rfomkr::step(const double* x, double y, double* predictions) {
  ++t_;
  const double eta = config_.inv_sqrt_t ? config_.eta / std::sqrt(static_cast<double>(t_)) : config_.eta;
  const double log_beta = std::log(config_.beta);
  const std::size_t N = config_.dictionary.size(), twoD = 2 * config_.n_rff;
  for (std::size_t r = 0; r < reps_.size(); ++r) {
    predictions[r] = evaluate(r, x);
    Replicate& rep = reps_[r];
    for (std::size_t k = 0; k < N; ++k) {
      const double e = f_[k] - y;
      const double g = eta * 2.0 * e;  // θ ← θ − η_t·2(f − y)z, no ridge
      double* theta = rep.theta.data() + k * twoD;
      const double* z = z_.data() + k * twoD;
      for (std::size_t i = 0; i < twoD; ++i) theta[i] -= g * z[i];
      rep.log_w[k] += log_beta * e * e;  // w ← w·β^{(f − y)²}
    }
  }
}

void Rfomkr::save_state(StateWriter& out) const {
  out.put_tag(kRfomkrTag);
  out.put_string(config_.name);
  out.put_u64(t_);
  out.put_u64(reps_.size());
  for (const auto& rep : reps_) {
    out.put_f64s(rep.theta);
    out.put_f64s(rep.log_w);
  }
}

void Rfomkr::load_state(StateReader& in) {
  in.expect_tag(kRfomkrTag);
  const std::string name = in.get_string();
  if (name != config_.name)
    throw InputError("RFOMKR state was written by '" + name + "', cannot load into '" + config_.name + "'");
  t_ = in.get_u64();
  const std::uint64_t R = in.get_u64();
  if (R != reps_.size())
    throw InputError("RFOMKR state has " + std::to_string(R) + " replicates, expected " +
                     std::to_string(reps_.size()));
  for (auto& rep : reps_) {
    std::vector<double> theta = in.get_f64s(), log_w = in.get_f64s();
    if (theta.size() != rep.theta.size() || log_w.size() != rep.log_w.size())
      throw InputError("RFOMKR state: wrong dictionary size or D");
    rep.theta = std::move(theta);
    rep.log_w = std::move(log_w);
  }
}

// ---------------------------------------------------------------------------------------------
// Parameters and registration

namespace {

bool is_regression(const AlgoContext& context) { return context.task == Task::Regression; }
bool is_reference(const AlgoContext& context) { return context.profile == Profile::Reference; }

// Reserve the whole stream up front when its length is known (bounded, so a wrong horizon
// cannot allocate absurd amounts; the buffer still grows by doubling past it).
std::size_t capacity_hint(const AlgoContext& context) {
  constexpr std::size_t kMaxHint = std::size_t{1} << 20;
  return context.horizon > 0 ? std::min(context.horizon, kMaxHint) : 1024;
}

KogdRule read_rule(ParamReader& params, const AlgoContext& context, bool read_step = true) {
  const bool regression = is_regression(context);
  const bool reference = is_reference(context);
  KogdRule rule;

  // Same names and defaults as the random-feature family (rf_ensemble.cpp), so one parameter
  // string means the same thing for every method of a study. Wrappers that set the step
  // themselves (AdaMKL: η_I per interval) do not read it, so eta=... is an error there.
  if (read_step) {
    rule.schedule = params.get_choice("eta_schedule", "const", {"const", "inv_sqrt_t"},
                                      "coefficient step: eta, or eta/√t with t 1-based") == "inv_sqrt_t"
                        ? StepSchedule::InvSqrtT
                        : StepSchedule::Constant;
    const bool eta_given = params.has("eta");
    const double default_eta = rule.schedule == StepSchedule::InvSqrtT ? 1.0
                               : context.horizon > 0
                                   ? 1.0 / std::sqrt(static_cast<double>(context.horizon))
                                   : 0.0;
    rule.eta = params.get_double("eta", default_eta,
                                 "coefficient step size η (default 1/√T, or 1 with inv_sqrt_t)");
    if (!eta_given && rule.schedule == StepSchedule::Constant && context.horizon == 0)
      params.fail("eta", "has no default when the stream length is unknown; give eta=...");
    if (!(rule.eta > 0.0)) params.fail("eta", "must be > 0");
  }

  rule.lambda = params.get_double("lambda", regression ? 0.01 : 0.005,
                                  "ridge weight λ (each step shrinks f by 1 − shrink_scale·η_t·λ)");
  if (!(rule.lambda >= 0.0)) params.fail("lambda", "must be >= 0");

  rule.loss = parse_loss(params.get_choice(
      "loss", regression ? "squared" : "logistic",
      {"squared", "logistic", "hinge", "squared_hinge", "absolute"}, "data loss C(f, y)"));

  // Profile R (spec Appendix A): regression divides both the step and the ridge by 10;
  // classification uses them as they are. Profile P: shrink 1 − 2ηλ, step −η ∂C/∂f.
  rule.step_scale = params.get_double(
      "step_scale", reference && regression ? 0.1 : 1.0,
      "multiplier of the new coefficient −η_t·∂C/∂f (paper 1; reference: 1/10 regression, 1 classification)");
  if (!(rule.step_scale > 0.0)) params.fail("step_scale", "must be > 0");
  rule.shrink_scale = params.get_double(
      "shrink_scale", reference ? (regression ? 0.1 : 1.0) : 2.0,
      "multiplier of η_t·λ in the shrink 1 − s·η_t·λ (paper 2; reference: 1/10 regression, 1 classification)");
  if (!(rule.shrink_scale >= 0.0)) params.fail("shrink_scale", "must be >= 0");
  return rule;
}

Dictionary read_dictionary(ParamReader& params) {
  return read_dictionary_param(
      params, "jmlr19-exact", "kernel dictionary: a preset or '+'-separated kernels (gauss:SIGMA, linear, poly:Q, ...)");
}

/// η_w, β and the loss scale of the multiplicative weight rules; read whatever the rule, as the
/// random-feature family does, so that the same parameter string is accepted by both.
void read_weight_steps(ParamReader& params, WeightConfig& w) {
  w.eta_w = params.get_double("eta_w", 0.5, "kernel-weight step η_w in exp(−η_w·loss) (exp_eta)");
  if (!(w.eta_w >= 0.0)) params.fail("eta_w", "must be >= 0");
  w.beta = params.get_double("beta", 0.5, "base β of pow_beta / minmax / mistake rules");
  if (!(w.beta > 0.0 && w.beta <= 1.0)) params.fail("beta", "must be in (0, 1]");
  w.loss_scale = params.get_double("loss_scale", 1.0, "divides the loss before exp_eta / pow_beta");
  if (!(w.loss_scale > 0.0)) params.fail("loss_scale", "must be > 0");
}

/// Kernel-weight rule of OMKL / OMKL-B (spec §5.4, §3.3): paper exp_eta with the regularised
/// loss; reference min-max (regression) or mistake (classification).
WeightConfig read_weights(ParamReader& params, const AlgoContext& context, const KogdRule& rule) {
  const bool regression = is_regression(context);
  const std::string fallback = !is_reference(context) ? "exp_eta" : (regression ? "minmax" : "mistake");
  WeightConfig w;
  w.rule = parse_weight_rule(params.get_choice("weight_rule", fallback,
                                               {"exp_eta", "pow_beta", "minmax", "mistake"},
                                               "kernel-weight rule"));
  if (w.rule == WeightRule::Mistake && regression)
    params.fail("weight_rule", "'mistake' needs labels ±1 (a classification stream)");
  w.weight_loss = parse_weight_loss(params.get_choice(
      "weight_loss", "regularized_pre", {"regularized_pre", "data_only"},
      "loss of the exp_eta / pow_beta update: C(f_p, y) + λ‖f_p‖²_H before the step, or C only"));
  read_weight_steps(params, w);
  w.loss = rule.loss;
  w.lambda = rule.lambda;
  return w;
}

bool needs_norms(const WeightConfig& w) {
  return (w.rule == WeightRule::ExpEta || w.rule == WeightRule::PowBeta) &&
         w.weight_loss == WeightLoss::RegularizedPre;
}

std::unique_ptr<Algorithm> make_single(const std::string& name, KernelSpec kernel,
                                       ParamReader& params, const AlgoContext& context) {
  KogdEnsembleConfig config;
  config.name = name;
  config.rule = read_rule(params, context);
  config.kernels = {kernel};
  config.combination = Combination::Single;
  config.profile = context.profile;
  config.capacity_hint = capacity_hint(context);
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_kogd(ParamReader& params, const AlgoContext& context) {
  const std::string text = params.get_string(
      "kernel", "gauss:1", "kernel: gauss:SIGMA, gauss2:SIGMA2, lap:SIGMA, cauchy:SIGMA, linear, poly:Q[:OFFSET]");
  KernelSpec kernel;
  try {
    kernel = parse_kernel(text);
  } catch (const ConfigError& e) {
    params.fail("kernel", std::string("is invalid: ") + e.what());
  }
  return make_single(params.algorithm(), kernel, params, context);
}

std::unique_ptr<Algorithm> make_rbf(ParamReader& params, const AlgoContext& context) {
  const double sigma = params.get_double("sigma", 1.0, "Gaussian bandwidth σ in exp(−‖δ‖²/(2σ²))");
  if (!(sigma > 0.0)) params.fail("sigma", "must be positive");
  return make_single(params.algorithm(), KernelSpec::gaussian(sigma), params, context);
}

std::unique_ptr<Algorithm> make_poly(ParamReader& params, const AlgoContext& context) {
  const std::int64_t degree = params.get_int("degree", 2, "degree q of (xᵀx' + offset)^q");
  if (degree < 1 || degree > 16) params.fail("degree", "must be an integer in 1..16");
  const double offset = params.get_double("offset", 0.0, "offset of the polynomial kernel (0 = homogeneous)");
  return make_single(params.algorithm(), KernelSpec::polynomial(static_cast<int>(degree), offset),
                     params, context);
}

std::unique_ptr<Algorithm> make_linear(ParamReader& params, const AlgoContext& context) {
  return make_single(params.algorithm(), KernelSpec::linear(), params, context);
}

std::unique_ptr<Algorithm> make_avgmkl(ParamReader& params, const AlgoContext& context) {
  const std::string mode = params.get_choice(
      "avgmkl_mode", "uniform_learners", {"uniform_learners", "averaged_kernel"},
      "P learners combined with weights 1/P (matches Table 4), or one learner on the mean kernel");
  KogdEnsembleConfig config;
  config.name = params.algorithm();
  config.kernels = read_dictionary(params);
  config.rule = read_rule(params, context);
  config.averaged_kernel = mode == "averaged_kernel";
  config.combination = config.averaged_kernel ? Combination::Single : Combination::Uniform;
  config.profile = context.profile;
  config.capacity_hint = capacity_hint(context);
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_omkl_with_budget(ParamReader& params, const AlgoContext& context,
                                                 std::size_t budget) {
  return std::make_unique<KogdEnsemble>(read_omkl_config(params, context, budget, true),
                                        context.n_features, context.n_replicates());
}

std::unique_ptr<Algorithm> make_omkl(ParamReader& params, const AlgoContext& context) {
  return make_omkl_with_budget(params, context, 0);
}

std::size_t read_budget(ParamReader& params, const std::string& meaning) {
  const std::int64_t budget = params.get_int("B", 50, meaning);
  if (budget < 1) params.fail("B", "must be >= 1");
  return static_cast<std::size_t>(budget);
}

std::unique_ptr<Algorithm> make_omkl_b(ParamReader& params, const AlgoContext& context) {
  const std::size_t budget = read_budget(params, "budget: each learner keeps the B most recent samples");
  return make_omkl_with_budget(params, context, budget);
}

std::unique_ptr<Algorithm> make_m_forgetron(ParamReader& params, const AlgoContext& context) {
  if (is_regression(context))
    throw ConfigError("algorithm '" + params.algorithm() +
                      "' is for classification only (labels ±1); the stream is a regression task");
  ForgetronConfig config;
  config.name = params.algorithm();
  config.budget = read_budget(params, "budget of every Forgetron learner");
  config.kernels = read_dictionary(params);
  config.profile = context.profile;

  // Paper: (21) with the mistake indicator and η_w = 0.5 (spec §5.6); reference: the
  // mistake rule of [M]'s classification weights.
  WeightConfig& w = config.weights;
  w.rule = parse_weight_rule(params.get_choice(
      "weight_rule", is_reference(context) ? "mistake" : "exp_eta", {"exp_eta", "pow_beta", "mistake"},
      "kernel-weight rule"));
  const std::string loss = params.get_choice(
      "weight_loss", "mistake", {"mistake", "hinge"},
      "loss of the weight update: mistake indicator 1{y f_p <= 0}, or hinge max(0, 1 − y f_p)");
  config.weight_loss = loss == "hinge" ? ForgetronWeightLoss::Hinge : ForgetronWeightLoss::Mistake;
  if (w.rule == WeightRule::Mistake && config.weight_loss == ForgetronWeightLoss::Hinge)
    params.fail("weight_loss", "'hinge' needs weight_rule=exp_eta or pow_beta");
  read_weight_steps(params, w);
  w.loss = LossKind::Hinge;  // the indicator is passed as a hinge loss (see MForgetron::step)
  w.weight_loss = WeightLoss::DataOnly;
  w.lambda = 0.0;            // the Forgetron has no ridge (spec §5.6)
  return std::make_unique<MForgetron>(std::move(config), context.n_features,
                                      context.n_replicates());
}

// ---- Baselines of the graph-aided journal tables (spec/graph-aided.md §4.1–4.2) -------------
//
// The reference code's "online kernel regression": every sample becomes a support vector with
// α_t = −η_t (f_t − y_t) (functional gradient of ½(f − y)², no ridge, no shrink), η_t = 0.1/√t.
// KogdRule writes α = −step_scale·η_t·∂C/∂f with ∂C/∂f = 2(f − y), hence step_scale = ½ (a power
// of two, so α is the same double as η_t (f − y)). The Gaussians of these baselines are
// exp(−‖δ‖²/γ), without the factor 2 of the random-feature dictionary (§4.1).

void require_regression(const ParamReader& params, const AlgoContext& context) {
  if (!is_regression(context))
    throw ConfigError("algorithm '" + params.algorithm() +
                      "' is an online kernel regression baseline (squared loss); the stream is a "
                      "classification task");
}

KogdRule read_okr_rule(ParamReader& params) {
  KogdRule rule;
  rule.loss = LossKind::Squared;
  rule.schedule = params.get_choice("eta_schedule", "inv_sqrt_t", {"inv_sqrt_t", "const"},
                                    "coefficient step: eta/√t (§1.6, t 1-based), or eta constant") ==
                          "inv_sqrt_t"
                      ? StepSchedule::InvSqrtT
                      : StepSchedule::Constant;
  rule.eta = params.get_double("eta", 0.1, "step size η in α_t = −η_t (f_t − y_t) (§4.1: 0.1/√t)");
  if (!(rule.eta > 0.0) || !std::isfinite(rule.eta)) params.fail("eta", "must be a finite number > 0");
  rule.lambda = 0.0;  // §4.1: no ridge term
  rule.shrink_scale = 0.0;
  rule.step_scale = 0.5;
  return rule;
}

KogdEnsembleConfig okr_config(const std::string& name, const AlgoContext& context) {
  KogdEnsembleConfig config;
  config.name = name;
  config.profile = context.profile;
  config.reference_first_error_is_one = false;
  config.capacity_hint = capacity_hint(context);
  return config;
}

// exp(−‖δ‖²/γ) is the library's Gaussian with σ² = γ/2.
KernelSpec gaussian_over_gamma(double gamma) { return KernelSpec::gaussian_sigma2(gamma / 2.0); }

std::unique_ptr<Algorithm> make_omkr(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  KogdEnsembleConfig config = okr_config(params.algorithm(), context);
  Dictionary dict = read_dictionary_param(
      params, "jmlr23-76", "kernel dictionary (a preset or '+'-separated kernels); see gauss_form");
  const std::string form = params.get_choice(
      "gauss_form", "over_gamma", {"over_gamma", "dictionary"},
      "Gaussian kernels: exp(−‖δ‖²/γ) with γ = the dictionary's σ² (§4.1 reference code), or the "
      "dictionary's own exp(−‖δ‖²/(2σ²))");
  if (form == "over_gamma") {
    for (auto& k : dict)
      if (k.family == KernelFamily::Gaussian) k = gaussian_over_gamma(k.sigma * k.sigma);
  }
  config.kernels = std::move(dict);
  config.rule = read_okr_rule(params);
  config.combination = Combination::Learned;
  // Hedge with discount β: w_k ← w_k·β^{(f_k − y)²}, ŷ = Σ w_k f_k / Σ w_k (weights start equal;
  // only their ratios matter, so the reference's 1/N start is the same).
  WeightConfig& w = config.weights;
  w.rule = WeightRule::PowBeta;
  w.weight_loss = WeightLoss::DataOnly;
  w.loss = LossKind::Squared;
  w.lambda = 0.0;
  w.beta = params.get_double("beta", 0.5, "Hedge discount β in w_k ← w_k·β^{(f_k − y)²} (§4.1: 0.5)");
  if (!(w.beta > 0.0 && w.beta <= 1.0)) params.fail("beta", "must be in (0, 1]");
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_single_okr(KernelSpec kernel, ParamReader& params,
                                           const AlgoContext& context) {
  KogdEnsembleConfig config = okr_config(params.algorithm(), context);
  config.kernels = {kernel};
  config.rule = read_okr_rule(params);
  config.combination = Combination::Single;
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_rbf_1(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  const double gamma = params.get_double("gamma", 1.0, "γ of the Gaussian exp(−‖δ‖²/γ) (§4.2: 1)");
  if (!(gamma > 0.0) || !std::isfinite(gamma)) params.fail("gamma", "must be a finite number > 0");
  return make_single_okr(gaussian_over_gamma(gamma), params, context);
}

std::unique_ptr<Algorithm> make_poly_2(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  const std::int64_t degree = params.get_int("degree", 2, "degree q of (xᵀx')^q (§4.2: 2, homogeneous)");
  if (degree < 1 || degree > 16) params.fail("degree", "must be an integer in 1..16");
  return make_single_okr(KernelSpec::polynomial(static_cast<int>(degree), 0.0), params, context);
}

std::unique_ptr<Algorithm> make_rfomkr(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  RfomkrConfig c;
  c.name = params.algorithm();
  static_cast<RfFeatures&>(c) = read_rf_features(params, "jmlr23-76", "rf", "inv_sqrt_D",
                                                 "frequency construction (§1.3: i.i.d. rows)",
                                                 "factor on [sin; cos] (§1.4: 1/√D)");
  c.inv_sqrt_t = params.get_choice("eta_schedule", "inv_sqrt_t", {"inv_sqrt_t", "const"},
                                   "θ step: eta/√t (§1.6), or eta constant") == "inv_sqrt_t";
  c.eta = params.get_double("eta", 0.1, "θ step size (§4.3: 0.1/√t)");
  if (!(c.eta > 0.0) || !std::isfinite(c.eta)) params.fail("eta", "must be a finite number > 0");
  c.beta = params.get_double("beta", 0.5, "Hedge discount β in w_k ← w_k·β^{(f_k − y)²} (§4.3: 0.5)");
  if (!(c.beta > 0.0 && c.beta <= 1.0)) params.fail("beta", "must be in (0, 1]");
  c.normalize = params.get_bool("rfomkr_normalize", !is_reference(context),
                                "predict Σ w f / Σ w (paper) instead of the reference's Σ w f (§3 R20)");
  return std::make_unique<Rfomkr>(std::move(c), context);
}

}  // namespace

KogdEnsembleConfig read_omkl_config(ParamReader& params, const AlgoContext& context,
                                    std::size_t budget, bool read_step) {
  KogdEnsembleConfig config;
  config.name = params.algorithm();
  config.kernels = read_dictionary(params);
  config.rule = read_rule(params, context, read_step);
  config.weights = read_weights(params, context, config.rule);
  config.track_norms = needs_norms(config.weights);
  config.combination = Combination::Learned;
  config.budget = budget;
  config.profile = context.profile;
  config.capacity_hint = capacity_hint(context);
  return config;
}

void add_exact_kernel_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"kogd", "exact-kernel online gradient descent with one kernel (kernel=gauss:SIGMA, poly:Q, linear, ...)", make_kogd});
  registry.push_back({"rbf", "exact-kernel online gradient descent, Gaussian kernel of bandwidth sigma", make_rbf});
  registry.push_back({"poly", "exact-kernel online gradient descent, polynomial kernel (xᵀx' + offset)^degree", make_poly});
  registry.push_back({"linear", "exact-kernel online gradient descent, linear kernel xᵀx'", make_linear});
  registry.push_back({"avgmkl", "AvgMKL: P exact-kernel learners combined with fixed uniform weights", make_avgmkl});
  registry.push_back({"omkl", "OMKL (Sahoo et al. 2014): P exact-kernel learners on the full history, multiplicative kernel weights", make_omkl});
  registry.push_back({"omkl-b", "OMKL-B: OMKL whose learners keep only the B most recent samples", make_omkl_b});
  registry.push_back({"m-forgetron", "M-Forgetron: P self-tuned Forgetrons with budget B and kernel weights (classification)", make_m_forgetron});
  registry.push_back({"omkr", "OMKR as in the graph-aided journal code (§4.1): budget-free exact-kernel expansion over all 76 kernels, α_t = −η_t(f − y), Hedge weights β^{(f−y)²}", make_omkr});
  registry.push_back({"rbf-1", "RBF-1 of the graph-aided journal tables (§4.2): online kernel regression with exp(−‖δ‖²/1), α_t = −η_t(f − y)", make_rbf_1});
  registry.push_back({"rfomkr", "RFOMKR of the graph-aided journal tables (§4.3): random-feature OMKR over all kernels, Hedge weights β^{(f−y)²}; reference prediction Σ w f unnormalised", make_rfomkr});
  registry.push_back({"poly-2", "POLY-2 of the graph-aided journal tables (§4.2): online kernel regression with (xᵀx')², α_t = −η_t(f − y)", make_poly_2});
}

}  // namespace omkl::detail
