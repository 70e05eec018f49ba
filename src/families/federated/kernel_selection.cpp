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
  out.q.resize(m);
  const std::size_t bin = draw_bin(log_w, out.ranking.data(), n, M, xi, uniform, out.q.data());
  out.bin = bin;
  out.probability = out.q[bin];
  out.kernels.assign(out.ranking.begin() + static_cast<std::ptrdiff_t>(bin * M),
                     out.ranking.begin() + static_cast<std::ptrdiff_t>(std::min(n, (bin + 1) * M)));
}

}  // namespace omkl::detail
