// eM-KOFL as a resident program on the per-step seam (resident_em_kofl.h), run by the seam's
// host driver: the server's draw of J_t, the clients' averaged copies, the predictions, the
// per-kernel losses and the server's weights must be the host path's (within the rounding of the
// features), blocks may cut rounds anywhere, the message counts must be the same, and the state
// must go back where the host path keeps it (checkpoints, predict()). The GPU runs the same
// program (CudaTest.ResidentEmKoflWalkEqualsTheHostPath, skipped without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "core/state_io.h"
#include "families/federated/resident_em_kofl.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::expect_close;
using omkl::test::make;
using omkl::test::run_blocks;
using omkl::test::run_steps;
using omkl::test::with_param;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

Dataset em_kofl_stream(std::size_t rounds) { return omkl::test::federated_stream(4, rounds, 3, 37); }

AlgoContext em_kofl_context(const Dataset& data, std::vector<std::uint64_t> replicates) {
  return omkl::test::federated_context(data, Profile::Paper, std::move(replicates));
}

std::vector<Params> em_kofl_variants() {
  const Params base = {{"dict", "gauss2:0.5+gauss2:1+gauss2:2+gauss2:4+gauss2:8"}, {"D", "6"}};
  const auto plus = [&](Params extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };
  // η ≠ η_g: each path's θ step and server weight step must take its own rate.
  return {base, plus({{"explore", "0.3"}}), plus({{"weight_loss_reduction", "mean"}}),
          plus({{"eta", "0.2"}, {"eta_g", "0.9"}})};
}

}  // namespace

// The draw itself: inverse CDF over the mixed softmax, the last kernel when the sum falls short.
TEST(ResidentEmKoflTest, DrawIsTheInverseCdfOfTheMixedWeights) {
  const double log_w[3] = {0.0, std::log(3.0), -1000.0};  // ω̄ = (1/4, 3/4, 0)
  double w[3];
  // explore 0.2: π = (0.8·0.25 + 0.2/3, 0.8·0.75 + 0.2/3, 0.2/3) = (0.2667, 0.6667, 0.0667).
  EXPECT_EQ(em_kofl_draw(log_w, 3, 0.2, 0.26, w), 0u);
  EXPECT_EQ(em_kofl_draw(log_w, 3, 0.2, 0.27, w), 1u);
  EXPECT_EQ(em_kofl_draw(log_w, 3, 0.2, 0.93, w), 1u);
  EXPECT_EQ(em_kofl_draw(log_w, 3, 0.2, 0.94, w), 2u);
  EXPECT_EQ(em_kofl_draw(log_w, 3, 0.0, 0.999999, w), 1u);  // no mass on the underflowed kernel
  // Ten equal weights: the cumulative sum of 0.1s ends short of 1 by rounding; u = 1 still
  // draws the last kernel.
  const double equal[10] = {};
  double w10[10];
  EXPECT_EQ(em_kofl_draw(equal, 10, 0.0, 1.0, w10), 9u);
  EXPECT_EQ(em_kofl_draw(equal, 10, 0.0, 0.15, w10), 1u);
}

TEST(ResidentEmKoflTest, WalkMakesTheHostPathsSteps) {
  const Dataset data = em_kofl_stream(25);
  for (const Params& params : em_kofl_variants()) {
    const std::string what = params.back().first + "=" + params.back().second;
    const auto ctx = em_kofl_context(data, {0, 3, 6});
    auto host = make("em-kofl", ctx, with_param(params, "step_path", "host"));
    auto walk = make("em-kofl", ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*host, data);
    const auto got = run_steps(*walk, data);
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(expected[i], got[i], what + " step " + std::to_string(i));
    for (std::size_t r = 0; r < 3; ++r) {
      const auto a = host->client_kernel_losses(r), b = walk->client_kernel_losses(r);
      ASSERT_EQ(a.size(), b.size());
      for (std::size_t j = 0; j < a.size(); ++j) expect_close(a[j], b[j], what + " kernel loss");
      const auto wa = host->kernel_weights(r), wb = walk->kernel_weights(r);
      for (std::size_t j = 0; j < wa.size(); ++j) expect_close(wa[j], wb[j], what + " weights");
    }
    EXPECT_EQ(walk->communication().uplink_floats, host->communication().uplink_floats);
    EXPECT_EQ(walk->communication().downlink_floats, host->communication().downlink_floats);
    EXPECT_EQ(walk->communication().max_uplink, host->communication().max_uplink);
    EXPECT_EQ(walk->communication().client_steps, host->communication().client_steps);
    EXPECT_EQ(walk->kernel_updates(), host->kernel_updates());
    // Blocks of 7 samples: rounds of 4 cut at every offset.
    auto blocked = make("em-kofl", ctx, with_param(params, "step_path", "resident"));
    const auto in_blocks = run_blocks(*blocked, data, 7);
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(expected[i], in_blocks[i], what + " blocked");
  }
}

// One walk of many samples and many walks of one sample leave the same state, bit for bit.
TEST(ResidentEmKoflTest, BlocksOfSamplesEqualSingleSteps) {
  const Dataset data = em_kofl_stream(20);
  const auto ctx = em_kofl_context(data, {1, 2});
  const Params params = with_param(em_kofl_variants()[1], "step_path", "resident");
  auto single = make("em-kofl", ctx, params);
  const auto expected = run_steps(*single, data);
  auto blocked = make("em-kofl", ctx, params);
  const auto got = run_blocks(*blocked, data, 9);
  for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << i;
  StateWriter a, b;
  single->save_state(a);
  blocked->save_state(b);
  EXPECT_EQ(a.bytes(), b.bytes());
}

// A checkpoint written on one path (mid-round) continues on the other; predict() after a walk
// is the next step's prediction.
TEST(ResidentEmKoflTest, CheckpointsCrossAndPredictFollows) {
  const Dataset data = em_kofl_stream(15);
  const auto ctx = em_kofl_context(data, {0, 1});
  const Params params = em_kofl_variants()[0];
  for (const char* first : {"host", "resident"}) {
    const char* second = std::string(first) == "host" ? "resident" : "host";
    auto a = make("em-kofl", ctx, with_param(params, "step_path", first));
    run_blocks(*a, data, 5, 0, 22);
    StateWriter out;
    a->save_state(out);
    const auto expected = run_steps(*a, data, 22, 60);
    auto b = make("em-kofl", ctx, with_param(params, "step_path", second));
    StateReader in(out.bytes());
    b->load_state(in);
    const auto got = run_steps(*b, data, 22, 60);
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(expected[i], got[i], std::string(first) + " → " + second);
  }
  auto walk = make("em-kofl", ctx, with_param(params, "step_path", "resident"));
  for (std::size_t t = 0; t < 20; ++t) {
    double p[2], s[2];
    walk->predict(data.row(t), p);
    walk->step(data.row(t), data.y[t], s);
    for (int r = 0; r < 2; ++r) expect_close(p[r], s[r], "predict at " + std::to_string(t));
  }
}
