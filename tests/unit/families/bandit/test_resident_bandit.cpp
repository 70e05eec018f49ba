// The random-feature bandit algorithms as a resident program (resident_bandit.h), run by the
// walk's host driver: every round's draw must be the host path's (the same kernel from the same
// stream position, so the same selected counts after every round), the predictions and the
// rule's p the host path's within the rounding of the features, and the state must go back
// where the host path keeps it (checkpoints, predict(), the logs). The GPU runs the same program
// (CudaTest.ResidentBanditWalkEqualsTheHostPath, skipped without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/bandit_cases.h"
#include "common/recipe_grid.h"
#include "common/test_helpers.h"
#include "core/state_io.h"
#include "families/bandit/bandit.h"
#include "families/bandit/hypotheses.h"
#include "families/bandit/resident_support.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::expect_close;
using omkl::test::config_error_message;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_blocks;
using omkl::test::run_replicated_blocks;
using omkl::test::shuffled_orders;
using omkl::test::shuffled_streams;
using omkl::test::run_steps;
using omkl::test::with_param;
using omkl::test::BanditCase;
using omkl::test::bandit_cases;
using omkl::test::bandit_case_stream;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST(ResidentBanditTest, WalkMakesTheHostPathsDraws) {
  for (const BanditCase& c : bandit_cases()) {
    const Dataset data = bandit_case_stream(150, c.task);
    const auto ctx = context_for(data, Profile::Paper, {0, 2, 7});
    auto host = make(c.name, ctx, with_param(c.params, "step_path", "host"));
    auto walk = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    const std::string what = std::string(c.name) + " " + c.params.back().second;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      double ph[3], pw[3];
      host->step(data.row(t), data.y[t], ph);
      walk->step(data.row(t), data.y[t], pw);
      for (std::size_t r = 0; r < 3; ++r) {
        const BanditLog lh = bandit_log(*host, r), lw = bandit_log(*walk, r);
        ASSERT_EQ(lw.selected, lh.selected) << what << " t=" << t << " r=" << r;  // the same draw
        expect_close(ph[r], pw[r], what + " t=" + std::to_string(t));
        for (std::size_t k = 0; k < lh.p.size(); ++k) expect_close(lh.p[k], lw.p[k], what + " p");
        for (std::size_t k = 0; k < lh.kernel_loss.size(); ++k)
          expect_close(lh.kernel_loss[k], lw.kernel_loss[k], what + " kernel loss");
        ASSERT_EQ(lw.kernel_mistakes, lh.kernel_mistakes) << what << " t=" << t << " r=" << r;
      }
    }
    // Blocks of 11 rounds per walk, as a study hands them over.
    auto blocked = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    const auto expected = run_steps(*make(c.name, ctx, with_param(c.params, "step_path", "host")), data);
    const auto got = run_blocks(*blocked, data, 11);
    for (std::size_t i = 0; i < got.size(); ++i) expect_close(expected[i], got[i], what + " blocked");
    for (std::size_t r = 0; r < 3; ++r) EXPECT_EQ(bandit_log(*blocked, r).selected, bandit_log(*host, r).selected);
  }
}

// One walk of many rounds and many walks of one round leave the same state, bit for bit.
TEST(ResidentBanditTest, BlocksOfRoundsEqualSingleRounds) {
  for (const BanditCase& c : bandit_cases()) {
    const Dataset data = bandit_case_stream(90, c.task);
    const auto ctx = context_for(data, Profile::Paper, {1, 4});
    auto single = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    const auto expected = run_steps(*single, data);
    auto blocked = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    std::vector<double> got(expected.size());
    for (std::size_t begin = 0; begin < data.n_samples;) {
      const std::size_t n = std::min<std::size_t>(begin < 40 ? 13 : 31, data.n_samples - begin);
      blocked->step_block(data.row(begin), data.y.data() + begin, n, data.n_features, got.data() + begin * 2);
      begin += n;
    }
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << c.name << " " << i;
    StateWriter a, b;
    single->save_state(a);
    blocked->save_state(b);
    EXPECT_EQ(a.bytes(), b.bytes()) << c.name;
  }
}

