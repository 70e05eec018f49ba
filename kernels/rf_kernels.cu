/// @file rf_kernels.cu
/// @brief Fused sin/cos + predict + θ-update trajectories (spec/raker.md §8.1, stage 2).
///
/// Each warp owns one trajectory (replicate r, slot s): θ (2D values) lives in registers, J
/// sine and J cosine entries per lane with J = ⌈D/32⌉ a compile-time constant so the arrays
/// stay in registers. Per step: coalesced read of the D projections of the slot's kernel,
/// sincos, a warp-shuffle reduction for f = θᵀz and ‖θ‖², then the update; nothing else is
/// touched, so thousands of trajectories run independently.
#include <algorithm>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.h"
#include "core/loss.h"
#include "core/rate_schedule.h"
#include "features/sincos_fma.h"
#include "kernels/rf_kernels.cuh"

namespace omkl::cuda {

namespace {

template <typename Real>
__device__ __forceinline__ Real warp_sum(Real v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ __forceinline__ void sin_cos(double a, double* s, double* c) { sincos(a, s, c); }
__device__ __forceinline__ void sin_cos(float a, float* s, float* c) { sincosf(a, s, c); }

// The projections lane ℓ owns at one step: entries ℓ, ℓ + 32, … of `a` below D (0 beyond).
template <typename Real, int J>
__device__ __forceinline__ void load_lane_projections(const Real* a, int lane, std::size_t D, Real (&out)[J]) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t i = lane + 32 * j;
    out[j] = i < D ? a[i] : Real(0);
  }
}

// θ entries lane ℓ owns: sines ℓ, ℓ + 32, … and the matching cosines (0 beyond D).
template <typename Real, int J>
__device__ __forceinline__ void load_lane_theta(const Real* theta, int lane, std::size_t D, Real (&ts)[J],
                                                Real (&tc)[J]) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t i = lane + 32 * j;
    ts[j] = i < D ? theta[i] : Real(0);
    tc[j] = i < D ? theta[D + i] : Real(0);
  }
}

// z = scale·[sin a, cos a] for the lane's entries. Entries past D must stay exactly 0 so that
// their θ (and ‖θ‖²) stays 0.
template <typename Real, int J>
__device__ __forceinline__ void lane_features(const Real (&a)[J], int lane, std::size_t D, Real scale,
                                              Real (&zs)[J], Real (&zc)[J]) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    Real sv, cv;
    sin_cos(a[j], &sv, &cv);
    const bool valid = lane + 32 * j < D;
    zs[j] = valid ? scale * sv : Real(0);
    zc[j] = valid ? scale * cv : Real(0);
  }
}

// lane_features() in double with sincos_fma(): straight-line code that the compiler can
// interleave across the lane's J angles (the library's sincos branches inside), and the CPU
// AVX2 kernel's bits for the same angle. Angles beyond its fast range (rare: |a| > 2⁴⁵) take
// the library's sincos in a second, warp-divergent pass (lane_features_fma_fixup(), which the
// lean step issues after its reduction so that the fast pass shares a block with it). float
// keeps sincosf.
template <typename Real, int J>
__device__ __forceinline__ void lane_features_fma_fixup(const Real (&a)[J], int lane, std::size_t D, Real scale,
                                                        Real (&zs)[J], Real (&zc)[J]) {
  if constexpr (std::is_same_v<Real, double>) {
    bool out_of_range = false;
#pragma unroll
    for (int j = 0; j < J; ++j) out_of_range |= fabs(a[j]) > detail::kFmaFastLimit;
    if (!out_of_range) return;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      if (!(fabs(a[j]) > detail::kFmaFastLimit)) continue;
      double sv, cv;
      sincos(a[j], &sv, &cv);
      const bool valid = lane + 32 * j < D;
      zs[j] = valid ? scale * sv : 0.0;
      zc[j] = valid ? scale * cv : 0.0;
    }
  }
}

// The fast pass alone: exact for angles in the fast range, to be followed by the fixup.
template <typename Real, int J>
__device__ __forceinline__ void lane_features_fma_fast(const Real (&a)[J], int lane, std::size_t D, Real scale,
                                                       Real (&zs)[J], Real (&zc)[J]) {
  if constexpr (std::is_same_v<Real, double>) {
#pragma unroll
    for (int j = 0; j < J; ++j) {
      double sv, cv;
      detail::sincos_fma(a[j], sv, cv);
      const bool valid = lane + 32 * j < D;
      zs[j] = valid ? scale * sv : 0.0;
      zc[j] = valid ? scale * cv : 0.0;
    }
  } else {
    lane_features<Real, J>(a, lane, D, scale, zs, zc);
  }
}

template <typename Real, int J>
__device__ __forceinline__ void lane_features_fma(const Real (&a)[J], int lane, std::size_t D, Real scale,
                                                  Real (&zs)[J], Real (&zc)[J]) {
  lane_features_fma_fast<Real, J>(a, lane, D, scale, zs, zc);
  lane_features_fma_fixup<Real, J>(a, lane, D, scale, zs, zc);
}

