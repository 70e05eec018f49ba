/// @file ada_raker.cpp
/// @brief AdaRaker: an adaptive ensemble of Raker instances on geometric covering intervals.
///
/// Y. Shen, T. Chen, G. B. Giannakis, "Random Feature-based Online Multi-kernel Learning in
/// Environments with Unknown Dynamics", JMLR 20(22):1–36, 2019 — Algorithm 2.
///
/// One loop serves both profiles; the differences are named options of the interval ensemble
/// (interval_weights.h): placement, restart_state (fresh / persistent) and h_rule
/// (hedge / matlab). The θ trajectories do not depend on any weight, so blocks are advanced by
/// the backend in one call and the weights are computed in a host pass afterwards.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <future>
#include <memory>

#include "core/interval_weights.h"
#include "core/parallel.h"
#include "features/rf_ensemble.h"
#include "features/window_advance.h"
#include "core/step_pool.h"
#include "core/timing.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

class AdaRaker final : public Algorithm {
 public:
  bool batches_replicates() const override { return true; }  // on the backend (RfBackend)
  AdaRaker(ParamReader& params, const AlgoContext& context) : context_(context) {
    const bool reference = context.profile == Profile::Reference;
    const bool classification = context.task == Task::Classification;
    const double default_lambda = classification ? (reference ? 0.0005 : 0.005) : 0.01;
    config_ = read_rf_ensemble_config(params, context, "jmlr19-rf", default_lambda);
    intervals_ = read_interval_config(params, context, config_.loss);
    const bool instance_eta_w = params.get_choice("instance_weight_step", "fixed",
                                                  {"fixed", "eta_I"},
                                                  "kernel-weight step inside instances") == "eta_I";
    // Only the exp_eta rule has a step η_w to replace (minmax, mistake and pow_beta use β).
    if (instance_eta_w && config_.weights.rule != WeightRule::ExpEta && params.given("instance_weight_step"))
      params.fail("instance_weight_step", "'eta_I' sets the exp_eta rule's step η_w; this weight_rule has none");
    metric_.first_error_is_one = params.get_bool(
        "first_error_is_one", reference, "count the error at t = 1 as 1 (spec/raker.md §7.3)");

    const std::size_t P = config_.dictionary.size(), L = intervals_.n_levels;
    std::vector<std::uint32_t> slot_kernel(L * P);
    level_weights_.resize(L);
    for (std::size_t j = 0; j < L; ++j) {
      level_weights_[j] = config_.weights;
      if (instance_eta_w) level_weights_[j].eta_w = intervals_.level_rate[j];
      SlotSchedule s;
      s.eta = intervals_.level_rate[j];
      s.step_scale = config_.step_scale;
      s.shrink_scale = config_.shrink_scale;
      s.lambda = config_.lambda;
      s.active_from = level_active_from(intervals_.placement, static_cast<int>(j));
      // Daniely intervals start at multiples of 2^j, so a fresh learner is a θ reset there.
      s.reset_period = intervals_.fresh ? (std::int64_t{1} << j) : 0;
      for (std::size_t p = 0; p < P; ++p) {
        slot_kernel[j * P + p] = static_cast<std::uint32_t>(p);
        schedules_.push_back(s);
      }
    }
    backend_ = make_rf_ensemble_backend(config_, context, slot_kernel);
    const std::size_t R = context.n_replicates();
    kernel_weights_.resize(R * L);
    for (std::size_t i = 0; i < kernel_weights_.size(); ++i)
      kernel_weights_[i].reset(P, &level_weights_[i % L]);
    instance_weights_.assign(R, IntervalWeights(&intervals_));
    // With log-domain kernel weights on a backend that keeps them beside the trajectories
    // (CUDA), the backend returns the instance predictions f̂_I directly (one group per level).
    fused_ = backend_->supports_fused_weights() && !instance_eta_w &&
             fused_weights_for(config_, P, fused_weights_);
    if (fused_) {
      push_fused_weights();
      pool_ = std::make_unique<StepPool>(std::min(context.host_threads, R));
    }
  }

  ~AdaRaker() override {
    if (fused_ && timing_enabled())
      std::fprintf(stderr, "omkl timing: adaraker fused loop: backend %.2f ms, waiting for the overlapped "
                   "host instance weights %.2f ms\n", fused_backend_ms_, fused_host_wait_ms_);
  }

  // The weight objects point into this object's configuration.
  AdaRaker(const AdaRaker&) = delete;
  AdaRaker& operator=(const AdaRaker&) = delete;

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  void step(const double* x, double y, double* predictions) override {
    step_block(x, &y, 1, context_.n_features, predictions);
  }