// A checkpoint written on one path continues on the other.
TEST(ResidentBanditTest, CheckpointsCrossBetweenThePaths) {
  for (const BanditCase& c : bandit_cases()) {
    const Dataset data = bandit_case_stream(80, c.task);
    const auto ctx = context_for(data, Profile::Paper, {0, 1});
    for (const char* first : {"host", "resident"}) {
      const char* second = std::string(first) == "host" ? "resident" : "host";
      auto a = make(c.name, ctx, with_param(c.params, "step_path", first));
      run_steps(*a, data, 0, 30);
      StateWriter out;
      a->save_state(out);
      const auto expected = run_steps(*a, data, 30, 80);
      auto b = make(c.name, ctx, with_param(c.params, "step_path", second));
      StateReader in(out.bytes());
      b->load_state(in);
      const auto got = run_steps(*b, data, 30, 80);
      for (std::size_t i = 0; i < got.size(); ++i)
        expect_close(expected[i], got[i], std::string(c.name) + " " + first + " → " + second);
    }
  }
}

TEST(ResidentBanditTest, PredictAfterAWalkEqualsTheNextRound) {
  const BanditCase c = bandit_cases()[1];
  const Dataset data = bandit_case_stream(40, c.task);
  auto a = make(c.name, context_for(data, Profile::Paper, {0, 1}), with_param(c.params, "step_path", "resident"));
  for (std::size_t t = 0; t < 30; ++t) {
    double p[2], s[2];
    a->predict(data.row(t), p);
    a->step(data.row(t), data.y[t], s);
    for (int r = 0; r < 2; ++r) expect_close(p[r], s[r], "t=" + std::to_string(t));
  }
}

TEST(ResidentBanditTest, ConfigurationsTheWalkDoesNotHoldAreRefused) {
  const Dataset data = bandit_case_stream(20, Task::Regression);
  const auto ctx = context_for(data);
  std::string dict = "gauss:1";
  for (int k = 1; k < 130; ++k) dict += "+gauss:" + std::to_string(1 + k);
  for (const char* name : {"oks++", "rf-oks++"}) {
    const std::string message = config_error_message(name, ctx, {{"dict", dict}, {"step_path", "resident"}});
    EXPECT_NE(message.find("more kernels than a resident step holds"), std::string::npos) << name << ": " << message;
    EXPECT_EQ(config_error_message(name, ctx, {{"step_path", "resident"}}), "") << name;
  }
  EXPECT_NE(config_error_message("oks", ctx, {{"step_path", "gpu"}}).find("step_path"), std::string::npos);
  // The walk's CUDA backend is made at the first walk: a D it cannot hold is refused when the
  // algorithm is made (a CPU-only build refuses --backend cuda later, at the same first walk).
  auto gpu_ctx = ctx;
  gpu_ctx.backend = BackendKind::Cuda;
  const std::string too_wide = std::to_string(kMaxCudaRff + 1);
  const std::string message = config_error_message("rf-oks++", gpu_ctx, {{"D", too_wide}, {"step_path", "resident"}});
  EXPECT_NE(message.find("exceeds the 1024 random features"), std::string::npos) << message;
  EXPECT_EQ(config_error_message("rf-oks++", ctx, {{"D", too_wide}, {"step_path", "resident"}}), "")
      << "the CPU walk has no such limit";
  EXPECT_EQ(config_error_message("rf-oks++", gpu_ctx, {{"D", too_wide}, {"step_path", "host"}}), "")
      << "nor the host path";
  EXPECT_EQ(config_error_message("rf-oks++", gpu_ctx, {{"D", too_wide}, {"step_path", "auto"}}), "")
      << "auto falls back to the host path";
}