// One step's arithmetic, shared by the generic and the lean step of the per-slot kernel, so that
// they compute the same expressions by construction.
//  - the lane's partials of f = θᵀz and ‖θ‖² (sines and cosines paired per entry);
template <typename Real, int J>
__device__ __forceinline__ void lane_dot_and_norm(const Real (&ts)[J], const Real (&tc)[J], const Real (&zs)[J],
                                                  const Real (&zc)[J], Real& dot, Real& n2) {
  dot = 0;
  n2 = 0;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    dot += ts[j] * zs[j] + tc[j] * zc[j];
    n2 += ts[j] * ts[j] + tc[j] * tc[j];
  }
}
//  - θ ← shrink·θ − gain·z;
template <typename Real, int J>
__device__ __forceinline__ void theta_step(Real (&ts)[J], Real (&tc)[J], const Real (&zs)[J], const Real (&zc)[J],
                                           Real shrink, Real gain) {
#pragma unroll
  for (int j = 0; j < J; ++j) {
    ts[j] = shrink * ts[j] - gain * zs[j];
    tc[j] = shrink * tc[j] - gain * zc[j];
  }
}
//  - the fused log-weight a ← a − rate·loss/scale. rate·loss is rounded on its own (__dmul_rn:
//    no FMA with the subtraction, which device code would otherwise be free to form), and x / 1
//    is x, so an unscaled loss skips the division (a reciprocal, two Newton steps and a slow
//    path) and still gives the host KernelWeights' rate·loss.
__device__ __forceinline__ double next_log_weight(double log_weight, double loss, double rate, double scale) {
  const double step = __dmul_rn(rate, loss);
  return log_weight - (scale == 1.0 ? step : step / scale);
}

// First multiple of `period` at or after t (t may be ≤ 0).
__device__ __forceinline__ long long first_multiple_from(long long t, long long period) {
  long long m = t % period;
  if (m < 0) m += period;
  return m == 0 ? t : t + (period - m);
}

// A warp's shared memory when it computes its projections (OnTheFly): the lane's rows of V,
// entry (j, k) of lane ℓ at (j·d + k)·32 + ℓ (conflict-free), then x of the next step.
template <typename Real, int J>
__host__ __device__ constexpr std::size_t on_the_fly_reals(std::size_t n_features) {
  return J * 32 * n_features + 32;
}

constexpr int kTrajectoryThreads = 128;  // 4 warps per block: small blocks spread trajectories over SMs

