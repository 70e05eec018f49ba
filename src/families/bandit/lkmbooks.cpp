/// @file lkmbooks.cpp
/// @brief LKMBooks (Li & Liao, MLJ 2022) as the bandit paper's reference code runs it
/// (spec/bandit.md §7.2): K hypotheses sharing one budgeted support set and one coefficient
/// vector, differing only in the kernel; expert-advice weights on linearised, shifted losses;
/// samples kept by Bernoulli sampling with probability P_t and importance weight 1/P_t.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "families/bandit/bandit.h"
#include "families/exact_kernel/support_set.h"
#include "features/rf_ensemble.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

namespace {

constexpr std::uint64_t kBernoulliStream = 0xb0c0u;

class LkmBooks final : public Algorithm {
 public:
  LkmBooks(ParamReader& params, const AlgoContext& context) : context_(context) {
    if (context.horizon == 0)
      throw ConfigError("algorithm '" + params.algorithm() + "': LKMBooks needs the stream length T");
    const double T = static_cast<double>(context.horizon);
    dictionary_ = read_dictionary_param(params, "oks-6", "kernel dictionary: a preset name or kernels joined by '+'");
    const bool classification = context.task == Task::Classification;
    loss_ = parse_loss(params.get_choice("loss", classification ? "logistic" : "squared",
                                         {"logistic", "squared", "absolute"}, "loss of the combined prediction"));
    check_loss_labels(params, loss_, classification);
    const std::int64_t B = params.get_int("B", 220, "budget: the most support vectors kept (Tables 5–7)",
                                          ParamRange::closed(1, kMaxSupportBudget));
    budget_ = static_cast<std::size_t>(B);
    const double nu_default = loss_ == LossKind::Logistic ? 1.0 / 7.0 : loss_ == LossKind::Squared ? 0.25 : 0.2;
    nu_ = params.get_double("nu_B", nu_default, "exponent of the sampling probability P_t (1/7, 1/4, 1/5 by loss)",
                            ParamRange::closed_open(0, 1));
    const double lambda_default = loss_ == LossKind::Logistic
                                      ? 10.0 / std::sqrt(T)
                                      : std::sqrt((1.0 + nu_) * static_cast<double>(budget_)) / (std::sqrt(1.0 - nu_) * T);
    lambda_ = params.get_double("lambda", lambda_default,
                                "step of the kept samples' coefficients (§7.2; default 10/√T logistic, "
                                "√((1 + ν_B)B)/(√(1 − ν_B)·T) otherwise, T the stream length)",
                                ParamRange::above(0));
    const double K = static_cast<double>(dictionary_.size());
    eta_ = params.get_double("eta", std::sqrt(8.0 * std::log(K) / T),
                             "expert-advice rate η_EA (default √(8 ln K/T), K kernels, T the stream length; 0 only "
                             "with one kernel)",
                             ParamRange::at_least(0));
    // One kernel: η_EA = √(8 ln K/T) is 0, and the expert weights (one of them) need none.
    if (!(eta_ > 0) && !(dictionary_.size() == 1 && eta_ == 0))
      params.fail("eta", "must be > 0 with more than one kernel, got " + shortest_decimal(eta_));
    for (const KernelSpec& k : dictionary_)
      if (!k.shift_invariant()) params.fail("dict", "contains " + k.name() + ": LKMBooks needs shift-invariant kernels");
    bank_ = KernelBank(dictionary_, false);
    reps_.resize(context.n_replicates());
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replicate& rep = reps_[r];
      rep.support = SupportSet(context.n_features, 1, 0, budget_);
      rep.log_w.assign(dictionary_.size(), 0.0);
      rep.bernoulli = RandomStream(context.seed, context.replicates[r], RngPurpose::Selection, kBernoulliStream);
    }
    f_.resize(dictionary_.size());
  }

  std::size_t n_replicates() const override { return reps_.size(); }
  MetricConvention metric_convention() const override { return bandit_metric_convention(); }

