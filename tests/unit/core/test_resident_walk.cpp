// The resident walk's host driver (core/resident_walk.h), which is also the reference for the
// GPU driver (kernels/resident_walk.cuh): every plan() starts from default pairs, so what a
// program leaves unset cannot come from an earlier step or replicate (on the GPU, from whatever
// the shared memory held), and the update is shrink·θ − rate·C'(f, y)·z clipped to the box.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "core/host_team.h"
#include "core/resident_team.h"
#include "core/resident_walk.h"
#include "core/step_path.h"
#include "features/rf_backend.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::ScopedEnv;

namespace {

// One slot and kernel. Step 1 plans a pair with a small box; later steps set only slot,
// kernel, rate and shrink, so their box must be the default (no clipping).
struct BoxOnceProgram {
  double rate = 0.5, first_box = 0.01;
  std::vector<double>* boxes_seen = nullptr;

  std::size_t plan(std::size_t, std::int64_t t, ResidentPair* pairs) const {
    boxes_seen->push_back(pairs[0].box);
    boxes_seen->push_back(pairs[1].box);
    pairs[0].slot = 0;
    pairs[0].kernel = 0;
    pairs[0].rate = rate;
    pairs[0].shrink = 1.0;
    if (t == 1) {
      pairs[0].box = first_box;
      pairs[1].box = first_box;  // an unused entry too: it must not survive either
    }
    return 1;
  }
  double learn(std::size_t, std::int64_t, double, const double* f, const double*, ResidentPair*) const {
    return f[0];
  }
};

}  // namespace

TEST(ResidentWalkTest, EveryPlanStartsFromDefaultPairs) {
  const std::size_t D = 3, d = 2, T = 3;
  const std::vector<double> V = {0.3, -0.7, 1.1, 0.2, -0.4, 0.9};  // D × d
  const std::vector<double> x = {0.5, -1.0, 1.5, 0.25, -0.75, 2.0};
  const std::vector<double> y = {1.0, -2.0, 3.0};
  std::vector<double> theta(2 * D, 0.0), predictions(T);
  std::vector<double> boxes;
  BoxOnceProgram program;
  program.boxes_seen = &boxes;
  ResidentWalkArgs<double> shape;
  shape.n_steps = T;
  shape.n_replicates = shape.n_slots = shape.n_kernels = 1;
  shape.n_rff = D;
  shape.n_features = d;
  shape.max_pairs = 2;
  shape.feature_scale = 1.0 / std::sqrt(static_cast<double>(D));
  shape.loss = LossKind::Squared;
  walk_on_host(program, shape, V.data(), theta.data(), x.data(), y.data(), predictions.data());
  EXPECT_EQ(boxes, std::vector<double>(2 * T, 0.0)) << "plan() saw a box left by an earlier step";

  // The same three updates by hand: step 1 clipped to ±0.01, steps 2 and 3 not clipped.
  std::vector<double> want(2 * D, 0.0);
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<double> z(2 * D);
    double f = 0.0;
    for (std::size_t j = 0; j < D; ++j) {
      const double a = V[j * d] * x[t * d] + V[j * d + 1] * x[t * d + 1];
      z[j] = shape.feature_scale * std::sin(a);
      z[D + j] = shape.feature_scale * std::cos(a);
      f += want[j] * z[j] + want[D + j] * z[D + j];
    }
    EXPECT_NEAR(predictions[t], f, 1e-14) << "step " << t + 1;
    const double gain = program.rate * 2.0 * (f - y[t]);
    for (std::size_t j = 0; j < 2 * D; ++j) {
      want[j] -= gain * z[j];
      if (t == 0) want[j] = std::fmax(-program.first_box, std::fmin(program.first_box, want[j]));
    }
  }
  for (std::size_t j = 0; j < 2 * D; ++j) EXPECT_NEAR(theta[j], want[j], 1e-13) << j;
  bool beyond_first_box = false;
  for (double v : theta) beyond_first_box |= std::fabs(v) > program.first_box;
  EXPECT_TRUE(beyond_first_box) << "the later steps must not be clipped";
}

// A host team (core/host_team.h) behaves as a GPU block's threads do for a team program: every
// lane runs the job; sync() orders one lane's writes before another's reads; stage() hands the
// leader what every lane wrote; share() hands every lane the leader's value; and the runner's
// lanes do it again and again (a walk runs a job per step).
TEST(HostTeamTest, LanesShareTheLeadersValuesAndSeeEachOthersWrites) {
  for (unsigned lanes : {1u, 3u, 7u}) {
    HostTeamRunner runner(lanes);
    std::vector<double> v(10, 0.0);
    std::vector<double> seen(lanes, 0.0);
    std::vector<unsigned> sizes(lanes, 0);
    // Shares in a row (the slots alternate: a lane that reads late must still read its own).
    struct Pair {
      double value;
      std::uint32_t tag;
    };
    std::vector<std::vector<Pair>> in_a_row(lanes, std::vector<Pair>(5));
    for (int round = 1; round <= 20; ++round) {
      auto job = [&](HostTeam& team) {
        sizes[team.lane()] = team.size();
        for (std::size_t i = team.lane(); i < v.size(); i += team.size()) v[i] = round * static_cast<double>(i + 1);
        const double* staged = team.stage(v.data(), v.size());
        double total = 0.0;
        if (team.leader())
          for (std::size_t i = 0; i < v.size(); ++i) total += staged[i];
        seen[team.lane()] = team.share(total);
        for (std::uint32_t k = 0; k < 5; ++k)
          in_a_row[team.lane()][k] = team.share(team.leader() ? Pair{round + 0.5 * k, k} : Pair{-1.0, 99u});
      };
      runner.run(job);
      for (unsigned lane = 0; lane < lanes; ++lane) {
        ASSERT_EQ(seen[lane], 55.0 * round) << lanes << " lanes, lane " << lane << ", round " << round;
        ASSERT_EQ(sizes[lane], lanes);
        for (std::uint32_t k = 0; k < 5; ++k) {
          ASSERT_EQ(in_a_row[lane][k].value, round + 0.5 * k) << lanes << " lanes, lane " << lane << ", share " << k;
          ASSERT_EQ(in_a_row[lane][k].tag, k);
        }
      }
    }
  }
  SerialTeam one;
  EXPECT_TRUE(one.leader());
  EXPECT_EQ(one.size(), 1u);
  EXPECT_EQ(one.share(2.5), 2.5);
}

