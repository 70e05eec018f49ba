// The device-resident walk of the graph-aided family (core/resident_walk.h, resident_graph.h),
// run by its host driver: every decision it makes must be the host path's (the same vertex, the same
// S_t, the same q̃, the same random stream position), its numbers the host path's within the
// rounding of the pairs' sums, and its state must go back where the host path keeps it
// (checkpoints, predict()). The CUDA driver runs the same program; its parity test is
// CudaTest.ResidentGraphWalkEqualsTheHostPath (skipped without a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "common/scoped_env.h"
#include "common/test_helpers.h"
#include "core/resident_walk.h"
#include "core/state_io.h"
#include "families/graph_aided/graph_aided.h"
#include "families/graph_aided/resident_graph.h"
#include "random/stream_position.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_blocks;
using omkl::test::run_replicated_blocks;
using omkl::test::shuffled_orders;
using omkl::test::shuffled_streams;
using omkl::test::run_steps;
using omkl::test::ScopedEnv;
using omkl::test::with_param;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

// Relative agreement of two predictions that differ only by the rounding of a few sums.
void expect_tight(double expected, double got, const std::string& where) {
  EXPECT_NEAR(got, expected, 1e-11 * std::max(1.0, std::fabs(expected))) << where;
}

// An OMKL-SFG walk with the switch `name` set to `value` is refused with a ConfigError whose
// message holds `expected` (whether the switch is read when the algorithm is made or when it walks).
void expect_switch_refused(const Dataset& data, const char* name, const char* value, const std::string& expected) {
  omkl::test::ScopedEnv bad(name, value);
  try {
    auto walk = make("omkl-sfg", context_for(data, Profile::Paper), {{"step_path", "resident"}});
    run_blocks(*walk, data, 10);
    ADD_FAILURE() << name << "=" << value << " was taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(StreamPositionTest, WordsAndUniformsAreTheHostStreams) {
  RandomStream host(42, 3, RngPurpose::Selection, 0x6a01);
  StreamPosition view = StreamPosition::of(host);
  // Odd positions too: a uniform that spans two Philox blocks.
  (void)host.next_u32();
  (void)view.next_u32<HostPhilox>();
  for (int i = 0; i < 50; ++i) {
    ASSERT_EQ(view.uniform<HostPhilox>(), host.uniform()) << i;
    ASSERT_EQ(view.position, host.position());
  }
  for (int i = 0; i < 9; ++i) ASSERT_EQ(view.next_u32<HostPhilox>(), host.next_u32());
}

TEST(ResidentPairTest, FeaturesAndUpdateAreTheRandomFeatureStep) {
  // D = 3, d = 2 by hand: a_c = V_c·x, z = scale·[sin a, cos a], f = θᵀz, θ ← sθ − g z.
  const double V[] = {0.5, -1.0, 2.0, 0.25, -0.75, 1.5};
  const double x[] = {0.3, -0.2};
  double theta[] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
  double z[6];
  const double scale = 1.0 / std::sqrt(3.0);
  double dot = 0.0, n2 = 0.0;
  resident_pair_features(V, x, theta, z, 3, 2, scale, 0u, 1u, dot, n2);
  double want_dot = 0.0, want_n2 = 0.0;
  for (int c = 0; c < 3; ++c) {
    const double a = V[2 * c] * x[0] + V[2 * c + 1] * x[1];
    EXPECT_NEAR(z[c], scale * std::sin(a), 1e-16);
    EXPECT_NEAR(z[3 + c], scale * std::cos(a), 1e-16);
    want_dot += theta[c] * z[c] + theta[3 + c] * z[3 + c];
    want_n2 += theta[c] * theta[c] + theta[3 + c] * theta[3 + c];
  }
  EXPECT_NEAR(dot, want_dot, 1e-15);
  EXPECT_NEAR(n2, want_n2, 1e-15);
  // Two lanes split the features between them; their partial sums add up to one lane's.
  double d0, m0, d1, m1, z2[6];
  resident_pair_features(V, x, theta, z2, 3, 2, scale, 0u, 2u, d0, m0);
  resident_pair_features(V, x, theta, z2, 3, 2, scale, 1u, 2u, d1, m1);
  EXPECT_NEAR(d0 + d1, dot, 1e-15);
  EXPECT_NEAR(m0 + m1, n2, 1e-15);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(z2[i], z[i]);
  const double before[] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.6};
  ResidentPair pair;
  pair.rate = 0.25;
  pair.shrink = 0.9;
  const double y = 1.5, gain = resident_gain(pair, LossKind::Squared, dot, y);
  EXPECT_DOUBLE_EQ(gain, 0.25 * 2.0 * (dot - y));
  resident_pair_update(theta, z, 3, pair.shrink, gain, 0.0, 0u, 1u);
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(theta[i], 0.9 * before[i] - gain * z[i]);
  // A box clips every entry to [−box, box] after the step.
  double boxed[6];
  std::copy(before, before + 6, boxed);
  resident_pair_update(boxed, z, 3, 0.9, gain, 0.2, 0u, 1u);
  for (int i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(boxed[i], std::clamp(0.9 * before[i] - gain * z[i], -0.2, 0.2));
  EXPECT_NE(theta[5], boxed[5]);  // the case clips something
}

// Step by step against the host path: the same vertex and S_t every step (so the same draws),
// predictions and weights within rounding, the same stream positions (checked through a
// checkpoint of each: its bytes hold them).
namespace {

const char* const kWalkAlgorithms[] = {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "sfg-mkl", "sfg-mkl-r"};

// A dictionary of 12 kernels, so that the refinement set (rank 10 of 12) moves, and variants
// that reach the other branches: after_switch, OMKL-GF's frozen graph, J = 3 and J = 5 nodes, SFG-R's
// fixed β, all-vertex refinement and prediction over the base neighbourhood, exploration rates
// apart from η.
std::vector<Params> variants(const std::string& name) {
  const Params base = {{"dict", "gauss:0.3+gauss:0.5+gauss:0.7+gauss:1+gauss:1.4+gauss:2+gauss:3+gauss:4+"
                                "lap:0.5+lap:1+lap:2+lap:4"},
                       {"D", "6"}, {"M", "3"}, {"switch_step", "70"}};
  std::vector<Params> out = {base};
  const auto plus = [&](std::vector<std::pair<std::string, std::string>> extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    out.push_back(p);
  };
  // ... and exploration rates set apart from η: xi (SFG / SFG-R), eta_e (GF).
  if (name == "omkl-sfg") plus({{"sfg_after_switch", "keep_sampling"}, {"xi", "0.35"}});
  if (name == "omkl-gf") {
    plus({{"J", "3"}, {"gf_last_regen_step", "40"}, {"eta_e", "0.4"}});
    // J·M = 20 linked entries against N = 12 kernels: the walk's scratch must hold the larger.
    Params wide = base;
    for (auto& [key, value] : wide)
      if (key == "M") value = "4";
    wide.emplace_back("J", "5");
    out.push_back(wide);
  }
  if (name == "omkl-sfg-r") {
    plus({{"sfgr_after_switch", "fixed0"}, {"sfgr_refine_all_vertices", "true"}});
    plus({{"beta", "0.09"}, {"sfgr_predict_with_refined", "false"}, {"sfgr_double_draw", "true"}, {"xi", "0.25"},
          {"xi_schedule", "const"}});
  }
  return out;
}

}  // namespace

// With OMKL_WALK_SUMS=tree the walk's sums and draws take the teams' tree order: the same
// decisions, numbers within rounding of the index order's.
TEST(ResidentGraphTest, WalkMakesTheHostPathsDecisions) {
  const auto data = random_stream(120, 4, Task::Regression);
  for (const char* sums : {"ordered", "tree"}) {
  ScopedEnv sums_order("OMKL_WALK_SUMS", sums);
  for (const char* name : kWalkAlgorithms) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      for (const Params& params : variants(name)) {
        const std::string after = std::to_string(params.size()) + " parameters, " + sums + " sums";
        const auto ctx = context_for(data, profile, {0, 3, 5});
        auto host = make(name, ctx, with_param(params, "step_path", "host"));
        auto walk = make(name, ctx, with_param(params, "step_path", "resident"));
        const std::string what = std::string(name) + (profile == Profile::Reference ? " reference " : " paper ") +
                                 "variant of " + after;
        for (std::size_t t = 0; t < data.n_samples; ++t) {
          double ph[3], pw[3];
          host->step(data.row(t), data.y[t], ph);
          walk->step(data.row(t), data.y[t], pw);
          for (std::size_t r = 0; r < 3; ++r) {
            const GraphAidedTrace& th = *graph_aided_trace(*host, r);
            const GraphAidedTrace& tw = *graph_aided_trace(*walk, r);
            ASSERT_EQ(tw.t, th.t);
            ASSERT_EQ(tw.node, th.node) << what << " t=" << t << " r=" << r;
            ASSERT_EQ(tw.updated, th.updated) << what << " t=" << t;
            ASSERT_EQ(tw.predicted, th.predicted) << what << " t=" << t;
            ASSERT_EQ(tw.exploration_set, th.exploration_set) << what << " t=" << t;
            ASSERT_EQ(tw.q_used.size(), th.q_used.size());
            for (std::size_t i = 0; i < th.q_used.size(); ++i) {
              expect_tight(th.q[i], tw.q[i], what);
              expect_tight(th.q_used[i], tw.q_used[i], what);
            }
            ASSERT_EQ(tw.node_pmf.size(), th.node_pmf.size());
            for (std::size_t i = 0; i < th.node_pmf.size(); ++i) expect_tight(th.node_pmf[i], tw.node_pmf[i], what);
            expect_tight(ph[r], pw[r], what + " t=" + std::to_string(t));
          }
        }
        for (std::size_t r = 0; r < 3; ++r) {
          const auto lh = graph_aided_log_kernel_weights(*host, r), lw = graph_aided_log_kernel_weights(*walk, r);
          for (std::size_t k = 0; k < lh.size(); ++k) expect_tight(lh[k], lw[k], what + " log w");
          if (std::string(name) != "omkl-gf") {
            const auto uh = graph_aided_vertex_weights(*host, r), uw = graph_aided_vertex_weights(*walk, r);
            for (std::size_t k = 0; k < uh.size(); ++k) EXPECT_NEAR(uw[k], uh[k], 1e-10) << what;
          }
          const auto thh = graph_aided_theta(*host, r, 1), thw = graph_aided_theta(*walk, r, 1);
          for (std::size_t i = 0; i < thh.size(); ++i) EXPECT_NEAR(thw[i], thh[i], 1e-11) << what;
        }
        EXPECT_EQ(walk->kernel_updates(), host->kernel_updates()) << what;
        // Blocks of 13 steps per walk, as a study runs it: the vertex weights are then kept
        // inside the walk, not refreshed between steps. A different vertex anywhere would
        // show as a different prediction.
        auto blocked = make(name, ctx, with_param(params, "step_path", "resident"));
        const auto expected = run_steps(*make(name, ctx, with_param(params, "step_path", "host")), data);
        const auto got = run_blocks(*blocked, data, 13);
        for (std::size_t i = 0; i < got.size(); ++i) expect_tight(expected[i], got[i], what + " blocked");
        for (std::size_t r = 0; r < 3; ++r) {
          const auto lh = graph_aided_log_kernel_weights(*host, r), lb = graph_aided_log_kernel_weights(*blocked, r);
          for (std::size_t k = 0; k < lh.size(); ++k) expect_tight(lh[k], lb[k], what + " blocked log w");
          if (std::string(name) == "omkl-gf") continue;
          const auto uh = graph_aided_vertex_weights(*host, r), ub = graph_aided_vertex_weights(*blocked, r);
          for (std::size_t k = 0; k < uh.size(); ++k) EXPECT_NEAR(ub[k], uh[k], 1e-10) << what << " blocked";
        }
      }
    }
  }
  }
}

