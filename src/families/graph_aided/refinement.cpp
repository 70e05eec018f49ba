/// @file refinement.cpp
/// @brief OMKL-SFG-R refinement (spec/graph-aided.md §2.6).
#include "families/graph_aided/refinement.h"

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

void refinement_set_from_sorted(const std::vector<double>& u, const std::vector<std::uint32_t>& by_weight,
                                double xi, std::size_t rank, double beta_eps, std::vector<std::size_t>& out) {
  check_xi_open(xi);
  if (u.empty()) throw ConfigError("dictionary is empty: the refinement needs vertex weights");
  check_rank(rank, u.size());
  if (by_weight.size() != u.size()) throw std::invalid_argument("refinement: the weight order must list every vertex");
  double total = 0.0;
  for (double v : u) total += v;  // index order, as normalised()
  if (!(total > 0.0)) throw std::invalid_argument("refinement: vertex weights must have a positive sum");
  // ū_[rank]: dividing by Σu > 0 is monotone under rounding, so it is u_[rank]/Σu exactly.
  const double top = u[by_weight[rank - 1]] / total;
  const double n = static_cast<double>(u.size());
  const double beta = (1.0 - xi) * top + xi / n - beta_eps;
  // With beta_eps = 0 rounding can push the threshold just above ū_[rank] and drop the top
  // vertices (§3 R18 is the reference's guard); never exclude them. A no-op when beta_eps > 0.
  const double threshold = std::min((beta - xi / n) / (1.0 - xi), top);
  // Members form a prefix of the order (u/Σu is monotone in u); report them ascending.
  out.clear();
  for (std::uint32_t i : by_weight) {
    if (!(u[i] / total >= threshold)) break;
    out.push_back(i);
  }
  std::sort(out.begin(), out.end());
}

std::vector<std::size_t> refinement_set_from_rank(const std::vector<double>& u, double xi,
                                                  std::size_t rank, double beta_eps) {
  std::vector<std::uint32_t> by_weight(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) by_weight[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(by_weight.begin(), by_weight.end(), [&](std::uint32_t a, std::uint32_t b) { return u[a] > u[b]; });
  std::vector<std::size_t> out;
  refinement_set_from_sorted(u, by_weight, xi, rank, beta_eps, out);
  return out;
}

DominatorOrder::DominatorOrder(const DivergenceMatrix& delta, RefinePick pick) : n_(delta.n), pick_(pick) {
  if (delta.values.size() != n_ * n_) throw std::invalid_argument("DominatorOrder: the divergence matrix must be N x N");
  order_.resize(n_ * n_);
  for (std::size_t i = 0; i < n_; ++i) {
    std::uint32_t* o = order_.data() + i * n_;
    for (std::size_t j = 0; j < n_; ++j) o[j] = static_cast<std::uint32_t>(j);
    // The scan of refine() keeps the first NaN, else the first strict extremum: NaN first, then
    // better Δ, then smaller j. stable_sort on an ascending list keeps ties in j order.
    std::stable_sort(o, o + n_, [&](std::uint32_t a, std::uint32_t b) {
      const double va = delta(i, a), vb = delta(i, b);
      const bool na = std::isnan(va), nb = std::isnan(vb);
      if (na || nb) return na && !nb;
      return pick == RefinePick::Argmax ? va > vb : va < vb;
    });
  }
}

void RefinedGraph::begin(const FeedbackGraph& base, std::size_t n_delta, const std::vector<std::size_t>& refinement_set) {
  const std::size_t n = base.size();
  if (n_delta != n) throw std::invalid_argument("refine_graph: the divergence matrix must be N x N for the graph's N");
  if (refinement_set.empty())
    throw ConfigError("the refinement set D'_t is empty (beta exceeds every vertex probability)");
  base_ = &base;
  set_ = refinement_set;
  in_set_.assign(n, 0);
  dominated_.assign(n, 0);
  dominator_.assign(n, npos);
  added_from_.assign(n, npos);
  for (std::size_t a : refinement_set) {
    if (a >= n) throw std::out_of_range("refine_graph: refinement vertex out of range");
    in_set_[a] = 1;
    dominated_[a] = 1;
    for (std::size_t k : base.out_neighbours(a)) dominated_[k] = 1;
  }
}

void RefinedGraph::set_dominator(std::size_t i, std::size_t d) {
  dominator_[i] = d;
  if (!base_->has_edge(d, i)) added_from_[i] = d;
}

void RefinedGraph::index_added() {
  const std::size_t n = added_from_.size();
  added_start_.assign(n + 1, 0);
  for (std::size_t i = 0; i < n; ++i)
    if (added_from_[i] != npos) ++added_start_[added_from_[i] + 1];
  for (std::size_t a = 0; a < n; ++a) added_start_[a + 1] += added_start_[a];
  added_targets_.resize(added_start_[n]);
  fill_.assign(added_start_.begin(), added_start_.end() - 1);
  for (std::size_t i = 0; i < n; ++i)  // ascending i: each source's targets stay ascending
    if (added_from_[i] != npos) added_targets_[fill_[added_from_[i]]++] = i;
}

void RefinedGraph::refine(const FeedbackGraph& base, const DivergenceMatrix& delta,
                          const std::vector<std::size_t>& refinement_set, const RefinementOptions& options) {
  if (delta.values.size() != delta.n * delta.n)
    throw std::invalid_argument("refine_graph: the divergence matrix must be N x N for the graph's N");
  begin(base, delta.n, refinement_set);
  const std::size_t n = base.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!options.refine_all_vertices && (in_set_[i] || dominated_[i])) continue;
    // d_i: first extremum of Δ(i, j) over j ∈ D'_t in ascending order; NaN wins as in NumPy,
    // so the published all-NaN Δ gives d_i = min D'_t (§2.6.b).
    std::size_t best = npos;
    for (std::size_t j : refinement_set) {
      const double v = delta(i, j);
      if (std::isnan(v)) {
        best = j;
        break;
      }
      if (best == npos) {
        best = j;
        continue;
      }
      const double b = delta(i, best);
      if (options.pick == RefinePick::Argmax ? v > b : v < b) best = j;
    }
    set_dominator(i, best);
  }
  index_added();
}

