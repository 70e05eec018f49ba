#include "features/rf_backend.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/env_switch.h"
#include "core/params.h"
#include "features/round_aggregation.h"
#include "omkl/error.h"

namespace omkl {

LossKind parse_loss(const std::string& text) {
  if (text == "squared") return LossKind::Squared;
  if (text == "logistic") return LossKind::Logistic;
  if (text == "hinge") return LossKind::Hinge;
  if (text == "squared_hinge") return LossKind::SquaredHinge;
  if (text == "absolute") return LossKind::Absolute;
  throw ConfigError("unknown loss '" + text + "' (expected squared, logistic, hinge, squared_hinge, absolute)");
}

std::string to_string(LossKind loss) {
  switch (loss) {
    case LossKind::Squared: return "squared";
    case LossKind::Logistic: return "logistic";
    case LossKind::Hinge: return "hinge";
    case LossKind::SquaredHinge: return "squared_hinge";
    case LossKind::Absolute: return "absolute";
  }
  return "?";
}

void check_loss_labels(detail::ParamReader& params, LossKind loss, bool labels) {
  if (needs_labels(loss) && !labels)
    params.fail("loss", to_string(loss) + " needs labels ±1; " + kLabelsHint);
}

namespace detail {

WalkLaunch read_walk_switches() {
  WalkLaunch launch;
  // The defaults are the shapes measured fastest on an H200 (bench/RESULTS.md, 2026-11-26, third
  // lease): each program's own where they differ, so an unset switch leaves the choice to it.
  // A step with fewer pairs than warps: a warp per pair (`warp`) or the whole block per pair
  // (`auto`). Unset: the whole block for the bandit's one drawn kernel (RF-OKS++, 100
  // repetitions: 10.6 against 17.7 µs a step), a warp for the graph family's 10-40 pairs
  // (OMKL-GF at one seed: 150 against 329 ms).
  const std::string pairs = path_switch("OMKL_CUDA_WALK_PAIRS");
  launch.block_per_pair = pairs.empty() ? std::nullopt : std::optional<bool>(pairs == "auto");
  // A team program's plan and learn (the graph-aided family's) by the block (2.2-2.4x faster
  // than thread 0 alone at 20 seeds) or on thread 0.
  launch.team_steps = path_switch("OMKL_CUDA_WALK_PLAN") == "block";
  // Threads per replicate's block: more warps take more of a step's pairs at once, and fewer
  // blocks fit a multiprocessor; `auto` (0) picks at launch. Unset: `auto` for a team program,
  // 128 for the others (not measured wider).
  const std::string threads = path_switch("OMKL_CUDA_WALK_THREADS");
  if (!threads.empty()) launch.walk_threads = threads == "auto" ? 0u : static_cast<unsigned>(std::stoul(threads));
  return launch;
}

SlotsByKernel slots_by_kernel(const RfProblem& problem) {
  SlotsByKernel out;
  out.offsets.assign(problem.n_kernels + 1, 0);
  for (std::uint32_t k : problem.slot_kernel) {
    if (k >= problem.n_kernels)
      throw Error("slot kernel index " + std::to_string(k) + " out of range (" +
                  std::to_string(problem.n_kernels) + " kernels)");
    ++out.offsets[k + 1];
  }
  for (std::size_t k = 0; k < problem.n_kernels; ++k) {
    out.largest = std::max<std::size_t>(out.largest, out.offsets[k + 1]);
    out.offsets[k + 1] += out.offsets[k];
  }
  out.slots.resize(problem.n_slots());
  std::vector<std::uint32_t> next(out.offsets.begin(), out.offsets.end() - 1);
  for (std::size_t s = 0; s < problem.n_slots(); ++s) out.slots[next[problem.slot_kernel[s]]++] = static_cast<std::uint32_t>(s);
  return out;
}

bool lean_step_applies(const std::vector<SlotSchedule>& schedules, std::int64_t t0, LossKind loss, bool update) {
  if (loss != LossKind::Squared || !update) return false;
  for (const SlotSchedule& s : schedules)
    if (s.inv_sqrt_t || s.reset_period > 0 || s.active_from > t0) return false;
  return true;
}

void RfBackend::predict_rows(const double* x, std::size_t n_rows, std::int64_t t,
                             const std::vector<SlotSchedule>& schedules, double* f) {
  const std::size_t d = problem_.n_features, RS = problem_.n_replicates * problem_.n_slots();
  for (std::size_t row = 0; row < n_rows; ++row) predict(x + row * d, t, schedules, f + row * RS);
}

void RfBackend::step_selected_rows(const double* x, const double* y, std::size_t n_rows, const PairStep* pairs,
                                   std::size_t pairs_per_row, double* f, double* norm2) {
  const std::size_t d = problem_.n_features;
  for (std::size_t row = 0; row < n_rows; ++row)
    step_selected(x + row * d, y[row], pairs + row * pairs_per_row, pairs_per_row, f + row * pairs_per_row,
                  norm2 ? norm2 + row * pairs_per_row : nullptr);
}

void RfBackend::step_selected(const double* x, double y, const PairStep* pairs, std::size_t n_pairs,
                              double* f, double* norm2) {
  const RfProblem& p = problem_;
  const std::size_t D = p.n_rff, d = p.n_features;
  std::vector<double> V(D * d), z(2 * D), theta(2 * D);
  for (std::size_t i = 0; i < n_pairs; ++i) {
    const PairStep& pair = pairs[i];
    if (pair.replicate >= p.n_replicates || pair.slot >= p.n_slots())
      throw Error("step_selected: pair out of range");
    get_frequencies(pair.replicate, p.slot_kernel[pair.slot], V.data());
    for (std::size_t j = 0; j < D; ++j) {
      double a = 0.0;
      for (std::size_t k = 0; k < d; ++k) a += V[j * d + k] * x[k];
      z[j] = p.feature_scale * std::sin(a);
      z[D + j] = p.feature_scale * std::cos(a);
    }
    get_theta(pair.replicate, pair.slot, theta.data());
    double dot = 0.0, n2 = 0.0;
    for (std::size_t j = 0; j < 2 * D; ++j) {
      dot += theta[j] * z[j];
      n2 += theta[j] * theta[j];
    }
    f[i] = dot;
    if (norm2) norm2[i] = n2;
    if (pair.rate == 0.0 && pair.shrink == 1.0) continue;
    const double gain = pair.rate * detail::loss_derivative(p.loss, dot, y);
    for (std::size_t j = 0; j < 2 * D; ++j) theta[j] = pair.shrink * theta[j] - gain * z[j];
    set_theta(pair.replicate, pair.slot, theta.data());
  }
}

void RfBackend::aggregate_round(const double* x, std::size_t n_clients, const ClientUpdate* updates,
                                std::size_t n_updates, double scale, UploadForm upload, double* norm2) {
  const RfProblem& p = problem_;
  const std::size_t D = p.n_rff, d = p.n_features, S = p.n_slots();
  for (std::size_t i = 0; i < n_updates; ++i) {
    const ClientUpdate& u = updates[i];
    if (u.replicate >= p.n_replicates || u.slot >= S || u.client >= n_clients)
      throw Error("aggregate_round: update out of range");
  }
  // The host driver of the GPU's round (round_aggregation.h): one group at a time, one lane,
  // on every slot's θ read in one transfer and written back in one.
  std::vector<RoundUpdate> sorted;
  std::vector<RoundGroup> groups;
  group_round_updates(updates, n_updates, S, [&](std::uint32_t slot) { return p.slot_kernel[slot]; }, sorted, groups);
  const std::size_t theta_n = p.theta_size();
  std::vector<double> V(D * d), theta(p.n_replicates * S * theta_n);
  get_all_theta(theta.data());
  for (const RoundGroup& g : groups) {
    get_frequencies(g.replicate, g.kernel, V.data());
    aggregate_group(V.data(), x, d, theta.data() + (std::size_t{g.replicate} * S + g.slot) * theta_n, D, sorted.data(),
                    g.first, g.last, p.feature_scale, scale, upload, 0u, 1u);
  }
  if (!groups.empty()) set_all_theta(theta.data());
  if (!norm2) return;
  // ‖θ‖² of θ as the backend keeps it: a float θ (precision=float) is read back rounded.
  if (p.single_precision && !groups.empty()) get_all_theta(theta.data());
  for (std::size_t row = 0; row < p.n_replicates * S; ++row) {
    double n2 = 0.0;
    for (std::size_t j = 0; j < theta_n; ++j) n2 += theta[row * theta_n + j] * theta[row * theta_n + j];
    norm2[row] = n2;
  }
}

void RfBackend::get_all_theta(double* theta) const {
  const std::size_t S = problem_.n_slots(), n = problem_.theta_size();
  for (std::size_t r = 0; r < problem_.n_replicates; ++r)
    for (std::size_t s = 0; s < S; ++s) get_theta(r, s, theta + (r * S + s) * n);
}

void RfBackend::set_all_theta(const double* theta) {
  const std::size_t S = problem_.n_slots(), n = problem_.theta_size();
  for (std::size_t r = 0; r < problem_.n_replicates; ++r)
    for (std::size_t s = 0; s < S; ++s) set_theta(r, s, theta + (r * S + s) * n);
}

void RfBackend::client_update(std::size_t replicate, std::size_t slot, const double* x, double a, double b,
                              double* g) {
  const RfProblem& p = problem_;
  const std::size_t D = p.n_rff, d = p.n_features;
  if (replicate >= p.n_replicates || slot >= p.n_slots()) throw Error("client_update: slot out of range");
  std::vector<double> V(D * d), theta(2 * D);
  get_frequencies(replicate, p.slot_kernel[slot], V.data());
  get_theta(replicate, slot, theta.data());
  const double scaled = a * p.feature_scale;
  for (std::size_t j = 0; j < D; ++j) {
    double angle = 0.0;
    for (std::size_t k = 0; k < d; ++k) angle += V[j * d + k] * x[k];
    // The sincos of the base aggregate_round() (round_aggregation.h), so that a server adding
    // these in client order gets its θ bit for bit.
    double sine, cosine;
    resident_sincos(angle, sine, cosine);
    g[j] = scaled * sine + b * theta[j];
    g[D + j] = scaled * cosine + b * theta[D + j];
  }
}

void RfBackend::advance_fused(const double*, const double*, std::size_t, std::int64_t,
                              const std::vector<SlotSchedule>&, const FusedWeights&, double*) {
  throw Error("this backend does not compute fused kernel weights");
}
void RfBackend::get_log_weights(std::size_t, double*) const {
  throw Error("this backend does not compute fused kernel weights");
}
void RfBackend::set_log_weights(std::size_t, const double*) {
  throw Error("this backend does not compute fused kernel weights");
}

bool backend_on_gpu(BackendKind kind) {
  return kind == BackendKind::Cuda || (kind == BackendKind::Auto && cuda_available());
}

bool cuda_available() { return cuda::device_available(); }

std::string cuda_device_description() { return cuda::device_description(); }

void require_cuda_device() { cuda::require_device(); }

std::unique_ptr<RfBackend> make_rf_backend(BackendKind kind, const RfProblem& problem, DeviceContexts* contexts) {
  if (problem.n_slots() == 0 || problem.n_rff == 0 || problem.n_features == 0)
    throw ConfigError("random-feature backend: empty problem (no slots, features or D = 0)");
  switch (kind) {
    case BackendKind::Cpu:
      return cpu::make_cpu_rf_backend(problem);
    case BackendKind::Auto:
      if (cuda::device_available()) return cuda::make_cuda_rf_backend(problem, contexts);
      return cpu::make_cpu_rf_backend(problem);
    case BackendKind::Cuda:
      return cuda::make_cuda_rf_backend(problem, contexts);
  }
  throw ConfigError("unknown backend");
}

}  // namespace detail

std::shared_ptr<DeviceContexts> make_device_contexts(double* seconds) {
  if (seconds) *seconds = 0.0;
  if (detail::cuda::device_available()) return detail::cuda::make_device_contexts(seconds);
  return nullptr;
}

double device_context_seconds(const DeviceContexts& contexts) { return detail::cuda::device_context_seconds(contexts); }

}  // namespace omkl