// The program is a team program (core/resident_team.h): its loops shared by a GPU block's threads
// with OMKL_CUDA_WALK_PLAN=block, its sums, draws and orderings the leader's. Here the host driver
// runs it on 2 and 5 threads in lockstep (host_team.h): every variant's branches (the refinement
// and its rebuilt graph, the after-switch modes, OMKL-GF's regeneration) must give the one-lane
// walk's predictions and state bit for bit. A lane that read an entry before its writer's
// barrier would show here, or as a race under ThreadSanitizer.
TEST(ResidentGraphTest, ATeamOfLanesGivesTheOneLaneWalkBitForBit) {
  const auto data = random_stream(90, 4, Task::Regression);
  std::vector<std::vector<double>> ordered_runs;
  std::size_t run = 0, tree_bits_differ = 0;
  for (const char* sums : {"ordered", "tree"}) {
  ScopedEnv sums_order("OMKL_WALK_SUMS", sums);
  for (const char* name : kWalkAlgorithms) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      for (const Params& variant : variants(name)) {
        const Params params = with_param(variant, "step_path", "resident");
        const auto ctx = context_for(data, profile, {0, 3});
        ScopedEnv one_lane("OMKL_HOST_WALK_LANES", "1");  // whatever the suite runs under
        auto one = make(name, ctx, params);
        const auto expected = run_blocks(*one, data, 13);
        StateWriter one_state;
        one->save_state(one_state);
        for (const char* lanes : {"2", "5"}) {
          ScopedEnv team("OMKL_HOST_WALK_LANES", lanes);
          auto many = make(name, ctx, params);
          const auto got = run_blocks(*many, data, 13);
          const std::string what = std::string(name) + (profile == Profile::Reference ? " reference" : " paper") +
                                   " with " + std::to_string(variant.size()) + " parameters on " + lanes + " lanes, " +
                                   sums + " sums";
          ASSERT_EQ(got.size(), expected.size());
          for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << what << " at " << i;
          StateWriter many_state;
          many->save_state(many_state);
          EXPECT_EQ(many_state.bytes(), one_state.bytes()) << what;
          EXPECT_EQ(many->kernel_updates(), one->kernel_updates()) << what;
        }
        // The tree order is taken: its predictions are not all the index order's bits.
        if (std::string(sums) == "ordered") {
          ordered_runs.push_back(expected);
        } else {
          const std::vector<double>& ordered = ordered_runs.at(run++);
          for (std::size_t i = 0; i < expected.size(); ++i) tree_bits_differ += expected[i] != ordered[i];
        }
      }
    }
  }
  }
  EXPECT_GT(tree_bits_differ, 0u) << "OMKL_WALK_SUMS=tree changed no prediction";
  expect_switch_refused(data, "OMKL_HOST_WALK_LANES", "0", "OMKL_HOST_WALK_LANES");
}