// OnTheFly: the projections V x_t are computed here from x and V (rows in shared memory)
// instead of read from the GEMM's output, which at 1000 seeds is 363 GB written and re-read.
//
// Lean (TrajectoryArgs::lean, lean_step_applies()): the step of the common Raker
// configuration only: squared loss, every step an update, constant η, no resets, every slot
// active from the launch's first step. ‖θ‖² is always reduced (beside f, so its shuffles
// overlap f's), as Raker's default weight loss needs it. Its step then has no branch on the
// loss or the schedule (what remains are uniform branches around lane 0's stores, the fused
// weights' update, a loss scale's division and the rare out-of-range sincos): the generic
// step's loop body is ≈ 970 instructions in ≈ 50 blocks (sm_90, J = 2), because every runtime
// case is compiled in. And the software pipeline goes one step deeper: step k + 1's sincos is issued
// before step k's reduction (its inputs were loaded a step earlier), so the scheduler can
// overlap the polynomials with the shuffles' latency, which the generic step's blocks keep
// apart. Each step's arithmetic is the generic step's (lane_dot_and_norm, theta_step,
// next_log_weight and the same loss expressions), except that in double the features come from
// sincos_fma() (as in the kernel-group layout: the CPU AVX2 kernel's bits).
template <typename Real, int J, bool OnTheFly, bool Lean>
__global__ void advance_trajectories_kernel(TrajectoryArgs<Real> args) {
  extern __shared__ __align__(16) unsigned char trajectory_shared[];
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const std::size_t S = args.n_slots, R = args.n_replicates, D = args.n_rff, d = args.n_features;
  if (warp >= R * S) return;  // whole warps only; no block-wide barrier follows
  const std::size_t r = warp / S, s = warp % S;
  const DeviceSchedule sc = args.schedules[s];
  Real* theta = args.theta + warp * 2 * D;
  Real ts[J], tc[J];
  load_lane_theta<Real, J>(theta, lane, D, ts, tc);
  const std::size_t row = R * args.n_kernels * D;
  const Real* a_base = OnTheFly ? nullptr : args.projections + (r * args.n_kernels + sc.kernel) * D;
  Real* v_sh = reinterpret_cast<Real*>(trajectory_shared) + (threadIdx.x / 32) * on_the_fly_reals<Real, J>(d);
  Real* x_sh = v_sh + J * 32 * d;
  if constexpr (OnTheFly) {
    const Real* V = args.frequencies + (r * args.n_kernels + sc.kernel) * D * d;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const std::size_t c = lane + 32 * j;
      for (std::size_t k = 0; k < d; ++k) v_sh[(j * d + k) * 32 + lane] = c < D ? V[c * d + k] : Real(0);
    }
  }
  // Software pipeline: the features of step k + 1 do not depend on θ, so their load and
  // sincos are issued before step k's reduction and update, hiding the memory latency and the
  // special-function latency behind the dependent chain.
  Real zs[J], zc[J], next_a[J];
  Real next_y = 0, y_step = 0, next_x = 0;  // next_x: lane k's entry of the next step's x
  auto load_next = [&](std::size_t step) {
    if constexpr (OnTheFly) {
      next_x = lane < static_cast<int>(d) ? args.x[step * d + lane] : Real(0);
    } else {
      load_lane_projections<Real, J>(a_base + step * row, lane, D, next_a);
    }
    next_y = args.y[step];  // off the dependent chain: read a step ahead with the projections
  };
  // The generic step takes the library's sincos: sincos_fma() measured no faster in it (H100,
  // Raker on Naval at 1-1000 seeds, 2026-11-23), and its numbers were taken with it. The lean
  // step takes sincos_fma() (below), whose straight-line code is what lets it overlap.
  auto features_of_next = [&](Real(&out_s)[J], Real(&out_c)[J]) {
    if constexpr (OnTheFly) {
      __syncwarp();  // the previous step's reads of x_sh are done
      if (lane < static_cast<int>(d)) x_sh[lane] = next_x;
      __syncwarp();
#pragma unroll
      for (int j = 0; j < J; ++j) {
        Real a = 0;
        for (std::size_t k = 0; k < d; ++k) a += v_sh[(j * d + k) * 32 + lane] * x_sh[k];
        next_a[j] = a;
      }
    }
    // The lean step takes sincos_fma()'s fast pass here (straight-line code, so that its
    // polynomials can interleave with the reduction; the library's sincos branches to its slow
    // path per angle) and its fixup after the step's update.
    if constexpr (Lean) lane_features_fma_fast<Real, J>(next_a, lane, D, args.feature_scale, out_s, out_c);
    else lane_features<Real, J>(next_a, lane, D, args.feature_scale, out_s, out_c);
  };
  auto features_from_next = [&] {
    features_of_next(zs, zc);
    if constexpr (Lean) lane_features_fma_fixup<Real, J>(next_a, lane, D, args.feature_scale, zs, zc);
  };
  if (args.n_steps > 0) {
    load_next(0);
    features_from_next();
    y_step = next_y;
  }
  const bool fused = args.log_w != nullptr;
  double log_weight = fused ? args.log_w[warp] : 0.0;  // uniform across the warp
  if constexpr (Lean) {
    const std::size_t last = args.n_steps - 1;  // n_steps ≥ 1 (launch_advance_trajectories)
    load_next(last < 1 ? last : 1);
    // The generic step's sc.step_scale · η · C' and 1 − sc.shrink_scale · η · λ, with η
    // constant: the same products, evaluated once.
    const double step_eta = sc.step_scale * sc.eta;
    const Real shrink = static_cast<Real>(1.0 - sc.shrink_scale * sc.eta * sc.lambda);
    const std::size_t stride = R * S;
    Real* f_out = args.f + r * S + s;
    double* log_w_out = fused ? args.log_w_out + r * S + s : nullptr;
    Real* norm2_out = args.norm2 ? args.norm2 + r * S + s : nullptr;
    constexpr LossKind kSquared = LossKind::Squared;
    for (std::size_t step = 0; step < args.n_steps; ++step) {
      // Step k + 1's features, then its successor's inputs; past the end both repeat the last
      // step (computed, never used), so that the step has no branch.
      Real zs_next[J], zc_next[J], a_next[J];
      features_of_next(zs_next, zc_next);
#pragma unroll
      for (int j = 0; j < J; ++j) a_next[j] = next_a[j];  // for the fixup, after load_next()
      const Real y_next = next_y;
      load_next(step + 2 <= last ? step + 2 : last);
      Real dot, n2;
      lane_dot_and_norm<Real, J>(ts, tc, zs, zc, dot, n2);
      dot = warp_sum(dot);
      n2 = warp_sum(n2);
      if (lane == 0) {
        *f_out = dot;
        if (norm2_out) *norm2_out = n2;
        if (fused) *log_w_out = log_weight;
      }
      if (fused) {
        // + λ·‖θ‖² as in the generic step (λ = 0 adds an exact 0).
        const double loss = detail::loss_value(kSquared, static_cast<double>(dot), static_cast<double>(y_step)) +
                            args.fused_lambda * static_cast<double>(n2);
        log_weight = next_log_weight(log_weight, loss, args.fused_rate, args.fused_loss_scale);
      }
      const Real gain = static_cast<Real>(
          step_eta * detail::loss_derivative(kSquared, static_cast<double>(dot), static_cast<double>(y_step)));
      theta_step<Real, J>(ts, tc, zs, zc, shrink, gain);
#pragma unroll
      for (int j = 0; j < J; ++j) {
        zs[j] = zs_next[j];
        zc[j] = zc_next[j];
      }
      lane_features_fma_fixup<Real, J>(a_next, lane, D, args.feature_scale, zs, zc);
      y_step = y_next;
      f_out += stride;
      if (norm2_out) norm2_out += stride;
      if (fused) log_w_out += stride;
    }
  } else {
    long long next_reset = sc.reset_period > 0 ? first_multiple_from(args.t0, sc.reset_period) : 0;
    for (std::size_t step = 0; step < args.n_steps; ++step) {
      const long long t = args.t0 + static_cast<long long>(step);
      const std::size_t out = (step * R + r) * S + s;
      const bool more = step + 1 < args.n_steps;
      if (more) load_next(step + 1);
      // Reset times are tracked (t % period on every step is a 64-bit division).
      if (sc.reset_period > 0 && t > next_reset) next_reset += sc.reset_period;
      if (t < sc.active_from) {
        if (lane == 0) {
          args.f[out] = Real(0);
          if (args.norm2) args.norm2[out] = Real(0);
          if (fused) args.log_w_out[out] = 0.0;
        }
      } else {
        if (sc.reset_period > 0 && t == next_reset) {
#pragma unroll
          for (int j = 0; j < J; ++j) ts[j] = tc[j] = Real(0);
          log_weight = args.fused_initial;  // a fresh learner starts with fresh weights
        }
        Real dot, n2;
        lane_dot_and_norm<Real, J>(ts, tc, zs, zc, dot, n2);
        dot = warp_sum(dot);
        const bool want_n2 = args.norm2 || (fused && args.fused_lambda != 0.0);
        if (want_n2) n2 = warp_sum(n2);
        else n2 = 0;
        if (lane == 0) {
          args.f[out] = dot;
          if (args.norm2) args.norm2[out] = n2;
          if (fused) args.log_w_out[out] = log_weight;
        }
        if (fused) {
          const double y = static_cast<double>(y_step);
          const double loss = detail::loss_value(static_cast<LossKind>(args.loss), static_cast<double>(dot), y) +
                              args.fused_lambda * static_cast<double>(n2);
          log_weight = next_log_weight(log_weight, loss, args.fused_rate, args.fused_loss_scale);
        }
        if (args.update) {
          // Step size and gain in double, as on the host, whatever Real is.
          const double eta = omkl::detail::scheduled_rate(sc.eta, sc.inv_sqrt_t, t);
          const Real shrink = static_cast<Real>(1.0 - sc.shrink_scale * eta * sc.lambda);
          const Real gain = static_cast<Real>(
              sc.step_scale * eta *
              detail::loss_derivative(static_cast<LossKind>(args.loss), static_cast<double>(dot),
                                      static_cast<double>(y_step)));
          theta_step<Real, J>(ts, tc, zs, zc, shrink, gain);
        }
      }
      if (more) {
        features_from_next();
        y_step = next_y;
      }
    }
  }  // generic step
  if (!args.update) return;
  if (fused && lane == 0) args.log_w[warp] = log_weight;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t i = lane + 32 * j;
    if (i < D) {
      theta[i] = ts[j];
      theta[D + i] = tc[j];
    }
  }
}

