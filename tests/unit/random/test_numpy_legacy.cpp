// rng = numpy_legacy (spec/graph-aided.md §1.9, Appendix A items 1 and 5): NumPy's legacy
// RandomState bit for bit, and the journal notebook's shared stream.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "common/test_helpers.h"
#include "random/notebook_stream.h"
#include "random/numpy_legacy.h"
#include "features/rf_ensemble.h"
#include "core/state_io.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

std::string config_message(const std::string& name, const AlgoContext& c, const Params& p) {
  return omkl::test::config_error_message(name, c, p);
}

TEST(NumpyLegacyTest, MatchesNumpySeedZeroVectors) {
  // np.random.seed(0); randn(3); standard_cauchy(3); rand(3)  (values from §1.9, verified
  // against NumPy by the spec's author). 1 ulp of slack for libm's log/sqrt.
  NumpyLegacyRandom rng(0);
  const double normals[] = {1.764052345967664, 0.40015720836722329, 0.9787379841057392};
  const double cauchys[] = {1.1999055510032708, -1.028617823193376, 1.4663717496142936};
  const double uniforms[] = {0.79172503808266459, 0.52889491975290448, 0.56804456109393231};
  for (double v : normals) EXPECT_NEAR(rng.normal(), v, 4e-16 * std::fabs(v));
  for (double v : cauchys) EXPECT_NEAR(rng.cauchy(), v, 4e-16 * std::fabs(v));
  for (double v : uniforms) EXPECT_EQ(rng.uniform(), v);  // no libm involved: exact
}

TEST(NumpyLegacyTest, RawOutputsEqualStdMt19937) {
  for (std::uint32_t seed : {0u, 1u, 12345u, 4294967295u}) {
    NumpyLegacyRandom ours(seed);
    std::mt19937 theirs(seed);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(ours.next_u32(), theirs()) << "seed " << seed << " at " << i;
  }
}

TEST(NumpyLegacyTest, DiscardEqualsDrawingAndKeepsTheNormalCache) {
  for (std::uint64_t n : {0u, 1u, 311u, 312u, 313u, 1000u, 5000u}) {
    NumpyLegacyRandom a(7), b(7);
    a.normal();  // leaves a cached normal behind, which uniform draws must not disturb
    b.normal();
    for (std::uint64_t i = 0; i < n; ++i) a.uniform();
    b.discard_uniforms(n);
    ASSERT_TRUE(a == b) << n;
    EXPECT_EQ(a.normal(), b.normal());
    EXPECT_EQ(a.uniform(), b.uniform());
  }
}

TEST(NumpyLegacyTest, SaveLoadContinuesTheStream) {
  NumpyLegacyRandom a(3);
  for (int i = 0; i < 777; ++i) a.uniform();
  a.normal();
  StateWriter out;
  a.save(out);
  NumpyLegacyRandom b(99);
  StateReader in(out.bytes());
  b.load(in);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(a.normal(), b.normal());
}

TEST(NotebookStreamTest, UniformsPerRunFollowAppendixA) {
  // Appendix A item 5: Airfoil, T = 1503, J = 2, switch 300.
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::Gf, 10, 1503), 21u * 302u + 1201u);
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::Sfg, 10, 1503), 300u);
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::SfgR, 10, 1503), 2u * 300u + 1203u);
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::FeaturesOnly, 10, 1503), 0u);
  // Streams shorter than the switch step.
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::Gf, 1, 100), 100u * 3u);
  EXPECT_EQ(notebook_run_uniforms(NotebookRun::SfgR, 5, 100), 200u);
}

TEST(NotebookStreamTest, FeaturesAreFilledRowMajorFromTheNormalStream) {
  // Appendix A item 1: Ψ_0[0,0] = 1.764052345967664 × sqrt(1/0.01); the next normals fill the
  // rest of row 0 (our V = Ψᵀ stores Ψ[a, c] at c·d + a).
  const Dictionary dict = parse_dictionary("jmlr23-76");
  const std::size_t D = 50, d = 5;
  NumpyLegacyRandom rng(0);
  const auto V = draw_notebook_features(rng, dict, D, d);
  ASSERT_EQ(V.size(), 76u);
  EXPECT_NEAR(V[0][0], 17.64052345967664, 1e-13);
  EXPECT_NEAR(V[0][1 * d + 0], 4.0015720836722329, 1e-14);
  EXPECT_NEAR(V[0][2 * d + 0], 9.787379841057392, 1e-14);
  // The Laplacian block starts after all 51 Gaussian blocks: replay and compare one entry.
  NumpyLegacyRandom replay(0);
  for (std::size_t i = 0; i < 51 * D * d; ++i) replay.normal();
  EXPECT_EQ(V[51][0], replay.cauchy() / dict[51].sigma);
}

