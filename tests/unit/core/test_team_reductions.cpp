// The teams' tree order (core/team_reductions.h): hand-computed sums whose rounding shows the
// order, the draw's rule against sample_index(), entries without mass never drawn, and every
// team (one thread, host lanes in lockstep) giving the same bits. The GPU warp's version is
// checked against these on a device (CudaTest, the graph walk with OMKL_WALK_SUMS=tree).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/host_team.h"
#include "core/resident_team.h"
#include "core/team_reductions.h"
#include "random/sampling.h"

using namespace omkl::detail;

namespace {

double sum_of(const std::vector<double>& v) {
  return tree_order_sum(v.size(), [&](std::size_t i) { return v[i]; });
}
double max_of(const std::vector<double>& v) {
  return tree_order_max(v.size(), [&](std::size_t i) { return v[i]; });
}

}  // namespace

TEST(TeamReductionsTest, TheSumsOrderIsLanesFirstThenTheButterfly) {
  // 2^53 + 1 rounds back to 2^53 (a tie, to even). In index order the two ones are lost one at a
  // time; in the tree order entries 1 and 33 meet first in lane 1 (1 + 1 = 2), and the
  // butterfly's last step adds that 2 to lane 0's 2^53 exactly.
  const double big = 9007199254740992.0;  // 2^53
  std::vector<double> v(34, 0.0);
  v[0] = big;
  v[1] = 1.0;
  v[33] = 1.0;
  double in_order = 0.0;
  for (double x : v) in_order += x;
  EXPECT_EQ(in_order, big);
  EXPECT_EQ(sum_of(v), big + 2.0);
  // Lanes 0 and 16 meet at the butterfly's first step: 2^53 + 1 is lost there, as in order.
  std::vector<double> w(17, 0.0);
  w[0] = big;
  w[16] = 1.0;
  EXPECT_EQ(sum_of(w), big);
  // Exact sums are exact in any order; no terms, 0.
  std::vector<double> counts(100);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<double>(i + 1);
  EXPECT_EQ(sum_of(counts), 5050.0);
  EXPECT_EQ(sum_of({}), 0.0);
  // Rounding's size: a random sum within a few ulps of the long-double one.
  std::mt19937_64 gen(7);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> random(77);
  long double exact = 0.0L;
  for (double& x : random) {
    x = uniform(gen);
    exact += x;
  }
  EXPECT_NEAR(sum_of(random), static_cast<double>(exact), 1e-14);
}

TEST(TeamReductionsTest, TheMaximumIsTheLargestTermAndPassesOverNaN) {
  std::vector<double> v = {-3.0, 2.5, NAN, 7.0, -1.0};
  for (std::size_t i = 0; i < 40; ++i) v.push_back(std::sin(static_cast<double>(i)));
  EXPECT_EQ(max_of(v), 7.0);
  EXPECT_EQ(max_of({NAN, NAN}), -INFINITY);
  EXPECT_EQ(max_of({}), -INFINITY);
  EXPECT_EQ(max_of({-INFINITY, -5.0}), -5.0);
}

TEST(TeamReductionsTest, TheChunksScanIsTheirPrefixSums) {
  // 70 entries: chunks of 3 (⌈70/32⌉), the last lanes' chunks empty.
  std::vector<double> p(70);
  for (std::size_t k = 0; k < p.size(); ++k) p[k] = static_cast<double>(k % 5 + 1);  // exact sums
  double offsets[kTreeWidth];
  tree_chunk_offsets(p.data(), p.size(), offsets);
  ASSERT_EQ(tree_chunk(p.size()), 3u);
  for (std::size_t j = 0; j < kTreeWidth; ++j) {
    double before = 0.0;
    for (std::size_t k = 0; k < std::min<std::size_t>(3 * j, p.size()); ++k) before += p[k];
    EXPECT_EQ(offsets[j], before) << "chunk " << j;
  }
}

