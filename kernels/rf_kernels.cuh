/// @file rf_kernels.cuh
/// @brief Device code of the random-feature backend: batched trajectories over (replicate, slot).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace omkl::cuda {

/// SlotSchedule (rf_backend.h) as the device reads it.
struct DeviceSchedule {
  double eta;
  double step_scale;
  double shrink_scale;
  double lambda;
  long long active_from;
  long long reset_period;
  int inv_sqrt_t;
  unsigned kernel;
};

/// Arguments of one trajectory launch. Layouts (all device pointers):
///  projections: n_steps × (R·P·D), row t holds V x_t for every replicate and kernel; or null,
///               and the per-slot kernel computes V x_t itself from x and frequencies
///               (projections_on_the_fly_supported())
///  theta:       R × S × 2D (sines then cosines)
///  f, norm2:    n_steps × R × S
///  x:           n_steps × d; frequencies: R × P × D × d (only read when projections is null)
template <typename Real>
struct TrajectoryArgs {
  const Real* projections;
  const Real* y;
  Real* theta;
  const DeviceSchedule* schedules;
  Real* f;
  Real* norm2;  // may be null
  std::size_t n_steps, n_replicates, n_slots, n_kernels, n_rff;
  long long t0;
  Real feature_scale;
  int loss;
  bool update;  // false: predict only (θ untouched)
  // Fused log-weights (rf_backend.h, FusedWeights); log_w == nullptr disables them.
  double* log_w;         // R × S, device, carried across launches
  double* log_w_out;     // n_steps × R × S: the log-weight each step's prediction uses
  double fused_initial, fused_rate, fused_lambda, fused_loss_scale;
  const Real* x;
  const Real* frequencies;
  std::size_t n_features;
  // The per-slot kernel's lean step (features/rf_backend.h, lean_step_applies(), must hold
  // for this launch); the kernel-group layout ignores it.
  bool lean = false;
};


/// Whether launch_advance_trajectories() can compute the projections itself (projections null):
/// d ≤ 32 and the lane's rows of V (J·32·d values a warp) fit four warps in 48 KB of shared memory.
bool projections_on_the_fly_supported(std::size_t n_rff, std::size_t n_features, std::size_t real_size);

/// Group predictions from per-slot predictions and fused log-weights: one warp per
/// (step, replicate, group) computes Σ_{active p} softmax(a)_p f_p over the group's slots.
/// @param group_f out: n_steps × R × (S / group_size), double
template <typename Real>
void launch_combine_groups(const Real* f, const double* log_w, const DeviceSchedule* schedules,
                           std::size_t n_steps, std::size_t n_replicates, std::size_t n_slots,
                           std::size_t group_size, long long t0, double* group_f, cudaStream_t stream);

/// One warp per (replicate, slot) trajectory with θ held in registers; advances n_steps
/// samples, computing sin/cos on the fly from the projections.
template <typename Real>
void launch_advance_trajectories(const TrajectoryArgs<Real>& args, cudaStream_t stream);

/// The slots of each kernel, grouped (AdaRaker: one slot per level): slots[offsets[k] ..
/// offsets[k + 1]) are the slots whose kernel is k. Device pointers.
struct KernelGroups {
  const unsigned* offsets;  // n_kernels + 1
  const unsigned* slots;    // n_slots
  unsigned max_group;       // largest group
};

/// Whether launch_advance_kernel_groups() takes this shape: at most 16 slots per kernel, and
/// the θ of a group (max_group × 2D values) fits a warp's share of shared memory.
bool kernel_groups_supported(std::size_t n_rff, std::size_t max_group, std::size_t real_size);

/// One warp per (replicate, kernel) advancing every slot of that kernel on the same features:
/// sin/cos once per step instead of once per slot, θ of the group in shared memory, all slots'
/// dot products and norms in one transposed warp reduction, lane i doing slot i's scalar work.
/// Same arithmetic per slot as launch_advance_trajectories() (features in double from
/// sincos_fma()).
template <typename Real>
void launch_advance_kernel_groups(const TrajectoryArgs<Real>& args, const KernelGroups& groups,
                                  cudaStream_t stream);

/// PairStep (rf_backend.h) as the device reads it.
struct DevicePair {
  unsigned replicate;
  unsigned slot;
  unsigned kernel;  // the slot's kernel (looked up on the host: one dependent load less)
  double rate;    // θ ← shrink·θ − rate·C'(f, y)·z; rate 0 and shrink 1: predict only
  double shrink;
};

/// Arguments of one selected step (per-step feedback algorithms, e.g. the graph-aided family):
///  frequencies: R × P × D × d (V of each (replicate, kernel), row-major D × d)
///  theta:       R × S × 2D
///  x:           d, the step's input; pairs, f, norm2: n_pairs (norm2 may be null)
/// x, pairs, f and norm2 may point into mapped host memory (PinnedBuffer::device_data()).
template <typename Real>
struct SelectedArgs {
  const Real* frequencies;
  const Real* x;
  Real* theta;
  const DevicePair* pairs;
  Real* f;
  Real* norm2;
  std::size_t n_pairs, n_slots, n_kernels, n_rff, n_features;
  Real feature_scale;
  int loss;
  double y;
};

/// One warp per pair: projections, sin/cos, f = θᵀz and ‖θ‖² before the update, then the
/// update. Pairs must name distinct (replicate, slot) trajectories.
template <typename Real>
void launch_step_selected(const SelectedArgs<Real>& args, cudaStream_t stream);

/// Largest D a launch supports.
constexpr std::size_t kMaxRff = 1024;

}  // namespace omkl::cuda
