/// @file rf_backend.h
/// @brief The arithmetic seam between algorithm logic (host) and the backends (CPU, CUDA).
///
/// A backend holds, for R replicates, the frequency matrices of P kernels and the θ vectors of
/// S "slots" (one slot = one learner of one kernel: Raker has S = P, AdaRaker S = levels × P).
/// It does the bulk arithmetic: features z = scale·[sin(Vx), cos(Vx)], per-slot predictions
/// f = θᵀz, and the θ updates θ ← c·θ − ρ·C'(f, y)·z. It never sees kernel weights, instance
/// weights or the per-step random draws: those stay on the host (ARCHITECTURE.md, "The split
/// of work"); only the frequency matrices may be drawn by the backend (draw_frequencies()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "omkl/device_contexts.h"
#include "omkl/types.h"
#include "features/frequency_recipe.h"
#include "features/upload_form.h"
#include "core/loss.h"

namespace omkl::detail {

/// Shape of the problem a backend serves.
struct RfProblem {
  std::size_t n_replicates = 1;
  std::size_t n_kernels = 1;
  std::size_t n_rff = 50;        ///< D; each θ has 2D entries
  std::size_t n_features = 1;    ///< d
  std::vector<std::uint32_t> slot_kernel;  ///< kernel of each slot (size S)
  double feature_scale = 1.0;    ///< 1/√D (paper) or 1 (reference code)
  LossKind loss = LossKind::Squared;
  bool need_norm2 = false;       ///< report ‖θ‖² before each update (regularised weight losses)
  /// float arithmetic: CUDA, the whole trajectory; CPU, the feature map where the angles are
  /// small (cpu_rf_backend.cpp); double otherwise
  bool single_precision = false;

