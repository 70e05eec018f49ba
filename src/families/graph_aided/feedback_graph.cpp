/// @file feedback_graph.cpp
/// @brief FeedbackGraph and the offline similarity graphs of spec/graph-aided.md §2.3.
#include "families/graph_aided/feedback_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {
namespace {

// NumPy's argmax/argmin over the candidates with mask[j] = false: the first NaN wins, otherwise
// the first extremum (§7 A-14: ties → smallest index). Returns n when there is no candidate.
template <class Better>
std::size_t numpy_arg_extremum(const std::vector<double>& score, const std::vector<bool>& masked,
                               Better better) {
  const std::size_t n = score.size();
  std::size_t best = n;
  for (std::size_t j = 0; j < n; ++j) {
    if (masked[j]) continue;
    if (std::isnan(score[j])) return j;
    if (best == n || better(score[j], score[best])) best = j;
  }
  return best;
}

void check_matrix(const DivergenceMatrix& delta) {
  if (delta.n == 0) throw ConfigError("dictionary is empty: the similarity graph needs kernels");
  if (delta.values.size() != delta.n * delta.n)
    throw std::invalid_argument("DivergenceMatrix: values must hold n*n entries");
}

}  // namespace

FeedbackGraph::FeedbackGraph(std::size_t n_nodes)
    : n_(n_nodes), out_(n_nodes), adjacency_(n_nodes * n_nodes, 0), in_(n_nodes) {}

void FeedbackGraph::check_node(std::size_t node) const {
  if (node >= n_)
    throw std::out_of_range("FeedbackGraph: node " + std::to_string(node) + " out of range (N = " +
                            std::to_string(n_) + ")");
}

bool FeedbackGraph::add_edge(std::size_t from, std::size_t to) {
  check_node(from);
  check_node(to);
  auto& cell = adjacency_[from * n_ + to];
  if (cell) return false;
  cell = 1;
  out_[from].push_back(to);
  auto& in = in_[to];
  in.insert(std::upper_bound(in.begin(), in.end(), from), from);
  return true;
}

bool FeedbackGraph::has_edge(std::size_t from, std::size_t to) const {
  check_node(from);
  check_node(to);
  return adjacency_[from * n_ + to] != 0;
}

const std::vector<std::size_t>& FeedbackGraph::out_neighbours(std::size_t node) const {
  check_node(node);
  return out_[node];
}

const std::vector<std::size_t>& FeedbackGraph::in_neighbours(std::size_t node) const {
  check_node(node);
  return in_[node];
}

std::vector<double> FeedbackGraph::observation_probabilities(const std::vector<double>& p) const {
  if (p.size() != n_)
    throw std::invalid_argument("observation_probabilities: p has " + std::to_string(p.size()) +
                                " entries, the graph " + std::to_string(n_) + " nodes");
  std::vector<double> q(n_, 0.0);
  // Row-wise accumulation visits a in ascending order for every k, like the dense pᵀA.
  for (std::size_t a = 0; a < n_; ++a)
    for (std::size_t k : out_[a]) q[k] += p[a];
  return q;
}

double FeedbackGraph::observation_probability(std::size_t k, const std::vector<double>& p) const {
  if (p.size() != n_) throw std::invalid_argument("observation_probability: p must have one entry per node");
  double q = 0.0;
  for (std::size_t a : in_neighbours(k)) q += p[a];
  return q;
}

ObservationSums::ObservationSums(const FeedbackGraph& graph) {
  const std::size_t n = graph.size();
  in_.resize(n);
  complement_.resize(n);
  use_complement_.assign(n, 0);
  for (std::size_t k = 0; k < n; ++k) {
    in_[k] = graph.in_neighbours(k);
    // +1: room for a refinement edge on the direct side.
    if (2 * (in_[k].size() + 1) <= n) continue;
    use_complement_[k] = 1;
    for (std::size_t a = 0; a < n; ++a)
      if (!graph.has_edge(a, k)) complement_[k].push_back(a);
  }
}

double ObservationSums::q(std::size_t k, const std::vector<double>& p, double p_total, std::size_t extra) const {
  if (use_complement_.at(k)) {
    double s = 0.0;
    for (std::size_t a : complement_[k])
      if (a != extra) s += p[a];
    const double q = p_total - s;
    if (q >= 0.5 * p_total) return q;  // no cancellation worth a second pass
  }
  double s = 0.0;
  for (std::size_t a : in_[k]) s += p[a];
  return extra == npos ? s : s + p[extra];
}

void check_out_degree(std::size_t m, std::size_t n) {
  if (n == 0) throw ConfigError("dictionary is empty: a feedback graph needs at least one kernel");
  if (m < 1) throw ConfigError("M must be >= 1, got " + std::to_string(m));
  if (m > n)
    throw ConfigError("M = " + std::to_string(m) + " exceeds the dictionary size N = " +
                      std::to_string(n) + " (the dictionary is too small for the graph)");
}

