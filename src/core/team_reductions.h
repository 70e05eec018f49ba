/// @file team_reductions.h
/// @brief The *tree order* of a team's sums, maxima and draws (resident_team.h): one fixed
/// association of the terms that a GPU warp computes with shuffles in a few steps and that any
/// other team (one host thread, host lanes in lockstep) reproduces term for term here, so that
/// a team program taking it gives the same bits on every team.
///
/// Why: a team program's sums, maxima and draws in index order are one thread's serial chains
/// (n dependent additions, each waiting on a load) while the block waits; a warp does them in
/// ⌈n/32⌉ + 5 dependent steps. The result differs from the index-order sum in its last bits,
/// so the host's drivers keep the index order (the host path's bits) unless asked
/// (OMKL_WALK_SUMS=tree), and a GPU block takes the tree order by default (OMKL_WALK_SUMS=auto).
///
/// The order, over kTreeWidth = 32 virtual lanes j:
///  - sum: lane j adds the terms j, j + 32, j + 64, … in turn from 0.0; then the lanes' partials
///    meet in a butterfly (a[j] ← a[j] + a[j + h] for h = 16, 8, 4, 2, 1); the total is a[0].
///  - max: the same with m ← (x > m ? x : m) from −∞ (a NaN term is passed over).
///  - prefix sums (a draw): lane j owns the contiguous chunk [jL, jL + L), L = ⌈n/32⌉; its chunk
///    sum (in turn from 0.0) enters an inclusive Kogge–Stone scan (x[j] ← x[j] + x[j − h] for
///    h = 1, 2, 4, 8, 16, on the previous level's values); the prefix c_k of an entry k of chunk j
///    is then x[j − 1] (0 for j = 0) plus the chunk's entries up to k, in turn.
/// The draw is sample_index()'s rule (random/sampling.h) over those prefix sums (for entries of
/// positive mass; see tree_order_draw()).
#pragma once

#include <cmath>
#include <cstddef>

#include "core/host_device.h"

// The loops below are the tree order's reference, for the host's teams. A GPU block takes the
// order by its first warp's shuffles; a GPU thread alone does not take it (SerialTeam::kTreeSums
// is false on the device: compiling these loops into every launch shape of the walk kernel more
// than doubled ptxas's time). Out of line on the device, where a template still names them.
#if defined(__CUDACC__)
#define OMKL_TREE_REFERENCE __host__ __device__ __noinline__ inline
#else
#define OMKL_TREE_REFERENCE inline
#endif

namespace omkl::detail {

/// Virtual lanes of the tree order: a GPU warp.
constexpr std::size_t kTreeWidth = 32;

/// The tree-order sum of value_of(0), …, value_of(n − 1).
template <typename ValueOf>
OMKL_TREE_REFERENCE double tree_order_sum(std::size_t n, ValueOf&& value_of) {
  double a[kTreeWidth];
  for (std::size_t j = 0; j < kTreeWidth; ++j) {
    double partial = 0.0;
    for (std::size_t i = j; i < n; i += kTreeWidth) partial += value_of(i);
    a[j] = partial;
  }
  for (std::size_t half = kTreeWidth / 2; half > 0; half /= 2)
    for (std::size_t j = 0; j < half; ++j) a[j] = a[j] + a[j + half];
  return a[0];
}

/// The larger of m and x as the tree order takes it (x only if it exceeds m).
OMKL_HD double tree_max_step(double m, double x) { return x > m ? x : m; }

/// The tree-order maximum of value_of(0), …, value_of(n − 1) (−∞ when n = 0).
template <typename ValueOf>
OMKL_TREE_REFERENCE double tree_order_max(std::size_t n, ValueOf&& value_of) {
  double a[kTreeWidth];
  for (std::size_t j = 0; j < kTreeWidth; ++j) {
    double m = -INFINITY;
    for (std::size_t i = j; i < n; i += kTreeWidth) m = tree_max_step(m, value_of(i));
    a[j] = m;
  }
  for (std::size_t half = kTreeWidth / 2; half > 0; half /= 2)
    for (std::size_t j = 0; j < half; ++j) a[j] = tree_max_step(a[j], a[j + half]);
  return a[0];
}

/// Entries of each virtual lane's chunk in a tree-order prefix sum of n entries.
OMKL_HD std::size_t tree_chunk(std::size_t n) { return (n + kTreeWidth - 1) / kTreeWidth; }

/// The exclusive prefixes x[j − 1] of the chunks' Kogge–Stone scan (offsets[0] = 0).
OMKL_TREE_REFERENCE void tree_chunk_offsets(const double* p, std::size_t n, double* offsets) {
  const std::size_t L = tree_chunk(n);
  double x[kTreeWidth];
  for (std::size_t j = 0; j < kTreeWidth; ++j) {
    double s = 0.0;
    for (std::size_t k = j * L; k < n && k < (j + 1) * L; ++k) s += p[k];
    x[j] = s;
  }
  for (std::size_t h = 1; h < kTreeWidth; h *= 2)
    for (std::size_t j = kTreeWidth - 1; j >= h; --j) x[j] = x[j] + x[j - h];  // from the top: the previous level's values
  offsets[0] = 0.0;
  for (std::size_t j = 1; j < kTreeWidth; ++j) offsets[j] = x[j - 1];
}

/// sample_index(p, n, r, shifted)'s rule over the tree-order prefix sums of p[0..n), n ≥ 1: the
/// smallest k with r < c_k (shifted: 1 + the smallest k with r ≤ c_k, capped at n − 1, and 0 for
/// r ≤ 0); if rounding leaves r at or above every c_k, the last k with p_k > 0 (0 if none;
/// shifted: n − 1). Only entries with p_k > 0 are drawn: a chunk's first prefix starts from the
/// scan, which may exceed the chunk before's last prefix by an ulp, so c_k > c_{k−1} does not
/// say that k has mass there (within a chunk, p_k = 0 gives c_k = c_{k−1}, as in index order).
OMKL_TREE_REFERENCE std::size_t tree_order_draw(const double* p, std::size_t n, double r, bool shifted) {
  if (shifted && r <= 0.0) return 0;
  double offsets[kTreeWidth];
  tree_chunk_offsets(p, n, offsets);
  const std::size_t L = tree_chunk(n);
  std::size_t last_positive = 0;
  for (std::size_t j = 0; j < kTreeWidth && j * L < n; ++j) {
    double c = offsets[j];
    for (std::size_t k = j * L; k < n && k < (j + 1) * L; ++k) {
      c += p[k];
      if (!(p[k] > 0.0)) continue;
      if (shifted ? r <= c : r < c) return shifted ? (k + 1 < n - 1 ? k + 1 : n - 1) : k;
      last_positive = k;
    }
  }
  return shifted ? n - 1 : last_positive;
}

}  // namespace omkl::detail

#undef OMKL_TREE_REFERENCE
