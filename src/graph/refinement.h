/// @file refinement.h
/// @brief Per-step refinement of the similarity graph for OMKL-SFG-R (spec/graph-aided.md §2.6):
/// the refinement set D'_t, the threshold β_t and the refined graph G'_t in which D'_t dominates.
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "graph/divergence.h"
#include "graph/feedback_graph.h"

namespace omkl::detail {

/// D'_t = { i : ū_i ≥ (β − ξ/N)/(1 − ξ) } in ascending order (eq. 44, ū = u/Σu): every member
/// then has p_i ≥ β under eq. 46. ConfigError unless β ∈ (0, 1] and ξ ∈ [0, 1).
std::vector<std::size_t> refinement_set(const std::vector<double>& u, double xi, double beta);

/// β_t of the experiments (§2.6.a step 1): (1 − ξ)·ū_[rank] + ξ/N − beta_eps, with ū_[rank] the
/// rank-th largest entry of ū (rank = 10 for every M in [J]/[C]); beta_eps = 1e−7 is §3 R18.
/// ConfigError if rank is 0 or exceeds N (the dictionary is too small for the rule).
double beta_from_rank(const std::vector<double>& u, double xi, std::size_t rank = 10,
                      double beta_eps = 1e-7);

/// D'_t for the β of beta_from_rank(): the `rank` largest ū (plus ties). β is derived, not a
/// user parameter, so it is not range-checked.
std::vector<std::size_t> refinement_set_from_rank(const std::vector<double>& u, double xi,
                                                  std::size_t rank = 10, double beta_eps = 1e-7);

/// §3 R19 `refine_pick`: [J] eq. 45 adds the most dissimilar dominator, [C] eq. 23 the most similar.
enum class RefinePick { Argmax, Argmin };

struct RefinementOptions {
  RefinePick pick = RefinePick::Argmax;
  /// §3 R16 `sfgr_refine_all_vertices`: the reference adds (d_i, i) for every vertex i, including
  /// members of D'_t and vertices already dominated; the paper only for undominated i ∉ D'_t.
  bool refine_all_vertices = false;
};

/// G'_t of §2.6: the base graph plus refinement edges.
struct RefinedGraph {
  /// E'_t. Out-lists keep the base order, followed by the added targets in ascending i, which
  /// is the reference's N_out_ref (§2.6.b).
  FeedbackGraph graph;
  std::vector<std::size_t> refinement_set;  ///< D'_t (ascending)
  /// d_i for every vertex that was considered for a refinement edge; npos otherwise.
  std::vector<std::size_t> dominator;
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();
};

/// Refines `base` so that D'_t dominates it (§2.6.a step 2 / §2.6.b): for each vertex i that
/// needs an edge, d_i = argmax (or argmin) over j ∈ D'_t of Δ(i, j), first extremum in ascending
/// order of D'_t, NaN winning as in NumPy (all-NaN Δ ⇒ d_i = min D'_t); the edge (d_i, i) is added
/// when absent. Then every vertex has an in-neighbour in D'_t, so q_k ≥ β_t for all k.
RefinedGraph refine_graph(const FeedbackGraph& base, const DivergenceMatrix& delta,
                          const std::vector<std::size_t>& refinement_set,
                          const RefinementOptions& options);

}  // namespace omkl::detail