template <typename Real, int J>
void launch_with(const TrajectoryArgs<Real>& args, cudaStream_t stream) {
  const std::size_t warps = args.n_replicates * args.n_slots;
  const unsigned blocks = static_cast<unsigned>((warps * 32 + kTrajectoryThreads - 1) / kTrajectoryThreads);
  const auto launch = [&](auto on_the_fly, auto lean) {
    constexpr bool kOnTheFly = decltype(on_the_fly)::value;
    const std::size_t shared =
        kOnTheFly ? (kTrajectoryThreads / 32) * on_the_fly_reals<Real, J>(args.n_features) * sizeof(Real) : 0;
    advance_trajectories_kernel<Real, J, kOnTheFly, decltype(lean)::value>
        <<<blocks, kTrajectoryThreads, shared, stream>>>(args);
  };
  using Yes = std::true_type;
  using No = std::false_type;
  const bool on_the_fly = args.projections == nullptr;
  if (on_the_fly) args.lean ? launch(Yes{}, Yes{}) : launch(Yes{}, No{});
  else args.lean ? launch(No{}, Yes{}) : launch(No{}, No{});
  OMKL_CUDA_CHECK_LAUNCH();
}

// ---- One warp per (replicate, kernel) group of slots -------------------------------------
//
// AdaRaker keeps one θ per (level, kernel); the per-slot kernel above gives each its own warp
// and every level recomputes the same sin/cos (14 times per step at 14 levels). Here one warp
// owns the group of a kernel: the features are computed once per step, θ of every slot in the
// group sits in shared memory (each lane touches only its own entries, so no synchronisation
// is needed for it), and the per-slot work is spread over the lanes instead of walked slot by
// slot: lane i keeps member i's schedule, log-weight and reset time; the members' dot products
// and squared norms are reduced in one transposed butterfly (lane i receives member i's dot);
// lane i then computes member i's loss, weight and step, and the warp applies every member's
// update. Per slot the arithmetic is that of advance_trajectories_kernel (same pairing in the
// reductions, same update), except that in double the features come from sincos_fma()
// (lane_features_fma), the CPU AVX2 kernel's bits.
//
// Measured on an H100 (2026-11-23, Naval, jmlr23-76, D = 50, 20 seeds): the first version of
// this layout, which walked the members two at a time with a warp reduction each, took 184 ms
// against the per-slot kernel's 154 ms; see bench/RESULTS.md for this one.

// Largest shared-memory share of one warp: the default 48 KB limit of a block, so no opt-in
// attribute is needed.
constexpr std::size_t kGroupSharedBytes = 48 * 1024;

// Most members (slots of one kernel) a warp advances: their dot products and squared norms
// are the 32 values of one transposed reduction.
constexpr int kGroupMembers = 16;

