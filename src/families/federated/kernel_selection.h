/// @file kernel_selection.h
/// @brief POF-MKL's client-side kernel-subset selection, Algorithm 1 of the paper
/// (spec/federated.md §1.4): rank the kernels by the client's private weights, cut the ranking
/// into m = ⌈N/M⌉ bins of M, draw one bin from q_j = (1 − ξ)·u_j/U + ξ/m by inverse CDF.
///
/// The weights are log-weights (§1.4 numerics: the ranking is the same, masses are max-shifted).
/// Ties rank by descending kernel index (§1.4 step 1: `argsort(w)[::-1]` with a stable sort), so
/// at t = 1, when every weight is equal, the 0-based ranking is N − 1, …, 0.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/host_device.h"
#include "core/kernel_weights.h"

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

/// Algorithm 1 after the ranking, on the host or the device (the resident federation): bin
/// masses u_j = Σ_{i ∈ B_j} w_i with w = exp(log w − max log w), q_j = (1 − ξ)·u_j/U + ξ/m into
/// q[0..m), and the bin of `uniform` by inverse CDF (the first whose cumulative mass reaches it,
/// the last when rounding leaves the sum short, spec §7 C7).
OMKL_HD std::size_t draw_bin(const double* log_w, const std::uint32_t* ranking, std::size_t n, std::size_t M, double xi,
                             double uniform, double* q) {
  const std::size_t m = (n + M - 1) / M;
  double top = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) top = top < log_w[i] ? log_w[i] : top;  // std::max(top, log_w[i])
  double total = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    double mass = 0.0;
    const std::size_t end = (j + 1) * M < n ? (j + 1) * M : n;
    for (std::size_t r = j * M; r < end; ++r) mass += exp_or_zero(log_w[ranking[r]] - top);
    q[j] = mass;
    total += mass;
  }
  for (std::size_t j = 0; j < m; ++j) q[j] = (1.0 - xi) * (q[j] / total) + xi / static_cast<double>(m);
  double cumulative = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    cumulative += q[j];
    if (uniform <= cumulative) return j;
  }
  return m - 1;
}

/// Algorithm 1. @param M kernels per bin, 1 ≤ M ≤ n; @param xi exploration ξ ∈ (0, 1];
/// @param sort false: bins in index order (the paper's remark that with ξ = 1 ranking is not
/// needed; same marginals, other joint law); @param uniform one draw in (0, 1).
void select_kernels(const double* log_w, std::size_t n, std::size_t M, double xi, bool sort, double uniform,
                    KernelSelection& out);

}  // namespace omkl::detail