// OMKL_WALK_SUMS unset (auto): the host's drivers keep the index order, the host path's bits
// (a GPU block takes the tree order: CudaTest.ResidentGraphTeamPlanEqualsThreadPlan); an unknown
// order is refused, naming the switch and its choices.
TEST(ResidentGraphTest, HostDriversKeepTheIndexOrderByDefault) {
  const auto data = random_stream(60, 4, Task::Regression);
  std::size_t tree_differs = 0;  // the control: the tree order is not the index order's bits here
  for (const char* name : kWalkAlgorithms) {
    const auto ctx = context_for(data, Profile::Paper, {0, 3});
    const Params params = {{"step_path", "resident"}};
    const auto walk = [&](const char* sums) {
      ScopedEnv sums_order("OMKL_WALK_SUMS", sums);
      auto algorithm = make(name, ctx, params);
      return run_blocks(*algorithm, data, 13);
    };
    const auto ordered = walk("ordered");
    EXPECT_EQ(walk(nullptr), ordered) << name;
    EXPECT_EQ(walk("auto"), ordered) << name;
    tree_differs += walk("tree") != ordered;
  }
  EXPECT_GT(tree_differs, 0u);
  expect_switch_refused(data, "OMKL_WALK_SUMS", "sideways", "OMKL_WALK_SUMS must be auto, ordered or tree");
}

