/// @file feedback_graph.h
/// @brief Directed feedback graphs over kernels and the offline similarity graph of OMKL-SFG
/// (spec/graph-aided.md §2.3, §2.5).
///
/// A FeedbackGraph stores N nodes with ordered out-neighbour lists (construction order: it fixes
/// the evaluation order of S_t, §2.3) and an N×N adjacency for O(1) edge tests. Builders cover
/// the offline similarity graph of OMKL-SFG (journal "jointly dissimilar" §2.3.1, conference
/// "similar" §2.3.2, reference index order §2.3.3). The dominating set lives in
/// dominating_set.h, the per-step refinement of OMKL-SFG-R in refinement.h, the OMKL-GF
/// bipartite graph in bipartite_graph.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "families/graph_aided/divergence.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

class FeedbackGraph {
 public:
  FeedbackGraph() = default;
  explicit FeedbackGraph(std::size_t n_nodes);

  std::size_t size() const { return n_; }

  /// Adds the edge from → to (appended to from's out-list) unless it exists; true if added.
  bool add_edge(std::size_t from, std::size_t to);
  bool has_edge(std::size_t from, std::size_t to) const;

  /// N_out(node) in construction order (self-loop first for the similarity graphs).
  const std::vector<std::size_t>& out_neighbours(std::size_t node) const;
  /// N_in(node) in ascending order.
  const std::vector<std::size_t>& in_neighbours(std::size_t node) const;
  std::size_t out_degree(std::size_t node) const { return out_neighbours(node).size(); }
  std::size_t in_degree(std::size_t node) const { return in_neighbours(node).size(); }

  /// q_k = Σ_{a ∈ N_in(k)} p_a, i.e. q = pᵀA (eq. 36): the probability that kernel k is in
  /// S_t = N_out(I_t) when I_t ~ p. Summed over a in ascending order, as the reference's pᵀA.
  std::vector<double> observation_probabilities(const std::vector<double>& p) const;
  /// q_k alone in O(|N_in(k)|), for the kernels of S_t only (§6.1); bitwise equal to entry k of
  /// observation_probabilities() (same summation order).
  double observation_probability(std::size_t k, const std::vector<double>& p) const;

 private:
  void check_node(std::size_t node) const;

  std::size_t n_ = 0;
  std::vector<std::vector<std::size_t>> out_;
  std::vector<std::uint8_t> adjacency_;  // row-major n_ × n_, 1 iff edge a → b
  std::vector<std::vector<std::size_t>> in_;  // ascending
};

/// q_k = Σ_{a ∈ N_in(k)} p_a for the few kernels of one step, summed over the shorter side of
/// N_in(k): the journal's similarity graph gives a handful of kernels in-degree N (every vertex
/// links the most dissimilar ones), and for those q_k = Σ_a p_a − Σ_{a ∉ N_in(k)} p_a costs a
/// few terms instead of N. Algebraically equal to FeedbackGraph::observation_probability();
/// the rounding differs in the last bits (a complement result below Σp/2, where cancellation
/// would cost accuracy, is recomputed directly). Built once for a finished graph.
class ObservationSums {
 public:
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  ObservationSums() = default;
  explicit ObservationSums(const FeedbackGraph& graph);
  /// q_k with p_total = Σ_a p_a; `extra` is one more in-neighbour of k that is not in the graph
  /// (an SFG-R refinement edge), or npos.
  double q(std::size_t k, const std::vector<double>& p, double p_total, std::size_t extra = npos) const;

  /// The lists q() sums (the device-resident walk copies them, resident_graph.h): N_in(k), and
  /// V minus N_in(k) where q() tries the complement first (empty otherwise).
  const std::vector<std::size_t>& in_list(std::size_t k) const { return in_.at(k); }
  const std::vector<std::size_t>& complement_list(std::size_t k) const { return complement_.at(k); }
  bool uses_complement(std::size_t k) const { return use_complement_.at(k) != 0; }

 private:
  std::vector<std::vector<std::size_t>> in_;          // N_in(k), ascending
  std::vector<std::vector<std::size_t>> complement_;  // V minus N_in(k), when that is shorter
  std::vector<std::uint8_t> use_complement_;
};

/// ConfigError unless 1 ≤ m ≤ n (the out-degree / draw count M against the dictionary size N).
void check_out_degree(std::size_t m, std::size_t n);

// ---- offline similarity graph of OMKL-SFG (§2.3) ------------------------------------------

/// §3 R3 `graph_rule`.
enum class GraphRule { JournalGreedy, ConferenceNearest };
/// §3 R3 `greedy_mask`: how already chosen vertices are excluded from the greedy argmax.
enum class GreedyMask { Zero, NegInf };

/// Reference form (§2.3.3): N_out(i) = [i, then the M−1 smallest other indices ascending].
FeedbackGraph index_order_graph(std::size_t n, std::size_t m);

/// Journal form (§2.3.1, Alg. 4): N_out(i) starts as [i]; repeatedly append the vertex j that
/// maximises Σ_{m ∈ N_out(i)} Δ(m, j) (the average has the same argmax), ties → smallest j.
/// NaN scores win the argmax as in NumPy (first NaN), so an all-NaN matrix (ReferenceNan) gives
/// index_order_graph(). With GreedyMask::Zero (the reference code) a chosen vertex could win
/// again when every remaining score is negative; that is reported as ConfigError instead of
/// producing a duplicate out-neighbour.
FeedbackGraph dissimilar_graph(const DivergenceMatrix& delta, std::size_t m, GreedyMask mask);

/// Conference form (§2.3.2, [C] Alg. 1): N_out(i) = [i, then the M−1 other vertices with the
/// smallest Δ(i, ·) by increasing Δ], ties → smaller index; NaN counts as smallest (NumPy argmin).
FeedbackGraph similar_graph(const DivergenceMatrix& delta, std::size_t m);

struct SimilarityGraphOptions {
  GraphRule rule = GraphRule::JournalGreedy;
  DivergenceForm divergence = DivergenceForm::Exact;
  std::size_t divergence_dim = 1;  ///< d of the data, or 1 (§2.2.2 `divergence_dim`)
  GreedyMask mask = GreedyMask::NegInf;
};

/// The offline graph for a dictionary. divergence = ReferenceNan yields the index-order graph
/// (the effect of the all-NaN matrix, §2.2.3) without computing any Δ. ConfigError for an empty
/// dictionary, M < 1 or M > N.
FeedbackGraph similarity_graph(const Dictionary& dictionary, std::size_t m,
                               const SimilarityGraphOptions& options);

// ---- vertex probabilities (§2.5, §2.6) ------------------------------------------------------

/// p_i = (1 − ξ)·u_i/U + (ξ/|E|)·1[i ∈ E] with U = Σu: eq. 33 with E = D (OMKL-SFG) and eq. 46
/// with E = D'_t (OMKL-SFG-R). ConfigError unless ξ ∈ [0, 1] and E is non-empty.
std::vector<double> vertex_probabilities(const std::vector<double>& u, double xi,
                                         const std::vector<std::size_t>& exploration_set);
/// The same into `p` (reused: no allocation once it has grown).
void vertex_probabilities(const std::vector<double>& u, double xi, const std::vector<std::size_t>& exploration_set,
                          std::vector<double>& p);

}  // namespace omkl::detail