FeedbackGraph index_order_graph(std::size_t n, std::size_t m) {
  check_out_degree(m, n);
  FeedbackGraph g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g.add_edge(i, i);
    for (std::size_t j = 0; j < n && g.out_degree(i) < m; ++j)
      if (j != i) g.add_edge(i, j);
  }
  return g;
}

FeedbackGraph dissimilar_graph(const DivergenceMatrix& delta, std::size_t m, GreedyMask mask) {
  check_matrix(delta);
  const std::size_t n = delta.n;
  check_out_degree(m, n);
  FeedbackGraph g(n);
  std::vector<double> score(n);
  std::vector<bool> chosen(n);
  const std::vector<bool> none(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    g.add_edge(i, i);
    chosen.assign(n, false);
    chosen[i] = true;
    // Running sum over the chosen rows: the reference's summed score (same argmax as eq. 31's
    // average), extended by one row per pick, so a vertex costs O(N·M).
    for (std::size_t j = 0; j < n; ++j) score[j] = delta(i, j);
    while (g.out_degree(i) < m) {
      std::size_t pick;
      if (mask == GreedyMask::NegInf) {
        pick = numpy_arg_extremum(score, chosen, [](double a, double b) { return a > b; });
      } else {
        // The reference overwrites chosen scores with 0 and takes argmax over all vertices.
        std::vector<double> masked_score = score;
        for (std::size_t j = 0; j < n; ++j)
          if (chosen[j]) masked_score[j] = 0.0;
        pick = numpy_arg_extremum(masked_score, none, [](double a, double b) { return a > b; });
        if (chosen[pick])
          throw ConfigError("greedy_mask = zero: vertex " + std::to_string(i) +
                            " would pick the already chosen vertex " + std::to_string(pick) +
                            " (every remaining divergence score is negative); use greedy_mask = "
                            "neg_inf");
      }
      g.add_edge(i, pick);
      chosen[pick] = true;
      for (std::size_t j = 0; j < n; ++j) score[j] += delta(pick, j);
    }
  }
  return g;
}

FeedbackGraph similar_graph(const DivergenceMatrix& delta, std::size_t m) {
  check_matrix(delta);
  const std::size_t n = delta.n;
  check_out_degree(m, n);
  FeedbackGraph g(n);
  std::vector<double> score(n);
  std::vector<bool> chosen(n);
  for (std::size_t i = 0; i < n; ++i) {
    // The self-loop comes first whatever Δ(i, i) is (§2.3: every vertex has one).
    g.add_edge(i, i);
    chosen.assign(n, false);
    chosen[i] = true;
    for (std::size_t j = 0; j < n; ++j) score[j] = delta(i, j);
    // Repeated argmin = stable sort by increasing Δ, ties → smaller index.
    while (g.out_degree(i) < m) {
      const std::size_t pick = numpy_arg_extremum(score, chosen, [](double a, double b) { return a < b; });
      g.add_edge(i, pick);
      chosen[pick] = true;
    }
  }
  return g;
}

FeedbackGraph similarity_graph(const Dictionary& dictionary, std::size_t m,
                               const SimilarityGraphOptions& options) {
  check_out_degree(m, dictionary.size());
  // All-NaN Δ: both rules degenerate to index order (first NaN wins every arg-extremum), so skip
  // the N² evaluations; divergence_matrix() still validates the kernel families.
  if (options.divergence == DivergenceForm::ReferenceNan) {
    for (const auto& k : dictionary) check_divergence_kernel(k);
    return index_order_graph(dictionary.size(), m);
  }
  const DivergenceMatrix delta = divergence_matrix(dictionary, options.divergence, options.divergence_dim);
  if (options.rule == GraphRule::ConferenceNearest) return similar_graph(delta, m);
  return dissimilar_graph(delta, m, options.mask);
}

void vertex_probabilities(const std::vector<double>& u, double xi, const std::vector<std::size_t>& exploration_set,
                          std::vector<double>& p) {
  if (!(xi >= 0.0 && xi <= 1.0))
    throw ConfigError("xi (exploration rate) must be in [0, 1], got " + std::to_string(xi));
  if (exploration_set.empty()) throw ConfigError("the exploration set (D or D'_t) is empty");
  const std::size_t n = u.size();
  double total = 0.0;
  for (double v : u) total += v;
  if (!(total > 0.0)) throw std::invalid_argument("vertex_probabilities: weights must have a positive sum");
  p.resize(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = (1.0 - xi) * (u[i] / total);
  const double share = xi / static_cast<double>(exploration_set.size());
  for (std::size_t a : exploration_set) {
    if (a >= n) throw std::out_of_range("vertex_probabilities: exploration vertex out of range");
    p[a] += share;
  }
}

std::vector<double> vertex_probabilities(const std::vector<double>& u, double xi,
                                         const std::vector<std::size_t>& exploration_set) {
  std::vector<double> p;
  vertex_probabilities(u, xi, exploration_set, p);
  return p;
}

}  // namespace omkl::detail
