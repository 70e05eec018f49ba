/// @file sampling.h
/// @brief Categorical sampling from a PMF with one uniform number (spec/graph-aided.md §1.8).
///
/// Two rules exist because the published tables depend on the reference code's off-by-one
/// sampler (§0 item 3, §3 R5):
///  - InverseCdf: the correct inverse CDF (paper form).
///  - Shifted:    the reference "shifted" sampler (flag `shifted_sampler`): index 0 is never
///                returned (for r > 0), index k in 1..n-2 is returned with probability p_{k-1},
///                and n-1 with probability p_{n-2} + p_{n-1}.
/// Importance weights are always computed from the unshifted p (§1.8), so callers keep using p
/// itself for q; effective_probabilities() gives the law a rule actually realises (for tests
/// and diagnostics).
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <vector>

#include "core/host_device.h"
#include "random/rng.h"

namespace omkl::detail {

enum class SamplerRule { InverseCdf, Shifted };

/// Inclusive prefix sums c_k = Σ_{m≤k} p_m, summed left to right (the order np.cumsum uses, so
/// the bit-compatible mode sees the same rounding).
inline std::vector<double> cumulative_sums(const std::vector<double>& p) {
  std::vector<double> c(p.size());
  double s = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    s += p[k];
    c[k] = s;
  }
  return c;
}

/// sample_from_cdf() over cdf[0..n), n ≥ 1, on the host or the device (the resident walk,
/// resident_graph.h): binary searches, so that a column of the OMKL-GF graph costs one prefix
/// sum plus M searches (§6.1).
OMKL_HD std::size_t sample_from_cdf(const double* cdf, std::size_t n, double r, bool shifted) {
  if (!shifted) {
    // Smallest k with r < c_k (§1.8; std::upper_bound). If rounding leaves r ≥ c_{n-1}, return
    // the last index that has positive mass (c_k > c_{k-1}); that is n-1 whenever p_{n-1} > 0,
    // as the spec says, and never an index of probability zero.
    std::size_t lo = 0, hi = n;
    while (lo < hi) {
      const std::size_t mid = lo + (hi - lo) / 2;
      if (r < cdf[mid]) hi = mid;
      else lo = mid + 1;
    }
    if (lo < n) return lo;
    std::size_t k = n - 1;
    while (k > 0 && !(cdf[k] > cdf[k - 1])) --k;
    return k;
  }
  // Shifted: smallest k ≥ 0 with r ≤ Σ_{m<k} p_m (exclusive prefix), capped at n-1. The
  // exclusive prefix of k ≥ 1 is c_{k-1}, so k = 1 + (smallest j with r ≤ c_j; std::lower_bound).
  if (r <= 0.0) return 0;
  std::size_t lo = 0, hi = n;
  while (lo < hi) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (cdf[mid] < r) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1 < n - 1 ? lo + 1 : n - 1;
}

/// Samples an index from precomputed inclusive prefix sums `cdf` (length n ≥ 1) with the
/// uniform r ∈ [0, 1).
inline std::size_t sample_from_cdf(const std::vector<double>& cdf, double r, SamplerRule rule) {
  if (cdf.empty()) throw std::invalid_argument("sample_from_cdf: empty distribution");
  return sample_from_cdf(cdf.data(), cdf.size(), r, rule == SamplerRule::Shifted);
}

/// sample_index() over p[0..n), n ≥ 1, on the host or the device: one pass that forms the
/// prefix sums as it goes (no allocation); the same index as sample_from_cdf() of them.
OMKL_HD std::size_t sample_index(const double* p, std::size_t n, double r, bool shifted) {
  if (shifted && r <= 0.0) return 0;
  double c = 0.0, previous = 0.0;
  std::size_t last_positive = 0;
  for (std::size_t k = 0; k < n; ++k) {
    c += p[k];
    if (!shifted) {
      if (r < c) return k;  // smallest k with r < c_k
      if (k == 0 || c > previous) last_positive = k;
    } else if (r <= c) {
      return k + 1 < n - 1 ? k + 1 : n - 1;  // 1 + smallest j with r ≤ c_j, capped at n − 1
    }
    previous = c;
  }
  // Rounding left r at or above the total: as sample_from_cdf().
  return shifted ? n - 1 : last_positive;
}

/// Samples an index of the PMF p with the uniform r ∈ [0, 1) (§1.8).
inline std::size_t sample_index(const std::vector<double>& p, double r, SamplerRule rule) {
  if (p.empty()) throw std::invalid_argument("sample_index: empty distribution");
  return sample_index(p.data(), p.size(), r, rule == SamplerRule::Shifted);
}

/// Draws one node from the PMF p, consuming exactly one uniform of `rng` (the per-step
/// uniform counts of §1.9 depend on it).
inline std::size_t draw_node(const std::vector<double>& p, RandomStream& rng, SamplerRule rule) {
  return sample_index(p, rng.uniform(), rule);
}

/// The law that `rule` realises when sampling from p with r ~ U(0, 1): p itself for InverseCdf;
/// for Shifted e_0 = 0, e_k = p_{k-1} (1 ≤ k ≤ n-2), e_{n-1} = p_{n-2} + p_{n-1} (§1.8).
inline std::vector<double> effective_probabilities(const std::vector<double>& p, SamplerRule rule) {
  if (rule == SamplerRule::InverseCdf || p.empty()) return p;
  const std::size_t n = p.size();
  std::vector<double> e(n, 0.0);
  if (n == 1) {
    e[0] = p[0];
    return e;
  }
  for (std::size_t k = 1; k + 1 < n; ++k) e[k] = p[k - 1];
  e[n - 1] = p[n - 2] + p[n - 1];
  return e;
}

}  // namespace omkl::detail