// Every repetition on its own permutation of the stream in one walk (step_block_replicated(), a
// shuffled study in lockstep) gives each repetition's numbers of a one-repetition run on its own
// stream: the same draws, and the host path's predictions and logs within the features' rounding.
TEST(ResidentBanditTest, RepetitionsOnTheirOwnStreamsEqualSeparateRuns) {
  const std::vector<std::uint64_t> replicates = {0, 2, 7};
  for (const BanditCase& c : bandit_cases()) {
    const Dataset data = bandit_case_stream(120, c.task);
    const auto orders = shuffled_orders(data.n_samples, replicates.size());
    const std::vector<Dataset> streams = shuffled_streams(data, replicates.size());
    const std::string what = std::string(c.name) + " " + c.params.back().second;
    auto lockstep = make(c.name, context_for(data, Profile::Paper, replicates), with_param(c.params, "step_path", "resident"));
    ASSERT_TRUE(lockstep->replicated_streams());
    const auto got = run_replicated_blocks(*lockstep, data, orders, 17);
    for (std::size_t r = 0; r < replicates.size(); ++r) {
      auto alone = make(c.name, context_for(data, Profile::Paper, {replicates[r]}), with_param(c.params, "step_path", "host"));
      const auto expected = run_steps(*alone, streams[r]);
      for (std::size_t t = 0; t < data.n_samples; ++t)
        expect_close(expected[t], got[t * replicates.size() + r], what + " r=" + std::to_string(r) + " t=" + std::to_string(t));
      const BanditLog a = bandit_log(*alone, 0), b = bandit_log(*lockstep, r);
      EXPECT_EQ(b.selected, a.selected) << what << " r=" << r;
      for (std::size_t k = 0; k < a.p.size(); ++k) expect_close(a.p[k], b.p[k], what + " p");
    }
  }
}

// The host path runs repetitions as separate learners: it says so rather than mixing streams.
TEST(ResidentBanditTest, TheHostPathHasNoReplicatedStreams) {
  const BanditCase c = bandit_cases()[1];
  const Dataset data = bandit_case_stream(10, c.task);
  auto host = make(c.name, context_for(data, Profile::Paper, {0, 1}), with_param(c.params, "step_path", "host"));
  EXPECT_FALSE(host->replicated_streams());
  EXPECT_THROW(run_replicated_blocks(*host, data, shuffled_orders(data.n_samples, 2), 5), Error);
  EXPECT_FALSE(make("oks++", context_for(data))->replicated_streams());
  // Only the resident path batches repetitions on a backend: a GPU study runs the others one
  // repetition per task on its threads.
  EXPECT_FALSE(host->batches_replicates());
  EXPECT_FALSE(make("oks++", context_for(data))->batches_replicates());
  EXPECT_TRUE(make(c.name, context_for(data), with_param(c.params, "step_path", "resident"))->batches_replicates());
  EXPECT_TRUE(make("raker", context_for(data), {{"D", "4"}})->batches_replicates());
}

