/// @file raker.cpp
/// @brief Raker (random-feature multi-kernel learning) and the single-kernel RF learner.
///
/// Y. Shen, T. Chen, G. B. Giannakis, "Random Feature-based Online Multi-kernel Learning in
/// Environments with Unknown Dynamics", JMLR 20(22):1–36, 2019 — Algorithm 1.
///
/// θ updates never depend on the kernel weights (spec/raker.md §8.1), so a block of samples is
/// one backend call that advances every (replicate, kernel) trajectory, followed by a host pass
/// that computes the weights and the ensemble predictions from the per-step predictions.
#include <algorithm>

#include "core/parallel.h"
#include "features/rf_ensemble.h"
#include "features/window_advance.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

class Raker final : public Algorithm {
 public:
  bool batches_replicates() const override { return true; }  // on the backend (RfBackend)
  Raker(ParamReader& params, const AlgoContext& context, const std::string& default_dictionary,
        bool single_kernel)
      : context_(context), single_kernel_(single_kernel) {
    const double default_lambda = context.task == Task::Classification ? 0.005 : 0.01;
    config_ = read_rf_ensemble_config(params, context, default_dictionary, default_lambda);
    if (single_kernel && config_.dictionary.size() != 1)
      params.fail("dict", "must name exactly one kernel for a single-kernel learner");
    // spec/bandit.md §7.3, A17: the bandit paper's reference code divides its projection by σ_i
    // cumulatively inside the loop over kernels, so kernel i runs with bandwidth Π_{k≤i} σ_k; its
    // published Raker rows were very likely made so. `reference_cumulative` reproduces that.
    params.alias("raker_bandwidth_mode", "bandwidth_mode");  // the bandit spec's name (§7.3)
    if (params.get_choice("bandwidth_mode", "correct", {"correct", "reference_cumulative"},
                          "reference_cumulative: kernel i with bandwidth σ_1·…·σ_i, the bandit paper's reference "
                          "code's defect (spec/bandit.md §7.3)") == "reference_cumulative") {
      double product = 1.0;
      for (KernelSpec& k : config_.dictionary) {
        if (k.family != KernelFamily::Gaussian)
          params.fail("bandwidth_mode", "reference_cumulative multiplies Gaussian bandwidths; the dictionary has " +
                                            k.name());
        product *= k.sigma;
        k.sigma = product;
      }
    }
    step_ = read_step_config(params, context);
    metric_.first_error_is_one = params.get_bool(
        "first_error_is_one", context.profile == Profile::Reference,
        "count the error at t = 1 as 1 (reference code artifact, spec/raker.md §7.3)");
    const std::size_t P = config_.dictionary.size();
    std::vector<std::uint32_t> slot_kernel(P);
    for (std::size_t p = 0; p < P; ++p) slot_kernel[p] = static_cast<std::uint32_t>(p);
    SlotSchedule schedule;
    schedule.eta = step_.eta;
    schedule.inv_sqrt_t = step_.inv_sqrt_t;
    schedule.step_scale = config_.step_scale;
    schedule.shrink_scale = config_.shrink_scale;
    schedule.lambda = config_.lambda;
    schedules_.assign(P, schedule);
    backend_ = make_rf_ensemble_backend(config_, context, slot_kernel);
    weights_.resize(context.n_replicates());
    for (auto& w : weights_) w.reset(P, &config_.weights);
    // On a backend that keeps log-domain weights beside the trajectories (CUDA), only the
    // ensemble predictions come back; weights_ is then refreshed from the device on demand.
    fused_ = backend_->supports_fused_weights() && fused_weights_for(config_, P, fused_weights_);
    if (fused_)
      for (std::size_t r = 0; r < weights_.size(); ++r) backend_->set_log_weights(r, weights_[r].raw().data());
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  void step(const double* x, double y, double* predictions) override {
    step_block(x, &y, 1, context_.n_features, predictions);
  }

  void step_block(const double* x, const double* y, std::size_t n, std::size_t d,
                  double* predictions) override {
    const std::size_t R = n_replicates(), P = config_.dictionary.size();
    updates_ += static_cast<std::uint64_t>(n) * R * P;  // every kernel learns at every step
    if (fused_) {
      backend_->advance_fused(x, y, n, t_ + 1, schedules_, fused_weights_, predictions);
      t_ += static_cast<std::int64_t>(n);
      return;
    }
    advance_in_windows<std::vector<double>>(
        *backend_, schedules_, x, y, n, d, R, P, t_, f_, norm2_,
        [&](std::size_t r, std::size_t row, std::int64_t t, const double* f, const double* n2, std::vector<double>& scratch) {
          predictions[row * R + r] = weights_[r].combine(f);
          update_kernel_weights(config_, schedules_, 0, t, y[row], f, n2, weights_[r], scratch);
        });
  }

  void predict(const double* x, double* predictions) override {
    const std::size_t R = n_replicates(), P = config_.dictionary.size();
    f_.resize(R * P);
    backend_->predict(x, t_ + 1, schedules_, f_.data());
    pull_fused_weights();
    for (std::size_t r = 0; r < R; ++r) predictions[r] = weights_[r].combine(f_.data() + r * P);
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("raker");
    out.put_i64(t_);
    save_backend_state(*backend_, out);
    pull_fused_weights();
    for (const auto& w : weights_) w.save(out);
  }

  void load_state(StateReader& in) override {
    in.expect_tag("raker");
    t_ = in.get_i64();
    // Every kernel of every replicate learns at every step, so the count follows from t alone
    // (it is not in the checkpoint).
    updates_ = static_cast<std::uint64_t>(t_) * n_replicates() * config_.dictionary.size();
    load_backend_state(*backend_, in);
    for (auto& w : weights_) {
      in.get_f64s(w.raw().data(), w.size());
      w.check_stored(std::string(single_kernel_ ? "rf-ogd" : "raker") + " kernel weights");
    }
    if (fused_)
      for (std::size_t r = 0; r < weights_.size(); ++r) backend_->set_log_weights(r, weights_[r].raw().data());
  }

  MetricConvention metric_convention() const override { return metric_; }
  std::uint64_t kernel_updates() const override { return updates_; }

  std::vector<double> kernel_weights(std::size_t replicate) const override {
    pull_fused_weights();
    std::vector<double> out(weights_.at(replicate).size());
    weights_[replicate].normalized(out.data());
    return out;
  }

 private:
  // The fused path keeps the authoritative log-weights on the device.
  void pull_fused_weights() const {
    if (!fused_) return;
    for (std::size_t r = 0; r < weights_.size(); ++r) backend_->get_log_weights(r, weights_[r].raw().data());
  }

  AlgoContext context_;
  RfEnsembleConfig config_;
  StepConfig step_;
  MetricConvention metric_;
  std::vector<SlotSchedule> schedules_;
  std::unique_ptr<RfBackend> backend_;
  mutable std::vector<KernelWeights> weights_;  // per replicate (a cache of the device's when fused)
  bool fused_ = false;
  FusedWeights fused_weights_;
  bool single_kernel_ = false;          // rf-ogd (names it in messages)
  std::int64_t t_ = 0;                  // samples consumed
  std::uint64_t updates_ = 0;           // θ updates, all replicates
  std::vector<double> f_, norm2_;       // scratch
};

}  // namespace

// AdaRaker (ada_raker.cpp) belongs to this family.
void add_ada_raker_algorithms(std::vector<AlgorithmInfo>& registry);

void add_raker_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"raker", "Raker: random-feature multi-kernel learning (JMLR 2019, Alg. 1)",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(
                            new Raker(params, context, "jmlr19-rf", false));
                      }});
  registry.push_back({"rf-ogd", "single-kernel random-feature online gradient descent",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new Raker(params, context, "gauss:1", true));
                      }});
  add_ada_raker_algorithms(registry);
}

}  // namespace omkl::detail
