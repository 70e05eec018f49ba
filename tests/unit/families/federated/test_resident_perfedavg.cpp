// PerFedAvg as a resident program on the per-step seam (resident_perfedavg.h), run by the seam's
// host driver: the same mlp.h passes in the same order as the host path, so every prediction,
// model and message count must equal the host path's bit for bit, in blocks that cut rounds
// anywhere, across checkpoints both ways, and predict() must follow. The GPU runs the same
// program (CudaTest.ResidentPerFedAvgWalkEqualsTheHostPath, skipped without a GPU), where fused
// multiply-adds leave it equal within floating point.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "core/state_io.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::make;
using omkl::test::run_blocks;
using omkl::test::run_steps;
using omkl::test::with_param;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

Dataset perfedavg_stream(std::size_t rounds) { return omkl::test::federated_stream(4, rounds, 3, 53); }

AlgoContext perfedavg_context(const Dataset& data, std::vector<std::uint64_t> replicates) {
  return omkl::test::federated_context(data, Profile::Paper, std::move(replicates));
}

std::vector<Params> perfedavg_variants() {
  return {{{"width", "6"}},                                   // as many hidden layers as fit the cap
          {{"width", "5"}, {"hidden_layers", "2"}},
          {{"hidden_layers", "0"}},                           // a linear model
          {{"width", "6"}, {"personalize", "none"}}};
}

std::string describe(const Params& p) {
  std::string out;
  for (const auto& [k, v] : p) out += k + "=" + v + " ";
  return out;
}

}  // namespace

TEST(ResidentPerFedAvgTest, WalkEqualsTheHostPath) {
  const Dataset data = perfedavg_stream(30);
  for (const Params& params : perfedavg_variants()) {
    const auto ctx = perfedavg_context(data, {0, 2, 5});
    auto host = make("perfedavg", ctx, with_param(params, "step_path", "host"));
    auto walk = make("perfedavg", ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*host, data);
    const auto got = run_steps(*walk, data);
    ASSERT_EQ(got, expected) << describe(params);
    // Blocks of 7 samples: rounds of 4 cut at every offset.
    auto blocked = make("perfedavg", ctx, with_param(params, "step_path", "resident"));
    ASSERT_EQ(run_blocks(*blocked, data, 7), expected) << describe(params);
    StateWriter a, b;
    host->save_state(a);
    blocked->save_state(b);
    EXPECT_EQ(a.bytes(), b.bytes()) << describe(params);
    EXPECT_EQ(walk->communication().uplink_floats, host->communication().uplink_floats);
    EXPECT_EQ(walk->communication().downlink_floats, host->communication().downlink_floats);
    EXPECT_EQ(walk->communication().max_uplink, host->communication().max_uplink);
    EXPECT_EQ(walk->communication().client_steps, host->communication().client_steps);
  }
}

// A checkpoint written mid-round on one path continues on the other; predict() after a walk is
// the next step's prediction.
TEST(ResidentPerFedAvgTest, CheckpointsCrossAndPredictFollows) {
  const Dataset data = perfedavg_stream(15);
  const auto ctx = perfedavg_context(data, {0, 1});
  const Params params = perfedavg_variants()[0];
  for (const char* first : {"host", "resident"}) {
    const char* second = std::string(first) == "host" ? "resident" : "host";
    auto a = make("perfedavg", ctx, with_param(params, "step_path", first));
    run_blocks(*a, data, 5, 0, 22);
    StateWriter out;
    a->save_state(out);
    const auto expected = run_steps(*a, data, 22, 60);
    auto b = make("perfedavg", ctx, with_param(params, "step_path", second));
    StateReader in(out.bytes());
    b->load_state(in);
    EXPECT_EQ(run_steps(*b, data, 22, 60), expected) << first << " → " << second;
  }
  auto walk = make("perfedavg", ctx, with_param(params, "step_path", "resident"));
  for (std::size_t t = 0; t < 20; ++t) {
    double p[2], s[2];
    walk->predict(data.row(t), p);
    walk->step(data.row(t), data.y[t], s);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(p[r], s[r]) << "t=" << t;
  }
  EXPECT_TRUE(walk->batches_replicates());
  EXPECT_FALSE(make("perfedavg", ctx, params)->batches_replicates());
}
