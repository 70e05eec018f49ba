/// @file refinement.h
/// @brief Per-step refinement of the similarity graph for OMKL-SFG-R (spec/graph-aided.md §2.6):
/// the refinement set D'_t, the threshold β_t and the refined graph G'_t in which D'_t dominates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "families/graph_aided/divergence.h"
#include "families/graph_aided/feedback_graph.h"

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
/// The same set when the caller keeps `by_weight`, the vertices sorted by u descending (ties in
/// any order): ū_[rank] is read instead of selected and only the members are visited.
/// refinement_set_from_rank() sorts and calls it; OMKL-SFG-R keeps the order up to date
/// cheaply, since one vertex weight changes per step.
void refinement_set_from_sorted(const std::vector<double>& u, const std::vector<std::uint32_t>& by_weight,
                                double xi, std::size_t rank, double beta_eps, std::vector<std::size_t>& out);

/// §3 R19 `refine_pick`: [J] eq. 45 adds the most dissimilar dominator, [C] eq. 23 the most similar.
enum class RefinePick { Argmax, Argmin };

struct RefinementOptions {
  RefinePick pick = RefinePick::Argmax;
  /// §3 R16 `sfgr_refine_all_vertices`: the reference adds (d_i, i) for every vertex i, including
  /// members of D'_t and vertices already dominated; the paper only for undominated i ∉ D'_t.
  bool refine_all_vertices = false;
};

/// For every vertex i, the candidate dominators j in the order refine() prefers them: NaN
/// divergences first (NumPy's argmax/argmin return the first NaN), then by Δ(i, j) descending
/// (Argmax) or ascending (Argmin), ties by ascending j. d_i is then the first member of D'_t in
/// i's list, found in a few probes instead of |D'_t| divergence comparisons. Built once per graph.
class DominatorOrder {
 public:
  DominatorOrder() = default;
  DominatorOrder(const DivergenceMatrix& delta, RefinePick pick);
  std::size_t size() const { return n_; }
  RefinePick pick() const { return pick_; }
  /// The n candidates of vertex i, best first.
  const std::uint32_t* candidates(std::size_t i) const { return order_.data() + i * n_; }

 private:
  std::size_t n_ = 0;
  RefinePick pick_ = RefinePick::Argmax;
  std::vector<std::uint32_t> order_;  // n × n
};

/// G'_t of §2.6 as an overlay on the base graph. Each vertex i gains at most one in-edge, (d_i, i),
/// so E'_t is E plus the edges added_from(i) → i: nothing of E is copied, and refreshing an
/// existing RefinedGraph allocates nothing (SFG-R's paper form refreshes it every step).
/// The base graph must outlive the overlay.
class RefinedGraph {
 public:
  static constexpr std::size_t npos = std::numeric_limits<std::size_t>::max();

  /// Refines `base` so that D'_t dominates it (§2.6.a step 2 / §2.6.b): for each vertex i that
  /// needs an edge, d_i = argmax (or argmin) over j ∈ D'_t of Δ(i, j), first extremum in
  /// ascending order of D'_t, NaN winning as in NumPy (all-NaN Δ ⇒ d_i = min D'_t); the edge
  /// (d_i, i) is added when absent. Then every vertex has an in-neighbour in D'_t, so q_k ≥ β_t.
  void refine(const FeedbackGraph& base, const DivergenceMatrix& delta,
              const std::vector<std::size_t>& refinement_set, const RefinementOptions& options);
  /// The same refinement with the dominators looked up in `order` (built from the same Δ and
  /// options.pick): identical result, O(N) probes instead of O(N·|D'_t|) comparisons.
  void refine(const FeedbackGraph& base, const DominatorOrder& order,
              const std::vector<std::size_t>& refinement_set, const RefinementOptions& options);

  const std::vector<std::size_t>& refinement_set() const { return set_; }  ///< D'_t (ascending)
  /// d_i for every vertex that was considered for a refinement edge; npos otherwise.
  std::size_t dominator(std::size_t i) const { return dominator_.at(i); }
  /// The source of the edge added into i (d_i when (d_i, i) ∉ E), npos when none was added:
  /// N'_in(i) = N_in(i) plus it, which is how ObservationSums gives q' (feedback_graph.h).
  std::size_t added_from(std::size_t i) const { return added_from_.at(i); }

  /// N'_out(node): the base list, then the added targets in ascending order (the reference's
  /// N_out_ref, §2.6.b). Fills `out`.
  void out_neighbours(std::size_t node, std::vector<std::size_t>& out) const;
  /// E'_t as a standalone graph (tests, diagnostics).
  FeedbackGraph graph() const;

 private:
  // Shared by both refine() forms: marks D'_t and the vertices it dominates in E.
  void begin(const FeedbackGraph& base, std::size_t n_delta, const std::vector<std::size_t>& refinement_set);
  // Records d_i and the edge it adds, then indexes the added edges by source.
  void set_dominator(std::size_t i, std::size_t d);
  void index_added();

  const FeedbackGraph* base_ = nullptr;
  std::vector<std::size_t> set_, dominator_, added_from_;
  std::vector<std::uint8_t> in_set_, dominated_;
  // Added edges grouped by source: targets of a are added_targets_[added_start_[a] .. added_start_[a + 1]).
  std::vector<std::size_t> added_start_, added_targets_, fill_;
};

/// A fresh RefinedGraph refined once (see RefinedGraph::refine).
RefinedGraph refine_graph(const FeedbackGraph& base, const DivergenceMatrix& delta,
                          const std::vector<std::size_t>& refinement_set,
                          const RefinementOptions& options);

}  // namespace omkl::detail
