// StepPool (core/step_pool.h): every item runs exactly once per batch, batches follow one
// another without leaking work, exceptions reach the caller, and the graph-aided family gives
// the same numbers whatever the host thread count.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/test_helpers.h"
#include "core/step_pool.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

TEST(StepPoolTest, EveryItemRunsOncePerBatch) {
  for (std::size_t threads : {1u, 2u, 4u}) {
    StepPool pool(threads);
    EXPECT_EQ(pool.size(), std::max<std::size_t>(threads, 1));
    std::vector<int> hits(37, 0);
    for (int batch = 0; batch < 2000; ++batch) {
      const std::size_t n = 1 + static_cast<std::size_t>(batch) % 37;
      pool.run(n, [&](std::size_t i) { ++hits[i]; });  // distinct i: no two threads share a cell
    }
    std::vector<int> expected(37, 0);
    for (int batch = 0; batch < 2000; ++batch)
      for (std::size_t i = 0; i < 1 + static_cast<std::size_t>(batch) % 37; ++i) ++expected[i];
    EXPECT_EQ(hits, expected) << threads << " threads";
  }
}

TEST(StepPoolTest, WorkersThatFellAsleepWakeUp) {
  StepPool pool(3);
  std::atomic<int> count{0};
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin window
    pool.run(64, [&](std::size_t) { count.fetch_add(1); });
  }
  EXPECT_EQ(count.load(), 3 * 64);
}

TEST(StepPoolTest, ExceptionsReachTheCallerAndThePoolStaysUsable) {
  StepPool pool(3);
  EXPECT_THROW(pool.run(10, [](std::size_t i) {
    if (i == 7) throw std::runtime_error("item 7");
  }),
               std::runtime_error);
  std::atomic<int> count{0};
  pool.run(10, [&](std::size_t) { count.fetch_add(1); });
  EXPECT_EQ(count.load(), 10);
}

TEST(StepPoolTest, GraphAidedLockstepDoesNotDependOnHostThreads) {
  const Dataset data = random_stream(150, 3, Task::Regression, 5);
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      auto one = context_for(data, profile, {0, 1, 2, 3, 4, 5, 6});
      auto three = one;
      three.host_threads = 3;
      const std::vector<std::pair<std::string, std::string>> params = {{"D", "6"}, {"M", "4"}, {"switch_step", "60"}};
      auto a = make(name, one, params);
      auto b = make(name, three, params);
      ASSERT_EQ(run_steps(*a, data), run_steps(*b, data)) << name << " " << to_string(profile);
    }
  }
}

// step_block() overlaps a replicate's learning at t with its selection at t + 1 on the pool:
// blocks of any length, with any thread count, must give the numbers of step() by step(), and a
// learner restored between blocks must continue exactly.
TEST(StepPoolTest, GraphAidedBlocksEqualSingleSteps) {
  const Dataset data = random_stream(150, 3, Task::Regression, 8);
  const std::size_t T = data.n_samples, d = data.n_features;
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      auto ctx = context_for(data, profile, {0, 1, 2, 3, 4});
      const std::vector<std::pair<std::string, std::string>> params = {{"D", "6"}, {"M", "4"}, {"switch_step", "60"}};
      auto single = make(name, ctx, params);
      const std::vector<double> want = run_steps(*single, data);
      const std::size_t R = single->n_replicates();
      for (std::size_t threads : {1, 3}) {
        auto blocked_ctx = ctx;
        blocked_ctx.host_threads = threads;
        auto blocked = make(name, blocked_ctx, params);
        std::vector<double> got(T * R);
        const std::size_t cuts[] = {0, 1, 2, 61, 62, 100, T};
        for (std::size_t c = 0; c + 1 < std::size(cuts); ++c) {
          const std::size_t from = cuts[c], to = cuts[c + 1];
          blocked->step_block(data.row(from), data.y.data() + from, to - from, d, got.data() + from * R);
          if (to == 100) {  // continue from a checkpoint
            StateWriter out;
            blocked->save_state(out);
            blocked = make(name, blocked_ctx, params);
            StateReader in(out.bytes());
            blocked->load_state(in);
          }
        }
        ASSERT_EQ(got, want) << name << " " << to_string(profile) << " threads " << threads;
      }
    }
  }
}