  std::size_t n_slots() const { return slot_kernel.size(); }
  std::size_t theta_size() const { return 2 * n_rff; }
};

/// The slots of each kernel, ascending, in compressed form: slots[offsets[k] .. offsets[k + 1])
/// are those whose kernel is k. Backends walk a kernel's slots together (AdaRaker's levels
/// share the kernel's features).
struct SlotsByKernel {
  std::vector<std::uint32_t> offsets;  ///< n_kernels + 1
  std::vector<std::uint32_t> slots;    ///< n_slots
  std::size_t largest = 0;             ///< most slots of one kernel
};
/// Throws Error when a slot names a kernel ≥ n_kernels.
SlotsByKernel slots_by_kernel(const RfProblem& problem);

/// The θ-update schedule of one slot, identical across replicates. At 1-based time t:
///  - the slot is active iff t ≥ active_from;
///  - if reset_period > 0 and t % reset_period == 0, θ is zeroed before predicting (a fresh
///    learner starts at t);
///  - η_t = eta (constant) or eta/√t (inv_sqrt_t);
///  - θ ← (1 − shrink_scale·η_t·λ)·θ − step_scale·η_t·C'(f, y)·z.
struct SlotSchedule {
  double eta = 0.0;
  bool inv_sqrt_t = false;
  double step_scale = 1.0;
  double shrink_scale = 2.0;
  double lambda = 0.0;
  std::int64_t active_from = 1;
  std::int64_t reset_period = 0;
};

/// Whether a pass from time t0 fits the GPU's lean trajectory step (kernels/rf_kernels.cu):
/// squared loss, every step an update, and every schedule with a constant η, no resets and
/// active from t0 on. Raker's common configuration; anything else takes the generic step.
bool lean_step_applies(const std::vector<SlotSchedule>& schedules, std::int64_t t0, LossKind loss, bool update);

/// Log-domain kernel weights (exp_eta / pow_beta rules) applied by the backend itself: slots
/// form groups of `group_size` consecutive slots (Raker: one group of P kernels; AdaRaker: one
/// per level). Each slot keeps a log-weight a, reset to `initial` whenever its θ is reset, and
/// after each step a ← a − rate·(C(f, y) + lambda·‖θ‖²)/loss_scale. Because these weights
/// are prefix sums of per-slot losses they never feed back into θ, so a backend can compute
/// them beside the trajectories and return only the group predictions Σ softmax(a)·f.
struct FusedWeights {
  std::size_t group_size = 1;
  double initial = 0.0;     ///< starting log-weight (−ln group_size)
  double rate = 0.5;        ///< η_w (exp_eta) or −ln β (pow_beta)
  double lambda = 0.0;      ///< ridge weight in the loss (0 = data loss only)
  double loss_scale = 1.0;
};

/// One (replicate, slot) of a per-step selected update: θ ← shrink·θ − rate·C'(f, y)·z.
/// rate = 0 and shrink = 1 predict without learning.
struct PairStep {
  std::uint32_t replicate = 0;
  std::uint32_t slot = 0;
  double rate = 0.0;
  double shrink = 1.0;
};

/// One client's share of a federated round for one (replicate, slot) (spec/federated.md §1.3
/// S7): the update g = (a·feature_scale)·u(x_client) + b·θ, with u = [sin(Vx), cos(Vx)]
/// unscaled and θ the slot's θ at the start of the round. POF-MKL's g = (η/p)(2(f − y)z + 2λθ)
/// is a = 2η(f − y)/p, b = 2ηλ/p.
struct ClientUpdate {
  std::uint32_t replicate = 0;
  std::uint32_t slot = 0;
  std::uint32_t client = 0;  ///< row of the round's samples
  double a = 0.0;
  double b = 0.0;
};

/// How a resident walk is launched on the GPU (kernels/resident_walk.cuh), from the switches
/// OMKL_CUDA_WALK_PAIRS, OMKL_CUDA_WALK_PLAN and OMKL_CUDA_WALK_THREADS (read_walk_switches()).
struct WalkLaunch {
  /// A resident walk's step with fewer pairs than warps gives each pair the whole thread block
  /// (OMKL_CUDA_WALK_PAIRS=auto) or a warp (=warp), read when the CUDA backend is made
  /// (kernels/resident_walk.cuh). Unset: the program's choice (detail::FewPairs: the whole block
  /// for a program whose steps have one pair, the bandit's; a warp per pair otherwise).
  std::optional<bool> block_per_pair;
  /// A team program's plan() and learn() (core/resident_team.h) by the whole thread block
  /// (OMKL_CUDA_WALK_PLAN=block, the default) or by its thread 0 (=thread), read likewise.
  bool team_steps = true;
  /// Threads of a resident walk's block, one block per replicate (OMKL_CUDA_WALK_THREADS=128,
  /// 256 or 512, read likewise); 0 (`auto`): the most that still keeps every replicate's block
  /// resident at once. Unset: the program's choice (`auto` for a team program, 128 otherwise).
  std::optional<unsigned> walk_threads;
};

/// The launch from the switches OMKL_CUDA_WALK_PAIRS, OMKL_CUDA_WALK_PLAN and
/// OMKL_CUDA_WALK_THREADS; a value that is not one of a switch's choices is a ConfigError naming
/// it. Read when a walk's device side is made (the CUDA backend, the kernel-expansion bandit's
/// and PerFedAvg's own walks).
WalkLaunch read_walk_switches();

/// The device memory a GPU backend lends to a device-resident walk (core/resident_walk.h): θ
/// (R × S × 2D) and the frequency matrices (R × P × D × d) in the backend's precision, the
/// stream the walk must be ordered on, and how the backend's walks launch. The lease stays valid
/// while the backend lives.
struct DeviceLease {
  void* theta = nullptr;
  const void* frequencies = nullptr;
  bool single_precision = false;
  void* stream = nullptr;  ///< cudaStream_t
  WalkLaunch launch;
};

/// The most random features per kernel (D) the CUDA backend holds: a slot's 2D features in one
/// thread block's registers and shared memory (kernels/rf_kernels.cuh's kMaxRff, which equals
/// it). Here so that an algorithm that makes its backend late can refuse a larger D up front.
inline constexpr std::size_t kMaxCudaRff = 1024;

class RfBackend {
 public:
  virtual ~RfBackend() = default;
  const RfProblem& problem() const { return problem_; }

  /// Uploads V (n_rff × n_features, row-major, host) of one kernel of one replicate.
  virtual void set_frequencies(std::size_t replicate, std::size_t kernel, const double* V) = 0;
  virtual void get_frequencies(std::size_t replicate, std::size_t kernel, double* V) const = 0;
  /// Gives the closed-form recipes of all R × P frequency matrices (replicate by replicate;
  /// frequency_recipe.h). A callable, so that a backend that does not draw never builds them.
  using RecipeSource = std::function<std::vector<MatrixRecipe>()>;
  /// Draws the frequency matrices itself, from `recipes()`, instead of receiving them through
  /// set_frequencies(): the same matrices, bit for bit. Returns false, without calling
  /// `recipes`, where the backend does not (the CPU backend; the CUDA backend with
  /// OMKL_CUDA_DRAWS=host), and the host draws them.
  virtual bool draw_frequencies(const RecipeSource& recipes) {
    (void)recipes;
    return false;
  }
  /// Moves what set_frequencies() gave to where the steps read it (the GPU backend uploads
  /// the matrices); called once construction is complete, so that its cost is counted there.
  /// Frequencies set later (a checkpoint) are moved lazily by the next step.
  virtual void prepare() {}

