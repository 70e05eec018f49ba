/// @file rf_kernels.cu
/// @brief Fused sin/cos + predict + θ-update trajectories (spec/raker.md §8.1, stage 2).
///
/// Each warp owns one trajectory (replicate r, slot s): θ (2D values) lives in registers, J
/// sine and J cosine entries per lane with J = ⌈D/32⌉ a compile-time constant so the arrays
/// stay in registers. Per step: coalesced read of the D projections of the slot's kernel,
/// sincos, a warp-shuffle reduction for f = θᵀz and ‖θ‖², then the update; nothing else is
/// touched, so thousands of trajectories run independently.
#include <type_traits>

#include "cuda/cuda_check.h"
#include "core/loss.h"
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

template <typename Real, int J>
__global__ void advance_trajectories_kernel(TrajectoryArgs<Real> args) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  const std::size_t S = args.n_slots, R = args.n_replicates, D = args.n_rff;
  if (warp >= R * S) return;
  const std::size_t r = warp / S, s = warp % S;
  const DeviceSchedule sc = args.schedules[s];
  Real* theta = args.theta + warp * 2 * D;
  Real ts[J], tc[J];
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t i = lane + 32 * j;
    ts[j] = i < D ? theta[i] : Real(0);
    tc[j] = i < D ? theta[D + i] : Real(0);
  }
  const std::size_t row = R * args.n_kernels * D;
  const Real* a_base = args.projections + (r * args.n_kernels + sc.kernel) * D;
  // Software pipeline: the features of step k + 1 do not depend on θ, so their load and
  // sincos are issued before step k's reduction and update, hiding the memory latency and the
  // special-function latency behind the dependent chain.
  Real zs[J], zc[J], next_a[J];
  auto load_next = [&](std::size_t step) {
    const Real* a = a_base + step * row;
#pragma unroll
    for (int j = 0; j < J; ++j) {
      const std::size_t i = lane + 32 * j;
      next_a[j] = i < D ? a[i] : Real(0);
    }
  };
  auto features_from_next = [&] {
#pragma unroll
    for (int j = 0; j < J; ++j) {
      Real sv, cv;
      sin_cos(next_a[j], &sv, &cv);
      // Entries past D must stay exactly 0 so that their θ (and ‖θ‖²) stays 0.
      const bool valid = lane + 32 * j < D;
      zs[j] = valid ? args.feature_scale * sv : Real(0);
      zc[j] = valid ? args.feature_scale * cv : Real(0);
    }
  };
  if (args.n_steps > 0) {
    load_next(0);
    features_from_next();
  }
  const bool fused = args.log_w != nullptr;
  double log_weight = fused ? args.log_w[warp] : 0.0;  // uniform across the warp
  for (std::size_t step = 0; step < args.n_steps; ++step) {
    const long long t = args.t0 + static_cast<long long>(step);
    const std::size_t out = (step * R + r) * S + s;
    const bool more = step + 1 < args.n_steps;
    if (more) load_next(step + 1);
    if (t < sc.active_from) {
      if (lane == 0) {
        args.f[out] = Real(0);
        if (args.norm2) args.norm2[out] = Real(0);
        if (fused) args.log_w_out[out] = 0.0;
      }
    } else {
      if (sc.reset_period > 0 && t % sc.reset_period == 0) {
#pragma unroll
        for (int j = 0; j < J; ++j) ts[j] = tc[j] = Real(0);
        log_weight = args.fused_initial;  // a fresh learner starts with fresh weights
      }
      Real dot = 0, n2 = 0;
#pragma unroll
      for (int j = 0; j < J; ++j) {
        dot += ts[j] * zs[j] + tc[j] * zc[j];
        n2 += ts[j] * ts[j] + tc[j] * tc[j];
      }
      dot = warp_sum(dot);
      const bool want_n2 = args.norm2 || (fused && args.fused_lambda != 0.0);
      if (want_n2) n2 = warp_sum(n2);
      if (lane == 0) {
        args.f[out] = dot;
        if (args.norm2) args.norm2[out] = n2;
        if (fused) args.log_w_out[out] = log_weight;
      }
      if (fused) {
        const double y = static_cast<double>(args.y[step]);
        const double loss = detail::loss_value(static_cast<LossKind>(args.loss), static_cast<double>(dot), y) +
                            args.fused_lambda * static_cast<double>(n2);
        log_weight -= args.fused_rate * loss / args.fused_loss_scale;
      }
      if (args.update) {
        // Step size and gain in double, as on the host, whatever Real is.
        const double eta = sc.inv_sqrt_t ? sc.eta / sqrt(static_cast<double>(t)) : sc.eta;
        const Real shrink = static_cast<Real>(1.0 - sc.shrink_scale * eta * sc.lambda);
        const Real gain = static_cast<Real>(
            sc.step_scale * eta *
            detail::loss_derivative(static_cast<LossKind>(args.loss), static_cast<double>(dot),
                                    static_cast<double>(args.y[step])));
#pragma unroll
        for (int j = 0; j < J; ++j) {
          ts[j] = shrink * ts[j] - gain * zs[j];
          tc[j] = shrink * tc[j] - gain * zc[j];
        }
      }
    }
    if (more) features_from_next();
  }
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
  constexpr int kThreads = 128;  // 4 warps per block: small blocks spread trajectories over SMs
  const std::size_t warps = args.n_replicates * args.n_slots;
  const unsigned blocks = static_cast<unsigned>((warps * 32 + kThreads - 1) / kThreads);
  advance_trajectories_kernel<Real, J><<<blocks, kThreads, 0, stream>>>(args);
  OMKL_CUDA_CHECK_LAUNCH();
}

