/// @file dominating_set.cpp
/// @brief Greedy dominating set (spec/graph-aided.md §2.4).
#include "families/graph_aided/dominating_set.h"

#include <stdexcept>

namespace omkl::detail {
namespace {

// Number of still-uncovered vertices that picking v would cover: N_out(v) ∪ {v}.
std::size_t gain(const FeedbackGraph& g, std::size_t v, const std::vector<bool>& covered) {
  std::size_t c = covered[v] ? 0 : 1;
  for (std::size_t k : g.out_neighbours(v))
    if (k != v && !covered[k]) ++c;
  return c;
}

}  // namespace

std::vector<std::size_t> dominating_set(const FeedbackGraph& graph, DominatingCandidates candidates) {
  const std::size_t n = graph.size();
  std::vector<bool> covered(n, false);
  std::size_t remaining = n;
  std::vector<std::size_t> set;
  while (remaining > 0) {
    // Scan candidates in ascending order and keep the first maximum (§2.4: "first maximum in
    // the order of U"; U stays ascending as vertices are removed). O(N·M) per pick.
    std::size_t best = n, best_gain = 0;
    for (std::size_t v = 0; v < n; ++v) {
      if (candidates == DominatingCandidates::Uncovered && covered[v]) continue;
      const std::size_t g = gain(graph, v, covered);
      if (g > best_gain) {
        best = v;
        best_gain = g;
      }
    }
    // An uncovered vertex always covers at least itself, so a pick exists while remaining > 0.
    set.push_back(best);
    if (!covered[best]) {
      covered[best] = true;
      --remaining;
    }
    for (std::size_t k : graph.out_neighbours(best)) {
      if (!covered[k]) {
        covered[k] = true;
        --remaining;
      }
    }
  }
  return set;
}

bool is_dominating(const FeedbackGraph& graph, const std::vector<std::size_t>& set) {
  const std::size_t n = graph.size();
  std::vector<bool> covered(n, false);
  for (std::size_t d : set) {
    if (d >= n) throw std::out_of_range("is_dominating: vertex out of range");
    covered[d] = true;
    for (std::size_t k : graph.out_neighbours(d)) covered[k] = true;
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!covered[v]) return false;
  return true;
}

}  // namespace omkl::detail