// Sums each of the 32 values v[0..31] over the warp; lane ℓ returns the total of v[ℓ]. Each
// level halves the values a lane carries (it keeps one half and adds its partner's copy of
// that half), so 16 + 8 + 4 + 2 + 1 = 31 shuffles do the work of 32 butterflies (160). Lanes
// pair as in warp_sum() (offsets 16, 8, 4, 2, 1), so each total is summed in warp_sum()'s order.
// One level as a template, so that every index is a compile-time constant and v stays in
// registers (a loop nest with a dependent trip count left v on the stack).
template <int Offset, typename Real>
__device__ __forceinline__ void transposed_level(Real (&v)[32], int lane) {
  const bool upper = (lane & Offset) != 0;
#pragma unroll
  for (int k = 0; k < Offset; ++k) {
    const Real send = upper ? v[k] : v[k + Offset];
    const Real keep = upper ? v[k + Offset] : v[k];
    v[k] = keep + __shfl_xor_sync(0xffffffffu, send, Offset);
  }
}

template <typename Real>
__device__ __forceinline__ Real warp_sum_transposed(Real (&v)[32], int lane) {
  transposed_level<16>(v, lane);
  transposed_level<8>(v, lane);
  transposed_level<4>(v, lane);
  transposed_level<2>(v, lane);
  transposed_level<1>(v, lane);
  return v[0];
}

// A warp's shared memory, in Reals: θ of max_group members, then each member's (shrink, gain)
// of the step in double.
template <typename Real, int J>
__host__ __device__ constexpr std::size_t group_shared_reals(std::size_t max_group) {
  return max_group * 2 * J * 32 + 2 * kGroupMembers * sizeof(double) / sizeof(Real);
}

