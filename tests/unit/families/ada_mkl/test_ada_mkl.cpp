#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "common/naive_kogd.h"
#include "common/test_helpers.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

// AdaMKL in the paper profile written directly (spec/raker.md §5.7 with §4.1–4.4): levels
// j = 0 … ⌊log₂T⌋ with intervals starting at multiples of 2^j (from 2^j on), each a fresh OMKL
// learner (NaiveOmkl: the five exact kernels, step η_j = min(0.5, η_0/√2^j), λ = 0.01, weights
// exp(−0.5(C + λ‖f‖²))) that stores only its interval's samples; ŷ = softmax(h) over the active
// levels, h_j = ln η_j at a start and h_j += η_j (C(ŷ) − C(f_j)).
std::vector<double> naive_ada_mkl(const Dataset& data, double eta0) {
  const std::vector<std::string> kernels = {"gauss:0.1", "gauss:1", "gauss:10", "linear", "poly:2"};
  const std::size_t T = data.n_samples;
  std::size_t L = 0;
  while ((std::size_t{1} << L) <= T) ++L;
  std::vector<double> eta(L), h(L, 0.0), F(L, 0.0), out;
  for (std::size_t j = 0; j < L; ++j) eta[j] = std::min(0.5, eta0 / std::sqrt(std::pow(2.0, double(j))));
  std::vector<std::optional<omkl::test::NaiveOmkl>> instance(L);
  for (std::size_t i = 0; i < T; ++i) {
    const std::size_t t = i + 1;
    const double y = data.y[i];
    double top = -HUGE_VAL;
    for (std::size_t j = 0; j < L; ++j) {
      const std::size_t length = std::size_t{1} << j;
      if (t < length) continue;  // not active yet
      if (t % length == 0) {     // a new interval: a fresh instance
        instance[j].emplace(kernels, false, eta[j], 0.01, 0, data.n_features);
        h[j] = std::log(eta[j]);
      }
      F[j] = instance[j]->step(data.row(i), y);
      top = std::max(top, h[j]);
    }
    double num = 0.0, den = 0.0;
    for (std::size_t j = 0; j < L && t >= (std::size_t{1} << j); ++j) {
      num += std::exp(h[j] - top) * F[j];
      den += std::exp(h[j] - top);
    }
    const double prediction = num / den;
    out.push_back(prediction);
    for (std::size_t j = 0; j < L && t >= (std::size_t{1} << j); ++j)
      h[j] += eta[j] * ((prediction - y) * (prediction - y) - (F[j] - y) * (F[j] - y));
  }
  return out;
}

}  // namespace

TEST(AdaMklTest, OnePersistentLevelIsOmkl) {
  const Dataset data = random_stream(200, 3, Task::Regression);
  auto ada = make("adamkl", context_for(data), {{"levels", "1"}, {"restart_state", "persistent"}, {"eta0", "0.2"}});
  auto omkl = make("omkl", context_for(data), {{"eta", "0.2"}});
  const auto a = run_steps(*ada, data), o = run_steps(*omkl, data);
  for (std::size_t t = 0; t < a.size(); ++t) ASSERT_NEAR(a[t], o[t], 1e-14) << t;
}

TEST(AdaMklTest, MatchesADirectImplementation) {
  // The paper profile at its defaults (the 5-kernel dictionary, η_0 = 10, the cap 0.5, λ, the
  // weight steps) against naive_ada_mkl() over T = 200 (levels 0 … 7; with η_0 = 10 every η_j is
  // the cap), and with η_0 = 2, where η_j = 2/√2^j falls below the cap from level 5 on.
  const Dataset data = random_stream(200, 3, Task::Regression);
  for (const double eta0 : {10.0, 2.0}) {
    auto algo = eta0 == 10.0 ? make("adamkl", context_for(data)) : make("adamkl", context_for(data), {{"eta0", "2"}});
    const auto got = run_steps(*algo, data);
    const auto want = naive_ada_mkl(data, eta0);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t t = 0; t < got.size(); ++t)
      ASSERT_NEAR(got[t], want[t], 1e-10 * std::max(1.0, std::fabs(want[t]))) << "η_0 = " << eta0 << ", t = " << t + 1;
  }
}