// A block of steps is one walk (what a study hands the algorithm); the stream position it
// leaves is where the host path's stream would be.
TEST(ResidentGraphTest, BlocksOfStepsEqualSingleSteps) {
  const auto data = random_stream(90, 3, Task::Regression);
  for (const char* name : kWalkAlgorithms) {
    for (Params params : variants(name)) {
      params.emplace_back("step_path", "resident");
      const auto ctx = context_for(data, Profile::Reference, {1, 2});
      auto single = make(name, ctx, params);
      const auto expected = run_steps(*single, data);
      auto blocked = make(name, ctx, params);
      std::vector<double> got(expected.size());
      for (std::size_t begin = 0; begin < data.n_samples;) {
        const std::size_t n = std::min<std::size_t>(begin < 40 ? 17 : 29, data.n_samples - begin);
        blocked->step_block(data.row(begin), data.y.data() + begin, n, data.n_features, got.data() + begin * 2);
        begin += n;
      }
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << name << " " << i;
      StateWriter a, b;
      single->save_state(a);
      blocked->save_state(b);
      EXPECT_EQ(a.bytes(), b.bytes()) << name;
    }
  }
}

// The state a walk leaves is the host path's: a checkpoint written after resident steps,
// continued on the host path, follows the host path's decisions (and the reverse).
TEST(ResidentGraphTest, CheckpointsCrossBetweenThePaths) {
  const auto data = random_stream(80, 3, Task::Regression);
  for (const char* name : kWalkAlgorithms)
  for (const char* first : {"host", "resident"}) {
    const Params base = variants(name).back();
    const auto ctx = context_for(data, Profile::Reference, {0, 1});
    const char* second = std::string(first) == "host" ? "resident" : "host";
    auto a = make(name, ctx, with_param(base, "step_path", first));
    run_steps(*a, data, 0, 30);
    StateWriter out;
    a->save_state(out);
    const auto expected = run_steps(*a, data, 30, 80);
    auto b = make(name, ctx, with_param(base, "step_path", second));
    StateReader in(out.bytes());
    b->load_state(in);
    const auto got = run_steps(*b, data, 30, 80);
    for (std::size_t i = 0; i < got.size(); ++i)
      expect_tight(expected[i], got[i], std::string(name) + " " + first + " → " + second);
  }
}

