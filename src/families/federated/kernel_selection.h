/// @file kernel_selection.h
/// @brief POF-MKL's client-side kernel-subset selection, Algorithm 1 of the paper
/// (spec/federated.md §1.4): rank the kernels by the client's private weights, cut the ranking
/// into m = ⌈N/M⌉ bins of M, draw one bin from q_j = (1 − ξ)·u_j/U + ξ/m by inverse CDF.
///
/// The weights are log-weights (§1.4 numerics: the ranking is the same, masses are max-shifted).
/// Ties rank by descending kernel index (§1.4 step 1: `argsort(w)[::-1]` with a stable sort), so
/// at t = 1, when every weight is equal, the 0-based ranking is N − 1, …, 0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace omkl::detail {

struct KernelSelection {
  std::size_t n_bins = 0;             ///< m
  std::size_t bin = 0;                ///< I, 0-based
  std::vector<std::uint32_t> ranking; ///< s_1 … s_N, heaviest first (or index order when not sorted)
  std::vector<double> q;              ///< the bin PMF q_1 … q_m
  std::vector<std::uint32_t> kernels; ///< S = B_I, in ranking order
  double probability = 1.0;           ///< p of every kernel of S, q_I
};

/// Kernels by descending log-weight, ties by descending index.
void rank_kernels(const double* log_w, std::size_t n, std::vector<std::uint32_t>& ranking);

/// Algorithm 1. @param M kernels per bin, 1 ≤ M ≤ n; @param xi exploration ξ ∈ (0, 1];
/// @param sort false: bins in index order (the paper's remark that with ξ = 1 ranking is not
/// needed; same marginals, other joint law); @param uniform one draw in (0, 1).
void select_kernels(const double* log_w, std::size_t n, std::size_t M, double xi, bool sort, double uniform,
                    KernelSelection& out);

}  // namespace omkl::detail