// At most 128 threads a block and 3 blocks an SM: ≤ 168 registers a thread, so that the 32
// reduction values stay in registers while 12 warps an SM (1 584 on an H100) are resident. The
// launch (launch_groups_with) uses at most this many warps a block.
constexpr int kGroupWarpsPerBlock = 4;
template <typename Real, int J>
__global__ void __launch_bounds__(32 * kGroupWarpsPerBlock, 3)
    advance_kernel_groups_kernel(TrajectoryArgs<Real> args, KernelGroups groups) {
  constexpr unsigned kAll = 0xffffffffu;
  extern __shared__ __align__(16) unsigned char group_shared[];
  const int lane = threadIdx.x & 31;
  const std::size_t warp_in_block = threadIdx.x / 32;
  const std::size_t warp = static_cast<std::size_t>(blockIdx.x) * (blockDim.x / 32) + warp_in_block;
  const std::size_t S = args.n_slots, R = args.n_replicates, P = args.n_kernels, D = args.n_rff;
  if (warp >= R * P) return;  // whole warps only; no block-wide barrier follows
  const std::size_t r = warp / P, k = warp % P;
  const unsigned first = groups.offsets[k];
  const int count = static_cast<int>(groups.offsets[k + 1] - first);
  // θ of member i: sines at sh[(2i)·J·32 + j·32 + lane], cosines at sh[(2i + 1)·J·32 + …].
  Real* sh = reinterpret_cast<Real*>(group_shared) + warp_in_block * group_shared_reals<Real, J>(groups.max_group);
  auto theta_sh = [&](int i, int part, int j) -> Real& { return sh[((2 * i + part) * J + j) * 32 + lane]; };
  double* step_coef = reinterpret_cast<double*>(sh + groups.max_group * 2 * J * 32);  // shrink_i, gain_i

  // Lane i is member i: its slot, schedule, log-weight and next reset time.
  const bool member = lane < count;
  const unsigned my_slot = member ? groups.slots[first + lane] : 0u;
  DeviceSchedule my_sc{};
  if (member) my_sc = args.schedules[my_slot];
  const bool fused = args.log_w != nullptr;
  double my_log_w = (fused && member) ? args.log_w[r * S + my_slot] : 0.0;
  long long my_next_reset = (member && my_sc.reset_period > 0) ? first_multiple_from(args.t0, my_sc.reset_period) : 0;
  for (int i = 0; i < count; ++i) {
    const unsigned slot = __shfl_sync(kAll, my_slot, i);
    const Real* theta = args.theta + (r * S + slot) * 2 * D;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const std::size_t c = lane + 32 * j;
      theta_sh(i, 0, j) = c < D ? theta[c] : Real(0);
      theta_sh(i, 1, j) = c < D ? theta[D + c] : Real(0);
    }
  }

  const std::size_t row = R * P * D;
  const Real* a_base = args.projections + (r * P + k) * D;
  Real zs[J], zc[J], next_a[J];
  Real next_y = 0;
  auto load_next = [&](std::size_t step) {
    load_lane_projections<Real, J>(a_base + step * row, lane, D, next_a);
    next_y = args.y[step];  // off the dependent chain: read a step ahead with the projections
  };
  auto features_from_next = [&] { lane_features_fma<Real, J>(next_a, lane, D, args.feature_scale, zs, zc); };
  Real y_step = 0;
  if (args.n_steps > 0) {
    load_next(0);
    features_from_next();
    y_step = next_y;
  }
  const bool want_n2 = args.norm2 || (fused && args.fused_lambda != 0.0);
  for (std::size_t step = 0; step < args.n_steps; ++step) {
    const long long t = args.t0 + static_cast<long long>(step);
    const bool more = step + 1 < args.n_steps;
    if (more) load_next(step + 1);
    // Reset times are tracked per member (t % period on every step is a 64-bit division).
    const bool active = member && t >= my_sc.active_from;
    const bool at_reset = my_sc.reset_period > 0 && t == my_next_reset;
    if (at_reset) my_next_reset += my_sc.reset_period;
    const bool reset = active && at_reset;
    if (reset) my_log_w = args.fused_initial;  // a fresh learner starts with fresh weights
    const unsigned active_mask = __ballot_sync(kAll, active);
    const unsigned reset_mask = __ballot_sync(kAll, reset);
    const std::size_t out = (step * R + r) * S + my_slot;
    if (member && !active) {
      args.f[out] = Real(0);
      if (args.norm2) args.norm2[out] = Real(0);
      if (fused) args.log_w_out[out] = 0.0;
    }
    // Every member's partial dot product and squared norm over this lane's entries.
    Real v[2 * kGroupMembers];
#pragma unroll
    for (int i = 0; i < kGroupMembers; ++i) {
      Real dot = 0, n2 = 0;
      if ((active_mask >> i) & 1u) {
#pragma unroll
        for (int j = 0; j < J; ++j) {
          if ((reset_mask >> i) & 1u) theta_sh(i, 0, j) = theta_sh(i, 1, j) = Real(0);  // also when predicting only
          const Real ts = theta_sh(i, 0, j), tc = theta_sh(i, 1, j);
          dot += ts * zs[j] + tc * zc[j];
          if (want_n2) n2 += ts * ts + tc * tc;
        }
      }
      v[i] = dot;
      v[kGroupMembers + i] = n2;
    }
    const Real total = warp_sum_transposed(v, lane);
    const Real n2 = __shfl_sync(kAll, total, (lane + kGroupMembers) & 31);  // member `lane`'s norm
    if (active) {
      const Real dot = total;
      args.f[out] = dot;
      if (args.norm2) args.norm2[out] = n2;
      if (fused) {
        args.log_w_out[out] = my_log_w;
        const double loss = detail::loss_value(static_cast<LossKind>(args.loss), static_cast<double>(dot),
                                               static_cast<double>(y_step)) +
                            args.fused_lambda * static_cast<double>(n2);
        my_log_w = next_log_weight(my_log_w, loss, args.fused_rate, args.fused_loss_scale);
      }
      if (args.update) {
        const double eta = omkl::detail::scheduled_rate(my_sc.eta, my_sc.inv_sqrt_t, t);
        step_coef[2 * lane] = static_cast<Real>(1.0 - my_sc.shrink_scale * eta * my_sc.lambda);
        step_coef[2 * lane + 1] = static_cast<Real>(
            my_sc.step_scale * eta *
            detail::loss_derivative(static_cast<LossKind>(args.loss), static_cast<double>(dot),
                                    static_cast<double>(y_step)));
      }
    }
    if (args.update) {
      __syncwarp();  // every member's (shrink, gain) is in shared memory
#pragma unroll
      for (int i = 0; i < kGroupMembers; ++i) {
        if (!((active_mask >> i) & 1u)) continue;
        const Real shrink = static_cast<Real>(step_coef[2 * i]), gain = static_cast<Real>(step_coef[2 * i + 1]);
#pragma unroll
        for (int j = 0; j < J; ++j) {
          theta_sh(i, 0, j) = shrink * theta_sh(i, 0, j) - gain * zs[j];
          theta_sh(i, 1, j) = shrink * theta_sh(i, 1, j) - gain * zc[j];
        }
      }
      __syncwarp();  // step_coef is rewritten next step
    }
    if (more) {
      features_from_next();
      y_step = next_y;
    }
  }
  if (!args.update) return;
  if (fused && member) args.log_w[r * S + my_slot] = my_log_w;
  for (int i = 0; i < count; ++i) {
    const unsigned slot = __shfl_sync(kAll, my_slot, i);
    Real* theta = args.theta + (r * S + slot) * 2 * D;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const std::size_t c = lane + 32 * j;
      if (c < D) {
        theta[c] = theta_sh(i, 0, j);
        theta[D + c] = theta_sh(i, 1, j);
      }
    }
  }
}

template <typename Real, int J>
void launch_groups_with(const TrajectoryArgs<Real>& args, const KernelGroups& groups, cudaStream_t stream) {
  const std::size_t per_warp = group_shared_reals<Real, J>(groups.max_group) * sizeof(Real);
  // Up to kGroupWarpsPerBlock warps a block (the kernel's launch bounds), as many as share the 48 KB.
  const std::size_t warps_per_block =
      std::max<std::size_t>(1, std::min<std::size_t>(kGroupWarpsPerBlock, kGroupSharedBytes / per_warp));
  const std::size_t warps = args.n_replicates * args.n_kernels;
  const unsigned blocks = static_cast<unsigned>((warps + warps_per_block - 1) / warps_per_block);
  advance_kernel_groups_kernel<Real, J><<<blocks, static_cast<unsigned>(32 * warps_per_block),
                                          warps_per_block * per_warp, stream>>>(args, groups);
  OMKL_CUDA_CHECK_LAUNCH();
}

// Shared memory for a block's copy of x in step_selected_kernel (0: read x where it is).
template <typename Real>
__host__ __device__ constexpr std::size_t x_shared_bytes(std::size_t n_features) {
  return n_features * sizeof(Real) <= 16 * 1024 ? n_features * sizeof(Real) : 0;
}