// Every replicate on its own permutation of the stream in one walk (step_block_replicated(), a
// shuffled study in lockstep): each replicate's predictions and kernel weights are those of a
// one-replicate host-path run on its own stream.
TEST(ResidentGraphTest, ReplicatesOnTheirOwnStreamsEqualSeparateRuns) {
  const auto data = random_stream(100, 3, Task::Regression);
  const std::vector<std::uint64_t> replicates = {0, 4, 9};
  const auto orders = shuffled_orders(data.n_samples, replicates.size());
  const std::vector<Dataset> streams = shuffled_streams(data, replicates.size());
  for (const char* name : kWalkAlgorithms) {
    const Params params = variants(name).back();
    auto lockstep = make(name, context_for(data, Profile::Paper, replicates), with_param(params, "step_path", "resident"));
    ASSERT_TRUE(lockstep->replicated_streams());
    const auto got = run_replicated_blocks(*lockstep, data, orders, 23);
    for (std::size_t r = 0; r < replicates.size(); ++r) {
      auto alone = make(name, context_for(data, Profile::Paper, {replicates[r]}), with_param(params, "step_path", "host"));
      const auto expected = run_steps(*alone, streams[r]);
      for (std::size_t t = 0; t < data.n_samples; ++t)
        expect_tight(expected[t], got[t * replicates.size() + r], std::string(name) + " r=" + std::to_string(r));
      const auto la = graph_aided_log_kernel_weights(*alone, 0), lb = graph_aided_log_kernel_weights(*lockstep, r);
      for (std::size_t k = 0; k < la.size(); ++k) expect_tight(la[k], lb[k], std::string(name) + " log w");
    }
  }
  auto host = make("omkl-sfg", context_for(data, Profile::Paper, replicates), variants("omkl-sfg").front());
  EXPECT_FALSE(host->replicated_streams());
  EXPECT_THROW(run_replicated_blocks(*host, data, orders, 10), Error);
}

TEST(ResidentGraphTest, PredictAfterAWalkEqualsTheNextStep) {
  const auto data = random_stream(40, 3, Task::Regression);
  for (const char* name : kWalkAlgorithms) {
    auto a = make(name, context_for(data, Profile::Paper, {0, 1}),
                  {{"D", "5"}, {"M", "3"}, {"switch_step", "20"}, {"step_path", "resident"}});
    for (std::size_t t = 0; t < 30; ++t) {
      double p[2], s[2];
      a->predict(data.row(t), p);
      a->step(data.row(t), data.y[t], s);
      for (int r = 0; r < 2; ++r) expect_tight(p[r], s[r], std::string(name) + " t=" + std::to_string(t));
    }
  }
}

