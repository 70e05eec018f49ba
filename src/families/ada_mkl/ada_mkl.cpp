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

#include "families/exact_kernel/exact_kernel.h"
#include "core/interval_weights.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

class AdaMkl final : public Algorithm {
 public:
  AdaMkl(ParamReader& params, const AlgoContext& context) : context_(context) {
    base_ = read_omkl_config(params, context, 0, false);
    intervals_ = read_interval_config(params, context, base_.rule.loss);
    metric_.first_error_is_one = base_.first_error_is_one;  // read_omkl_config()'s
    // Every level stores the recent samples and evaluates the same kernels on them: with a
    // dictionary whose kernels are evaluated row by row (so that a row's values do not depend on
    // where it is stored), the rows are kept once and evaluated once per step for all levels,
    // with exactly the numbers of per-level evaluation.
    bool row_by_row = !base_.averaged_kernel && base_.budget == 0;
    for (const KernelSpec& k : base_.kernels)
      row_by_row = row_by_row && (k.family == KernelFamily::Gaussian || k.family == KernelFamily::Linear ||
                                  k.family == KernelFamily::Polynomial);
    share_rows_ = params.get_bool("share_kernel_rows", true,
                                  "evaluate the levels' kernel rows once per step (same numbers; applies to "
                                  "Gaussian, linear and polynomial dictionaries)") &&
                  row_by_row;
    if (share_rows_) {
      history_ = SupportSet(context.n_features, 0, 0, base_.capacity_hint);
      history_bank_ = KernelBank(base_.kernels, false);
    }
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
    const bool lend = evaluate_shared_rows(x);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instance_f_[j] = 0.0;
      if (!weights_.active(j, t)) continue;
      if (lend) instances_[j]->lend_kernel_rows(&history_k_, history_.size());
      instances_[j]->step(x, y, &instance_f_[j]);
    }
    if (share_rows_) remember(x);
    const double prediction = weights_.combine(t, instance_f_.data());
    weights_.update(t, instance_f_.data(), prediction, y);
    std::fill(predictions, predictions + n_replicates(), prediction);
  }

  void predict(const double* x, double* predictions) override {
    const std::int64_t t = t_ + 1;
    IntervalWeights weights = weights_;
    weights.begin_step(t);
    const bool lend = evaluate_shared_rows(x);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instance_f_[j] = 0.0;
      // An instance that (re)starts at t is empty and predicts 0.
      const bool restarting = intervals_.fresh && weights.starts(j, t);
      if (!weights.active(j, t) || !instances_[j] || restarting) continue;
      if (lend) instances_[j]->lend_kernel_rows(&history_k_, history_.size());
      instances_[j]->predict(x, &instance_f_[j]);
    }
    std::fill(predictions, predictions + n_replicates(), weights.combine(t, instance_f_.data()));
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("adamkl");
    out.put_i64(t_);
    weights_.save(out);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      out.put_u64(instances_[j] ? 1 : 0);
      if (instances_[j]) instances_[j]->save_state(out);
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("adamkl");
    t_ = in.get_i64();
    in.get_f64s(weights_.raw().data(), weights_.raw().size());
    weights_.check_stored("adamkl instance weights");
    for (std::size_t j = 0; j < intervals_.n_levels; ++j) {
      instances_[j].reset();
      if (in.get_u64() == 0) continue;
      instances_[j] = make_instance(j);
      instances_[j]->load_state(in);
    }
    // Step t_ + 1 steps every level active then; one that does not start then must already
    // have an instance (a file with a valid checksum may still be damaged or crafted).
    if (t_ < 0) throw InputError("checkpoint: adamkl step count " + std::to_string(t_) + " is negative");
    const std::int64_t next = t_ + 1;
    for (std::size_t j = 0; j < intervals_.n_levels; ++j)
      if (weights_.active(j, next) && !weights_.starts(j, next) && !instances_[j])
        throw InputError("checkpoint: adamkl level " + std::to_string(j) + " is active at step " +
                         std::to_string(next) + " but holds no learner");
    rebuild_shared_rows();
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

  // κ_j(x, ·) on the shared rows into history_k_; false when there is nothing to lend.
  bool evaluate_shared_rows(const double* x) {
    if (!share_rows_ || history_.size() == 0) return false;
    history_x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(context_.n_features));
    history_bank_.evaluate(history_, history_x_, history_x_.squaredNorm(), history_k_);
    return true;
  }

  // After the levels stored x: the shared rows are the newest samples of the largest support
  // (every active level has stored every sample since it started, so the supports are suffixes
  // of one history).
  void remember(const double* x) {
    history_x_ = Eigen::Map<const Eigen::VectorXd>(x, static_cast<Eigen::Index>(context_.n_features));
    history_.push_back(history_x_, history_x_.squaredNorm());
    std::size_t largest = 0;
    for (const auto& instance : instances_)
      if (instance) largest = std::max(largest, instance->support().size());
    while (history_.size() > largest) history_.pop_front();
  }

  // From a checkpoint: the shared rows are the rows of the largest support.
  void rebuild_shared_rows() {
    if (!share_rows_) return;
    history_ = SupportSet(context_.n_features, 0, 0, base_.capacity_hint);
    const KogdEnsemble* largest = nullptr;
    for (const auto& instance : instances_)
      if (instance && (!largest || instance->support().size() > largest->support().size())) largest = instance.get();
    if (!largest) return;
    const SupportSet& rows = largest->support();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      history_x_ = Eigen::Map<const Eigen::VectorXd>(rows.row(i), static_cast<Eigen::Index>(context_.n_features));
      history_.push_back(history_x_, rows.norm2(i));
    }
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
  // Shared kernel rows (see the constructor).
  bool share_rows_ = false;
  SupportSet history_;
  KernelBank history_bank_;
  Eigen::MatrixXd history_k_;
  Eigen::VectorXd history_x_;
};

}  // namespace

void add_ada_mkl_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"adamkl", "AdaMKL: the AdaRaker interval ensemble over exact-kernel OMKL instances",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new AdaMkl(params, context));
                      }});
}

}  // namespace omkl::detail