TEST(HostTeamTest, TheLanesSwitchTakesOneToOneHundredTwentyEight) {
  const char* kName = "OMKL_HOST_WALK_LANES";
  {
    ScopedEnv unset(kName, "");
    EXPECT_EQ(host_walk_lanes(), 1u);
  }
  {
    ScopedEnv six(kName, "6");
    EXPECT_EQ(host_walk_lanes(), 6u);
  }
  for (const char* bad : {"0", "129", "4x", "-2", "many"}) {
    ScopedEnv set(kName, bad);
    try {
      (void)host_walk_lanes();
      ADD_FAILURE() << bad << " was taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("not '") + bad + "'"), std::string::npos) << e.what();
    }
  }
}

// The launch switches of the GPU's resident walks (features/rf_backend.h, WalkLaunch):
// defaults (pairs and threads left to each program, the plan by the block), each choice, and a
// value that is not a choice as a ConfigError naming the switch.
TEST(WalkSwitchesTest, TheLaunchTakesEachChoiceAndRefusesOthers) {
  {
    ScopedEnv pairs("OMKL_CUDA_WALK_PAIRS", nullptr), plan("OMKL_CUDA_WALK_PLAN", nullptr),
        threads("OMKL_CUDA_WALK_THREADS", nullptr);
    const WalkLaunch launch = read_walk_switches();
    EXPECT_FALSE(launch.block_per_pair.has_value());
    EXPECT_TRUE(launch.team_steps);
    EXPECT_FALSE(launch.walk_threads.has_value());
  }
  {
    ScopedEnv pairs("OMKL_CUDA_WALK_PAIRS", "warp"), plan("OMKL_CUDA_WALK_PLAN", "thread"),
        threads("OMKL_CUDA_WALK_THREADS", "128");
    const WalkLaunch launch = read_walk_switches();
    EXPECT_EQ(launch.block_per_pair, std::optional<bool>(false));
    EXPECT_FALSE(launch.team_steps);
    EXPECT_EQ(launch.walk_threads, std::optional<unsigned>(128u));
  }
  {
    ScopedEnv pairs("OMKL_CUDA_WALK_PAIRS", "auto"), plan("OMKL_CUDA_WALK_PLAN", "block"),
        threads("OMKL_CUDA_WALK_THREADS", "512");
    const WalkLaunch launch = read_walk_switches();
    EXPECT_EQ(launch.block_per_pair, std::optional<bool>(true));
    EXPECT_TRUE(launch.team_steps);
    EXPECT_EQ(launch.walk_threads, std::optional<unsigned>(512u));
  }
  {
    ScopedEnv threads("OMKL_CUDA_WALK_THREADS", "auto");
    const WalkLaunch launch = read_walk_switches();
    EXPECT_EQ(launch.walk_threads, std::optional<unsigned>(0u));  // chosen at launch
  }
  for (const auto& [name, bad] : {std::pair<const char*, const char*>{"OMKL_CUDA_WALK_PAIRS", "block"},
                                  {"OMKL_CUDA_WALK_PLAN", "warp"},
                                  {"OMKL_CUDA_WALK_THREADS", "1024"}}) {
    ScopedEnv set(name, bad);
    try {
      read_walk_switches();
      ADD_FAILURE() << name << "=" << bad << " was taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  }
}

// step_path: host and resident as asked (resident refused, with the reason, where the
// configuration cannot walk); auto resident only on a GPU where the configuration can.
TEST(StepPathTest, AutoIsResidentOnlyOnAGpuThatCanWalk) {
  const auto decide = [](const std::string& path, bool on_gpu, const std::string& why_not) {
    ParamReader params("algo", {{"step_path", path}});
    const bool resident = read_step_path(params, "steps", on_gpu, why_not);
    params.finish();
    return resident;
  };
  for (bool on_gpu : {false, true}) {
    EXPECT_FALSE(decide("host", on_gpu, ""));
    EXPECT_FALSE(decide("host", on_gpu, "too wide"));
    EXPECT_TRUE(decide("resident", on_gpu, ""));
    EXPECT_FALSE(decide("auto", on_gpu, "too wide"));
  }
  EXPECT_FALSE(decide("auto", false, ""));
  EXPECT_TRUE(decide("auto", true, ""));
  try {
    decide("resident", false, "too wide");
    ADD_FAILURE() << "resident with a reason must be refused";
  } catch (const ConfigError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("step_path"), std::string::npos) << message;
    EXPECT_NE(message.find("too wide"), std::string::npos) << message;
  }
  ParamReader unset("algo", {});
  EXPECT_EQ(read_step_path(unset, "steps", true, ""), std::string(kDefaultStepPath) != "host");
  EXPECT_THROW(decide("gpu", true, ""), ConfigError);
}