TEST(NotebookStreamTest, StartsDependOnlyOnTheRepetition) {
  NotebookShape shape{parse_dictionary("gauss2:1+lap:0.5+gauss2:4"), 6, 3, 400};
  const auto together = notebook_starts(0, {2, 0, 2}, NotebookRun::Sfg, 10, shape);
  const auto alone = notebook_starts(0, {2}, NotebookRun::Sfg, 10, shape);
  ASSERT_EQ(together.size(), 3u);
  EXPECT_TRUE(together[0].stream == alone[0].stream);
  EXPECT_TRUE(together[2].stream == alone[0].stream);
  EXPECT_EQ(together[0].frequencies, alone[0].frequencies);
  // Repetition 0 starts with the first draws of the stream.
  NumpyLegacyRandom fresh(0);
  EXPECT_EQ(together[1].frequencies, draw_notebook_features(fresh, shape.dictionary, 6, 3));
  // Within a repetition: SFG M = 10 starts after the five GF runs and SFG M = 5.
  std::uint64_t skip = 0;
  for (std::size_t m : notebook_m_order()) skip += notebook_run_uniforms(NotebookRun::Gf, m, 400);
  skip += notebook_run_uniforms(NotebookRun::Sfg, 5, 400);
  fresh.discard_uniforms(skip);
  EXPECT_TRUE(together[1].stream == fresh);
}

TEST(NotebookStreamTest, ConfigurationErrorsNameTheParameter) {
  const auto data = random_stream(50, 3, Task::Regression);
  const auto ctx = context_for(data, Profile::Reference, {0}, 0);
  const Params numpy = {{"rng", "numpy_legacy"}, {"dict", "gauss2:1+lap:1+gauss2:2+lap:2+gauss2:3+lap:3+"
                                                            "gauss2:4+lap:4+gauss2:5+lap:5+gauss2:6"},
                        {"D", "4"}};
  auto with = [&](Params extra) {
    Params p = numpy;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };
  // M outside the notebook's {1, 5, 10, 15, 20}.
  EXPECT_NE(config_message("omkl-sfg", ctx, with({{"M", "7"}})).find("'rng'"), std::string::npos);
  // ORF is not how the notebook draws.
  EXPECT_NE(config_message("raker", ctx, with({{"rf", "orf"}})).find("'rng'"), std::string::npos);
  // The conference variants have no notebook.
  EXPECT_NE(config_message("sfg-mkl", ctx, with({{"M", "5"}})).find("'rng'"), std::string::npos);
  // Unknown stream length.
  AlgoContext no_horizon = ctx;
  no_horizon.horizon = 0;
  EXPECT_NE(config_message("omkl-gf", no_horizon, with({{"M", "5"}})).find("stream length"), std::string::npos);
  // A seed NumPy cannot take, and a kernel without a notebook sampler.
  AlgoContext big_seed = ctx;
  big_seed.seed = 1ull << 33;
  EXPECT_NE(config_message("raker", big_seed, with({{"rf", "rf"}})).find("seed"), std::string::npos);
  EXPECT_NE(config_message("raker", ctx, {{"rng", "numpy_legacy"}, {"rf", "rf"}, {"dict", "cauchy:1"}, {"D", "4"}})
                .find("Gaussian and Laplacian"),
            std::string::npos);
  EXPECT_NE(config_message("raker", ctx, {{"rng", "mt"}}).find("'rng'"), std::string::npos);
}

TEST(NotebookStreamTest, GraphCheckpointsCarryTheNumpyStream) {
  const auto data = random_stream(80, 3, Task::Regression);
  const Params params = {{"rng", "numpy_legacy"}, {"D", "5"}, {"M", "5"}, {"switch_step", "30"}};
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    const auto ctx = context_for(data, Profile::Reference, {0, 3}, 0);
    auto a = make(name, ctx, params);
    run_steps(*a, data, 0, 40);
    StateWriter out;
    a->save_state(out);
    const auto expected = run_steps(*a, data, 40, 80);
    auto b = make(name, ctx, params);
    StateReader in(out.bytes());
    b->load_state(in);
    const auto got = run_steps(*b, data, 40, 80);
    ASSERT_EQ(got, expected) << name;
  }
}

TEST(NotebookStreamTest, ReplicatesOfOneRunDiffer) {
  const auto data = random_stream(80, 3, Task::Regression);
  auto a = make("omkl-sfg-r", context_for(data, Profile::Reference, {0, 1}, 0),
                {{"rng", "numpy_legacy"}, {"D", "5"}, {"M", "10"}});
  const auto p = run_steps(*a, data);
  EXPECT_NE(p[2 * 79], p[2 * 79 + 1]);
}

}  // namespace
