/// @file ada_raker.cpp
/// @brief AdaRaker: an adaptive ensemble of Raker instances on geometric covering intervals.
///
/// Y. Shen, T. Chen, G. B. Giannakis, "Random Feature-based Online Multi-kernel Learning in
/// Environments with Unknown Dynamics", JMLR 20(22):1–36, 2019 — Algorithm 2.
///
/// One loop serves both profiles; what differs is a set of named options
/// (spec/raker.md §4.4, §4.9, Appendix D):
///  - placement: daniely_1based (level j active from t = 2^j, restarts when 2^j | t) or
///    matlab_0based (the authors' code: level j active from 2^j + 1, restarts when 2^j | t − 1);
///  - restart_state: fresh (a new Raker per interval) or persistent (one Raker per level);
///  - h_rule: hedge (log-domain weights, h = η at an interval start, g += η·(C_ens − C_I)) or
///    matlab (all levels' weights in the denominator, min-max normalised losses, base η of the
///    newest level, floors and renormalisation as in the released code).
/// The θ trajectories do not depend on any weight, so blocks are advanced by the backend in one
/// call and the weights are computed in a host pass afterwards.
#include <algorithm>
#include <cmath>

#include "core/intervals.h"
#include "core/rf_ensemble.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

constexpr std::size_t kWindow = 256;

enum class HRule { Hedge, Matlab };