template <typename Real, int J>
__global__ void step_selected_kernel(SelectedArgs<Real> args) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= args.n_pairs) return;
  const DevicePair pair = args.pairs[warp];
  const std::size_t D = args.n_rff, d = args.n_features;
  const Real* V = args.frequencies + (static_cast<std::size_t>(pair.replicate) * args.n_kernels +
                                      args.slot_kernel[pair.slot]) * D * d;
  Real* theta = args.theta + (static_cast<std::size_t>(pair.replicate) * args.n_slots + pair.slot) * 2 * D;
  // Lane ℓ owns features ℓ, ℓ + 32, …: J of each block of θ, in registers between the
  // reduction and the update.
  Real zs[J], zc[J];
  Real dot = 0, n2 = 0;
#pragma unroll
  for (int j = 0; j < J; ++j) {
    const std::size_t c = lane + 32 * j;
    zs[j] = zc[j] = Real(0);
    if (c >= D) continue;
    Real a = 0;
    for (std::size_t k = 0; k < d; ++k) a += V[c * d + k] * args.x[k];
    Real sv, cv;
    sin_cos(a, &sv, &cv);
    zs[j] = args.feature_scale * sv;
    zc[j] = args.feature_scale * cv;
    const Real ts = theta[c], tc = theta[D + c];
    dot += ts * zs[j] + tc * zc[j];
    n2 += ts * ts + tc * tc;
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
    theta[c] = shrink * theta[c] - gain * zs[j];
    theta[D + c] = shrink * theta[D + c] - gain * zc[j];
  }
}

template <typename Real, int J>
void launch_selected_with(const SelectedArgs<Real>& args, cudaStream_t stream) {
  constexpr int kThreads = 128;
  const unsigned blocks = static_cast<unsigned>((args.n_pairs * 32 + kThreads - 1) / kThreads);
  step_selected_kernel<Real, J><<<blocks, kThreads, 0, stream>>>(args);
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
  with_features_per_lane(args.n_rff, [&](auto j) { launch_with<Real, decltype(j)::value>(args, stream); });
}

template <typename Real>
void launch_step_selected(const SelectedArgs<Real>& args, cudaStream_t stream) {
  if (args.n_pairs == 0) return;
  with_features_per_lane(args.n_rff, [&](auto j) { launch_selected_with<Real, decltype(j)::value>(args, stream); });
}

template void launch_step_selected<float>(const SelectedArgs<float>&, cudaStream_t);
template void launch_step_selected<double>(const SelectedArgs<double>&, cudaStream_t);

template void launch_advance_trajectories<float>(const TrajectoryArgs<float>&, cudaStream_t);
template void launch_advance_trajectories<double>(const TrajectoryArgs<double>&, cudaStream_t);

}  // namespace omkl::cuda
