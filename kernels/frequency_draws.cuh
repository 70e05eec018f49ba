/// @file frequency_draws.cuh
/// @brief Device-side drawing of the counter-mode frequency matrices: every (replicate,
/// kernel) matrix row, or ORF block, by one thread, from cuRAND's Philox-4x32-10 at the
/// stream position the host would use, through the host's own transforms and QR
/// (features/frequency_recipe.h) — so the device holds the matrices draw_frequencies() gives.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "features/frequency_recipe.h"

namespace omkl::cuda {

/// Threads of one launch_draw_frequencies() over `n_units` units whose ORF scratch fits in
/// `budget_bytes` (at least 32, at most one per unit).
std::size_t frequency_draw_threads(std::size_t n_units, std::size_t n_features, std::size_t budget_bytes);
/// Doubles of scratch launch_draw_frequencies() needs for `n_threads` threads.
std::size_t frequency_draw_scratch(std::size_t n_features, std::size_t n_threads);

/// Draws matrix i of `recipes` (device array of n_matrices) into V + i·n_rff·d (device,
/// row-major n_rff × d each). `unit_offsets` (device, n_matrices + 1: recipe_unit_offsets())
/// numbers the units; `scratch` holds frequency_draw_scratch(d, n_threads) doubles.
void launch_draw_frequencies(const detail::MatrixRecipe* recipes, const std::size_t* unit_offsets,
                             std::size_t n_matrices, std::size_t n_units, std::size_t n_rff, std::size_t n_features,
                             double* V, double* scratch, std::size_t n_threads, cudaStream_t stream);

/// out[i] = (float) in[i]: the float backend's copy of matrices drawn in double.
void launch_narrow_to_float(const double* in, float* out, std::size_t n, cudaStream_t stream);

}  // namespace omkl::cuda