// The kernel-expansion program's update against KernelHypotheses::update() (the host path's),
// round by round, in a case that folds: one Gaussian, p = 1, a large λ and a tiny ball, so that
// the projection multiplies the lazy scale by ≈ 1e−61 per round and the second round folds it
// into the coefficients.
TEST(ResidentBanditTest, ExpansionUpdateAndFoldAreKernelHypotheses) {
  const std::size_t d = 2, T = 4;
  const double U = 1e-60, lambda = 10.0;
  const double x[T * d] = {0.1, -0.2, 0.3, 0.4, -0.5, 0.2, 0.0, 0.7};
  const double y[T] = {0.9, -0.4, 0.6, 0.2};
  BanditTables bandit;
  bandit.rule.kind = RuleKind::Oks;
  bandit.rule.K = 1;
  bandit.rule.lambda = lambda;
  bandit.loss = LossKind::Squared;
  BanditStateData state(1, 1, true);
  const BanditStates s = state.view();
  s.rng[0] = StreamPosition::of(RandomStream(1, 0, RngPurpose::Selection, 5));
  s.p[0] = s.q[0] = 1.0;
  s.scale[0] = 1.0;
  SupportTables tables;
  tables.K = 1;
  tables.d = d;
  tables.capacity = 8;
  tables.ball = 1;
  tables.U = U;
  tables.family[0] = 0;
  tables.sigma[0] = 1.0;
  const SupportLayout layout(tables, 1);
  std::vector<std::uint64_t> pool(layout.words(), 0);
  KernelBanditProgram<HostPhilox> program{BanditProgram<HostPhilox>{bandit, s}, tables, layout.view(pool.data())};
  ResidentWalkArgs<double> shape;
  shape.n_replicates = shape.n_slots = shape.n_kernels = 1;
  shape.n_features = d;
  shape.max_pairs = 1;
  shape.loss = LossKind::Squared;
  KernelHypotheses host({KernelSpec::gaussian(1.0)}, d, 8);
  bool folded = false;
  for (std::size_t t = 0; t < T; ++t) {
    shape.n_steps = 1;
    shape.t0 = static_cast<std::int64_t>(t + 1);
    double prediction = 0.0;
    walk_on_host(program, shape, nullptr, nullptr, x + t * d, y + t, &prediction);
    const double F = host.evaluate(0, x + t * d);
    EXPECT_NEAR(prediction, F, 1e-12 * std::fabs(F)) << "t=" << t;
    host.update(0, x + t * d, F, -lambda * loss_derivative(LossKind::Squared, F, y[t]), Projection::Ball, U);
    folded = folded || s.folded[0];
    ASSERT_EQ(s.count[0], host.support_size(0));
    EXPECT_NEAR(s.scale[0], host.scale(0), 1e-12 * host.scale(0)) << "t=" << t;
    EXPECT_NEAR(s.norm[0], host.norm(0), 1e-12 * host.norm(0)) << "t=" << t;
    const SupportArrays a = layout.view(pool.data());
    for (std::size_t j = 0; j < host.support_size(0); ++j) {
      EXPECT_NEAR(a.coef[j], host.stored_coefficient(0, j), 1e-12 * std::fabs(host.stored_coefficient(0, j)));
      EXPECT_EQ(a.index[j], j);
      EXPECT_EQ(a.rows[j * d], host.support_row(0, j)[0]);
    }
  }
  EXPECT_TRUE(folded);
  EXPECT_EQ(host.scale(0), 1.0);  // the host folded too
  EXPECT_EQ(s.used[0], T);
}

// The recipes a GPU backend draws the random-feature bandit's matrices from
// (OMKL_CUDA_BANDIT_DRAWS=device; CudaTest.BanditDeviceDrawnOmegaEqualsTheHostUpload runs them on
// the device), run over a simulated grid as kernels/frequency_draws.cu runs them: every kernel's
// Ω_i/σ_i of every repetition, bit for bit what the host path's hypotheses hold and upload.
TEST(BanditOmegaTest, RecipesGiveEachKernelsScaledOmega) {
  const Dictionary dictionary = parse_dictionary("gauss:0.5+gauss:1+gauss:3+gauss:0.1");
  for (const std::size_t D : {1u, 7u, 40u})
  for (const std::size_t d : {1u, 4u, 9u})
  for (const std::uint64_t replicate : {0u, 5u}) {
    const std::uint64_t seed = 1234;
    FeatureHypotheses host(dictionary, d, D, draw_bandit_omega(seed, replicate, 1, D, d), false);
    const auto recipes = bandit_omega_recipes(dictionary, d, seed, replicate);
    ASSERT_EQ(recipes.size(), dictionary.size());
    const std::vector<double> drawn = omkl::test::draw_by_recipe<omkl::test::HostBlocks>(recipes, D, d, 3);
    std::vector<double> expected(D * d);
    for (std::size_t k = 0; k < dictionary.size(); ++k) {
      host.scaled_frequencies(k, expected.data());
      const std::vector<double> got(drawn.begin() + k * D * d, drawn.begin() + (k + 1) * D * d);
      EXPECT_EQ(got, expected) << "D = " << D << ", d = " << d << ", replicate " << replicate << ", kernel " << k;
    }
  }
  // The draws are the repetition's own: another replicate's Ω differs.
  EXPECT_NE(draw_bandit_omega(1, 0, 1, 8, 3), draw_bandit_omega(1, 1, 1, 8, 3));
}
