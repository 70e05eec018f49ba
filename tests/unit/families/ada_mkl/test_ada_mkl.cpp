#include <gtest/gtest.h>

#include "common/test_helpers.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

TEST(AdaMklTest, OnePersistentLevelIsOmkl) {
  const Dataset data = random_stream(200, 3, Task::Regression);
  auto ada = make("adamkl", context_for(data), {{"levels", "1"}, {"restart_state", "persistent"}, {"eta0", "0.2"}});
  auto omkl = make("omkl", context_for(data), {{"eta", "0.2"}});
  const auto a = run_steps(*ada, data), o = run_steps(*omkl, data);
  for (std::size_t t = 0; t < a.size(); ++t) ASSERT_NEAR(a[t], o[t], 1e-14) << t;
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