template <typename Real, int J>
__global__ void step_selected_kernel(SelectedArgs<Real> args) {
  // This kernel is one step's whole device time, on the host's critical path: its dependent
  // memory accesses are ordered so that their latencies overlap. The pair and x may live in
  // host memory (mapped), so the pair's read is issued first, then the block reads x once, in
  // one coalesced pass, into shared memory when it fits there (x_shared_bytes()).
  extern __shared__ __align__(16) unsigned char selected_shared[];
  Real* x_shared = reinterpret_cast<Real*>(selected_shared);
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const bool has_pair = warp < args.n_pairs;
  DevicePair pair{};
  if (has_pair) pair = args.pairs[warp];
  const bool staged = x_shared_bytes<Real>(args.n_features) > 0;
  if (staged) {
    for (std::size_t c = threadIdx.x; c < args.n_features; c += blockDim.x) x_shared[c] = args.x[c];
    __syncthreads();
  }
  if (!has_pair) return;
  const Real* x = staged ? x_shared : args.x;
  const std::size_t D = args.n_rff, d = args.n_features;
  const Real* V = args.frequencies + (static_cast<std::size_t>(pair.replicate) * args.n_kernels + pair.kernel) * D * d;
  Real* theta = args.theta + (static_cast<std::size_t>(pair.replicate) * args.n_slots + pair.slot) * 2 * D;
  // Lane ℓ owns features ℓ, ℓ + 32, …: J of each block of θ, in registers from the first
  // read (issued before the projections) to the update.
  Real ts[J], tc[J];
  load_lane_theta<Real, J>(theta, lane, D, ts, tc);
  Real zs[J], zc[J];
  Real dot = 0, n2 = 0;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t c = lane + 32 * j;
    zs[j] = zc[j] = Real(0);
    if (c >= D) continue;
    // Loads of V issued eight at a time ahead of their (in-order) sums: a load per sum left
    // each step of the chain waiting on the memory latency.
    Real a = 0;
    std::size_t k = 0;
    for (; k + 8 <= d; k += 8) {
      Real v[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) v[u] = V[c * d + k + u];
#pragma unroll
      for (int u = 0; u < 8; ++u) a += v[u] * x[k + u];
    }
    for (; k < d; ++k) a += V[c * d + k] * x[k];
    Real sv, cv;
    sin_cos(a, &sv, &cv);
    zs[j] = args.feature_scale * sv;
    zc[j] = args.feature_scale * cv;
    dot += ts[j] * zs[j] + tc[j] * zc[j];
    n2 += ts[j] * ts[j] + tc[j] * tc[j];
  }
  dot = warp_sum(dot);
  n2 = warp_sum(n2);
  if (lane == 0) {
    args.f[warp] = dot;
    if (args.norm2) args.norm2[warp] = n2;
  }
  if (pair.rate == 0.0 && pair.shrink == 1.0) return;
  // Gain in double, as on the host, whatever Real is.
  const Real gain = static_cast<Real>(
      pair.rate * detail::loss_derivative(static_cast<LossKind>(args.loss), static_cast<double>(dot), args.y));
  const Real shrink = static_cast<Real>(pair.shrink);
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t c = lane + 32 * j;
    if (c >= D) continue;
    theta[c] = shrink * ts[j] - gain * zs[j];
    theta[D + c] = shrink * tc[j] - gain * zc[j];
  }
}

template <typename Real, int J>
void launch_selected_with(const SelectedArgs<Real>& args, cudaStream_t stream) {
  constexpr int kThreads = 128;
  const unsigned blocks = static_cast<unsigned>((args.n_pairs * 32 + kThreads - 1) / kThreads);
  step_selected_kernel<Real, J><<<blocks, kThreads, x_shared_bytes<Real>(args.n_features), stream>>>(args);
  OMKL_CUDA_CHECK_LAUNCH();
}

// Calls launch(std::integral_constant<int, J>) with the smallest supported J ≥ ⌈D/32⌉: the
// features each lane owns, a compile-time constant so that θ and z stay in registers.
template <typename Launch>
void with_features_per_lane(std::size_t n_rff, Launch&& launch) {
  const std::size_t j = (n_rff + 31) / 32;
  if (j <= 1) return launch(std::integral_constant<int, 1>{});
  if (j <= 2) return launch(std::integral_constant<int, 2>{});
  if (j <= 4) return launch(std::integral_constant<int, 4>{});
  if (j <= 8) return launch(std::integral_constant<int, 8>{});
  if (j <= 16) return launch(std::integral_constant<int, 16>{});
  if (j <= 32) return launch(std::integral_constant<int, 32>{});
  throw CudaError("CUDA backend: D = " + std::to_string(n_rff) + " exceeds the supported " + std::to_string(kMaxRff));
}