// OMKL_WALK_STATE=local: each replicate's state copied out of the arena into a copy of its own
// for the walk (the GPU block's shared memory; here a host buffer), walked by the same program as
// replicate 0, and copied back. Only where the state lives changes, so every variant's predictions,
// checkpoint and update count are the arena walk's bit for bit, on one lane and on a team of
// three (each lane copying its share of the bytes on the GPU).
TEST(ResidentGraphTest, ALocalCopyOfEachReplicatesStateGivesTheArenaWalkBitForBit) {
  const auto data = random_stream(48, 4, Task::Regression);
  for (const char* name : kWalkAlgorithms) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      for (const Params& variant : variants(name)) {
        const Params params = with_param(variant, "step_path", "resident");
        const auto ctx = context_for(data, profile, {0, 3, 5});
        for (const char* lanes : {"1", "3"}) {
          ScopedEnv team("OMKL_HOST_WALK_LANES", lanes);
          const std::string what = std::string(name) + (profile == Profile::Reference ? " reference" : " paper") +
                                   " with " + std::to_string(variant.size()) + " parameters on " + lanes + " lanes";
          auto in_arena = make(name, ctx, params);
          std::vector<double> expected;
          {
            ScopedEnv arena("OMKL_WALK_STATE", "arena");
            expected = run_blocks(*in_arena, data, 13);
          }
          ScopedEnv local("OMKL_WALK_STATE", "local");
          auto in_copies = make(name, ctx, params);
          const auto got = run_blocks(*in_copies, data, 13);
          ASSERT_EQ(got.size(), expected.size());
          for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << what << " at " << i;
          StateWriter a, b;
          in_arena->save_state(a);
          in_copies->save_state(b);
          EXPECT_EQ(b.bytes(), a.bytes()) << what;
          EXPECT_EQ(in_copies->kernel_updates(), in_arena->kernel_updates()) << what;
        }
      }
    }
  }
  expect_switch_refused(data, "OMKL_WALK_STATE", "shared", "OMKL_WALK_STATE must be arena or local, not 'shared'");
}

// The copy itself, by hand: a replicate's own copy holds its entries of every array (and nothing of
// the others'), the localized program reads them as replicate 0, and the copy back writes its
// entries only. The sizes: every family's state at the journal's N = 76 fits a GPU block's share;
// OMKL-GF with N = 128 and J = 64 nodes (its link probabilities alone 64 KB) stays in the arena.
TEST(ResidentGraphTest, AReplicatesOwnCopyHoldsItsEntriesOfEveryArray) {
  for (int family : {0, 1, 2}) {
    GraphTables c;
    c.family = family;
    c.n = 12;
    c.J = family == 0 ? 3 : 0;
    c.M = family == 0 ? 5 : 0;
    c.max_pairs = family == 2 ? 12 : 5;
    GraphStateData state(c, 3);
    GraphProgram<HostPhilox> program{c, state.view()};
    // Every entry of every array a value of its own: its array, replicate and index.
    std::size_t arrays = 0;
    visit_graph_state(c, program.states, [&](auto*& array, std::size_t count) {
      using T = std::remove_pointer_t<std::remove_reference_t<decltype(array)>>;
      unsigned char* bytes = reinterpret_cast<unsigned char*>(array);
      for (std::size_t b = 0; b < 3 * count * sizeof(T); ++b) bytes[b] = static_cast<unsigned char>(arrays * 37 + b);
      ++arrays;
    });
    ASSERT_TRUE(walks_with_local_state(program, true)) << family;
    EXPECT_FALSE(walks_with_local_state(program, false)) << family;
    const std::vector<std::uint64_t> before(static_cast<std::uint64_t*>(state.data()),
                                            static_cast<std::uint64_t*>(state.data()) + state.size_bytes() / 8);
    std::vector<std::uint64_t> copy((program.local_state_bytes() + 7) / 8 + 1, 0);
    program.copy_state(1, copy.data(), true, 0u, 1u);
    GraphProgram<HostPhilox> local = program.localized(copy.data());
    GraphStates arena_view = program.states, local_view = local.states;
    std::vector<unsigned char*> arena_arrays, local_arrays;
    std::vector<std::size_t> sizes;
    visit_graph_state(c, arena_view, [&](auto*& array, std::size_t count) {
      arena_arrays.push_back(reinterpret_cast<unsigned char*>(array));
      sizes.push_back(count * sizeof(*array));
    });
    visit_graph_state(c, local_view, [&](auto*& array, std::size_t) {
      local_arrays.push_back(reinterpret_cast<unsigned char*>(array));
    });
    ASSERT_EQ(local_arrays.size(), arena_arrays.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      // Replicate 1's entries of array k, in the copy, as replicate 0 of the localized program.
      EXPECT_EQ(std::memcmp(local_arrays[k], arena_arrays[k] + sizes[k], sizes[k]), 0) << family << " array " << k;
      for (std::size_t b = 0; b < sizes[k]; ++b) local_arrays[k][b] ^= 0xffu;  // the walk changes them
    }
    EXPECT_EQ(local.states.log_w, reinterpret_cast<double*>(local_arrays[1]));
    program.copy_state(1, copy.data(), false, 0u, 1u);
    for (std::size_t k = 0; k < sizes.size(); ++k)
      for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t b = 0; b < sizes[k]; ++b) {
          const unsigned char written = arena_arrays[k][r * sizes[k] + b];
          const unsigned char first = static_cast<unsigned char>(k * 37 + r * sizes[k] + b);
          ASSERT_EQ(written, r == 1 ? static_cast<unsigned char>(first ^ 0xffu) : first)
              << family << " array " << k << " replicate " << r << " byte " << b;
        }
    // The slices' table in the arena is untouched.
    EXPECT_EQ(std::memcmp(state.data(), before.data(), sizeof(ReplicateSlices)), 0) << family;
  }
  GraphTables journal;
  journal.n = 76;
  for (int family : {0, 1, 2}) {
    journal.family = family;
    journal.J = family == 0 ? 2 : 0;
    journal.M = 10;
    journal.max_pairs = family == 2 ? 76 : 10;
    GraphStateData state(journal, 20);
    EXPECT_TRUE(walks_with_local_state(GraphProgram<HostPhilox>{journal, state.view()}, true)) << family;
  }
  GraphTables wide;
  wide.family = 0;
  wide.n = 128;
  wide.J = 64;
  wide.M = 4;
  wide.max_pairs = 4;
  GraphStateData state(wide, 2);
  const GraphProgram<HostPhilox> program{wide, state.view()};
  EXPECT_GT(program.local_state_bytes(), kMaxLocalStateBytes);
  EXPECT_FALSE(walks_with_local_state(program, true));
}

