/// @file kernel_selection.cpp
/// @brief Algorithm 1 (kernel_selection.h).
#include "families/federated/kernel_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/kernel_weights.h"

namespace omkl::detail {

void rank_kernels(const double* log_w, std::size_t n, std::vector<std::uint32_t>& ranking) {
  ranking.resize(n);
  for (std::size_t i = 0; i < n; ++i) ranking[i] = static_cast<std::uint32_t>(i);
  std::sort(ranking.begin(), ranking.end(), [log_w](std::uint32_t a, std::uint32_t b) {
    return log_w[a] > log_w[b] || (log_w[a] == log_w[b] && a > b);
  });
}

void select_kernels(const double* log_w, std::size_t n, std::size_t M, double xi, bool sort, double uniform,
                    KernelSelection& out) {
  const std::size_t m = (n + M - 1) / M;
  out.n_bins = m;
  if (sort) {
    rank_kernels(log_w, n, out.ranking);
  } else {
    out.ranking.resize(n);
    for (std::size_t i = 0; i < n; ++i) out.ranking[i] = static_cast<std::uint32_t>(i);
  }
  // Bin masses u_j = Σ_{i ∈ B_j} w_i with w = exp(log w − max log w); U = Σ_j u_j.
  double top = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < n; ++i) top = std::max(top, log_w[i]);
  out.q.assign(m, 0.0);
  double total = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    double mass = 0.0;
    for (std::size_t r = j * M; r < std::min(n, (j + 1) * M); ++r) mass += exp_or_zero(log_w[out.ranking[r]] - top);
    out.q[j] = mass;
    total += mass;
  }
  for (double& q : out.q) q = (1.0 - xi) * (q / total) + xi / static_cast<double>(m);
  // Inverse CDF: the first bin whose cumulative mass reaches the draw, the last one when
  // rounding leaves the sum short of it (spec §7 C7).
  std::size_t bin = m - 1;
  double cumulative = 0.0;
  for (std::size_t j = 0; j < m; ++j) {
    cumulative += out.q[j];
    if (uniform <= cumulative) {
      bin = j;
      break;
    }
  }
  out.bin = bin;
  out.probability = out.q[bin];
  out.kernels.assign(out.ranking.begin() + static_cast<std::ptrdiff_t>(bin * M),
                     out.ranking.begin() + static_cast<std::ptrdiff_t>(std::min(n, (bin + 1) * M)));
}

}  // namespace omkl::detail
