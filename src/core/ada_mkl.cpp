/// @file ada_mkl.cpp
/// @brief AdaMKL: the AdaRaker interval ensemble whose instances are exact-kernel OMKL learners
/// (spec/raker.md §5.7), on the 5-kernel dictionary by default.
///
/// Each instance is an OMKL learner (exact_kernel.h) with step η_I; the instance weights are the
/// shared IntervalWeights, so AdaMKL and AdaRaker differ only in what an instance is. Paper
/// profile: a fresh learner (empty support set) per interval; reference profile: one persistent
/// learner per level with the released code's meta-weights (not validated against the tables).
#include <algorithm>
#include <memory>

#include "core/exact_kernel.h"
#include "core/interval_weights.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

class AdaMkl final : public Algorithm {
 public:
  AdaMkl(ParamReader& params, const AlgoContext& context) : context_(context) {
    base_ = read_omkl_config(params, context, 0, false);
    intervals_ = read_interval_config(params, context, base_.rule.loss);
    metric_.first_error_is_one = params.get_bool(
        "first_error_is_one", context.profile == Profile::Reference,
        "count the error at t = 1 as 1 (spec/raker.md §7.3)");
    instances_.resize(intervals_.n_levels);
    weights_ = IntervalWeights(&intervals_);
    instance_f_.assign(intervals_.n_levels, 0.0);
  }

  AdaMkl(const AdaMkl&) = delete;
  AdaMkl& operator=(const AdaMkl&) = delete;

  std::size_t n_replicates() const override { return context_.n_replicates(); }
  // Exact kernels: no randomness, every replicate is the same run.
  bool randomized() const override { return false; }

  void step(const double* x, double y, double* predictions) override {
    const std::int64_t t = ++t_;
    start_intervals(t);
    weights_.begin_step(t);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instance_f_[j] = 0.0;
      if (weights_.active(j, t)) instances_[j]->step(x, y, &instance_f_[j]);
    }
    const double prediction = weights_.combine(t, instance_f_.data());
    weights_.update(t, instance_f_.data(), prediction, y);
    std::fill(predictions, predictions + n_replicates(), prediction);
  }

  void predict(const double* x, double* predictions) override {
    const std::int64_t t = t_ + 1;
    IntervalWeights weights = weights_;
    weights.begin_step(t);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instance_f_[j] = 0.0;
      // An instance that (re)starts at t is empty and predicts 0.
      const bool restarting = intervals_.fresh && weights.starts(j, t);
      if (weights.active(j, t) && instances_[j] && !restarting) instances_[j]->predict(x, &instance_f_[j]);
    }
    std::fill(predictions, predictions + n_replicates(), weights.combine(t, instance_f_.data()));
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("adamkl");
    out.put_i64(t_);
    out.put_f64s(weights_.raw());
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      out.put_u64(instances_[j] ? 1 : 0);
      if (instances_[j]) instances_[j]->save_state(out);
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("adamkl");
    t_ = in.get_i64();
    in.get_f64s(weights_.raw().data(), weights_.raw().size());
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instances_[j].reset();
      if (in.get_u64() == 0) continue;
      instances_[j] = make_instance(j);
      instances_[j]->load_state(in);
    }
  }

  MetricConvention metric_convention() const override { return metric_; }

 private:
  std::unique_ptr<KogdEnsemble> make_instance(std::size_t level) const {
    KogdEnsembleConfig config = base_;
    config.rule.eta = intervals_.level_rate[level];
    config.rule.schedule = StepSchedule::Constant;
    if (intervals_.fresh) {
      // A fresh instance stores at most its interval's samples.
      const std::size_t length = std::size_t{1} << std::min<std::size_t>(level, 40);
      config.capacity_hint = std::min(config.capacity_hint, length);
    }
    return std::make_unique<KogdEnsemble>(std::move(config), context_.n_features, 1);
  }

  void start_intervals(std::int64_t t) {
    for (std::size_t j = 0; j < intervals_.n_levels; ++j)
      if (weights_.starts(j, t) && (intervals_.fresh || !instances_[j])) instances_[j] = make_instance(j);
  }

  AlgoContext context_;
  KogdEnsembleConfig base_;
  IntervalConfig intervals_;
  MetricConvention metric_;
  std::vector<std::unique_ptr<KogdEnsemble>> instances_;  // per level; null before its first interval
  IntervalWeights weights_;
  std::vector<double> instance_f_;
  std::int64_t t_ = 0;
};

}  // namespace

void add_ada_mkl_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"adamkl", "AdaMKL: the AdaRaker interval ensemble over exact-kernel OMKL instances",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new AdaMkl(params, context));
                      }});
}

}  // namespace omkl::detail