TEST(TeamReductionsTest, TheDrawIsSampleIndexsRuleOverTheTreePrefixes) {
  // By hand, n = 3 (one entry per lane).
  const double p3[] = {0.5, 0.25, 0.25};
  EXPECT_EQ(tree_order_draw(p3, 3, 0.1, false), 0u);
  EXPECT_EQ(tree_order_draw(p3, 3, 0.6, false), 1u);
  EXPECT_EQ(tree_order_draw(p3, 3, 0.9, false), 2u);
  EXPECT_EQ(tree_order_draw(p3, 3, 0.5, false), 1u);  // r < c_k: a prefix itself goes up
  EXPECT_EQ(tree_order_draw(p3, 3, 0.0, true), 0u);   // shifted: 0 for r ≤ 0
  EXPECT_EQ(tree_order_draw(p3, 3, 0.5, true), 1u);   // 1 + (r ≤ c_0)
  EXPECT_EQ(tree_order_draw(p3, 3, 0.7, true), 2u);   // 1 + 1, the cap n − 1
  EXPECT_EQ(tree_order_draw(p3, 3, 0.99, true), 2u);  // 1 + 2 capped
  // r at or above the total: the last entry with mass (sample_index's fallback).
  const double tail[] = {0.5, 0.5, 0.0};
  EXPECT_EQ(tree_order_draw(tail, 3, 1.0, false), 1u);
  EXPECT_EQ(tree_order_draw(tail, 3, 1.0, true), 2u);
  // Against sample_index() on random PMFs of 1 to 130 entries: the prefixes differ in their last
  // bits only, so a uniform r draws the same index unless it falls within rounding of a prefix.
  std::mt19937_64 gen(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::size_t compared = 0, differ = 0;
  for (std::size_t n = 1; n <= 130; ++n) {
    std::vector<double> p(n);
    double total = 0.0;
    for (double& x : p) total += (x = uniform(gen));
    for (double& x : p) x /= total;
    for (int draw = 0; draw < 60; ++draw) {
      const double r = uniform(gen);
      for (bool shifted : {false, true}) {
        ++compared;
        differ += tree_order_draw(p.data(), n, r, shifted) != sample_index(p.data(), n, r, shifted);
      }
    }
  }
  EXPECT_EQ(differ, 0u) << "of " << compared;
}

TEST(TeamReductionsTest, AnEntryWithoutMassIsNeverDrawn) {
  // 64 entries (chunks of 2); mass only on the even ones below 40 that are not multiples of 10,
  // and on 39: so chunks 0, 5, 10, 15 and 20 on begin without mass. A
  // chunk's first prefix comes from the scan, which may differ from the chunk before's last
  // prefix by an ulp: whatever r, only entries with mass are drawn (and, past the total, the
  // last one: 39).
  std::vector<double> p(64, 0.0);
  double total = 0.0;
  for (std::size_t k = 0; k < 40; ++k)
    if ((k % 2 == 0 && k % 10 != 0) || k == 39) total += (p[k] = 0.1 + 0.013 * static_cast<double>(k % 7));
  for (double& x : p) x /= total;
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int draw = 0; draw < 4000; ++draw) {
    const double r = draw < 3000 ? uniform(gen) : 1.0 - std::ldexp(1.0, -(draw - 3000) % 60);
    const std::size_t k = tree_order_draw(p.data(), p.size(), r, false);
    ASSERT_GT(p[k], 0.0) << "r = " << r << " drew " << k;
  }
  EXPECT_EQ(tree_order_draw(p.data(), p.size(), 1.0, false), 39u);
  const std::vector<double> none(5, 0.0);
  EXPECT_EQ(tree_order_draw(none.data(), none.size(), 0.5, false), 0u);
}

TEST(TeamReductionsTest, EveryTeamGivesTheSameBits) {
  std::mt19937_64 gen(5);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (std::size_t n : {1u, 31u, 33u, 76u, 128u}) {
    std::vector<double> v(n);
    for (double& x : v) x = uniform(gen) * std::exp(20.0 * uniform(gen));
    const auto value = [&](std::size_t i) { return v[i]; };
    SerialTeam one;
    const double sum = one.tree_sum(n, value), max = one.tree_max(n, value);
    const std::size_t drawn = one.tree_draw(v.data(), n, 0.37 * sum, true);
    EXPECT_EQ(sum, sum_of(v));
    for (unsigned lanes : {2u, 5u}) {
      HostTeamRunner runner(lanes);
      std::vector<double> sums(lanes), maxima(lanes);
      std::vector<std::size_t> draws(lanes);
      auto job = [&](HostTeam& team) {
        sums[team.lane()] = team.tree_sum(n, value);
        maxima[team.lane()] = team.tree_max(n, value);
        // Only the leader's r counts.
        draws[team.lane()] = team.tree_draw(v.data(), n, team.leader() ? 0.37 * sum : -1.0, true);
      };
      runner.run(job);
      for (unsigned lane = 0; lane < lanes; ++lane) {
        EXPECT_EQ(sums[lane], sum) << n << " entries, lane " << lane << " of " << lanes;
        EXPECT_EQ(maxima[lane], max);
        EXPECT_EQ(draws[lane], drawn);
      }
    }
  }
}