void RefinedGraph::refine(const FeedbackGraph& base, const DominatorOrder& order,
                          const std::vector<std::size_t>& refinement_set, const RefinementOptions& options) {
  if (order.pick() != options.pick) throw std::invalid_argument("refine_graph: the dominator order was built for the other pick");
  begin(base, order.size(), refinement_set);
  const std::size_t n = base.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!options.refine_all_vertices && (in_set_[i] || dominated_[i])) continue;
    const std::uint32_t* c = order.candidates(i);
    std::size_t k = 0;
    while (!in_set_[c[k]]) ++k;  // D'_t is non-empty, so this stops within n probes
    set_dominator(i, c[k]);
  }
  index_added();
}

void RefinedGraph::out_neighbours(std::size_t node, std::vector<std::size_t>& out) const {
  if (!base_) throw std::logic_error("RefinedGraph: not refined yet");
  const auto& b = base_->out_neighbours(node);
  out.assign(b.begin(), b.end());
  out.insert(out.end(), added_targets_.begin() + static_cast<std::ptrdiff_t>(added_start_.at(node)),
             added_targets_.begin() + static_cast<std::ptrdiff_t>(added_start_.at(node + 1)));
}

FeedbackGraph RefinedGraph::graph() const {
  if (!base_) throw std::logic_error("RefinedGraph: not refined yet");
  FeedbackGraph g = *base_;
  for (std::size_t i = 0; i < added_from_.size(); ++i)
    if (added_from_[i] != npos) g.add_edge(added_from_[i], i);
  return g;
}

RefinedGraph refine_graph(const FeedbackGraph& base, const DivergenceMatrix& delta,
                          const std::vector<std::size_t>& refinement_set,
                          const RefinementOptions& options) {
  RefinedGraph out;
  out.refine(base, delta, refinement_set, options);
  return out;
}

}  // namespace omkl::detail