// The largest graph a walk takes (N = kMaxResidentPairs = 128 kernels, where a team stages all N
// vertex weights at once) walks on host lanes as on one; one kernel more is refused, naming N.
TEST(ResidentGraphTest, TheLargestGraphWalksOnLanesAndALargerOneIsRefused) {
  const auto data = random_stream(30, 3, Task::Regression);
  const auto dictionary = [](std::size_t n) {
    std::string spec;
    for (std::size_t i = 0; i < n; ++i)
      spec += (i ? "+" : "") + std::string(i % 2 ? "lap:" : "gauss:") + std::to_string(0.2 + 0.05 * static_cast<double>(i));
    return spec;
  };
  for (const char* name : {"omkl-gf", "omkl-sfg-r"}) {
    const Params params = {{"dict", dictionary(kMaxResidentPairs)}, {"D", "3"}, {"M", "4"},
                           {"switch_step", "15"}, {"step_path", "resident"}};
    const auto ctx = context_for(data, Profile::Paper, {0});
    std::vector<double> expected;
    {
      ScopedEnv one_lane("OMKL_HOST_WALK_LANES", "1");
      expected = run_blocks(*make(name, ctx, params), data, 10);
    }
    ScopedEnv lanes("OMKL_HOST_WALK_LANES", "3");
    const auto got = run_blocks(*make(name, ctx, params), data, 10);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << name << " at " << i;
  }
  const Params too_many = {{"dict", dictionary(kMaxResidentPairs + 1)}, {"step_path", "resident"}};
  const std::string message = omkl::test::config_error_message("omkl-sfg", context_for(data, Profile::Paper), too_many);
  EXPECT_NE(message.find("N = " + std::to_string(kMaxResidentPairs + 1)), std::string::npos) << message;
}

TEST(ResidentGraphTest, UnsupportedConfigurationsNameTheReason) {
  const auto data = random_stream(20, 3, Task::Regression);
  const auto ctx = context_for(data, Profile::Paper);
  const Params resident = {{"D", "4"}, {"M", "2"}, {"step_path", "resident"}};
  for (const char* name : kWalkAlgorithms) EXPECT_EQ(omkl::test::config_error_message(name, ctx, resident), "") << name;
  Params ridge = resident;
  ridge.emplace_back("u_loss", "ridge");
  const std::string message = omkl::test::config_error_message("omkl-sfg", ctx, ridge);
  EXPECT_NE(message.find("step_path"), std::string::npos) << message;
  EXPECT_NE(message.find("u_loss = ridge"), std::string::npos) << message;
  Params bad = {{"step_path", "gpu"}};
  EXPECT_NE(omkl::test::config_error_message("omkl-sfg", ctx, bad).find("step_path"), std::string::npos);
}
