// The time-matched mode's search ([OKS] §6.4): the budget whose time per round is closest to
// the reference's, for a time that grows with the budget. Timing itself is a benchmark's
// business; here the time is a function of the budget, given exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <set>

#include "omkl/error.h"
#include "study/time_match.h"

namespace {

using omkl::detail::match_budget;

TEST(TimeMatchTest, FindsTheBudgetWhoseTimeIsClosestToTheTarget) {
  // An affine time, like an RF learner's O(D d) round: 2 µs plus 10 ns per unit of budget.
  const auto affine = [](std::size_t value) { return 2e-6 + 1e-8 * static_cast<double>(value); };
  for (const std::size_t matched : {1u, 2u, 3u, 40u, 220u, 380u, 400u, 1000u, 99999u}) {
    std::set<std::size_t> asked;
    const auto timed = [&](std::size_t value) {
      asked.insert(value);
      return affine(value);
    };
    const auto found = match_budget(timed, affine(matched), 1000000);
    EXPECT_TRUE(found.reached) << matched;
    // To 2 % of the value (the bisection's resolution), and the time reported is its time.
    EXPECT_LE(std::abs(static_cast<double>(found.value) - static_cast<double>(matched)),
              std::max(1.0, 0.02 * static_cast<double>(matched)))
        << matched;
    EXPECT_EQ(found.seconds_per_round, affine(found.value));
    // Doubling then bisection: a few dozen timings at most, not a scan.
    EXPECT_LT(asked.size(), 45u) << matched;
  }
}

TEST(TimeMatchTest, TargetsBelowTheSmallestOrAboveTheLargestBudget) {
  const auto affine = [](std::size_t value) { return 1e-6 * static_cast<double>(value); };
  // Slower than the reference even at budget 1: budget 1.
  const auto smallest = match_budget(affine, 1e-7, 5000);
  EXPECT_EQ(smallest.value, 1u);
  EXPECT_TRUE(smallest.reached);
  // Faster than the reference at every budget up to the limit: the limit, flagged.
  const auto largest = match_budget(affine, 1.0, 5000);
  EXPECT_EQ(largest.value, 5000u);
  EXPECT_FALSE(largest.reached);
  EXPECT_EQ(largest.seconds_per_round, affine(5000));
}

TEST(TimeMatchTest, AStepInTheTimeEndsBesideTheStep) {
  // A support set that stops growing at 300 rows: the time is flat above it.
  const auto capped = [](std::size_t value) { return 1e-6 * static_cast<double>(std::min<std::size_t>(value, 300)); };
  const auto found = match_budget(capped, capped(300), 100000);
  EXPECT_TRUE(found.reached);
  EXPECT_GE(found.value, 294u);
  EXPECT_LE(found.value, 306u);
}

TEST(TimeMatchTest, NonsenseTargetsAreConfigErrors) {
  const auto affine = [](std::size_t value) { return 1e-6 * static_cast<double>(value); };
  EXPECT_THROW(match_budget(affine, 0.0, 100), omkl::ConfigError);
  EXPECT_THROW(match_budget(affine, NAN, 100), omkl::ConfigError);
  EXPECT_THROW(match_budget(affine, 1e-6, 0), omkl::ConfigError);
}

}  // namespace
