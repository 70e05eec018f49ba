/// @file refinement.cpp
/// @brief OMKL-SFG-R refinement (spec/graph-aided.md §2.6).
#include "graph/refinement.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {
namespace {

std::vector<double> normalised(const std::vector<double>& u) {
  if (u.empty()) throw ConfigError("dictionary is empty: the refinement needs vertex weights");
  double total = 0.0;
  for (double v : u) total += v;
  if (!(total > 0.0)) throw std::invalid_argument("refinement: vertex weights must have a positive sum");
  std::vector<double> ub(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) ub[i] = u[i] / total;
  return ub;
}

void check_xi_open(double xi) {
  // eq. 44 divides by 1 − ξ, so ξ = 1 has no refinement set.
  if (!(xi >= 0.0 && xi < 1.0))
    throw ConfigError("xi (exploration rate) must be in [0, 1) for the refinement, got " + std::to_string(xi));
}

// ū_[rank]: the rank-th largest entry (1-based rank).
double rank_value(std::vector<double> ub, std::size_t rank) {
  std::nth_element(ub.begin(), ub.begin() + static_cast<std::ptrdiff_t>(rank - 1), ub.end(),
                   std::greater<double>());
  return ub[rank - 1];
}

void check_rank(std::size_t rank, std::size_t n) {
  if (rank < 1) throw ConfigError("beta_rank must be >= 1, got 0");
  if (rank > n)
    throw ConfigError("beta_rank = " + std::to_string(rank) + " exceeds the dictionary size N = " +
                      std::to_string(n) + " (the dictionary is too small for the refinement rule)");
}

std::vector<std::size_t> members_at_least(const std::vector<double>& ub, double threshold) {
  std::vector<std::size_t> set;
  for (std::size_t i = 0; i < ub.size(); ++i)
    if (ub[i] >= threshold) set.push_back(i);
  return set;
}

}  // namespace

std::vector<std::size_t> refinement_set(const std::vector<double>& u, double xi, double beta) {
  if (!(beta > 0.0 && beta <= 1.0))
    throw ConfigError("beta must be in (0, 1], got " + std::to_string(beta));
  check_xi_open(xi);
  const std::vector<double> ub = normalised(u);
  const double n = static_cast<double>(ub.size());
  // eq. 44, in the reference's arithmetic order.
  return members_at_least(ub, (beta - xi / n) / (1.0 - xi));
}

double beta_from_rank(const std::vector<double>& u, double xi, std::size_t rank, double beta_eps) {
  check_xi_open(xi);
  const std::vector<double> ub = normalised(u);
  check_rank(rank, ub.size());
  const double n = static_cast<double>(ub.size());
  return (1.0 - xi) * rank_value(ub, rank) + xi / n - beta_eps;
}

std::vector<std::size_t> refinement_set_from_rank(const std::vector<double>& u, double xi,
                                                  std::size_t rank, double beta_eps) {
  const double beta = beta_from_rank(u, xi, rank, beta_eps);
  const std::vector<double> ub = normalised(u);
  const double n = static_cast<double>(ub.size());
  double threshold = (beta - xi / n) / (1.0 - xi);
  // With beta_eps = 0 rounding can push the threshold just above ū_[rank] and drop the top
  // vertices (§3 R18 is the reference's guard); never exclude them. A no-op when beta_eps > 0.
  threshold = std::min(threshold, rank_value(ub, rank));
  return members_at_least(ub, threshold);
}

RefinedGraph refine_graph(const FeedbackGraph& base, const DivergenceMatrix& delta,
                          const std::vector<std::size_t>& refinement_set,
                          const RefinementOptions& options) {
  const std::size_t n = base.size();
  if (delta.n != n || delta.values.size() != n * n)
    throw std::invalid_argument("refine_graph: the divergence matrix must be N x N for the graph's N");
  if (refinement_set.empty())
    throw ConfigError("the refinement set D'_t is empty (beta exceeds every vertex probability)");
  std::vector<bool> in_set(n, false), dominated(n, false);
  for (std::size_t a : refinement_set) {
    if (a >= n) throw std::out_of_range("refine_graph: refinement vertex out of range");
    in_set[a] = true;
    dominated[a] = true;
    for (std::size_t k : base.out_neighbours(a)) dominated[k] = true;
  }
  RefinedGraph out{base, refinement_set, std::vector<std::size_t>(n, RefinedGraph::npos)};
  for (std::size_t i = 0; i < n; ++i) {
    if (!options.refine_all_vertices && (in_set[i] || dominated[i])) continue;
    // d_i: first extremum of Δ(i, j) over j ∈ D'_t in ascending order; NaN wins as in NumPy,
    // so the published all-NaN Δ gives d_i = min D'_t (§2.6.b).
    std::size_t best = RefinedGraph::npos;
    for (std::size_t j : refinement_set) {
      const double v = delta(i, j);
      if (std::isnan(v)) {
        best = j;
        break;
      }
      if (best == RefinedGraph::npos) {
        best = j;
        continue;
      }
      const double b = delta(i, best);
      if (options.pick == RefinePick::Argmax ? v > b : v < b) best = j;
    }
    out.dominator[i] = best;
    out.graph.add_edge(best, i);  // no-op if the edge is already in E
  }
  return out;
}

}  // namespace omkl::detail