  /// Advances every replicate and slot through n_steps samples starting at 1-based time t0.
  /// @param x n_steps × n_features row-major (host); @param y n_steps targets (host)
  /// @param f out: n_steps × R × S predictions before each update (0 where inactive)
  /// @param norm2 out (may be null unless need_norm2): ‖θ‖² before each update, same layout
  virtual void advance(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
                       const std::vector<SlotSchedule>& schedules, double* f, double* norm2) = 0;

  /// Predictions of every slot of every replicate for one sample (R × S, host), no update.
  /// Slots whose schedule would reset at t are reported as 0.
  virtual void predict(const double* x, std::int64_t t, const std::vector<SlotSchedule>& schedules,
                       double* f) = 0;
  /// predict() of n_rows samples against the same θ (a federated round's clients): f is
  /// n_rows × R × S, each row's values exactly those predict() gives for it. The base calls
  /// predict() per row; the CPU backend walks each kernel's rows together, so that its V stays
  /// in cache across them.
  virtual void predict_rows(const double* x, std::size_t n_rows, std::int64_t t,
                            const std::vector<SlotSchedule>& schedules, double* f);

  /// One sample for an explicit list of pairs, as the graph-aided and bandit families need
  /// (their selections and importance weights come from the host at every step). Only the
  /// kernels the pairs name are featurised, so the cost follows the selection, not N.
  /// @param f out: per pair, the prediction before its update; @param norm2 out (may be null)
  /// A pair may appear once per call. The base implementation works through get/set_theta
  /// and get_frequencies; backends override it with a native path.
  virtual void step_selected(const double* x, double y, const PairStep* pairs, std::size_t n_pairs,
                             double* f, double* norm2);
  /// step_selected() of n_rows samples, row k with target y[k] and the pairs_per_row pairs from
  /// pairs[k · pairs_per_row], where no (replicate, slot) appears in two rows (eM-KOFL's clients
  /// in a round, each stepping its own copies): f and norm2 (may be null) as the pairs. Each
  /// row's numbers are those of its own step_selected() call. The base calls step_selected() per
  /// row; the CPU backend walks each pair position's rows together, so that a kernel's V stays in
  /// cache across them.
  virtual void step_selected_rows(const double* x, const double* y, std::size_t n_rows, const PairStep* pairs,
                                  std::size_t pairs_per_row, double* f, double* norm2);

  /// The server side of one federated round (spec/federated.md §1.3 S8, §6.2 item 4): for every
  /// (replicate, slot) that `updates` name, θ ← θ − scale·Σ g over its updates, the sum taken in
  /// the order given (the server's ascending client order, so that any split of the clients
  /// over processes adds the same numbers in the same order), every g computed from the θ before
  /// the round. Slots without updates keep θ.
  /// @param x the round's client samples, n_clients × n_features (host)
  /// @param upload what the clients sent: each g added as server_term(θ, g, upload) adds it
  /// @param norm2 out (may be null): ‖θ‖² of every (replicate, slot) after the round, R × S
  /// The base implementation works through get/set_theta and get_frequencies.
  virtual void aggregate_round(const double* x, std::size_t n_clients, const ClientUpdate* updates,
                               std::size_t n_updates, double scale, UploadForm upload, double* norm2);

  /// One client's update vector of a federated round, as aggregate_round() adds it: g = (a·scale)·u
  /// + b·θ over the 2·n_rff entries of `slot` (sines, then cosines), with u the features of x. A
  /// server in another process that adds these in client order computes aggregate_round()'s θ
  /// bit for bit (same operations, same order).
  virtual void client_update(std::size_t replicate, std::size_t slot, const double* x, double a, double b, double* g);