template <typename Real>
__global__ void combine_groups_kernel(const Real* f, const double* log_w, const DeviceSchedule* schedules,
                                      std::size_t n_steps, std::size_t R, std::size_t S,
                                      std::size_t group_size, long long t0, double* group_f) {
  const std::size_t G = S / group_size;
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= n_steps * R * G) return;
  const std::size_t g = warp % G, rest = warp / G;  // rest = step·R + r
  const long long t = t0 + static_cast<long long>(rest / R);
  const std::size_t first = g * group_size, row = rest * S;
  double top = -HUGE_VAL;
  for (std::size_t p = lane; p < group_size; p += 32)
    if (t >= schedules[first + p].active_from) top = fmax(top, log_w[row + first + p]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) top = fmax(top, __shfl_xor_sync(0xffffffffu, top, offset));
  double total = 0.0, weighted = 0.0;
  if (top > -HUGE_VAL) {
    for (std::size_t p = lane; p < group_size; p += 32) {
      if (t < schedules[first + p].active_from) continue;
      const double w = exp(log_w[row + first + p] - top);
      total += w;
      weighted += w * static_cast<double>(f[row + first + p]);
    }
  }
  total = warp_sum(total);
  weighted = warp_sum(weighted);
  if (lane == 0) group_f[warp] = total > 0.0 ? weighted / total : 0.0;
}

}  // namespace

template <typename Real>
void launch_combine_groups(const Real* f, const double* log_w, const DeviceSchedule* schedules,
                           std::size_t n_steps, std::size_t n_replicates, std::size_t n_slots,
                           std::size_t group_size, long long t0, double* group_f, cudaStream_t stream) {
  const std::size_t warps = n_steps * n_replicates * (n_slots / group_size);
  if (warps == 0) return;
  constexpr int kThreads = 256;
  const unsigned blocks = static_cast<unsigned>((warps * 32 + kThreads - 1) / kThreads);
  combine_groups_kernel<Real><<<blocks, kThreads, 0, stream>>>(f, log_w, schedules, n_steps, n_replicates,
                                                               n_slots, group_size, t0, group_f);
  OMKL_CUDA_CHECK_LAUNCH();
}

template void launch_combine_groups<float>(const float*, const double*, const DeviceSchedule*, std::size_t,
                                           std::size_t, std::size_t, std::size_t, long long, double*,
                                           cudaStream_t);
template void launch_combine_groups<double>(const double*, const double*, const DeviceSchedule*, std::size_t,
                                            std::size_t, std::size_t, std::size_t, long long, double*,
                                            cudaStream_t);

template <typename Real>
void launch_advance_trajectories(const TrajectoryArgs<Real>& args, cudaStream_t stream) {
  if (args.n_steps == 0 || args.n_replicates * args.n_slots == 0) return;
  if (args.projections == nullptr && !projections_on_the_fly_supported(args.n_rff, args.n_features, sizeof(Real)))
    throw CudaError("CUDA backend: projections on the fly need d <= 32 and V's rows in 12 KB a warp (D = " +
                    std::to_string(args.n_rff) + ", d = " + std::to_string(args.n_features) + ")");
  with_features_per_lane(args.n_rff, [&](auto j) { launch_with<Real, decltype(j)::value>(args, stream); });
}

template <typename Real>
void launch_step_selected(const SelectedArgs<Real>& args, cudaStream_t stream) {
  if (args.n_pairs == 0) return;
  with_features_per_lane(args.n_rff, [&](auto j) { launch_selected_with<Real, decltype(j)::value>(args, stream); });
}

template void launch_step_selected<float>(const SelectedArgs<float>&, cudaStream_t);
template void launch_step_selected<double>(const SelectedArgs<double>&, cudaStream_t);

bool projections_on_the_fly_supported(std::size_t n_rff, std::size_t n_features, std::size_t real_size) {
  if (n_features == 0 || n_features > 32 || n_rff == 0 || n_rff > kMaxRff) return false;
  std::size_t j = 1;
  while (32 * j < n_rff) j *= 2;  // the J that with_features_per_lane() picks
  return (kTrajectoryThreads / 32) * (j * 32 * n_features + 32) * real_size <= 48 * 1024;
}

bool kernel_groups_supported(std::size_t n_rff, std::size_t max_group, std::size_t real_size) {
  if (max_group == 0 || max_group > static_cast<std::size_t>(kGroupMembers) || n_rff == 0 || n_rff > kMaxRff)
    return false;
  std::size_t j = 1;
  while (32 * j < n_rff) j *= 2;  // the J that with_features_per_lane() picks
  return max_group * 2 * j * 32 * real_size + 2 * kGroupMembers * sizeof(double) <= kGroupSharedBytes;
}

template <typename Real>
void launch_advance_kernel_groups(const TrajectoryArgs<Real>& args, const KernelGroups& groups,
                                  cudaStream_t stream) {
  if (args.n_steps == 0 || args.n_replicates * args.n_kernels == 0) return;
  if (!kernel_groups_supported(args.n_rff, groups.max_group, sizeof(Real)))
    throw CudaError("CUDA backend: kernel groups of " + std::to_string(groups.max_group) + " slots with D = " +
                    std::to_string(args.n_rff) + " do not fit a warp's shared memory");
  with_features_per_lane(args.n_rff, [&](auto j) { launch_groups_with<Real, decltype(j)::value>(args, groups, stream); });
}

template void launch_advance_kernel_groups<float>(const TrajectoryArgs<float>&, const KernelGroups&, cudaStream_t);
template void launch_advance_kernel_groups<double>(const TrajectoryArgs<double>&, const KernelGroups&, cudaStream_t);

template void launch_advance_trajectories<float>(const TrajectoryArgs<float>&, cudaStream_t);
template void launch_advance_trajectories<double>(const TrajectoryArgs<double>&, cudaStream_t);

}  // namespace omkl::cuda
