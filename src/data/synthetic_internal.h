/// @file synthetic_internal.h
/// @brief Internals of the synthetic generators (spec/raker.md §6), exposed for the unit tests
/// (thread-count invariance, schedule boundaries). Not part of the public API.
#pragma once

#include <cstddef>
#include <vector>

#include "omkl/dataset.h"

namespace omkl::detail {

/// σ² of the kernel attached to sample t (1-based) under the kind's schedule (§6.1, §6.2).
/// Past the end of the schedule the last range's σ² continues.
double synthetic_sigma2(SyntheticKind kind, std::size_t t);

/// The O(T²) sum of §6.5, for samples t = 0..n−1 (0-based):
///   y_t = Σ_{τ=0}^{t} alpha[τ] · exp(−g · d2(t, τ)),   g = gamma[τ] (source reading) or
///   gamma[t] (kernel_index_target), d2(t, τ) = Σ_{k=0}^{d−1} (x_t[k] − x_τ[k])² summed in
///   ascending k from 0.0, the terms added in ascending τ to 0.0, all in double.
/// `x` is row-major n × d; gamma[t] is meant to be 1.0 / (2.0 * σ_t²). Each y_t is computed
/// by one thread in that fixed order, so the result is bit-identical for every n_threads
/// (0 is read as 1).
std::vector<double> synthetic_targets(const std::vector<double>& x, std::size_t n, std::size_t d,
                                      const std::vector<double>& alpha,
                                      const std::vector<double>& gamma, bool kernel_index_target,
                                      unsigned n_threads);

}  // namespace omkl::detail