  /// True when advance_fused() is implemented (the CUDA backend); otherwise the algorithms
  /// compute the weights on the host from advance()'s per-slot predictions.
  virtual bool supports_fused_weights() const { return false; }
  /// Like advance(), but also maintains the fused log-weights and returns, per step, replicate
  /// and group, the weighted group prediction (0 for a group whose slots are inactive).
  /// @param group_f out: n_steps × R × (S / group_size)
  virtual void advance_fused(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
                             const std::vector<SlotSchedule>& schedules, const FusedWeights& weights,
                             double* group_f);
  /// Fused log-weights of all slots of one replicate (S values, host), for predict() and
  /// checkpoints; set_log_weights restores them.
  virtual void get_log_weights(std::size_t replicate, double* log_weights) const;
  virtual void set_log_weights(std::size_t replicate, const double* log_weights);

  /// Steps per advance() call that amortise this backend's per-call cost (transfers, launches)
  /// while bounding the host scratch (steps × R × S predictions).
  virtual std::size_t preferred_window() const { return 256; }
  /// Steps per advance_fused() call: only group predictions come back, so a backend may take
  /// longer windows there.
  virtual std::size_t preferred_fused_window() const { return preferred_window(); }

  /// Lends θ and the frequency matrices on the device to a resident walk (frequencies set so
  /// far are uploaded first); false where the backend keeps them on the host (the CPU backend).
  virtual bool device_lease(DeviceLease& lease) {
    (void)lease;
    return false;
  }

  /// θ of one slot (2·n_rff values, host), for checkpoints and tests.
  virtual void get_theta(std::size_t replicate, std::size_t slot, double* theta) const = 0;
  virtual void set_theta(std::size_t replicate, std::size_t slot, const double* theta) = 0;
  /// θ of every (replicate, slot): R × S rows of 2·n_rff values (host), replicate-major. What a
  /// family reads back after a resident walk or a round: one transfer (and one wait) where the
  /// backend keeps θ on a device, against one per slot through get_theta(). The defaults loop
  /// over the slots.
  virtual void get_all_theta(double* theta) const;
  virtual void set_all_theta(const double* theta);

 protected:
  explicit RfBackend(RfProblem problem) : problem_(std::move(problem)) {}
  RfProblem problem_;
};

/// Creates a backend. Auto picks CUDA when the library has it and a device is visible, and
/// otherwise the CPU. Cuda without a usable device throws CudaError. A CUDA backend takes its
/// stream and cuBLAS handle from `contexts` where given (and gives them back when it dies),
/// else makes its own.
std::unique_ptr<RfBackend> make_rf_backend(BackendKind kind, const RfProblem& problem,
                                           DeviceContexts* contexts = nullptr);

/// True when this build has the CUDA backend and a usable device is visible.
bool cuda_available();

/// What a study's summary.json records as its `device` for the CUDA backend: the GPU's name,
/// compute capability, memory and driver ("cuda: NVIDIA H200 (sm_90, 140 GiB, driver 13.0)"), or
/// "cuda" where no device can be queried.
std::string cuda_device_description();

/// Whether make_rf_backend(kind, …) gives a GPU backend (Cuda; Auto where cuda_available()):
/// where an algorithm's device work would run.
bool backend_on_gpu(BackendKind kind);

/// For device work outside an RfBackend (the support-set and PerFedAvg walks): throws the
/// CudaError make_rf_backend(Cuda, …) throws when this build has no CUDA backend or no usable
/// device is visible.
void require_cuda_device();

/// Whether θ is zeroed at time t by this schedule, and the step size used at t.
inline bool schedule_resets(const SlotSchedule& s, std::int64_t t) {
  return s.reset_period > 0 && t % s.reset_period == 0;
}

namespace cpu {
std::unique_ptr<RfBackend> make_cpu_rf_backend(const RfProblem& problem);
}
/// The CUDA backend's entry points: src/cuda/cuda_rf_backend.cu, or in a build without CUDA
/// src/cuda/no_cuda.cpp (no device available; making a backend or contexts throws CudaError).
namespace cuda {
std::unique_ptr<RfBackend> make_cuda_rf_backend(const RfProblem& problem, DeviceContexts* contexts);
std::shared_ptr<DeviceContexts> make_device_contexts(double* seconds);
/// Throws CudaError naming why no device is usable.
void require_device();
double device_context_seconds(const DeviceContexts& contexts);
bool device_available();
/// The current device as a study records it: "cuda: NAME (sm_XY, N GiB, driver A.B)".
std::string device_description();
}  // namespace cuda

}  // namespace omkl::detail