class AdaRaker final : public Algorithm {
 public:
  AdaRaker(ParamReader& params, const AlgoContext& context) : context_(context) {
    const bool reference = context.profile == Profile::Reference;
    const bool classification = context.task == Task::Classification;
    const double default_lambda = classification ? (reference ? 0.0005 : 0.005) : 0.01;
    config_ = read_rf_ensemble_config(params, context, "jmlr19-rf", default_lambda);
    placement_ = params.get_choice("placement", reference ? "matlab_0based" : "daniely_1based",
                                   {"daniely_1based", "matlab_0based"},
                                   "interval placement") == "matlab_0based"
                     ? Placement::Matlab
                     : Placement::Daniely;
    fresh_ = params.get_choice("restart_state", reference ? "persistent" : "fresh",
                               {"fresh", "persistent"},
                               "instance state at a new interval") == "fresh";
    h_rule_ = params.get_choice("h_rule", reference ? "matlab" : "hedge", {"hedge", "matlab"},
                                "instance-weight rule") == "matlab"
                  ? HRule::Matlab
                  : HRule::Hedge;
    h_sign_literal_ = params.get_choice("h_sign", "corrected", {"corrected", "literal"},
                                        "sign in eq. (31); literal is a test switch") == "literal";
    // Interval rates η_I = min(cap, eta0/√len); the reference code uses len = 2|I|.
    const double default_eta0 = reference ? (classification ? 1.0 : 0.1) : 10.0;
    const double default_cap = reference ? (classification ? 0.5 : 0.05) : 0.5;
    const double eta0 = params.get_double("eta0", default_eta0, "interval rate numerator η_0");
    const double cap = params.get_double("eta_cap", default_cap, "upper bound of interval rates");
    if (!(eta0 > 0)) params.fail("eta0", "must be > 0");
    if (!(cap > 0)) params.fail("eta_cap", "must be > 0");
    const bool instance_eta_w = params.get_choice("instance_weight_step", "fixed",
                                                  {"fixed", "eta_I"},
                                                  "kernel-weight step inside instances") == "eta_I";
    metric_.first_error_is_one = params.get_bool(
        "first_error_is_one", reference, "count the error at t = 1 as 1 (spec/raker.md §7.3)");
    std::int64_t default_levels = 32;
    if (context.horizon > 0) default_levels = floor_log2(context.horizon) + 1;
    else if (h_rule_ == HRule::Matlab)
      params.fail("h_rule", "matlab needs the stream length (all levels share the normaliser)");
    const std::int64_t levels = params.get_int("levels", default_levels,
                                               "number of interval levels (default ⌊log2 T⌋ + 1)");
    if (levels < 1 || levels > 62) params.fail("levels", "must be in 1..62");
    n_levels_ = static_cast<std::size_t>(levels);

    const std::size_t P = config_.dictionary.size();
    std::vector<std::uint32_t> slot_kernel(n_levels_ * P);
    level_rate_.resize(n_levels_);
    level_weights_.resize(n_levels_);
    for (std::size_t j = 0; j < n_levels_; ++j) {
      const double length = std::ldexp(1.0, static_cast<int>(j) + (placement_ == Placement::Matlab));
      level_rate_[j] = std::min(cap, eta0 / std::sqrt(length));
      level_weights_[j] = config_.weights;
      if (instance_eta_w) level_weights_[j].eta_w = level_rate_[j];
      SlotSchedule s;
      s.eta = level_rate_[j];
      s.step_scale = config_.step_scale;
      s.shrink_scale = config_.shrink_scale;
      s.lambda = config_.lambda;
      s.active_from = active_from(j);
      // Daniely intervals start at multiples of 2^j, so a fresh learner is a θ reset there.
      // Matlab-placement restarts (2^j | t − 1) are only used with persistent state.
      s.reset_period = fresh_ && placement_ == Placement::Daniely ? (std::int64_t{1} << j) : 0;
      if (fresh_ && placement_ == Placement::Matlab)
        params.fail("restart_state", "fresh needs placement=daniely_1based");
      for (std::size_t p = 0; p < P; ++p) {
        slot_kernel[j * P + p] = static_cast<std::uint32_t>(p);
        schedules_.push_back(s);
      }
    }
    backend_ = make_rf_ensemble_backend(config_, context, slot_kernel);
    const std::size_t R = context.n_replicates();
    weights_.resize(R * n_levels_);
    for (std::size_t i = 0; i < weights_.size(); ++i)
      weights_[i].reset(P, &level_weights_[i % n_levels_]);
    // Hedge keeps log h (set at each interval start); the matlab rule starts every g at 1.
    g_.assign(R * n_levels_, h_rule_ == HRule::Matlab ? 1.0 : 0.0);
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  void step(const double* x, double y, double* predictions) override {
    step_block(x, &y, 1, context_.n_features, predictions);
  }

  void step_block(const double* x, const double* y, std::size_t n, std::size_t d,
                  double* predictions) override {
    const std::size_t R = n_replicates(), S = schedules_.size();
    const bool need_norm2 = backend_->problem().need_norm2;
    for (std::size_t start = 0; start < n; start += kWindow) {
      const std::size_t m = std::min(kWindow, n - start);
      f_.resize(m * R * S);
      norm2_.resize(need_norm2 ? m * R * S : 0);
      backend_->advance(x + start * d, y + start, m, t_ + 1, schedules_, f_.data(),
                        need_norm2 ? norm2_.data() : nullptr);
      for (std::size_t i = 0; i < m; ++i) {
        const std::int64_t t = t_ + 1 + static_cast<std::int64_t>(i);
        for (std::size_t r = 0; r < R; ++r) {
          const double* f = f_.data() + (i * R + r) * S;
          const double* n2 = need_norm2 ? norm2_.data() + (i * R + r) * S : nullptr;
          predictions[(start + i) * R + r] = ensemble_step(r, t, f, n2, y[start + i]);
        }
      }
      t_ += static_cast<std::int64_t>(m);
    }
  }

  void predict(const double* x, double* predictions) override {
    const std::size_t R = n_replicates(), S = schedules_.size(), P = config_.dictionary.size();
    const std::int64_t t = t_ + 1;
    f_.resize(R * S);
    backend_->predict(x, t, schedules_, f_.data());
    for (std::size_t r = 0; r < R; ++r) {
      // Work on copies: predict() must not change the state.
      std::vector<KernelWeights> weights(weights_.begin() + r * n_levels_,
                                         weights_.begin() + (r + 1) * n_levels_);
      std::vector<double> g(g_.begin() + r * n_levels_, g_.begin() + (r + 1) * n_levels_);
      begin_step(t, weights.data(), g.data());
      instance_predictions(t, weights.data(), f_.data() + r * S, P);
      predictions[r] = combine(t, g.data());
    }
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("adaraker");
    out.put_i64(t_);
    save_backend_state(*backend_, out);
    for (const auto& w : weights_) out.put_f64s(w.raw());
    out.put_f64s(g_);
  }

  void load_state(StateReader& in) override {
    in.expect_tag("adaraker");
    t_ = in.get_i64();
    load_backend_state(*backend_, in);
    for (auto& w : weights_) in.get_f64s(w.raw().data(), w.size());
    in.get_f64s(g_.data(), g_.size());
  }

  MetricConvention metric_convention() const override { return metric_; }

 private:
  std::int64_t active_from(std::size_t j) const {
    return level_active_from(placement_, static_cast<int>(j));
  }
  bool active(std::size_t j, std::int64_t t) const {
    return level_active(placement_, static_cast<int>(j), t);
  }
  bool starts(std::size_t j, std::int64_t t) const {
    return level_starts(placement_, static_cast<int>(j), t);
  }

  // Interval starts at t: fresh kernel weights (fresh state) and the starting instance weight.
  void begin_step(std::int64_t t, KernelWeights* weights, double* g) const {
    for (std::size_t j = 0; j < n_levels_; ++j) {
      if (!starts(j, t)) continue;
      if (fresh_) weights[j].reset(config_.dictionary.size(), &level_weights_[j]);
      g[j] = h_rule_ == HRule::Hedge ? std::log(level_rate_[j]) : level_rate_[j];
    }
  }

  void instance_predictions(std::int64_t t, const KernelWeights* weights, const double* f,
                            std::size_t P) {
    instance_f_.assign(n_levels_, 0.0);
    for (std::size_t j = 0; j < n_levels_; ++j)
      if (active(j, t)) instance_f_[j] = weights[j].combine(f + j * P);
  }

  double combine(std::int64_t t, const double* g) const {
    double total = 0.0, weighted = 0.0;
    if (h_rule_ == HRule::Hedge) {
      double top = -HUGE_VAL;
      for (std::size_t j = 0; j < n_levels_; ++j)
        if (active(j, t)) top = std::max(top, g[j]);
      for (std::size_t j = 0; j < n_levels_; ++j) {
        if (!active(j, t)) continue;
        const double h = std::exp(g[j] - top);
        total += h;
        weighted += h * instance_f_[j];
      }
      return weighted / total;
    }
    // Reference code: inactive levels predict 0 but keep their weight in the denominator.
    for (std::size_t j = 0; j < n_levels_; ++j) {
      total += g[j];
      weighted += g[j] * instance_f_[j];
    }
    const double score = weighted / total;
    if (context_.task == Task::Classification) return score > 0 ? 1.0 : (score < 0 ? -1.0 : 0.0);
    return score;
  }

  double ensemble_step(std::size_t r, std::int64_t t, const double* f, const double* n2, double y) {
    const std::size_t P = config_.dictionary.size();
    KernelWeights* weights = weights_.data() + r * n_levels_;
    double* g = g_.data() + r * n_levels_;
    begin_step(t, weights, g);
    instance_predictions(t, weights, f, P);
    const double prediction = combine(t, g);
    if (h_rule_ == HRule::Hedge) update_hedge(t, g, prediction, y);
    else update_matlab(t, g, y);
    for (std::size_t j = 0; j < n_levels_; ++j)
      if (active(j, t)) weights[j].update(f + j * P, n2 ? n2 + j * P : nullptr, y);
    return prediction;
  }

  // g_I += η_I·(C(ŷ) − C(f̂_I)): instances that beat the ensemble gain weight (§4.4, sign
  // corrected; h_sign=literal flips it for tests).
  void update_hedge(std::int64_t t, double* g, double prediction, double y) const {
    const double ensemble_loss = loss_value(config_.loss, prediction, y);
    const double sign = h_sign_literal_ ? -1.0 : 1.0;
    for (std::size_t j = 0; j < n_levels_; ++j) {
      if (!active(j, t)) continue;
      g[j] += sign * level_rate_[j] * (ensemble_loss - loss_value(config_.loss, instance_f_[j], y));
    }
  }

  // The released code's meta update (spec/raker.md §4.9).
  void update_matlab(std::int64_t t, double* g, double y) const {
    const bool classification = context_.task == Task::Classification;
    double hi = -HUGE_VAL, lo = HUGE_VAL;
    std::size_t newest = 0;
    std::vector<double> error(n_levels_, 0.0);
    for (std::size_t j = 0; j < n_levels_; ++j) {
      if (!active(j, t)) continue;
      newest = j;
      const double e = classification ? (y * instance_f_[j] < 0 ? 1.0 : 0.0)
                                      : (instance_f_[j] - y) * (instance_f_[j] - y);
      error[j] = e;
      hi = std::max(hi, e);
      lo = std::min(lo, e);
    }
    constexpr double kFloor = 1e-10, kRenormAbove = 1e12;
    const double base = level_rate_[newest];
    double top = 0.0;
    for (std::size_t j = 0; j < n_levels_; ++j) {
      if (!active(j, t)) continue;
      const double rho = (error[j] - 0.5 * (hi + lo) + kFloor) / (0.5 * (hi - lo) + kFloor);
      g[j] = g[j] * std::pow(base, rho) + kFloor;
      top = std::max(top, g[j]);
    }
    for (int pass = top > kRenormAbove ? 0 : 1; pass < 2; ++pass) {
      double total = 0.0;
      for (std::size_t j = 0; j < n_levels_; ++j) total += g[j];
      for (std::size_t j = 0; j < n_levels_; ++j) g[j] /= total;
    }
  }

  AlgoContext context_;
  RfEnsembleConfig config_;
  Placement placement_ = Placement::Daniely;
  HRule h_rule_ = HRule::Hedge;
  bool fresh_ = true;
  bool h_sign_literal_ = false;
  MetricConvention metric_;
  std::size_t n_levels_ = 0;
  std::vector<double> level_rate_;
  std::vector<WeightConfig> level_weights_;  // per level (η_w may depend on the level)
  std::vector<SlotSchedule> schedules_;      // per slot = level × kernel
  std::unique_ptr<RfBackend> backend_;
  std::vector<KernelWeights> weights_;       // per replicate × level
  std::vector<double> g_;                    // per replicate × level: log h (hedge) or g (matlab)
  std::int64_t t_ = 0;
  std::vector<double> f_, norm2_, instance_f_;
};

}  // namespace

void add_ada_raker_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"adaraker", "AdaRaker: adaptive ensemble of Raker instances (JMLR 2019, Alg. 2)",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new AdaRaker(params, context));
                      }});
}

}  // namespace omkl::detail
