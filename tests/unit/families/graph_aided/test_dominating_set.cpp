#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "random/rng.h"
#include "families/graph_aided/dominating_set.h"
#include "families/graph_aided/feedback_graph.h"
#include "unit/families/graph_aided/graph_test_util.h"

using namespace omkl::detail;
using omkl::test::random_out_degree_graph;

namespace {

std::vector<std::size_t> expected_reference_set(std::size_t n, std::size_t m) {
  // §2.4: D = [0, M, M+1, …, N−1] for M ≥ 2, all vertices for M = 1.
  std::vector<std::size_t> d;
  if (m == 1) {
    d.resize(n);
    std::iota(d.begin(), d.end(), 0);
    return d;
  }
  d.push_back(0);
  for (std::size_t k = m; k < n; ++k) d.push_back(k);
  return d;
}

}  // namespace

TEST(DominatingSetTest, AppendixAReferenceGraphValues) {
  // Appendix A.4 and §2.4: |D| = 76, 72, 67, 62, 57 for M = 1, 5, 10, 15, 20.
  const std::vector<std::pair<std::size_t, std::size_t>> sizes = {{1, 76}, {5, 72}, {10, 67}, {15, 62}, {20, 57}};
  for (const auto& [m, size] : sizes) {
    const FeedbackGraph g = index_order_graph(76, m);
    for (DominatingCandidates c : {DominatingCandidates::Uncovered, DominatingCandidates::All}) {
      const std::vector<std::size_t> d = dominating_set(g, c);
      EXPECT_EQ(d.size(), size) << "M = " << m;
      EXPECT_EQ(d, expected_reference_set(76, m)) << "M = " << m << " (§3 R4: both rules agree here)";
      EXPECT_TRUE(is_dominating(g, d));
    }
  }
}

TEST(DominatingSetTest, EveryNodeIsDominatedOnRandomGraphs) {
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    RandomStream rng(seed, 0, RngPurpose::Misc, 17);
    const std::size_t n = 1 + rng.below(60);
    const std::size_t m = 1 + rng.below(n);
    const FeedbackGraph g = random_out_degree_graph(n, m, rng);
    for (DominatingCandidates c : {DominatingCandidates::Uncovered, DominatingCandidates::All}) {
      const std::vector<std::size_t> d = dominating_set(g, c);
      ASSERT_TRUE(is_dominating(g, d)) << "seed " << seed;
      // Each pick covers something new, so there are no repeats and at most N picks.
      std::vector<bool> seen(n, false);
      for (std::size_t v : d) {
        ASSERT_LT(v, n);
        EXPECT_FALSE(seen[v]);
        seen[v] = true;
      }
      // Greedy covers at least M new vertices with the first pick.
      EXPECT_LE(d.size(), n - m + 1);
    }
  }
}

TEST(DominatingSetTest, GraphsWithoutSelfLoopsAreDominatedToo) {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    RandomStream rng(seed, 1, RngPurpose::Misc, 18);
    const std::size_t n = 1 + rng.below(40);
    FeedbackGraph g(n);
    const std::size_t edges = rng.below(3 * n);
    for (std::size_t e = 0; e < edges; ++e) {
      const std::size_t a = rng.below(n), b = rng.below(n);
      if (a != b) g.add_edge(a, b);
    }
    for (DominatingCandidates c : {DominatingCandidates::Uncovered, DominatingCandidates::All})
      EXPECT_TRUE(is_dominating(g, dominating_set(g, c))) << "seed " << seed;
  }
}

TEST(DominatingSetTest, CandidateRulesDifferWhereChvatalPicksACoveredVertex) {
  // 0 → {0, 1, 2, 3, 4} (gain 5, first pick); 1 → {1, 5, 6}; the rest only self-loops.
  // Afterwards {5, 6} are uncovered: the reference (uncovered candidates, §2.4) can only pick 5
  // and 6 themselves, Chvátal's rule (all candidates) picks the covered vertex 1 (gain 2).
  FeedbackGraph g(7);
  for (std::size_t i = 0; i < 7; ++i) g.add_edge(i, i);
  for (std::size_t k : {1u, 2u, 3u, 4u}) g.add_edge(0, k);
  for (std::size_t k : {5u, 6u}) g.add_edge(1, k);
  EXPECT_EQ(dominating_set(g, DominatingCandidates::Uncovered), (std::vector<std::size_t>{0, 5, 6}));
  EXPECT_EQ(dominating_set(g, DominatingCandidates::All), (std::vector<std::size_t>{0, 1}));
  EXPECT_FALSE(is_dominating(g, {0}));
  EXPECT_FALSE(is_dominating(g, {0, 5}));
  EXPECT_TRUE(is_dominating(g, {0, 1}));
}

TEST(DominatingSetTest, TiesGoToTheSmallestIndex) {
  // Three disjoint pairs with equal gain: picks come in ascending order (§7 A-14).
  FeedbackGraph g(6);
  for (std::size_t i = 0; i < 6; ++i) g.add_edge(i, i);
  g.add_edge(0, 1);
  g.add_edge(2, 3);
  g.add_edge(4, 5);
  EXPECT_EQ(dominating_set(g), (std::vector<std::size_t>{0, 2, 4}));
}
