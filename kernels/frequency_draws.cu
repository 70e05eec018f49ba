/// @file frequency_draws.cu
/// @brief Device-side frequency draws (see frequency_draws.cuh).
///
/// One thread per work unit (a row of an i.i.d. matrix, or an ORF block with its rows and
/// their lengths), grid-stride over every unit of every matrix, numbered matrix after matrix
/// (so an ORF matrix's few heavy units sit together and no thread idles on a non-unit).
/// Units are self-contained: each seeks its own stream position (frequency_recipe.h gives it
/// in closed form), so the result does not depend on the launch shape. An ORF thread keeps its
/// d×d block, τ and one Q row in global scratch, interleaved across threads (element e of
/// thread t at e·n_threads + t) so that a warp's accesses coalesce. The stream's blocks come
/// from cuRAND's Philox (curand_philox.cuh).
#include <algorithm>

#include "cuda/cuda_check.h"
#include "kernels/curand_philox.cuh"
#include "kernels/frequency_draws.cuh"

namespace omkl::cuda {

namespace {

using detail::MatrixRecipe;

__global__ void draw_frequencies_kernel(const MatrixRecipe* recipes, const std::size_t* unit_offsets,
                                        std::size_t n_matrices, std::size_t n_units, std::size_t n_rff, std::size_t d,
                                        double* V, double* scratch, std::size_t n_threads) {
  const std::size_t thread = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (thread >= n_threads) return;
  for (std::size_t u = thread; u < n_units; u += n_threads)
    detail::draw_recipe_unit<CurandBlocks>(recipes, unit_offsets, n_matrices, u, n_rff, d, V, scratch + thread,
                                           n_threads);
}

__global__ void narrow_kernel(const double* in, float* out, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    out[i] = static_cast<float>(in[i]);
}

constexpr unsigned kThreadsPerBlock = 128;

}  // namespace

std::size_t frequency_draw_scratch(std::size_t n_features, std::size_t n_threads) {
  return detail::recipe_scratch_per_thread(n_features) * n_threads;
}

std::size_t frequency_draw_threads(std::size_t n_units, std::size_t n_features, std::size_t budget_bytes) {
  const std::size_t affordable = budget_bytes / (frequency_draw_scratch(n_features, 1) * sizeof(double));
  return std::max<std::size_t>(32, std::min(std::max<std::size_t>(1, n_units), affordable));
}

void launch_draw_frequencies(const MatrixRecipe* recipes, const std::size_t* unit_offsets, std::size_t n_matrices,
                             std::size_t n_units, std::size_t n_rff, std::size_t n_features, double* V,
                             double* scratch, std::size_t n_threads, cudaStream_t stream) {
  if (n_units == 0 || n_rff == 0 || n_features == 0) return;
  const unsigned blocks = static_cast<unsigned>((n_threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
  draw_frequencies_kernel<<<blocks, kThreadsPerBlock, 0, stream>>>(recipes, unit_offsets, n_matrices, n_units, n_rff,
                                                                   n_features, V, scratch, n_threads);
  OMKL_CUDA_CHECK_LAUNCH();
}

void launch_narrow_to_float(const double* in, float* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 4096));
  narrow_kernel<<<blocks, 256, 0, stream>>>(in, out, n);
  OMKL_CUDA_CHECK_LAUNCH();
}

}  // namespace omkl::cuda