  void step_block(const double* x, const double* y, std::size_t n, std::size_t d,
                  double* predictions) override {
    const std::size_t R = n_replicates(), S = schedules_.size();
    updates_ += active_level_steps(t_ + 1, n) * R * config_.dictionary.size();
    if (fused_) {
      step_block_fused(x, y, n, d, predictions);
      return;
    }
    struct Scratch {
      std::vector<double> instance_f, scratch;
    };
    advance_in_windows<Scratch>(
        *backend_, schedules_, x, y, n, d, R, S, t_, f_, norm2_,
        [&](std::size_t r, std::size_t row, std::int64_t t, const double* f, const double* n2, Scratch& scratch) {
          predictions[row * R + r] = ensemble_step(r, t, f, n2, y[row], scratch.instance_f, scratch.scratch);
        });
  }

  void predict(const double* x, double* predictions) override {
    const std::size_t R = n_replicates(), S = schedules_.size(), L = intervals_.n_levels;
    const std::int64_t t = t_ + 1;
    f_.resize(R * S);
    backend_->predict(x, t, schedules_, f_.data());
    pull_fused_weights();
    for (std::size_t r = 0; r < R; ++r) {
      // Copies: predict() must not change the state.
      std::vector<KernelWeights> kernel_weights(kernel_weights_.begin() + r * L,
                                                kernel_weights_.begin() + (r + 1) * L);
      IntervalWeights instance_weights = instance_weights_[r];
      begin_step(t, kernel_weights.data(), instance_weights);
      instance_predictions(t, kernel_weights.data(), f_.data() + r * S, instance_f_);
      predictions[r] = instance_weights.combine(t, instance_f_.data());
    }
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("adaraker");
    out.put_i64(t_);
    save_backend_state(*backend_, out);
    pull_fused_weights();
    for (const auto& w : kernel_weights_) w.save(out);
    for (const auto& h : instance_weights_) h.save(out);
  }

  void load_state(StateReader& in) override {
    in.expect_tag("adaraker");
    t_ = in.get_i64();
    // The θ-update count of the restored steps follows from t and the interval placement (it is
    // not in the checkpoint); counted when asked, so that loading a checkpoint stays O(state)
    // whatever t it declares.
    updates_ = 0;
    restored_t_ = t_;
    load_backend_state(*backend_, in);
    for (auto& w : kernel_weights_) {
      in.get_f64s(w.raw().data(), w.size());
      w.check_stored("adaraker kernel weights");
    }
    for (auto& h : instance_weights_) {
      in.get_f64s(h.raw().data(), h.raw().size());
      h.check_stored("adaraker instance weights");
    }
    if (fused_) push_fused_weights();
  }

  MetricConvention metric_convention() const override { return metric_; }
  std::uint64_t kernel_updates() const override {
    const std::uint64_t restored =
        restored_t_ > 0 ? active_level_steps(1, static_cast<std::size_t>(restored_t_)) * n_replicates() *
                              config_.dictionary.size()
                        : 0;
    return updates_ + restored;
  }

