/// @file round_kernels.cuh
/// @brief Device code of the federated round's server aggregation (src/features/round_aggregation.h).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "features/round_aggregation.h"

namespace omkl::cuda {

/// One warp per group: θ of (replicate, slot) ← θ − scale·Σ g over the group's updates, in their
/// order (aggregate_group() with 32 lanes), each as server_term(θ, g, form) receives it. Layouts
/// as the backend's: frequencies R × P × D × d, theta R × S × 2D, x n_clients × d; updates and
/// groups from group_round_updates().
template <typename Real>
void launch_aggregate_round(const Real* frequencies, Real* theta, const Real* x, const detail::RoundUpdate* updates,
                            const detail::RoundGroup* groups, std::size_t n_groups, std::size_t n_kernels,
                            std::size_t n_slots, std::size_t n_rff, std::size_t n_features, double feature_scale,
                            double round_scale, detail::UploadForm form, cudaStream_t stream);

/// ‖θ‖² of each of n_thetas consecutive 2D-vectors (one warp each), in double.
template <typename Real>
void launch_theta_norms(const Real* theta, std::size_t n_thetas, std::size_t n_rff, double* norm2, cudaStream_t stream);

}  // namespace omkl::cuda