TEST(AdaMklTest, FreshInstancesPredictZeroAtPowersOfTwoAndReplicatesAgree) {
  const Dataset data = random_stream(300, 3, Task::Regression);
  auto ada = make("adamkl", context_for(data, Profile::Paper, {0, 1}));
  EXPECT_FALSE(ada->randomized());
  const auto pred = run_steps(*ada, data);
  for (std::size_t t = 1; t <= data.n_samples; t *= 2) EXPECT_EQ(pred[2 * (t - 1)], 0.0) << t;
  EXPECT_NE(pred[2 * 2], 0.0);
  for (std::size_t t = 0; t < data.n_samples; ++t) ASSERT_EQ(pred[2 * t], pred[2 * t + 1]);
}

TEST(AdaMklTest, PredictMatchesTheNextStepAndRestoreContinuesExactly) {
  for (Profile profile : {Profile::Paper, Profile::Reference}) {
    const Dataset data = random_stream(150, 3, Task::Regression);
    auto full = make("adamkl", context_for(data, profile));
    std::vector<double> want(data.n_samples);
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      double ahead = 0;
      full->predict(data.row(t), &ahead);
      full->step(data.row(t), data.y[t], &want[t]);
      ASSERT_EQ(ahead, want[t]) << t;
    }
    auto first = make("adamkl", context_for(data, profile));
    run_steps(*first, data, 0, 77);
    StateWriter out;
    first->save_state(out);
    auto second = make("adamkl", context_for(data, profile));
    StateReader in(out.bytes());
    second->load_state(in);
    const auto rest = run_steps(*second, data, 77);
    for (std::size_t t = 77; t < data.n_samples; ++t) ASSERT_EQ(rest[t - 77], want[t]) << t;
  }
}

TEST(AdaMklTest, TheStepBelongsToTheIntervals) {
  const Dataset data = random_stream(10, 2, Task::Regression);
  EXPECT_THROW(make("adamkl", context_for(data), {{"eta", "0.1"}}), ConfigError);
}

// The levels' kernel rows evaluated once per step and lent to every level give the numbers of
// per-level evaluation, bit for bit: both profiles (fresh instances and persistent levels),
// regression and classification, predict() between steps, and across a checkpoint (the shared
// rows are rebuilt from the restored levels).
TEST(AdaMklTest, SharedKernelRowsGiveTheNumbersOfPerLevelEvaluation) {
  for (Task task : {Task::Regression, Task::Classification}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      const Dataset data = random_stream(260, 4, task, 17);
      const auto ctx = context_for(data, profile);
      auto own = make("adamkl", ctx, {{"share_kernel_rows", "false"}});
      std::vector<double> want(data.n_samples), ahead_want(data.n_samples);
      for (std::size_t t = 0; t < data.n_samples; ++t) {
        own->predict(data.row(t), &ahead_want[t]);
        own->step(data.row(t), data.y[t], &want[t]);
      }
      auto shared = make("adamkl", ctx);
      std::vector<double> got(data.n_samples);
      for (std::size_t t = 0; t < data.n_samples; ++t) {
        double ahead = 0.0;
        shared->predict(data.row(t), &ahead);
        ASSERT_EQ(ahead, ahead_want[t]) << to_string(profile) << " predict at " << t;
        shared->step(data.row(t), data.y[t], &got[t]);
        ASSERT_EQ(got[t], want[t]) << to_string(profile) << " step " << t;
        if (t == 100) {
          StateWriter out;
          shared->save_state(out);
          shared = make("adamkl", ctx);
          StateReader in(out.bytes());
          shared->load_state(in);
        }
      }
    }
  }
  // A Laplacian dictionary keeps per-level evaluation (its row sums depend on the layout).
  const Dataset data = random_stream(80, 3, Task::Regression, 2);
  auto lap = make("adamkl", context_for(data), {{"dict", "lap:1+gauss:1"}});
  EXPECT_EQ(run_steps(*lap, data).size(), data.n_samples);
}