 private:
  // Active levels over steps first_t … first_t + n − 1, summed: the same for every replicate.
  std::uint64_t active_level_steps(std::int64_t first_t, std::size_t n) const {
    std::uint64_t count = 0;
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < intervals_.n_levels; ++j)
        if (level_active(intervals_.placement, static_cast<int>(j), first_t + static_cast<std::int64_t>(i))) ++count;
    return count;
  }

  // Device path: the backend advances θ and the kernel weights and returns f̂ per level; the
  // instance weights h (a short non-linear recursion, §8.1) stay on the host. They do not feed
  // back into the device's work, so window w's host pass runs on a second thread while the
  // device advances window w + 1 (two f buffers); measured on an H100 with 20 seeds on Naval,
  // the host pass was 23 ms of a 109 ms run when the two took turns.
  void step_block_fused(const double* x, const double* y, std::size_t n, std::size_t d,
                        double* predictions) {
    using Clock = std::chrono::steady_clock;
    const std::size_t R = n_replicates(), L = intervals_.n_levels;
    const std::size_t window = backend_->preferred_fused_window();
    std::future<void> host_pass;  // the previous window's
    auto finish_host_pass = [&] {
      if (!host_pass.valid()) return;
      const auto wait_start = Clock::now();
      host_pass.get();  // rethrows what the pass threw
      fused_host_wait_ms_ += elapsed_ms(wait_start, Clock::now());
    };
    try {
      for (std::size_t start = 0, w = 0; start < n; start += window, ++w) {
        const std::size_t m = std::min(window, n - start);
        std::vector<double>& f = fused_f_[w % 2];
        f.resize(m * R * L);
        const auto backend_start = Clock::now();
        backend_->advance_fused(x + start * d, y + start, m, t_ + 1, schedules_, fused_weights_, f.data());
        fused_backend_ms_ += elapsed_ms(backend_start, Clock::now());
        finish_host_pass();  // before the next pass touches the instance weights
        host_pass = std::async(std::launch::async, [this, &f, y, predictions, start, m, R, L, t0 = t_ + 1] {
          // Per replicate on the persistent pool: parallel_for would start threads every
          // window (measured on an H100 host: 478 ms of 1.68 s for 100 replicates on Naval).
          pool_->run(R, [&](std::size_t r) {
            IntervalWeights& h = instance_weights_[r];
            for (std::size_t i = 0; i < m; ++i) {
              const std::int64_t t = t0 + static_cast<std::int64_t>(i);
              const double* instance_f = f.data() + (i * R + r) * L;
              h.begin_step(t);
              const double prediction = h.combine(t, instance_f);
              h.update(t, instance_f, prediction, y[start + i]);
              predictions[(start + i) * R + r] = prediction;
            }
          });
        });
        t_ += static_cast<std::int64_t>(m);
      }
      finish_host_pass();
    } catch (...) {
      if (host_pass.valid()) host_pass.wait();  // it uses f and the instance weights
      throw;
    }
  }

  // The device holds the authoritative kernel log-weights on the fused path.
  void pull_fused_weights() const {
    if (!fused_) return;
    const std::size_t L = intervals_.n_levels, P = config_.dictionary.size();
    std::vector<double> all(L * P);
    for (std::size_t r = 0; r < n_replicates(); ++r) {
      backend_->get_log_weights(r, all.data());
      for (std::size_t j = 0; j < L; ++j)
        std::copy(all.begin() + j * P, all.begin() + (j + 1) * P, kernel_weights_[r * L + j].raw().begin());
    }
  }
  void push_fused_weights() {
    const std::size_t L = intervals_.n_levels, P = config_.dictionary.size();
    std::vector<double> all(L * P);
    for (std::size_t r = 0; r < n_replicates(); ++r) {
      for (std::size_t j = 0; j < L; ++j)
        std::copy(kernel_weights_[r * L + j].raw().begin(), kernel_weights_[r * L + j].raw().end(),
                  all.begin() + j * P);
      backend_->set_log_weights(r, all.data());
    }
  }

  // Interval starts at t: fresh kernel weights (fresh state) and the starting instance weight.
  void begin_step(std::int64_t t, KernelWeights* kernel_weights, IntervalWeights& instance_weights) const {
    if (intervals_.fresh)
      for (std::size_t j = 0; j < intervals_.n_levels; ++j)
        if (instance_weights.starts(j, t)) kernel_weights[j].reset(config_.dictionary.size(), &level_weights_[j]);
    instance_weights.begin_step(t);
  }

  void instance_predictions(std::int64_t t, const KernelWeights* kernel_weights, const double* f,
                            std::vector<double>& instance_f) const {
    const std::size_t P = config_.dictionary.size();
    instance_f.assign(intervals_.n_levels, 0.0);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j)
      if (level_active(intervals_.placement, static_cast<int>(j), t))
        instance_f[j] = kernel_weights[j].combine(f + j * P);
  }

  // One replicate's ensemble step; touches only that replicate's state (threads split replicates).
  double ensemble_step(std::size_t r, std::int64_t t, const double* f, const double* n2, double y,
                       std::vector<double>& instance_f, std::vector<double>& scratch) {
    const std::size_t P = config_.dictionary.size();
    KernelWeights* kernel_weights = kernel_weights_.data() + r * intervals_.n_levels;
    IntervalWeights& instance_weights = instance_weights_[r];
    begin_step(t, kernel_weights, instance_weights);
    instance_predictions(t, kernel_weights, f, instance_f);
    const double prediction = instance_weights.combine(t, instance_f.data());
    instance_weights.update(t, instance_f.data(), prediction, y);
    for (std::size_t j = 0; j < intervals_.n_levels; ++j)
      if (instance_weights.active(j, t))
        update_kernel_weights(config_, schedules_, j * P, t, y, f + j * P, n2 ? n2 + j * P : nullptr,
                              kernel_weights[j], scratch);
    return prediction;
  }

  AlgoContext context_;
  RfEnsembleConfig config_;
  IntervalConfig intervals_;
  MetricConvention metric_;
  std::vector<WeightConfig> level_weights_;      // per level (η_w may depend on the level)
  std::vector<SlotSchedule> schedules_;          // per slot = level × kernel
  std::unique_ptr<RfBackend> backend_;
  mutable std::vector<KernelWeights> kernel_weights_;  // per replicate × level (device cache when fused)
  bool fused_ = false;
  FusedWeights fused_weights_;
  std::vector<double> fused_f_[2];  // instance predictions of two windows (fused path)
  double fused_backend_ms_ = 0.0, fused_host_wait_ms_ = 0.0;  // OMKL_TIMING
  std::unique_ptr<StepPool> pool_;  // instance weights of the replicates (fused path)
  std::vector<IntervalWeights> instance_weights_;  // per replicate
  std::int64_t t_ = 0;
  std::uint64_t updates_ = 0;  // θ updates, all replicates, since construction or load_state()
  std::int64_t restored_t_ = 0;  // the t a checkpoint restored (its steps' updates: kernel_updates())
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
