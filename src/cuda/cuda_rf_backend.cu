/// @file cuda_rf_backend.cu
/// @brief The CUDA implementation of RfBackend.
///
/// advance(): the projections V x_t of a window of samples for every replicate and kernel are
/// one cuBLAS GEMM (look-ahead: they do not depend on learned state), or, with many seeds,
/// computed inside the trajectory kernel; one fused launch advances every (replicate, slot)
/// trajectory, or every (replicate, kernel) group of slots, through the window
/// (kernels/rf_kernels.cu); the per-step predictions come back in one pinned copy.
/// step_selected(): one launch per step over the step's pairs, through mapped host memory.
/// Frequencies and θ stay on the device.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/env_switch.h"
#include "core/parallel.h"
#include "features/random_features.h"
#include "features/rf_backend.h"
#include "core/timing.h"
#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_contexts.h"
#include "kernels/frequency_draws.cuh"
#include "kernels/rf_kernels.cuh"
#include "kernels/round_kernels.cuh"

namespace omkl::detail::cuda {

using omkl::cuda::DeviceEvent;
using omkl::cuda::DeviceBuffer;
using omkl::cuda::DevicePair;
using omkl::cuda::SelectedArgs;
using omkl::cuda::DeviceSchedule;
using omkl::cuda::PinnedBuffer;
using omkl::cuda::TrajectoryArgs;

namespace {

// Projection scratch is bounded so that 1000 replicates × 76 kernels still fit comfortably.
constexpr std::size_t kProjectionBudgetBytes = std::size_t{512} << 20;
// Likewise the window's per-slot outputs on the device (f, the log-weights used, ‖θ‖²).
constexpr std::size_t kOutputBudgetBytes = std::size_t{512} << 20;
// Scratch of the device-side frequency draws (an ORF block per thread): 100 000 threads at
// d = 17, 3 500 at d = 96 (the widest shared dataset). One thread factors a whole block, so
// for much larger d a block-parallel QR would be the better device design.
constexpr std::size_t kDrawScratchBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxWindow = 4096;
constexpr std::size_t kFusedWindow = 256;

cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const double* alpha, const double* a, int lda, const double* b, int ldb,
                    const double* beta, double* c, int ldc) {
  return cublasDgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                    const float* alpha, const float* a, int lda, const float* b, int ldb,
                    const float* beta, float* c, int ldc) {
  return cublasSgemm(h, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// Where the online loop's time goes (OMKL_TIMING=1), printed when the backend dies: host
// staging, the wait for the stream, the copy-out, and inside the wait each launch's device time.
struct LoopProfile {
  DeviceEvent begin, uploaded, projected, advanced, combined, downloaded;
  DeviceEvent selected_begin, selected_end;
  std::size_t windows = 0, selected_steps = 0;
  double stage_ms = 0, wait_ms = 0, copy_out_ms = 0, selected_ms = 0, selected_kernel_ms = 0;
  double upload_ms = 0, gemm_ms = 0, trajectories_ms = 0, combine_ms = 0, download_ms = 0;

  void add_window_device_times(bool fused) {
    upload_ms += uploaded.ms_since(begin);
    gemm_ms += projected.ms_since(uploaded);
    trajectories_ms += advanced.ms_since(projected);
    if (fused) combine_ms += combined.ms_since(advanced);
    download_ms += downloaded.ms_since(fused ? combined : advanced);
  }
  void print() const {
    if (windows > 0)
      std::fprintf(stderr,
                   "omkl timing: cuda loop %zu windows: host staging %.2f ms, stream wait %.2f ms "
                   "(device: upload %.2f, projections %.2f, trajectories %.2f, combine %.2f, "
                   "download %.2f ms), host copy-out %.2f ms\n",
                   windows, stage_ms, wait_ms, upload_ms, gemm_ms, trajectories_ms, combine_ms,
                   download_ms, copy_out_ms);
    if (selected_steps > 0)
      std::fprintf(stderr, "omkl timing: cuda step_selected %zu steps, %.2f ms (%.2f us/step, of which "
                   "%.2f us/step between the events around the launch)\n", selected_steps, selected_ms,
                   1e3 * selected_ms / static_cast<double>(selected_steps),
                   1e3 * selected_kernel_ms / static_cast<double>(selected_steps));
  }
};

static_assert(omkl::cuda::kMaxRff == kMaxCudaRff, "the host's and the kernels' limits on D must agree");

template <typename Real>
class CudaRfBackend final : public RfBackend {
 public:
  CudaRfBackend(const RfProblem& problem, DeviceContexts* contexts)
      : RfBackend(problem), context_(DeviceContexts::lease_from(contexts)) {
    const auto& p = problem_;
    if (p.n_rff > omkl::cuda::kMaxRff)
      throw CudaError("CUDA backend: D = " + std::to_string(p.n_rff) + " exceeds the supported " +
                      std::to_string(omkl::cuda::kMaxRff));
    const SlotsByKernel groups = slots_by_kernel(p);  // throws on a slot kernel out of range
    const cudaStream_t stream = context_->stream();
    for (auto* b : {&frequencies_, &theta_, &projections_, &x_, &y_, &f_, &norm2_}) b->set_stream(stream);
    for (auto* b : {&log_w_, &log_w_steps_, &group_f_, &exact_frequencies_}) b->set_stream(stream);
    schedules_.set_stream(stream);
    for (auto* b : {&group_offsets_, &group_slots_}) b->set_stream(stream);
    // The native per-step path (one launch per step, inputs and outputs in mapped host
    // memory) is the default since it passed the parity tests on an H100 (2026-11-23; 20-24 us
    // a step against the generic path's 160-260 on Naval). OMKL_CUDA_STEP_SELECTED=generic
    // keeps the base class's θ-through-the-host path, for comparison.
    native_selected_ = path_switch("OMKL_CUDA_STEP_SELECTED") == "native";
    // The federated round aggregated on the device (one launch per round, θ never leaves the
    // device) is the default since it passed its parity tests on an H200 (2026-11-26: POF-MKL on
    // Naval, 20 draws, 1.14 s against the generic round's 3.62 s, the same MSE to the printed
    // digit). OMKL_CUDA_ROUND=generic keeps the base class's round, for comparison.
    native_round_ = path_switch("OMKL_CUDA_ROUND") == "native";
    // Trajectory layout: one warp per (replicate, kernel) group of slots where a kernel has
    // several slots and the groups alone fill the GPU (AdaRaker's levels at 20 and 100 seeds:
    // features once per step, measured 2.2x faster than a warp per slot on an H100); one warp
    // per slot otherwise (Raker, whose groups are single slots: the group kernel's bookkeeping
    // made it 5 % slower; AdaRaker at 1 seed: 76 group warps walk the steps slower than 1 064
    // slot warps, 47 against 35 ms). The "fill" rule, two warps per multiprocessor, sits
    // between the measured 76 and 1 520 warps; where exactly the layouts cross is not measured.
    // OMKL_CUDA_TRAJECTORIES=per_slot or per_kernel forces one (the tests run both);
    // per_kernel falls back where a shape does not fit; both take the generic step. By default
    // (or `lean`) the per-slot kernel takes its lean step wherever a pass allows it
    // (lean_step_applies(): Raker's common configuration): its parity test passed on an H200 and
    // it took Raker on Naval from 31-34 to 21.5 ms at 20 seeds, 1.00 to 0.79 s at 1 000
    // (2026-11-26). `generic` keeps the default layout with the generic step, for comparison.
    const std::string forced = path_switch("OMKL_CUDA_TRAJECTORIES");
    lean_steps_ = forced.empty() || forced == "lean";
    const std::size_t multiprocessors = context_->multiprocessors();
    const bool groups_fill = p.n_replicates * p.n_kernels >= 2 * multiprocessors;
    if (forced == "per_kernel" || (forced != "per_slot" && groups.largest >= 2 && groups_fill))
      build_kernel_groups(groups);
    // Projections for the per-slot kernel: by one cuBLAS GEMM per window, or computed inside
    // the kernel from V's rows in shared memory. Measured on an H100 (Raker, Naval, d = 17):
    // in-kernel 1.82-1.88 s against the GEMM's 2.02-2.09 at 1000 seeds (the GEMM writes and the
    // kernel re-reads 363 GB), equal at 100, and slower where the walk is latency-bound (1 seed
    // 32-35 against 28-29 ms; 20 seeds 47-50 against 46): the in-kernel projections lengthen
    // each step's chain. So by default in-kernel only where the trajectories outnumber what
    // stays resident (32 warps per multiprocessor); OMKL_CUDA_PROJECTIONS=fused or gemm forces one.
    const std::string projection_path = path_switch("OMKL_CUDA_PROJECTIONS");
    const bool throughput_bound = p.n_replicates * p.n_slots() >= 32 * multiprocessors;
    projections_on_the_fly_ = (projection_path == "fused" || (projection_path == "auto" && throughput_bound)) &&
                              omkl::cuda::projections_on_the_fly_supported(p.n_rff, p.n_features, sizeof(Real));
    // Frequency matrices drawn on the device (draw_frequencies(): cuRAND's Philox and the
    // host's own transforms and QR, features/frequency_recipe.h) or on the host and uploaded.
    // Device by default since CudaTest.DeviceDrawsEqualTheHostDraws and
    // AlgorithmsOnDeviceDrawnFrequenciesMatchTheCpu passed on an H200 (2026-11-26; Raker on
    // Naval, 1 000 seeds, 1.18 s against 2.04 s with host draws, 20 seeds 35 against 49 ms).
    // OMKL_CUDA_DRAWS=host draws on the host and uploads, for comparison.
    device_draws_ = path_switch("OMKL_CUDA_DRAWS") == "device";
    // How the resident walks launch (OMKL_CUDA_WALK_PAIRS, _PLAN, _THREADS: each program's
    // measured fastest shape unless set); the walks take them from the lease.
    walk_launch_ = read_walk_switches();
    // The exact double host copy is made when first needed (set_frequencies, or a download
    // for get_frequencies): with device draws and 1000 replicates it is 517 MB never touched.
    frequencies_.resize(p.n_replicates * p.n_kernels * p.n_rff * p.n_features);
    frequencies_.zero();
    theta_.resize(p.n_replicates * p.n_slots() * p.theta_size());
    theta_.zero();
    frequencies_dirty_ = false;  // zeros on both sides until set or drawn
    if (timing_enabled()) profile_ = std::make_unique<LoopProfile>();
  }

  ~CudaRfBackend() override {
    if (profile_) profile_->print();
  }

  void set_frequencies(std::size_t r, std::size_t kernel, const double* V) override {
    const std::size_t block = problem_.n_rff * problem_.n_features;
    ensure_host_frequencies();  // the other matrices keep their values
    std::memcpy(host_frequencies_.data() + (r * problem_.n_kernels + kernel) * block, V, block * sizeof(double));
    frequencies_dirty_ = true;
  }

  void get_frequencies(std::size_t r, std::size_t kernel, double* V) const override {
    const std::size_t block = problem_.n_rff * problem_.n_features;
    ensure_host_frequencies();
    std::memcpy(V, host_frequencies_.data() + (r * problem_.n_kernels + kernel) * block, block * sizeof(double));
  }

  bool draw_frequencies(const RecipeSource& recipe_source) override {
    if (!device_draws_) return false;
    const std::vector<MatrixRecipe> recipes = recipe_source();
    const auto& p = problem_;
    const std::size_t n_matrices = p.n_replicates * p.n_kernels, n = frequencies_.size();
    if (recipes.size() != n_matrices)
      throw Error("CUDA backend: " + std::to_string(recipes.size()) + " frequency recipes for " +
                  std::to_string(n_matrices) + " matrices");
    const cudaStream_t stream = context_->stream();
    const std::vector<std::size_t> offsets = recipe_unit_offsets(recipes, p.n_rff, p.n_features);
    DeviceBuffer<MatrixRecipe> device_recipes(n_matrices, stream);
    device_recipes.copy_from_host(recipes.data(), n_matrices);
    DeviceBuffer<std::size_t> device_offsets(offsets.size(), stream);
    device_offsets.copy_from_host(offsets.data(), offsets.size());
    const std::size_t n_units = offsets.back();
    const std::size_t threads = omkl::cuda::frequency_draw_threads(n_units, p.n_features, kDrawScratchBytes);
    DeviceBuffer<double> scratch(omkl::cuda::frequency_draw_scratch(p.n_features, threads), stream);
    // Drawn in double (the host's values); the float backend keeps that exact copy on the
    // device for get_frequencies() and steps with a narrowed one.
    double* target = nullptr;
    if constexpr (std::is_same_v<Real, double>) {
      target = frequencies_.data();
    } else {
      exact_frequencies_.resize(n);
      target = exact_frequencies_.data();
    }
    omkl::cuda::launch_draw_frequencies(device_recipes.data(), device_offsets.data(), n_matrices, n_units, p.n_rff,
                                        p.n_features, target, scratch.data(), threads, stream);
    if constexpr (!std::is_same_v<Real, double>) omkl::cuda::launch_narrow_to_float(target, frequencies_.data(), n, stream);
    context_->synchronize();  // launch errors surface here, at construction
    frequencies_dirty_ = false;
    host_frequencies_stale_ = true;
    return true;
  }

  void prepare() override { upload_frequencies(); }

  void advance(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
               const std::vector<SlotSchedule>& schedules, double* f, double* norm2) override {
    run(x, y, n_steps, t0, schedules, f, norm2, true, nullptr);
  }

  bool supports_fused_weights() const override { return true; }

  void advance_fused(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
                     const std::vector<SlotSchedule>& schedules, const FusedWeights& weights,
                     double* group_f) override {
    if (weights.group_size == 0 || problem_.n_slots() % weights.group_size != 0)
      throw Error("CUDA backend: slots do not split into groups of " + std::to_string(weights.group_size));
    ensure_log_weights(weights.initial);
    run(x, y, n_steps, t0, schedules, group_f, nullptr, true, &weights);
  }

  void get_log_weights(std::size_t r, double* out) const override {
    const std::size_t S = problem_.n_slots();
    if (!log_w_initialized_) throw Error("CUDA backend: fused weights were never initialised");
    log_w_.copy_to_host(out, S, r * S);
    context_->synchronize();
  }

  void set_log_weights(std::size_t r, const double* in) override {
    const std::size_t S = problem_.n_slots();
    ensure_log_weights(0.0);
    log_w_.copy_from_host(in, S, r * S);
    context_->synchronize();
  }

  void predict(const double* x, std::int64_t t, const std::vector<SlotSchedule>& schedules,
               double* f) override {
    const double zero = 0.0;
    run(x, &zero, 1, t, schedules, f, nullptr, false, nullptr);
  }

  // Windows sized so that the per-step outputs (f and ‖θ‖², R × S each) of one window stay
  // near 32 MB: page-locking and first-touching larger buffers costs more than the extra
  // launches and synchronisations of smaller windows (measured on an H100: 290 MB windows made
  // a 20-replicate Raker run 4× slower than its GPU time).
  std::size_t preferred_window() const override {
    const std::size_t per_step = problem_.n_replicates * problem_.n_slots() * 2 * sizeof(double);
    return std::max<std::size_t>(32, std::min<std::size_t>(kMaxWindow, (std::size_t{32} << 20) / per_step));
  }

  // advance_fused() brings back only the group predictions, and its per-slot outputs stay on
  // the device: one call is then one of run()'s windows, of at most kFusedWindow steps (fewer
  // launches, waits and reloads of θ than the 32 MB host-scratch rule above gives). Measured on
  // an H100, AdaRaker on Naval, alternated with the previous build: uncapped, 100 seeds
  // (176-step windows instead of 32) 376-386 ms against 427-445, but 20 seeds (883-step
  // windows, 300 MB of per-slot buffers) 110-131 against 89-105; with the cap, 20 seeds
  // 87-90 against 97-101 and 100 seeds 401-415 against 442-452.
  std::size_t preferred_fused_window() const override {
    return std::min(kFusedWindow, device_window(kMaxWindow));
  }

  void step_selected(const double* x, double y, const PairStep* pairs, std::size_t n_pairs, double* f,
                     double* norm2) override {
    if (!profile_) return step_selected_untimed(x, y, pairs, n_pairs, f, norm2);
    const auto start = std::chrono::steady_clock::now();
    step_selected_untimed(x, y, pairs, n_pairs, f, norm2);
    profile_->selected_ms += elapsed_ms(start, std::chrono::steady_clock::now());
    ++profile_->selected_steps;
  }

  // The server side of a federated round on the device (round_kernels.cu): the updates grouped
  // by (replicate, slot) on the host, one copy of them and of the round's samples, one launch,
  // and ‖θ‖² of every slot when asked; θ never leaves the device. The default since
  // CudaTest.NativeAggregateRoundMatchesTheCpuBackend passed on an H200; OMKL_CUDA_ROUND=generic
  // takes the base class's path (θ through the host).
  void aggregate_round(const double* x, std::size_t n_clients, const ClientUpdate* updates, std::size_t n_updates,
                       double scale, UploadForm upload, double* norm2) override {
    if (!native_round_) return RfBackend::aggregate_round(x, n_clients, updates, n_updates, scale, upload, norm2);
    const auto& p = problem_;
    const std::size_t S = p.n_slots(), d = p.n_features;
    for (std::size_t i = 0; i < n_updates; ++i) {
      const ClientUpdate& u = updates[i];
      if (u.replicate >= p.n_replicates || u.slot >= S || u.client >= n_clients)
        throw Error("aggregate_round: update out of range");
    }
    upload_frequencies();
    std::vector<RoundUpdate> sorted;
    std::vector<RoundGroup> groups;
    group_round_updates(updates, n_updates, S, [&](std::uint32_t slot) { return p.slot_kernel[slot]; }, sorted, groups);
    const cudaStream_t stream = context_->stream();
    const std::vector<Real> x_real(x, x + n_clients * d);
    round_x_.set_stream(stream);
    round_updates_.set_stream(stream);
    round_groups_.set_stream(stream);
    round_norm2_.set_stream(stream);
    round_x_.resize(x_real.size());
    round_x_.copy_from_host(x_real.data(), x_real.size());
    round_updates_.resize(sorted.size());
    if (!sorted.empty()) round_updates_.copy_from_host(sorted.data(), sorted.size());
    round_groups_.resize(groups.size());
    if (!groups.empty()) round_groups_.copy_from_host(groups.data(), groups.size());
    omkl::cuda::launch_aggregate_round(frequencies_.data(), theta_.data(), round_x_.data(), round_updates_.data(),
                                       round_groups_.data(), groups.size(), p.n_kernels, S, p.n_rff, d,
                                       p.feature_scale, scale, upload, stream);
    if (norm2) {
      round_norm2_.resize(p.n_replicates * S);
      omkl::cuda::launch_theta_norms(theta_.data(), p.n_replicates * S, p.n_rff, round_norm2_.data(), stream);
      round_norm2_.copy_to_host(norm2, p.n_replicates * S);
    }
    context_->synchronize();  // the host vectors above die here
  }

  bool device_lease(DeviceLease& lease) override {
    upload_frequencies();
    lease.theta = theta_.data();
    lease.frequencies = frequencies_.data();
    lease.single_precision = std::is_same_v<Real, float>;
    lease.stream = context_->stream();
    lease.launch = walk_launch_;
    return true;
  }

  void get_theta(std::size_t r, std::size_t slot, double* out) const override {
    const std::size_t n = problem_.theta_size();
    std::vector<Real> host(n);
    theta_.copy_to_host(host.data(), n, (r * problem_.n_slots() + slot) * n);
    context_->synchronize();
    std::copy(host.begin(), host.end(), out);
  }

  void set_theta(std::size_t r, std::size_t slot, const double* in) override {
    const std::size_t n = problem_.theta_size();
    std::vector<Real> host(in, in + n);
    theta_.copy_from_host(host.data(), n, (r * problem_.n_slots() + slot) * n);
    context_->synchronize();  // `host` dies here
  }

  // Every slot in one transfer: theta_ is R × S rows of 2D, the layout of the argument.
  void get_all_theta(double* out) const override {
    const std::size_t n = theta_.size();
    std::vector<Real> host(n);
    theta_.copy_to_host(host.data(), n);
    context_->synchronize();
    std::copy(host.begin(), host.end(), out);
  }

  void set_all_theta(const double* in) override {
    const std::size_t n = theta_.size();
    std::vector<Real> host(in, in + n);
    theta_.copy_from_host(host.data(), n);
    context_->synchronize();  // `host` dies here
  }

 private:
  void step_selected_untimed(const double* x, double y, const PairStep* pairs, std::size_t n_pairs,
                             double* f, double* norm2) {
    if (!native_selected_) return RfBackend::step_selected(x, y, pairs, n_pairs, f, norm2);
    const auto& p = problem_;
    if (n_pairs == 0) return;
    upload_frequencies();
    // No copy calls: the kernel reads the pairs (range-checked here, not on the device) and x,
    // packed in one mapped pinned buffer, straight from host memory, and writes f and ‖θ‖²
    // into another; the host waits on this round trip every step. (The version with one
    // upload and one download per step measured 24 us a step on an H100.)
    const std::size_t d = p.n_features;
    const std::size_t x_entries = (d * sizeof(Real) + sizeof(DevicePair) - 1) / sizeof(DevicePair);
    const std::size_t in_entries = n_pairs + x_entries;
    staging_pairs_.resize(in_entries);
    DevicePair* in = staging_pairs_.data();
    for (std::size_t i = 0; i < n_pairs; ++i) {
      if (pairs[i].replicate >= p.n_replicates || pairs[i].slot >= p.n_slots())
        throw Error("step_selected: pair out of range");
      in[i] = {pairs[i].replicate, pairs[i].slot, p.slot_kernel[pairs[i].slot], pairs[i].rate, pairs[i].shrink};
    }
    Real* x_in = reinterpret_cast<Real*>(in + n_pairs);
    for (std::size_t k = 0; k < d; ++k) x_in[k] = static_cast<Real>(x[k]);
    staging_selected_out_.resize(2 * n_pairs);
    const DevicePair* device_in = staging_pairs_.device_data();
    Real* device_out = staging_selected_out_.device_data();
    SelectedArgs<Real> args{frequencies_.data(), reinterpret_cast<const Real*>(device_in + n_pairs),
                            theta_.data(), device_in, device_out,
                            norm2 ? device_out + n_pairs : nullptr,
                            n_pairs, p.n_slots(), p.n_kernels, p.n_rff, d,
                            static_cast<Real>(p.feature_scale), static_cast<int>(p.loss), y};
    if (profile_) profile_->selected_begin.record(context_->stream());
    omkl::cuda::launch_step_selected(args, context_->stream());
    if (profile_) profile_->selected_end.record(context_->stream());
    const Real* out = staging_selected_out_.data();
    context_->synchronize();  // the host decides the next step from f
    if (profile_) profile_->selected_kernel_ms += profile_->selected_end.ms_since(profile_->selected_begin);
    std::copy(out, out + n_pairs, f);
    if (norm2) std::copy(out + n_pairs, out + 2 * n_pairs, norm2);
  }

  // The per-slot kernel computes V x_t itself where the shape allows (no GEMM, no projection
  // buffer); the per-kernel groups read the GEMM's projections.
  bool projections_in_kernel() const { return group_offsets_.size() == 0 && projections_on_the_fly_; }

  // Steps per launch of run(): bounded by the device scratch of a window (projections, and
  // the per-slot outputs f, log-weights used and ‖θ‖²).
  std::size_t device_window(std::size_t n_steps) const {
    const auto& p = problem_;
    const std::size_t M = p.n_replicates * p.n_kernels * p.n_rff, slots = p.n_replicates * p.n_slots();
    const std::size_t output_bound = kOutputBudgetBytes / (slots * (2 * sizeof(Real) + sizeof(double)));
    const std::size_t projection_bound =
        projections_in_kernel() ? kMaxWindow : kProjectionBudgetBytes / (M * sizeof(Real));
    return std::max<std::size_t>(1, std::min({kMaxWindow, n_steps, output_bound, projection_bound}));
  }

  // Slots grouped by kernel (CSR), uploaded once; left empty when the layout does not fit.
  void build_kernel_groups(const SlotsByKernel& groups) {
    if (!omkl::cuda::kernel_groups_supported(problem_.n_rff, groups.largest, sizeof(Real))) return;
    const std::vector<unsigned> offsets(groups.offsets.begin(), groups.offsets.end());
    const std::vector<unsigned> slots(groups.slots.begin(), groups.slots.end());
    group_offsets_.resize(offsets.size());
    group_slots_.resize(slots.size());
    group_offsets_.copy_from_host(offsets.data(), offsets.size());
    group_slots_.copy_from_host(slots.data(), slots.size());
    context_->synchronize();  // the host vectors die here
    max_group_ = static_cast<unsigned>(groups.largest);
  }

  // The host copy of the matrices, made on first use: downloaded where the device drew them,
  // zeros where nothing was set yet (as the device buffer).
  void ensure_host_frequencies() const {
    const std::size_t n = frequencies_.size();
    if (host_frequencies_stale_) {
      host_frequencies_.resize(n);
      if constexpr (std::is_same_v<Real, double>) frequencies_.copy_to_host(host_frequencies_.data(), n);
      else exact_frequencies_.copy_to_host(host_frequencies_.data(), n);
      context_->synchronize();
      host_frequencies_stale_ = false;
    } else if (host_frequencies_.size() != n) {
      host_frequencies_.assign(n, 0.0);
    }
  }

  void upload_frequencies() {
    if (!frequencies_dirty_) return;
    ensure_host_frequencies();
    if constexpr (std::is_same_v<Real, double>) {
      // No converted copy: with 1000 replicates the matrices are hundreds of MB.
      frequencies_.copy_from_host(host_frequencies_.data(), host_frequencies_.size());
      context_->synchronize();
    } else {
      std::vector<Real> converted(host_frequencies_.begin(), host_frequencies_.end());
      frequencies_.copy_from_host(converted.data(), converted.size());
      context_->synchronize();
    }
    frequencies_dirty_ = false;
  }

  void upload_schedules(const std::vector<SlotSchedule>& schedules) {
    if (schedules.size() != problem_.n_slots())
      throw Error("CUDA backend: " + std::to_string(schedules.size()) + " schedules for " +
                  std::to_string(problem_.n_slots()) + " slots");
    bool same = schedules.size() == cached_schedules_.size();
    for (std::size_t s = 0; same && s < schedules.size(); ++s) {
      const SlotSchedule &a = schedules[s], &b = cached_schedules_[s];
      same = a.eta == b.eta && a.inv_sqrt_t == b.inv_sqrt_t && a.step_scale == b.step_scale &&
             a.shrink_scale == b.shrink_scale && a.lambda == b.lambda && a.active_from == b.active_from &&
             a.reset_period == b.reset_period;
    }
    if (same) return;
    std::vector<DeviceSchedule> device(schedules.size());
    for (std::size_t s = 0; s < schedules.size(); ++s) {
      const SlotSchedule& h = schedules[s];
      device[s] = {h.eta,         h.step_scale,   h.shrink_scale,
                   h.lambda,      h.active_from,  h.reset_period,
                   h.inv_sqrt_t ? 1 : 0, problem_.slot_kernel[s]};
    }
    schedules_.resize(device.size());
    schedules_.copy_from_host(device.data(), device.size());
    context_->synchronize();
    cached_schedules_ = schedules;
  }

  void ensure_log_weights(double initial) {
    if (log_w_initialized_) return;
    const std::size_t n = problem_.n_replicates * problem_.n_slots();
    log_w_.resize(n);
    const std::vector<double> start(n, initial);
    log_w_.copy_from_host(start.data(), n);
    context_->synchronize();
    log_w_initialized_ = true;
  }

  // One pass over n_steps samples, window by window. Without `fused`, `f` / `norm2` receive the
  // per-slot outputs (n × R × S); with it, `f` receives the group predictions (n × R × G) and
  // the per-slot outputs never leave the device.
  void run(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
           const std::vector<SlotSchedule>& schedules, double* f, double* norm2, bool update,
           const FusedWeights* fused) {
    const auto& p = problem_;
    upload_frequencies();
    upload_schedules(schedules);
    const std::size_t M = p.n_replicates * p.n_kernels * p.n_rff;  // projections per sample
    const std::size_t S = p.n_slots(), R = p.n_replicates, d = p.n_features;
    const bool on_the_fly = projections_in_kernel();
    const std::size_t window = device_window(n_steps);
    const bool want_norm2 = norm2 != nullptr;
    const std::size_t G = fused ? S / fused->group_size : 0;
    if (!on_the_fly) projections_.resize(window * M);
    x_.resize(window * d);
    y_.resize(window);
    f_.resize(window * R * S);
    if (want_norm2) norm2_.resize(window * R * S);
    if (fused) {
      log_w_steps_.resize(window * R * S);
      group_f_.resize(window * R * G);
    }
    staging_in_.resize(window * (d + 1));
    if (fused) staging_out_.resize(window * R * G);
    else staging_slots_.resize(window * R * S * (want_norm2 ? 2 : 1));
    const Real one = 1, zero = 0;
    using Clock = std::chrono::steady_clock;
    LoopProfile* prof = profile_.get();
    const cudaStream_t stream = context_->stream();
    for (std::size_t start = 0; start < n_steps; start += window) {
      const std::size_t m = std::min(window, n_steps - start);
      const auto host_start = Clock::now();
      Real* in = staging_in_.data();
      for (std::size_t i = 0; i < m * d; ++i) in[i] = static_cast<Real>(x[start * d + i]);
      for (std::size_t i = 0; i < m; ++i) in[m * d + i] = static_cast<Real>(y[start + i]);
      if (prof) {
        prof->stage_ms += elapsed_ms(host_start, Clock::now());
        ++prof->windows;
        prof->begin.record(stream);
      }
      x_.copy_from_host(in, m * d);
      y_.copy_from_host(in + m * d, m);
      if (prof) prof->uploaded.record(stream);
      // projections (M × m, column-major) = Vᵀ-stack (d × M)ᵀ · X (d × m)
      if (!on_the_fly)
        OMKL_CUBLAS_CHECK(gemm(context_->cublas(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(M),
                               static_cast<int>(m), static_cast<int>(d), &one, frequencies_.data(),
                               static_cast<int>(d), x_.data(), static_cast<int>(d), &zero,
                               projections_.data(), static_cast<int>(M)));
      if (prof) prof->projected.record(stream);
      TrajectoryArgs<Real> args{on_the_fly ? nullptr : projections_.data(), y_.data(), theta_.data(), schedules_.data(),
                                f_.data(), want_norm2 ? norm2_.data() : nullptr, m, R, S,
                                p.n_kernels, p.n_rff, static_cast<long long>(t0 + start),
                                static_cast<Real>(p.feature_scale), static_cast<int>(p.loss), update,
                                fused ? log_w_.data() : nullptr, fused ? log_w_steps_.data() : nullptr,
                                fused ? fused->initial : 0.0, fused ? fused->rate : 0.0,
                                fused ? fused->lambda : 0.0, fused ? fused->loss_scale : 1.0,
                                x_.data(), frequencies_.data(), d};
      args.lean = lean_steps_ && group_offsets_.size() == 0 &&
                  lean_step_applies(schedules, t0 + static_cast<std::int64_t>(start), p.loss, update);
      if (group_offsets_.size() > 0) {
        const omkl::cuda::KernelGroups groups{group_offsets_.data(), group_slots_.data(), max_group_};
        omkl::cuda::launch_advance_kernel_groups(args, groups, context_->stream());
      } else {
        omkl::cuda::launch_advance_trajectories(args, context_->stream());
      }
      if (prof) prof->advanced.record(stream);
      // Waits for the window and, with OMKL_TIMING, books the wait and the device times.
      const auto wait = [&] {
        const auto wait_start = Clock::now();
        if (prof) prof->downloaded.record(stream);
        context_->synchronize();
        if (!prof) return;
        prof->wait_ms += elapsed_ms(wait_start, Clock::now());
        prof->add_window_device_times(fused != nullptr);
      };
      if (fused) {
        omkl::cuda::launch_combine_groups(f_.data(), log_w_steps_.data(), schedules_.data(), m, R, S,
                                          fused->group_size, static_cast<long long>(t0 + start),
                                          group_f_.data(), context_->stream());
        if (prof) prof->combined.record(stream);
        double* out = staging_out_.data();
        group_f_.copy_to_host(out, m * R * G);
        wait();
        const auto copy_start = Clock::now();
        std::copy(out, out + m * R * G, f + start * R * G);
        if (prof) prof->copy_out_ms += elapsed_ms(copy_start, Clock::now());
        continue;
      }
      Real* out = staging_slots_.data();
      f_.copy_to_host(out, m * R * S);
      if (want_norm2) norm2_.copy_to_host(out + m * R * S, m * R * S);
      wait();
      const auto copy_start = Clock::now();
      // Widen to double on several threads: with many replicates this is hundreds of MB.
      const std::size_t n_out = m * R * S;
      parallel_for(n_out, n_out > (std::size_t{1} << 20) ? 0 : 1, [&](std::size_t b, std::size_t e) {
        std::copy(out + b, out + e, f + start * R * S + b);
        if (want_norm2) std::copy(out + n_out + b, out + n_out + e, norm2 + start * R * S + b);
      });
      if (prof) prof->copy_out_ms += elapsed_ms(copy_start, Clock::now());
    }
  }

  // Declared first so that it is destroyed (or given back to its pool) last, after every
  // buffer that uses its stream: a pooled stream's next user sees their frees in order.
  DeviceContexts::Lease context_;
  DeviceBuffer<Real> frequencies_, theta_, projections_, x_, y_, f_, norm2_;
  DeviceBuffer<DeviceSchedule> schedules_;
  DeviceBuffer<double> log_w_, log_w_steps_, group_f_;  // fused weights (double in both precisions)
  PinnedBuffer<Real> staging_in_;
  PinnedBuffer<double> staging_out_;   // group predictions (fused)
  PinnedBuffer<Real> staging_slots_;   // per-slot predictions and norms
  DeviceBuffer<unsigned> group_offsets_, group_slots_;  // per-kernel layout (empty: per slot)
  unsigned max_group_ = 0;
  bool projections_on_the_fly_ = false;  // per-slot kernel computes V x_t itself
  bool lean_steps_ = true;  // the per-slot kernel's lean step where it applies (OMKL_CUDA_TRAJECTORIES)
  // step_selected(): the step's pairs, x and outputs, in mapped host memory
  PinnedBuffer<Real> staging_selected_out_{true};   // f then ‖θ‖² of the step's pairs
  PinnedBuffer<DevicePair> staging_pairs_{true};    // the step's pairs, then x
  bool native_selected_ = false;
  bool native_round_ = false;  // aggregate_round() on the device (the default; OMKL_CUDA_ROUND=generic: off)
  WalkLaunch walk_launch_;  // read_walk_switches() when the backend is made
  bool log_w_initialized_ = false;
  // Exact double copy of the matrices (checkpoints, float mode), made on first use; stale
  // after device draws until downloaded.
  mutable std::vector<double> host_frequencies_;
  mutable bool host_frequencies_stale_ = false;
  DeviceBuffer<double> exact_frequencies_;  // float backend with device draws: the double matrices
  // aggregate_round(): the round's samples, its updates grouped by slot, and the norms after it
  DeviceBuffer<Real> round_x_;
  DeviceBuffer<RoundUpdate> round_updates_;
  DeviceBuffer<RoundGroup> round_groups_;
  DeviceBuffer<double> round_norm2_;
  bool device_draws_ = false;
  std::vector<SlotSchedule> cached_schedules_;
  bool frequencies_dirty_ = true;
  std::unique_ptr<LoopProfile> profile_;  // OMKL_TIMING=1 only
};

}  // namespace

bool device_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    cudaGetLastError();  // clear the sticky error of a failed probe
    return false;
  }
  return true;
}

std::string device_description() {
  int device = 0, driver = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();  // a failed query is no error of the study's: say only the backend
    return "cuda";
  }
  std::string text = std::string("cuda: ") + prop.name + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) +
                     ", " + std::to_string((prop.totalGlobalMem + (std::size_t{1} << 29)) >> 30) + " GiB";
  if (cudaDriverGetVersion(&driver) == cudaSuccess)
    text += ", driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  else
    cudaGetLastError();
  return text + ")";
}

std::shared_ptr<DeviceContexts> make_device_contexts(double* seconds) {
  auto contexts = std::make_shared<DeviceContexts>();
  contexts->acquire();  // one made now, and given back at once
  if (seconds) *seconds = contexts->creation_seconds();
  return contexts;
}

double device_context_seconds(const DeviceContexts& contexts) { return contexts.creation_seconds(); }

void require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0) {
    cudaGetLastError();
    throw CudaError(std::string("backend cuda (BackendKind::Cuda, --backend cuda): no usable CUDA device (") +
                    (status != cudaSuccess ? cudaGetErrorString(status) : "no device found") + ")");
  }
}

std::unique_ptr<RfBackend> make_cuda_rf_backend(const RfProblem& problem, DeviceContexts* contexts) {
  require_device();
  if (problem.single_precision) return std::make_unique<CudaRfBackend<float>>(problem, contexts);
  return std::make_unique<CudaRfBackend<double>>(problem, contexts);
}

}  // namespace omkl::detail::cuda