  void step(const double* x, double y, double* predictions) override {
    const double t = static_cast<double>(++t_), T = static_cast<double>(context_.horizon);
    const std::size_t K = dictionary_.size();
    // P_t = min{1, B / ((1 − ν) T^{1−ν} t^ν)} (§7.2; clipped to 1, §10 A18).
    const double keep = std::min(1.0, static_cast<double>(budget_) / ((1.0 - nu_) * std::pow(T, 1.0 - nu_) * std::pow(t, nu_)));
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      Replicate& rep = reps_[r];
      const double prediction = combine(rep, x);
      predictions[r] = prediction;
      const double g = loss_derivative(loss_, prediction, y);
      double lo = f_[0], hi = f_[0];
      for (double v : f_) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      // Linearised, shifted expert losses (both ≥ 0), then p ∝ p·exp(−η c).
      for (std::size_t i = 0; i < K; ++i) {
        const double c = g > 0 ? g * (f_[i] - lo) / rep.g_max : g * (f_[i] - hi) / rep.g_max;
        rep.log_w[i] -= eta_ * c;
      }
      rep.g_max = std::max(rep.g_max, hi - lo);
      // Bernoulli budget: keep x (importance weight 1/P_t) while there is room.
      const bool sampled = rep.bernoulli.uniform() < keep;
      if (sampled && rep.support.size() < budget_) {
        x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(context_.n_features));
        rep.support.push_back(x_, x_.squaredNorm());
        rep.support.coefficient(0, rep.support.size() - 1) = -lambda_ * g / keep;
      }
    }
  }

  void predict(const double* x, double* predictions) override {
    for (std::size_t r = 0; r < reps_.size(); ++r) predictions[r] = combine(reps_[r], x);
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("lkmbooks/1");
    out.put_i64(t_);
    for (const Replicate& rep : reps_) {
      rep.support.save(out);
      out.put_f64s(rep.log_w);
      out.put_f64(rep.g_max);
      out.put_u64(rep.bernoulli.position());
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("lkmbooks/1");
    t_ = in.get_i64();
    if (t_ < 0) throw InputError("checkpoint: negative round count");
    for (Replicate& rep : reps_) {
      rep.support.load(in);
      if (rep.support.size() > budget_ || rep.support.n_columns() != 1 || rep.support.n_features() != context_.n_features)
        throw InputError("checkpoint: an LKMBooks support set of another shape or over its budget");
      in.get_f64s(rep.log_w.data(), rep.log_w.size());
      rep.g_max = in.get_f64();
      if (!(rep.g_max >= 1.0)) throw InputError("checkpoint: damaged LKMBooks g_max");
      rep.bernoulli.seek(in.get_u64());
    }
  }

  std::vector<std::pair<std::string, std::string>> reported_params() const override {
    return {{"loss", to_string(loss_)}, {"B", std::to_string(budget_)}};
  }

 private:
  struct Replicate {
    SupportSet support;
    std::vector<double> log_w;
    double g_max = 1.0;
    RandomStream bernoulli{0, 0, RngPurpose::Selection, 0};
  };

  // f_i(x) for every kernel into f_, and Σ_i p_i f_i.
  double combine(Replicate& rep, const double* x) {
    const std::size_t K = dictionary_.size();
    const auto n = static_cast<Eigen::Index>(rep.support.size());
    if (n == 0) {
      std::fill(f_.begin(), f_.end(), 0.0);
    } else {
      x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(context_.n_features));
      bank_.evaluate(rep.support, x_, x_.squaredNorm(), k_);
      for (std::size_t i = 0; i < K; ++i) f_[i] = rep.support.column(0).dot(k_.col(static_cast<Eigen::Index>(i)).head(n));
    }
    double top = rep.log_w[0];
    for (double a : rep.log_w) top = std::max(top, a);
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < K; ++i) {
      const double w = std::exp(rep.log_w[i] - top);
      num += w * f_[i];
      den += w;
    }
    return num / den;
  }

  AlgoContext context_;
  Dictionary dictionary_;
  LossKind loss_ = LossKind::Squared;
  std::size_t budget_ = 220;
  double nu_ = 0.25, lambda_ = 0.0, eta_ = 0.0;
  KernelBank bank_;
  std::vector<Replicate> reps_;
  std::int64_t t_ = 0;
  Eigen::VectorXd x_;
  Eigen::MatrixXd k_;
  std::vector<double> f_;
};

}  // namespace

void add_lkmbooks(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"lkmbooks",
                      "LKMBooks (Li & Liao 2022) as the bandit paper runs it: K kernels on one budgeted support set, "
                      "expert-advice weights, Bernoulli-sampled budget (bandit §7.2)",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new LkmBooks(params, context));
                      }});
}

}  // namespace omkl::detail
