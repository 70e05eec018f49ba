/// @file round_kernels.cu
/// @brief The federated round's server aggregation on the GPU (round_kernels.cuh): a fixed-order
/// segmented reduction, one warp per (replicate, slot) group, no atomics.
#include "cuda/cuda_check.h"
#include "kernels/round_kernels.cuh"

namespace omkl::cuda {

namespace {

constexpr int kRoundThreads = 128;

template <typename Real>
__global__ void aggregate_round_kernel(const Real* frequencies, Real* theta, const Real* x,
                                       const detail::RoundUpdate* updates, const detail::RoundGroup* groups,
                                       std::size_t n_groups, std::size_t n_kernels, std::size_t n_slots,
                                       std::size_t D, std::size_t d, double feature_scale, double round_scale,
                                       detail::UploadForm form) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (warp >= n_groups) return;
  const unsigned lane = threadIdx.x & 31u;
  const detail::RoundGroup g = groups[warp];
  const Real* V = frequencies + (static_cast<std::size_t>(g.replicate) * n_kernels + g.kernel) * D * d;
  Real* th = theta + (static_cast<std::size_t>(g.replicate) * n_slots + g.slot) * 2 * D;
  detail::aggregate_group(V, x, d, th, D, updates, g.first, g.last, feature_scale, round_scale, form, lane, 32u);
}

template <typename Real>
__global__ void theta_norms_kernel(const Real* theta, std::size_t n_thetas, std::size_t D, double* norm2) {
  const std::size_t warp = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (warp >= n_thetas) return;
  const unsigned lane = threadIdx.x & 31u;
  const Real* th = theta + warp * 2 * D;
  double sum = 0.0;
  for (std::size_t j = lane; j < 2 * D; j += 32) sum += static_cast<double>(th[j]) * static_cast<double>(th[j]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (lane == 0) norm2[warp] = sum;
}

unsigned blocks_for_warps(std::size_t warps) {
  return static_cast<unsigned>((warps * 32 + kRoundThreads - 1) / kRoundThreads);
}

}  // namespace

template <typename Real>
void launch_aggregate_round(const Real* frequencies, Real* theta, const Real* x, const detail::RoundUpdate* updates,
                            const detail::RoundGroup* groups, std::size_t n_groups, std::size_t n_kernels,
                            std::size_t n_slots, std::size_t n_rff, std::size_t n_features, double feature_scale,
                            double round_scale, detail::UploadForm form, cudaStream_t stream) {
  if (n_groups == 0) return;
  aggregate_round_kernel<Real><<<blocks_for_warps(n_groups), kRoundThreads, 0, stream>>>(
      frequencies, theta, x, updates, groups, n_groups, n_kernels, n_slots, n_rff, n_features, feature_scale,
      round_scale, form);
  OMKL_CUDA_CHECK_LAUNCH();
}

template <typename Real>
void launch_theta_norms(const Real* theta, std::size_t n_thetas, std::size_t n_rff, double* norm2, cudaStream_t stream) {
  if (n_thetas == 0) return;
  theta_norms_kernel<Real><<<blocks_for_warps(n_thetas), kRoundThreads, 0, stream>>>(theta, n_thetas, n_rff, norm2);
  OMKL_CUDA_CHECK_LAUNCH();
}

template void launch_aggregate_round<double>(const double*, double*, const double*, const detail::RoundUpdate*,
                                             const detail::RoundGroup*, std::size_t, std::size_t, std::size_t,
                                             std::size_t, std::size_t, double, double, detail::UploadForm,
                                             cudaStream_t);
template void launch_aggregate_round<float>(const float*, float*, const float*, const detail::RoundUpdate*,
                                            const detail::RoundGroup*, std::size_t, std::size_t, std::size_t,
                                            std::size_t, std::size_t, double, double, detail::UploadForm,
                                            cudaStream_t);
template void launch_theta_norms<double>(const double*, std::size_t, std::size_t, double*, cudaStream_t);
template void launch_theta_norms<float>(const float*, std::size_t, std::size_t, double*, cudaStream_t);

}  // namespace omkl::cuda
