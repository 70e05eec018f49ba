// Graph-aided OMKL (spec/graph-aided.md §2.1, §2.5–§2.7): OMKL-GF, OMKL-SFG, OMKL-SFG-R,
// SFG-MKL, SFG-MKL-R.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "common/temp_dir_test.h"
#include "common/test_helpers.h"
#include "families/graph_aided/divergence.h"
#include "families/graph_aided/feedback_graph.h"
#include "families/graph_aided/graph_aided.h"
#include "families/graph_aided/graph_aided_config.h"
#include "features/random_features.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "omkl/study.h"
#include "study/study_io.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

const char* const kAll[] = {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "sfg-mkl", "sfg-mkl-r"};
const std::string kDict3 = "gauss:0.5+gauss:1+gauss:2";

// z_k(x) computed directly from the frequencies the backend draws (seed, replicate, kernel).
std::vector<double> features(const KernelSpec& kernel, std::size_t D, const double* x, std::size_t d,
                             std::uint64_t seed, std::uint64_t replicate, std::size_t k) {
  RandomStream rng(seed, replicate, RngPurpose::Frequencies, k);
  const auto V = draw_frequencies(kernel, D, d, RfKind::Rf, rng);
  std::vector<double> z(2 * D);
  feature_map(V.data(), D, d, x, 1.0 / std::sqrt(double(D)), z.data());
  return z;
}

bool contains(const std::vector<std::size_t>& v, std::size_t k) {
  return std::find(v.begin(), v.end(), k) != v.end();
}

// θ of kernel k after a first step from θ = 0: θ = −(η/q̃)·2(0 − y)·z.
void expect_first_theta(const Algorithm& algo, const Dictionary& dict, const Dataset& data, std::size_t D,
                        std::uint64_t seed, std::size_t k, double eta, double q) {
  const auto z = features(dict[k], D, data.row(0), data.n_features, seed, 0, k);
  const auto theta = graph_aided_theta(algo, 0, k);
  ASSERT_EQ(theta.size(), 2 * D);
  for (std::size_t i = 0; i < 2 * D; ++i) EXPECT_NEAR(theta[i], 2.0 * eta / q * data.y[0] * z[i], 1e-12);
}

std::string config_message(const std::string& name, const AlgoContext& c, const Params& p) {
  return omkl::test::config_error_message(name, c, p);
}

}  // namespace

TEST(GraphAidedTest, GfHandCheckedFirstStep) {
  const auto data = random_stream(5, 2, Task::Regression);
  const auto ctx = context_for(data);
  const double eta = 0.2;
  auto algo = make("omkl-gf", ctx, {{"dict", kDict3}, {"D", "2"}, {"J", "1"}, {"M", "2"}, {"eta", "0.2"}});
  double pred = 0;
  algo->step(data.row(0), data.y[0], &pred);
  EXPECT_EQ(pred, 0.0);
  const GraphAidedTrace* tr = graph_aided_trace(*algo, 0);
  ASSERT_NE(tr, nullptr);
  EXPECT_DOUBLE_EQ(tr->eta, eta);  // 0.2/√1
  ASSERT_EQ(tr->node_pmf.size(), 1u);
  EXPECT_DOUBLE_EQ(tr->node_pmf[0], 1.0);
  ASSERT_GE(tr->updated.size(), 1u);
  ASSERT_LE(tr->updated.size(), 2u);
  // w = 1 ⇒ π_k = 1/3 for every k, q_k = 1 − (1 − 1/3)^M (eq. 21).
  const double q = 1.0 - std::pow(2.0 / 3.0, 2);
  for (double v : tr->q) EXPECT_NEAR(v, q, 1e-15);
  const Dictionary dict = parse_dictionary(kDict3);
  const auto w = graph_aided_kernel_weights(*algo, 0);
  for (std::size_t k = 0; k < 3; ++k) {
    if (contains(tr->updated, k)) {
      expect_first_theta(*algo, dict, data, 2, ctx.seed, k, eta, q);
      // paper form: ℓ = (f − y)²/q with the pre-update θ (= 0), w = exp(−η ℓ); max weight is 1
      // (an unselected kernel) — |S| ≤ 2 < 3.
      EXPECT_NEAR(w[k], std::exp(-eta * data.y[0] * data.y[0] / q), 1e-12);
    } else {
      for (double v : graph_aided_theta(*algo, 0, k)) EXPECT_EQ(v, 0.0);
      EXPECT_EQ(w[k], 1.0);
    }
  }
  // Second step: f_k = θ_kᵀ z_k(x_2) with θ_k from step 1, ŷ = Σ w f / Σ w over S_2.
  const std::vector<std::size_t> s1 = tr->updated;
  algo->step(data.row(1), data.y[1], &pred);
  tr = graph_aided_trace(*algo, 0);
  double num = 0, den = 0;
  for (std::size_t i = 0; i < tr->updated.size(); ++i) {
    const std::size_t k = tr->updated[i];
    double f = 0;
    if (contains(s1, k)) {
      const auto z0 = features(dict[k], 2, data.row(0), 2, ctx.seed, 0, k);
      const auto z1 = features(dict[k], 2, data.row(1), 2, ctx.seed, 0, k);
      for (std::size_t c = 0; c < 4; ++c) f += 2.0 * eta / q * data.y[0] * z0[c] * z1[c];
    }
    EXPECT_NEAR(tr->f[i], f, 1e-12);
    num += w[k] * f;
    den += w[k];
  }
  EXPECT_NEAR(pred, num / den, 1e-12);
}

TEST(GraphAidedTest, GfTwoSelectiveNodesProbabilities) {
  const auto data = random_stream(5, 2, Task::Regression);
  auto algo = make("omkl-gf", context_for(data, Profile::Reference),
                   {{"dict", kDict3}, {"D", "2"}, {"M", "2"}, {"eta", "0.3"}});
  double pred = 0;
  algo->step(data.row(0), data.y[0], &pred);
  const GraphAidedTrace* tr = graph_aided_trace(*algo, 0);
  ASSERT_EQ(tr->node_pmf.size(), 2u);
  EXPECT_NEAR(tr->node_pmf[0] + tr->node_pmf[1], 1.0, 1e-15);
  for (double p : tr->node_pmf) EXPECT_GE(p, 0.3 / 2 - 1e-15);  // eq. 19: p_j ≥ η_e/J
  // Equal weights ⇒ π = 1/3 in both columns ⇒ q = 5/9 whatever p is; the reference floor 0.05
  // does not bind.
  for (std::size_t i = 0; i < tr->q.size(); ++i) {
    EXPECT_NEAR(tr->q[i], 5.0 / 9.0, 1e-15);
    EXPECT_EQ(tr->q_used[i], tr->q[i]);
  }
}

TEST(GraphAidedTest, SfgReferenceHandCheckedFirstSteps) {
  const auto data = random_stream(8, 2, Task::Regression);
  const auto ctx = context_for(data, Profile::Reference);
  const double eta = 0.3, lambda = 0.01;
  auto algo = make("omkl-sfg", ctx, {{"dict", kDict3}, {"D", "3"}, {"M", "2"}, {"eta", "0.3"},
                                     {"lambda", "0.01"}, {"switch_step", "3"}});
  double pred = 0;
  algo->step(data.row(0), data.y[0], &pred);
  const GraphAidedTrace* tr = graph_aided_trace(*algo, 0);
  // Index-order graph: N_out(0) = [0,1], N_out(1) = [1,0], N_out(2) = [2,0]; D = [0, 2].
  EXPECT_EQ(tr->exploration_set, (std::vector<std::size_t>{0, 2}));
  const double base = (1 - eta) / 3;
  const std::vector<double> p = {base + eta / 2, base, base + eta / 2};
  for (std::size_t i = 0; i < 3; ++i) EXPECT_NEAR(tr->node_pmf[i], p[i], 1e-15);
  EXPECT_NE(tr->node, 0u);  // shifted sampler never returns 0
  const std::vector<double> q_all = {p[0] + p[1] + p[2], p[0] + p[1], p[2]};  // q = pᵀA
  const auto& expected_list = tr->node == 1 ? std::vector<std::size_t>{1, 0} : std::vector<std::size_t>{2, 0};
  EXPECT_EQ(tr->updated, expected_list);
  const Dictionary dict = parse_dictionary(kDict3);
  const auto w = graph_aided_kernel_weights(*algo, 0);
  for (std::size_t i = 0; i < tr->updated.size(); ++i) {
    const std::size_t k = tr->updated[i];
    EXPECT_NEAR(tr->q[i], q_all[k], 1e-15);
    const double qt = std::max(q_all[k], 0.1);
    EXPECT_EQ(tr->q_used[i], qt);
    expect_first_theta(*algo, dict, data, 3, ctx.seed, k, eta, qt);
    // reference: ridge term with θ_{t+1}; ‖θ_{t+1}‖² = (2ηy/q̃)²·‖z‖², ‖z‖² = 1.
    const double n2 = std::pow(2 * eta * data.y[0] / qt, 2);
    EXPECT_NEAR(std::log(w[k]), -eta * (data.y[0] * data.y[0] + lambda * n2) / qt, 1e-12);
  }
  // Vertex weight: u_I ← u_I·exp(−η (ŷ − y)²/max(p_I, 0.2)) with ŷ = 0.
  const auto u = graph_aided_vertex_weights(*algo, 0);
  EXPECT_NEAR(std::log(u[tr->node]), -eta * data.y[0] * data.y[0] / std::max(p[tr->node], 0.2), 1e-12);
  EXPECT_EQ(u[0], 1.0);
  // After switch_step = 3 the reference fixes vertex 0 (§3 R13).
  for (std::size_t t = 1; t < 6; ++t) algo->step(data.row(t), data.y[t], &pred);
  tr = graph_aided_trace(*algo, 0);
  EXPECT_EQ(tr->t, 6);
  EXPECT_EQ(tr->node, 0u);
  EXPECT_EQ(tr->updated, (std::vector<std::size_t>{0, 1}));
}

TEST(GraphAidedTest, SfgPaperArgmaxAfterSwitch) {
  const auto data = random_stream(30, 2, Task::Regression);
  auto algo = make("omkl-sfg", context_for(data),
                   {{"dict", kDict3}, {"D", "3"}, {"M", "2"}, {"switch_step", "10"}});
  run_steps(*algo, data, 0, 20);
  const GraphAidedTrace* tr = nullptr;
  double pred = 0;
  const auto u = graph_aided_vertex_weights(*algo, 0);
  const std::size_t best = std::max_element(u.begin(), u.end()) - u.begin();
  algo->step(data.row(20), data.y[20], &pred);
  EXPECT_EQ(graph_aided_trace(*algo, 0)->node, best);
  // paper profile: no clipping
  tr = graph_aided_trace(*algo, 0);
  for (std::size_t i = 0; i < tr->q.size(); ++i) EXPECT_EQ(tr->q[i], tr->q_used[i]);
}

TEST(GraphAidedTest, SfgRReferenceHandCheckedFirstStep) {
  const auto data = random_stream(5, 2, Task::Regression);
  const auto ctx = context_for(data, Profile::Reference);
  const double eta = 0.3;
  auto algo = make("omkl-sfg-r", ctx, {{"dict", kDict3}, {"D", "2"}, {"M", "2"}, {"eta", "0.3"},
                                       {"beta_rank", "2"}});
  double pred = 0;
  algo->step(data.row(0), data.y[0], &pred);
  const GraphAidedTrace* tr = graph_aided_trace(*algo, 0);
  // Equal ū ⇒ D' = all three vertices (ties), p = 1/3; NaN divergences ⇒ d_i = 0 for all i, so
  // B = A + {0→2}: q_0 = 1, q_1 = p_0 + p_1, q_2 = p_2 + p_0.
  EXPECT_EQ(tr->exploration_set, (std::vector<std::size_t>{0, 1, 2}));
  for (double p : tr->node_pmf) EXPECT_NEAR(p, 1.0 / 3, 1e-15);
  const std::vector<double> q_all = {1.0, 2.0 / 3, 2.0 / 3};
  EXPECT_NE(tr->node, 0u);
  EXPECT_EQ(tr->updated, tr->predicted);  // vertex 0 (the only refined list) is never drawn
  const Dictionary dict = parse_dictionary(kDict3);
  for (std::size_t i = 0; i < tr->updated.size(); ++i) {
    EXPECT_NEAR(tr->q[i], q_all[tr->updated[i]], 1e-15);
    expect_first_theta(*algo, dict, data, 2, ctx.seed, tr->updated[i], eta, std::max(tr->q[i], 0.1));
  }
}

TEST(GraphAidedTest, SfgRPaperRefinedNeighbourhoodCoversEverything) {
  // Paper profile: q_k ≥ β_t for every k because D'_t dominates G'_t (§2.6.a step 6).
  const auto data = random_stream(40, 2, Task::Regression);
  auto algo = make("omkl-sfg-r", context_for(data),
                   {{"dict", "gauss:0.3+gauss:0.6+gauss:1+gauss:2+gauss:4"}, {"D", "3"}, {"M", "2"},
                    {"beta_rank", "2"}, {"eta", "0.5"}});
  double pred = 0;
  for (std::size_t t = 0; t < 40; ++t) {
    algo->step(data.row(t), data.y[t], &pred);
    const GraphAidedTrace* tr = graph_aided_trace(*algo, 0);
    double pmin = 1;
    for (std::size_t i : tr->exploration_set) pmin = std::min(pmin, tr->node_pmf[i]);
    for (double q : tr->q) EXPECT_GE(q, pmin - 1e-12);
    EXPECT_EQ(tr->updated, tr->predicted);  // sfgr_predict_with_refined
  }
}

TEST(GraphAidedTest, PerStepCostFollowsM) {
  const auto data = random_stream(60, 3, Task::Regression);
  for (const char* name : {"omkl-gf", "omkl-sfg", "sfg-mkl"}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      auto algo = make(name, context_for(data, profile, {0, 1}), {{"D", "4"}, {"M", "3"}, {"switch_step", "30"}});
      run_steps(*algo, data);
      // GF: the kernels of one selective node (≤ M distinct); SFG: N_out(I), exactly M.
      EXPECT_LE(graph_aided_max_pairs_per_step(*algo), 2u * 3u) << name;
      EXPECT_GE(graph_aided_max_pairs_per_step(*algo), 2u) << name;
    }
  }
  // SFG with M = 1 in reference form: vertex 0 is never drawn before the switch, and each
  // step updates exactly one kernel, so θ_0 stays 0 while the dictionary has 76 kernels.
  auto sfg = make("omkl-sfg", context_for(data, Profile::Reference), {{"D", "4"}, {"M", "1"}});
  run_steps(*sfg, data);
  EXPECT_EQ(graph_aided_max_pairs_per_step(*sfg), 1u);
  for (double v : graph_aided_theta(*sfg, 0, 0)) EXPECT_EQ(v, 0.0);
  // SFG-R updates the refined neighbourhood: at most N kernels (76 here).
  auto sfgr = make("omkl-sfg-r", context_for(data, Profile::Reference), {{"D", "4"}, {"M", "3"}});
  run_steps(*sfgr, data);
  EXPECT_LE(graph_aided_max_pairs_per_step(*sfgr), 76u);
}

TEST(GraphAidedTest, SaveRestoreIsBitIdentical) {
  const auto data = random_stream(60, 3, Task::Regression);
  for (const char* name : kAll) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      const auto ctx = context_for(data, profile, {0, 4});
      const Params params = {{"D", "5"}, {"M", "4"}, {"switch_step", "25"}};
      auto a = make(name, ctx, params);
      run_steps(*a, data, 0, 20);
      StateWriter out;
      a->save_state(out);
      const auto expected = run_steps(*a, data, 20, 60);
      auto b = make(name, ctx, params);
      StateReader in(out.bytes());
      b->load_state(in);
      const auto got = run_steps(*b, data, 20, 60);
      ASSERT_EQ(got.size(), expected.size());
      for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], expected[i]) << name << " at " << i;
    }
  }
}

TEST(GraphAidedTest, PredictEqualsNextStepAndKeepsState) {
  const auto data = random_stream(40, 3, Task::Regression);
  for (const char* name : kAll) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      auto a = make(name, context_for(data, profile, {0, 1}), {{"D", "5"}, {"M", "4"}, {"switch_step", "10"}});
      for (std::size_t t = 0; t < 30; ++t) {
        double p1[2], p2[2], s[2];
        a->predict(data.row(t), p1);
        a->predict(data.row(t), p2);
        a->step(data.row(t), data.y[t], s);
        for (int r = 0; r < 2; ++r) {
          ASSERT_EQ(p1[r], p2[r]) << name;
          ASSERT_EQ(p1[r], s[r]) << name << " t=" << t;
        }
      }
    }
  }
}

TEST(GraphAidedTest, ReplicatesInLockstepEqualSeparateRuns) {
  const auto data = random_stream(40, 3, Task::Regression);
  for (const char* name : kAll) {
    const Params params = {{"D", "5"}, {"M", "3"}, {"switch_step", "15"}};
    auto joint = make(name, context_for(data, Profile::Reference, {0, 1, 2}), params);
    const auto all = run_steps(*joint, data);
    for (std::uint64_t r = 0; r < 3; ++r) {
      auto single = make(name, context_for(data, Profile::Reference, {r}), params);
      const auto one = run_steps(*single, data);
      for (std::size_t t = 0; t < data.n_samples; ++t) ASSERT_EQ(one[t], all[t * 3 + r]) << name;
    }
  }
}

TEST(GraphAidedTest, BadParametersNameTheParameter) {
  const auto data = random_stream(10, 2, Task::Regression);
  const auto ctx = context_for(data);
  for (const char* name : kAll) {
    EXPECT_NE(config_message(name, ctx, {{"bogus", "1"}}).find("bogus"), std::string::npos) << name;
    EXPECT_NE(config_message(name, ctx, {{"dict", kDict3}, {"M", "4"}, {"beta_rank", "2"}}).find("'M'"),
              std::string::npos)
        << name;
    EXPECT_NE(config_message(name, ctx, {{"M", "0"}}).find("'M'"), std::string::npos) << name;
    EXPECT_NE(config_message(name, ctx, {{"eta", "1.5"}}).find("'eta'"), std::string::npos) << name;
    EXPECT_NE(config_message(name, ctx, {{"D", "0"}}).find("'D'"), std::string::npos) << name;
    EXPECT_NE(config_message(name, ctx, {{"lambda", "-1"}}).find("'lambda'"), std::string::npos) << name;
  }
  for (const char* name : {"omkl-sfg-r", "sfg-mkl-r"}) {
    EXPECT_NE(config_message(name, ctx, {{"beta", "1.5"}}).find("'beta'"), std::string::npos);
    EXPECT_NE(config_message(name, ctx, {{"beta", "0"}}).find("'beta'"), std::string::npos);
    // The β rule needs the 10 largest ū: a 3-kernel dictionary is too small.
    EXPECT_NE(config_message(name, ctx, {{"dict", kDict3}, {"M", "2"}}).find("'dict'"), std::string::npos);
    EXPECT_NE(config_message(name, ctx, {{"beta_rank", "0"}}).find("'beta_rank'"), std::string::npos);
  }
  EXPECT_NE(config_message("omkl-gf", ctx, {{"J", "0"}}).find("'J'"), std::string::npos);
  EXPECT_NE(config_message("omkl-gf", ctx, {{"gf_q_floor", "2"}}).find("'gf_q_floor'"), std::string::npos);
  EXPECT_NE(config_message("omkl-sfg", ctx, {{"sfg_after_switch", "x"}}).find("sfg_after_switch"),
            std::string::npos);
  EXPECT_NE(config_message("omkl-sfg", ctx, {{"dict", "gauss:1+poly:2"}}).find("'dict'"), std::string::npos);
  EXPECT_THROW(make("omkl-sfg", context_for(random_stream(10, 2, Task::Classification))), ConfigError);
}

TEST(GraphAidedTest, LearnsASmoothStream) {
  // §1.2 preprocessing: inputs scaled so that the largest row norm is 1.
  auto data = random_stream(800, 3, Task::Regression);
  for (double& v : data.x) v /= std::sqrt(3.0);
  // Error of the untrained learner (ŷ = 0) and of the best constant.
  double mean = 0, var = 0, zero = 0;
  for (double y : data.y) mean += y / data.n_samples;
  for (double y : data.y) var += (y - mean) * (y - mean) / data.n_samples;
  for (double y : data.y) zero += y * y / data.n_samples;
  for (const char* name : kAll) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      auto algo = make(name, context_for(data, profile), {{"D", "20"}});
      const auto pred = run_steps(*algo, data);
      double early = 0, late = 0;
      for (std::size_t t = 0; t < 100; ++t) early += std::pow(pred[t] - data.y[t], 2) / 100;
      for (std::size_t t = 600; t < 800; ++t) late += std::pow(pred[t] - data.y[t], 2) / 200;
      // Measured (seed 3): late/early ≈ 0.13 (GF), 0.18–0.22 (SFG, SFG-R), ≤ 0.13 (conference).
      EXPECT_LT(late, 0.3 * early) << name;
      EXPECT_LT(late, 0.2 * zero) << name;
      if (std::string(name) == "omkl-gf" || std::string(name).rfind("sfg-mkl", 0) == 0)
        EXPECT_LT(late, var) << name;  // beats the best constant predictor
    }
  }
}

TEST(GraphAidedTest, GfSurvivesLargeLossesAfterTheGraphFreezes) {
  // Regression test: with targets in the hundreds the kernel weights spread over hundreds of
  // nats; once regeneration stops, the kernels the frozen graph links may all be far below the
  // heaviest kernel, and weights shifted by that kernel underflowed to an all-zero node
  // distribution ("weights must have a positive sum").
  auto data = random_stream(400, 3, Task::Regression);
  for (double& y : data.y) y *= 300.0;
  for (Profile profile : {Profile::Paper, Profile::Reference}) {
    auto algo = make("omkl-gf", context_for(data, profile), {{"switch_step", "20"}, {"D", "8"}});
    std::vector<double> pred;
    ASSERT_NO_THROW(pred = run_steps(*algo, data));
    for (double p : pred) ASSERT_TRUE(std::isfinite(p));
  }
}

TEST(GraphAidedTest, VertexLossWithTheRidgeTerm) {
  // u_loss = ridge (§7 A-5): L = (ŷ − y)² + λ‖Σ_{k∈S} w̄_k θ_k‖², θ after the step. After one step
  // (uniform w̄), the drawn vertex's log u differs from the squared-error run by η·ridge/p̃.
  const Dataset data = random_stream(3, 3, Task::Regression);
  const AlgoContext c = context_for(data);
  const Params common{{"dict", kDict3}, {"D", "8"}, {"M", "2"}, {"lambda", "0.3"}};
  Params ridge = common;
  ridge.emplace_back("u_loss", "ridge");
  auto plain = make("sfg-mkl", c, common);
  auto with_ridge = make("sfg-mkl", c, ridge);
  // §3 R9's name for the same loss: the same run bit for bit.
  EXPECT_EQ(run_steps(*make("sfg-mkl", c, omkl::test::with_param(common, "u_loss", "sq_error_plus_ridge")), data),
            run_steps(*make("sfg-mkl", c, ridge), data));
  double p1, p2;
  plain->step(data.row(0), data.y[0], &p1);
  with_ridge->step(data.row(0), data.y[0], &p2);
  ASSERT_EQ(p1, p2);
  const GraphAidedTrace& tr = *graph_aided_trace(*with_ridge, 0);
  std::vector<double> sum(16, 0.0);
  for (std::size_t k : tr.predicted) {
    const auto theta = graph_aided_theta(*with_ridge, 0, k);
    for (std::size_t j = 0; j < 16; ++j) sum[j] += theta[j] / double(tr.predicted.size());
  }
  double n2 = 0.0;
  for (double v : sum) n2 += v * v;
  const double expected = tr.eta * 0.3 * n2 / tr.node_pmf[tr.node];
  const auto u_plain = graph_aided_vertex_weights(*plain, 0), u_ridge = graph_aided_vertex_weights(*with_ridge, 0);
  // Vertex weights are normalised to max 1: compare the drawn vertex's ratio to an untouched one.
  const std::size_t other = tr.node == 0 ? 1 : 0;
  EXPECT_GT(n2, 0.0);
  EXPECT_NEAR(std::log(u_plain[tr.node] / u_plain[other]) - std::log(u_ridge[tr.node] / u_ridge[other]), expected, 1e-12);
}

TEST(GraphAidedTest, ExplorationRatesAreSetApartFromTheLearningRate) {
  // §1.6: ξ_t (SFG / SFG-R, `xi`) and η_{e,t} (GF, `eta_e`) on η's schedule, each η by default.
  // SFG's vertex PMF is (1 − ξ_t)u/U + ξ_t/|E| on its exploration set E (eq. 33), with u the
  // weights before the step; η_t stays the learning rate.
  const Dataset data = random_stream(8, 3, Task::Regression);
  const AlgoContext c = context_for(data);
  const Params common{{"dict", kDict3}, {"D", "8"}, {"M", "2"}};
  for (const char* name : {"omkl-sfg", "omkl-sfg-r"}) {
  for (const char* schedule : {"inv_sqrt_t", "const"}) {  // ξ's own schedule; η's stays 0.1/√t
    SCOPED_TRACE(std::string(name) + " xi_schedule=" + schedule);
    const bool constant = std::string(schedule) == "const";
    Params params = omkl::test::with_param(common, "xi", "0.4");
    params.emplace_back("xi_schedule", schedule);
    if (std::string(name) == "omkl-sfg-r") params.emplace_back("beta_rank", "2");  // of 3 vertices
    auto a = make(name, c, params);
    for (std::size_t t = 1; t <= 6; ++t) {
      const std::vector<double> u = graph_aided_vertex_weights(*a, 0);
      double total = 0.0;
      for (double v : u) total += v;
      double prediction = 0.0;
      a->step(data.row(t - 1), data.y[t - 1], &prediction);
      const GraphAidedTrace& tr = *graph_aided_trace(*a, 0);
      const double xi = constant ? 0.4 : 0.4 / std::sqrt(double(t));
      EXPECT_DOUBLE_EQ(tr.explore, xi);
      EXPECT_DOUBLE_EQ(tr.eta, 0.1 / std::sqrt(double(t)));
      ASSERT_EQ(tr.node_pmf.size(), u.size());
      ASSERT_FALSE(tr.exploration_set.empty());
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double share = contains(tr.exploration_set, i) ? xi / double(tr.exploration_set.size()) : 0.0;
        EXPECT_NEAR(tr.node_pmf[i], (1.0 - xi) * u[i] / total + share, 1e-12) << "t " << t << " vertex " << i;
      }
    }
  }
  }
  // Given as η, the same numbers bit for bit; apart from η, other numbers (both families).
  for (const auto& [name, key] : {std::pair<const char*, const char*>{"omkl-sfg", "xi"}, {"omkl-gf", "eta_e"}}) {
    SCOPED_TRACE(name);
    // Six kernels: GF's two nodes then link different kernels, so η_e shows in the draws.
    const Params journal{{"dict", "gauss:0.3+gauss:0.5+gauss:1+gauss:2+gauss:4+lap:1"}, {"D", "8"}, {"M", "2"}};
    const std::vector<double> plain = run_steps(*make(name, c, journal), data);
    EXPECT_EQ(run_steps(*make(name, c, omkl::test::with_param(journal, key, "0.1")), data), plain);
    EXPECT_NE(run_steps(*make(name, c, omkl::test::with_param(journal, key, "0.9")), data), plain);
  }
  EXPECT_NE(config_message("omkl-sfg", c, {{"xi", "1.5"}}).find("xi"), std::string::npos);
  EXPECT_NE(config_message("omkl-sfg-r", c, {{"xi", "1"}, {"beta_rank", "2"}}).find("refinement"), std::string::npos);
  EXPECT_NE(config_message("omkl-gf", c, {{"eta_e", "0"}}).find("eta_e"), std::string::npos);
  EXPECT_NE(config_message("omkl-gf", c, {{"xi", "0.2"}}).find("xi"), std::string::npos);  // SFG's rate
  EXPECT_NE(config_message("omkl-gf", c, {{"eta_e_schedule", "cosine"}}).find("eta_e_schedule"), std::string::npos);
  EXPECT_EQ(config_message("omkl-sfg", c, {{"eta", "2"}, {"xi", "0.5"}}), "");  // η alone may exceed 1
  EXPECT_NE(config_message("omkl-sfg", c, {{"eta", "2"}}).find("exploration"), std::string::npos);
  // A preset's soft default counts as given: range-checked and named as itself.
  try {
    make_algorithm("omkl-sfg-r", {{"beta_rank", "2"}}, {{"xi", "1"}}, c);
    ADD_FAILURE() << "ξ = 1 from a soft default was not refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'xi'"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(make_algorithm("omkl-sfg", {{"eta", "2"}}, {{"xi", "0.5"}}, c));
}

// §1.6's three step-size presets (`step_preset`): the journal's η_t = ξ_t = η_{e,t} = 0.1/√t (the
// journal algorithms' default), the conference's η = ξ = 1/√T constant (the conference
// algorithms') and the ICML code's η_t = η_{e,t} = 1/√t; eta and eta_schedule, given, win.
TEST(GraphAidedTest, StepPresetsAreTheThreeSchedulesOfTheExperiments) {
  const Dataset data = random_stream(16, 3, Task::Regression);
  const AlgoContext c = context_for(data);  // horizon 16: 1/√T = 0.25
  const Params common{{"dict", kDict3}, {"D", "8"}, {"M", "2"}};
  const auto rates = [&](const std::string& name, const Params& params) {
    auto a = make(name, c, params);
    std::vector<std::pair<double, double>> out;  // (η_t, exploration rate) of steps 1, 2, 4
    double prediction = 0.0;
    for (std::size_t t = 1; t <= 4; ++t) {
      a->step(data.row(t - 1), data.y[t - 1], &prediction);
      const GraphAidedTrace& tr = *graph_aided_trace(*a, 0);
      if (t != 3) out.emplace_back(tr.eta, tr.explore);
    }
    return out;
  };
  using Rates = std::vector<std::pair<double, double>>;
  const Rates journal = {{0.1, 0.1}, {0.1 / std::sqrt(2.0), 0.1 / std::sqrt(2.0)}, {0.05, 0.05}};
  const Rates icml = {{1.0, 1.0}, {1.0 / std::sqrt(2.0), 1.0 / std::sqrt(2.0)}, {0.5, 0.5}};
  const Rates conference = {{0.25, 0.25}, {0.25, 0.25}, {0.25, 0.25}};
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    SCOPED_TRACE(name);
    const Params p = std::string(name) == "omkl-sfg-r" ? omkl::test::with_param(common, "beta_rank", "2") : common;
    EXPECT_EQ(rates(name, p), journal);
    EXPECT_EQ(rates(name, omkl::test::with_param(p, "step_preset", "journal")), journal);
    if (std::string(name) != "omkl-sfg-r")  // SFG-R's refinement needs ξ < 1
      EXPECT_EQ(rates(name, omkl::test::with_param(p, "step_preset", "icml")), icml);
    EXPECT_EQ(rates(name, omkl::test::with_param(p, "step_preset", "conference")), conference);
    // Given, eta wins over the preset's.
    const Rates half = {{0.5, 0.5}, {0.5 / std::sqrt(2.0), 0.5 / std::sqrt(2.0)}, {0.25, 0.25}};
    EXPECT_EQ(rates(name, omkl::test::with_param(omkl::test::with_param(p, "step_preset", "icml"), "eta", "0.5")),
              half);
  }
  EXPECT_EQ(rates("sfg-mkl", common), conference);
  EXPECT_EQ(rates("sfg-mkl", omkl::test::with_param(common, "step_preset", "journal")), journal);
  EXPECT_NE(config_message("omkl-sfg", c, {{"step_preset", "nips"}}).find("'step_preset'"), std::string::npos);
}

// §1.6: η_t, ξ_t and η_{e,t} as tables (`*_schedule=table:FILE`, the t-th number for step t).
class RateTableTest : public omkl::test::TempDirTest {
 protected:
  /// A table of rate(t) for t = 1..n, written to the full precision of a double.
  std::string table(const std::string& name, std::size_t n, const std::function<double(std::size_t)>& rate) const {
    std::string text = "# rate per step\n";
    char cell[40];
    for (std::size_t t = 1; t <= n; ++t) {
      std::snprintf(cell, sizeof cell, "%.17g%s", rate(t), t % 4 == 0 ? "\n" : ", ");
      text += cell;
    }
    return write(name, text);
  }
  static std::string input_message(const std::string& name, const AlgoContext& c, const Params& p) {
    try {
      make(name, c, p);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(RateTableTest, ATableOfTheScheduleGivesItsNumbersAndAnyTableItsRates) {
  const Dataset data = random_stream(30, 3, Task::Regression);
  const AlgoContext c = context_for(data);
  const Params journal{{"dict", "gauss:0.3+gauss:0.5+gauss:1+gauss:2+gauss:4+lap:1"}, {"D", "8"}, {"M", "2"}};
  const std::string inv_sqrt = table("eta.txt", 30, [](std::size_t t) { return 0.1 / std::sqrt(double(t)); });
  const std::string explore = table("xi.txt", 30, [](std::size_t t) { return 0.3 / std::sqrt(double(t)); });
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "sfg-mkl"}) {
    SCOPED_TRACE(name);
    // SFG-R's rank rule needs at most N = 6 vertices.
    const Params dict = std::string(name) == "omkl-sfg-r" ? omkl::test::with_param(journal, "beta_rank", "3") : journal;
    const std::string key = std::string(name) == "omkl-gf" ? "eta_e" : "xi";
    // η's table is also the exploration rate's, as one number plays both by default.
    const Params base = omkl::test::with_param(omkl::test::with_param(dict, "eta_schedule", "inv_sqrt_t"), "eta",
                                               "0.1");
    const auto plain = run_steps(*make(name, c, base), data);
    const Params on_table = omkl::test::with_param(dict, "eta_schedule", "table:" + inv_sqrt);
    EXPECT_EQ(run_steps(*make(name, c, on_table), data), plain);
    // The exploration rate's own table: the same numbers as that rate on the same schedule.
    const Params apart = omkl::test::with_param(omkl::test::with_param(base, key, "0.3"), key + "_schedule",
                                                "inv_sqrt_t");
    const Params apart_table = omkl::test::with_param(base, key + "_schedule", "table:" + explore);
    EXPECT_EQ(run_steps(*make(name, c, apart_table), data), run_steps(*make(name, c, apart), data));
  }
  // Any rates: each step's η_t and ξ_t are the tables' t-th numbers.
  const std::string eta = table("any_eta.txt", 30, [](std::size_t t) { return t % 3 == 0 ? 1.7 : 0.05 * double(t); });
  const std::string xi = table("any_xi.txt", 30, [](std::size_t t) { return t % 2 == 0 ? 0.5 : 0.02; });
  auto a = make("omkl-sfg", c,
                omkl::test::with_param(omkl::test::with_param(journal, "eta_schedule", "table:" + eta),
                                       "xi_schedule", "table:" + xi));
  for (std::size_t t = 1; t <= 30; ++t) {
    double prediction = 0.0;
    a->step(data.row(t - 1), data.y[t - 1], &prediction);
    const GraphAidedTrace& tr = *graph_aided_trace(*a, 0);
    EXPECT_EQ(tr.eta, t % 3 == 0 ? 1.7 : 0.05 * double(t)) << t;
    EXPECT_EQ(tr.explore, t % 2 == 0 ? 0.5 : 0.02) << t;
  }
}

TEST_F(RateTableTest, BadTablesAreRefusedNamingTheFileLineAndColumn) {
  const Dataset data = random_stream(6, 3, Task::Regression);
  const AlgoContext c = context_for(data);
  const auto with_schedule = [](const std::string& key, const std::string& value) {
    return Params{{"dict", kDict3}, {"D", "8"}, {"M", "2"}, {key, value}};
  };
  const std::string six = table("six.txt", 6, [](std::size_t) { return 0.1; });
  const std::string missing = (dir_ / "absent.txt").string();
  std::string m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + missing));
  EXPECT_NE(m.find("eta_schedule"), std::string::npos) << m;
  EXPECT_NE(m.find(missing + "': cannot open"), std::string::npos) << m;
  const std::string word = write("word.txt", "0.1, 0.2\n0.3,abc\n");
  m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + word));
  EXPECT_NE(m.find(word + ":2:5: 'abc' is not a number"), std::string::npos) << m;
  m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + write("zero.txt", "0.1 0 0.1")));
  EXPECT_NE(m.find("zero.txt:1:5: rate 0 must be finite, > 0"), std::string::npos) << m;
  // η's table is also the exploration rate unless that has its own: then at most 1.
  m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + write("big.txt", "0.1 1.5 0.1")));
  EXPECT_NE(m.find("≤ 1"), std::string::npos) << m;
  m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + write("nan.txt", "0.1 nan")));
  EXPECT_NE(m.find("nan.txt:1:5"), std::string::npos) << m;
  m = input_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + write("empty.txt", "# none\n")));
  EXPECT_NE(m.find("lists no rate"), std::string::npos) << m;
  // Configuration errors: too short for the stream, a rate given twice, no exploration rate, an
  // unknown schedule, SFG-R's ξ at 1, and the resident walk (a table is read on the host).
  m = config_message("omkl-sfg", c, with_schedule("eta_schedule", "table:" + write("three.txt", "0.1 0.1 0.1")));
  EXPECT_NE(m.find("lists 3 rates for a stream of 6 steps"), std::string::npos) << m;
  Params twice = with_schedule("eta_schedule", "table:" + six);
  twice.emplace_back("eta", "0.1");
  EXPECT_NE(config_message("omkl-sfg", c, twice).find("'eta'"), std::string::npos);
  Params no_xi = with_schedule("eta_schedule", "table:" + six);
  no_xi.emplace_back("xi_schedule", "const");
  EXPECT_NE(config_message("omkl-sfg", c, no_xi).find("'xi' has no default"), std::string::npos);
  no_xi.emplace_back("xi", "0.2");
  EXPECT_EQ(config_message("omkl-sfg", c, no_xi), "");
  EXPECT_NE(config_message("omkl-sfg", c, with_schedule("eta_schedule", "table:")).find("table:FILE"),
            std::string::npos);
  EXPECT_NE(config_message("omkl-sfg", c, with_schedule("eta_schedule", "cosine")).find("eta_schedule"),
            std::string::npos);
  Params xi_one = with_schedule("xi_schedule", "table:" + write("xi_one.txt", "0.5 1 0.5 0.5 0.5 0.5"));
  xi_one.emplace_back("beta_rank", "2");
  EXPECT_NE(config_message("omkl-sfg-r", c, xi_one).find("refinement threshold"), std::string::npos);
  Params resident = with_schedule("eta_schedule", "table:" + six);
  resident.emplace_back("step_path", "resident");
  EXPECT_NE(config_message("omkl-sfg", c, resident).find("rate table"), std::string::npos);
  // A stream of unknown length: the step past the table's end fails, naming the table.
  AlgoContext live = c;
  live.horizon = 0;
  auto a = make("omkl-sfg", live, with_schedule("eta_schedule", "table:" + write("two.txt", "0.1 0.1")));
  double prediction = 0.0;
  a->step(data.row(0), data.y[0], &prediction);
  a->step(data.row(1), data.y[1], &prediction);
  try {
    a->step(data.row(2), data.y[2], &prediction);
    ADD_FAILURE() << "the third step of a two-rate table ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 rates; step 3 needs its own"), std::string::npos) << e.what();
  }
}

TEST_F(RateTableTest, ACheckpointKeepsItsTablesRatesAndRefusesAChangedFile) {
  const Dataset data = random_stream(40, 3, Task::Regression);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 2});
  const std::string eta = table("eta.txt", 40, [](std::size_t t) { return 0.2 / std::sqrt(double(t)); });
  const std::string xi = table("xi.txt", 40, [](std::size_t t) { return t < 10 ? 0.5 : 0.1; });
  const Params params{{"dict", kDict3}, {"D", "5"}, {"M", "2"}, {"eta_schedule", "table:" + eta},
                      {"xi_schedule", "table:" + xi}};
  auto a = make("omkl-sfg", c, params);
  run_steps(*a, data, 0, 15);
  StateWriter out;
  a->save_state(out);
  const auto expected = run_steps(*a, data, 15, 40);
  auto b = make("omkl-sfg", c, params);
  StateReader in(out.bytes());
  b->load_state(in);
  EXPECT_EQ(run_steps(*b, data, 15, 40), expected);
  // The exploration table edited since the checkpoint: refused, naming it.
  table("xi.txt", 40, [](std::size_t t) { return t < 10 ? 0.5 : 0.2; });
  auto changed = make("omkl-sfg", c, params);
  StateReader again(out.bytes());
  try {
    changed->load_state(again);
    ADD_FAILURE() << "a checkpoint continued on a changed rate table";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rate table '" + xi + "' is not the one"), std::string::npos) << e.what();
  }
}

TEST(GraphAidedTest, VertexUpdateFromThePredictionIsTheArchaeologyFlag) {
  // u_update_uses_prediction: the 2021 code moved u by exp(−η·ŷ/p̃). A step moves the drawn
  // vertex's log u relative to an untouched one by −η·ŷ/p̃ (by −η(ŷ − y)²/p̃ by default).
  const Dataset data = random_stream(3, 3, Task::Regression);
  const AlgoContext c = context_for(data);
  const Params common{{"dict", kDict3}, {"D", "8"}, {"M", "2"}};
  Params archaeology = common;
  archaeology.emplace_back("u_update_uses_prediction", "true");
  auto a = make("sfg-mkl", c, archaeology);
  double prediction = 0.0;
  a->step(data.row(0), data.y[0], &prediction);  // θ = 0: ŷ = 0, u unmoved
  const auto before = graph_aided_vertex_weights(*a, 0);
  a->step(data.row(1), data.y[1], &prediction);
  const GraphAidedTrace& tr = *graph_aided_trace(*a, 0);
  const auto after = graph_aided_vertex_weights(*a, 0);
  const std::size_t other = tr.node == 0 ? 1 : 0;
  EXPECT_NE(prediction, 0.0);
  EXPECT_NEAR(std::log(after[tr.node] / after[other]) - std::log(before[tr.node] / before[other]),
              -tr.eta * prediction / tr.node_pmf[tr.node], 1e-12);
  Params both = archaeology;
  both.emplace_back("u_loss", "ridge");
  EXPECT_NE(omkl::test::config_error_message("sfg-mkl", c, both).find("u_update_uses_prediction"), std::string::npos);
}

TEST(GraphAidedTest, OfflineConstructionIsTimedWithTheRun) {
  // §1.7: the run time includes building the graph and dominating set (and SFG-R's divergences)
  // and excludes drawing the features. The SFG learners report that construction's time, which
  // a study adds to each replicate's loop time; OMKL-GF, whose graph is drawn in the loop, and
  // the other algorithms report none.
  const Dataset data = random_stream(40, 3, Task::Regression, 2);
  const auto c = context_for(data);
  for (const char* name : {"omkl-sfg", "omkl-sfg-r", "sfg-mkl"}) {
    auto a = make(name, c, {{"D", "4"}});
    EXPECT_GT(a->offline_seconds(), 0.0) << name;
    EXPECT_LT(a->offline_seconds(), 60.0) << name;
  }
  EXPECT_EQ(make("omkl-gf", c, {{"D", "4"}})->offline_seconds(), 0.0);
  EXPECT_EQ(make("raker", c, {{"D", "4"}})->offline_seconds(), 0.0);
}

// ---- divergence=table:FILE (§7 A-15: a Δ of the user's own) ----------------------------------

class DivergenceTableTest : public omkl::test::TempDirTest {
 protected:
  /// An n × n matrix, row i on line i, to the full precision of a double.
  std::string matrix(const std::string& name, const std::vector<double>& values, std::size_t n) const {
    std::string text = "# Δ(i, j), row i\n";
    char cell[40];
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        std::snprintf(cell, sizeof cell, "%.17g%s", values[i * n + j], j + 1 == n ? "\n" : ", ");
        text += cell;
      }
    return write(name, text);
  }
  static GraphAidedConfig config(const AlgoContext& c, GraphFamily family, const Params& p) {
    ParamReader params(family == GraphFamily::SfgR ? "omkl-sfg-r" : "omkl-sfg", p);
    return read_graph_aided_config(params, c, family, false);
  }
  static std::string error(const std::string& name, const AlgoContext& c, const Params& p) {
    try {
      make(name, c, p);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
};

const std::string kDict5 = "gauss:0.5+gauss:1+gauss:2+lap:1+lap:3";

TEST_F(DivergenceTableTest, TheExactDeltaAsATableIsTheExactDivergenceBitForBit) {
  const Dataset data = random_stream(60, 3, Task::Regression, 7);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 1});
  const DivergenceMatrix exact = divergence_matrix(parse_dictionary(kDict5), DivergenceForm::Exact, 3);
  ASSERT_EQ(exact.log_scale, 0.0);  // the table holds Δ itself
  const std::string file = matrix("delta.txt", exact.values, 5);
  for (const char* name : {"omkl-sfg", "omkl-sfg-r", "sfg-mkl"}) {
    Params common{{"dict", kDict5}, {"D", "6"}, {"M", "2"}};
    if (std::string(name) == "omkl-sfg-r") common.emplace_back("beta_rank", "2");
    Params given = common;
    given.emplace_back("divergence", "table:" + file);
    const auto expected = run_steps(*make(name, c, common), data);
    const auto got = run_steps(*make(name, c, given), data);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(omkl::test::bits(got[i]), omkl::test::bits(expected[i])) << name;
  }
  // The graphs and SFG-R's Δ are the built-in ones.
  const Params common{{"dict", kDict5}, {"M", "2"}, {"beta_rank", "2"}};
  Params given = common;
  given.emplace_back("divergence", "table:" + file);
  const GraphAidedConfig a = config(c, GraphFamily::SfgR, common), b = config(c, GraphFamily::SfgR, given);
  EXPECT_EQ(b.delta.values, a.delta.values);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(b.graph.out_neighbours(i), a.graph.out_neighbours(i)) << i;
  EXPECT_EQ(b.divergence_table, file);
}

TEST_F(DivergenceTableTest, AnyTableBuildsItsOwnGraph) {
  // Δ(i, j) = |i − j| (any sign and diagonal are taken as given): the journal rule links each
  // vertex to the farthest indices, the conference rule to the nearest.
  const Dataset data = random_stream(30, 3, Task::Regression, 7);
  const AlgoContext c = context_for(data);
  std::vector<double> values(25);
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = 0; j < 5; ++j) values[i * 5 + j] = std::fabs(double(i) - double(j));
  const std::string file = matrix("distance.txt", values, 5);
  DivergenceMatrix delta;
  delta.n = 5;
  delta.values = values;
  for (const char* rule : {"journal_greedy", "conference_nearest"}) {
    const GraphAidedConfig got =
        config(c, GraphFamily::Sfg, {{"dict", kDict5}, {"M", "2"}, {"divergence", "table:" + file}, {"graph_rule", rule}});
    const FeedbackGraph want = std::string(rule) == "journal_greedy" ? dissimilar_graph(delta, 2, GreedyMask::NegInf)
                                                                     : similar_graph(delta, 2);
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(got.graph.out_neighbours(i), want.out_neighbours(i)) << rule << " " << i;
  }
  EXPECT_NE(run_steps(*make("omkl-sfg", c, {{"dict", kDict5}, {"D", "6"}, {"M", "2"}, {"divergence", "table:" + file}}), data),
            run_steps(*make("omkl-sfg", c, {{"dict", kDict5}, {"D", "6"}, {"M", "2"}}), data));
  // The resident walk takes the table's graph and Δ as the host path does (its host driver: the
  // same draws, the numbers within rounding).
  const Params sfgr{{"dict", kDict5}, {"D", "6"}, {"M", "2"}, {"beta_rank", "2"}, {"divergence", "table:" + file}};
  const auto walk = run_steps(*make("omkl-sfg-r", c, omkl::test::with_param(sfgr, "step_path", "resident")), data);
  const auto host = run_steps(*make("omkl-sfg-r", c, omkl::test::with_param(sfgr, "step_path", "host")), data);
  ASSERT_EQ(walk.size(), host.size());
  for (std::size_t i = 0; i < walk.size(); ++i) EXPECT_NEAR(walk[i], host[i], 1e-12 * (1 + std::fabs(host[i]))) << i;
}

TEST_F(DivergenceTableTest, BadTablesAreRefusedNamingTheFileLineAndColumn) {
  const Dataset data = random_stream(10, 3, Task::Regression, 7);
  const AlgoContext c = context_for(data);
  const auto with = [&](const std::string& file) {
    return error("omkl-sfg", c, {{"dict", kDict3}, {"M", "2"}, {"divergence", "table:" + file}});
  };
  const auto contains = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  const std::string ragged = write("ragged.txt", "0 1 2\n1 0\n2 1 0\n");
  EXPECT_TRUE(contains(with(ragged), ragged + ":2: row 2 has 2 numbers")) << with(ragged);
  const std::string wide = write("wide.txt", "0 1 2\n1 0 1 5\n2 1 0\n");
  EXPECT_TRUE(contains(with(wide), wide + ":2: row 2 has 4 numbers")) << with(wide);
  const std::string short_table = write("short.txt", "0 1 2\n1 0 1\n");
  EXPECT_TRUE(contains(with(short_table), "has 2 rows")) << with(short_table);
  const std::string long_table = write("long.txt", "0 1 2\n1 0 1\n2 1 0\n3 3 3\n");
  EXPECT_TRUE(contains(with(long_table), long_table + ":4:1: more than 3 rows")) << with(long_table);
  const std::string word = write("word.txt", "0 1 2\n1 zero 1\n2 1 0\n");
  EXPECT_TRUE(contains(with(word), word + ":2:3: 'zero' is not a number")) << with(word);
  const std::string infinite = write("inf.txt", "0 1 2\n1 0 inf\n2 1 0\n");
  EXPECT_TRUE(contains(with(infinite), infinite + ":2:5: Δ entry inf is not a finite number")) << with(infinite);
  EXPECT_TRUE(contains(with((dir_ / "missing.txt").string()), "cannot open")) << with((dir_ / "missing.txt").string());
  EXPECT_TRUE(contains(with(""), "table: needs a file name"));
  EXPECT_TRUE(contains(error("omkl-sfg", c, {{"dict", kDict3}, {"M", "2"}, {"divergence", "bregman"}}), "table:FILE"));
  // Negative entries under the reference profile's greedy_mask=zero: the graph rule refuses them,
  // naming the parameter.
  const std::string negative = write("negative.txt", "0 -1 -2\n-1 0 -1\n-2 -1 0\n");
  const std::string refused = error("omkl-sfg", context_for(data, Profile::Reference),
                                    {{"dict", kDict3}, {"M", "2"}, {"divergence", "table:" + negative}});
  EXPECT_TRUE(contains(refused, "'divergence'") && contains(refused, "cannot build the similarity graph")) << refused;
  const std::string good = write("good.txt", "0 1 2\n1 0 1\n2 1 0\n");
  EXPECT_TRUE(contains(error("omkl-sfg", c, {{"dict", kDict3}, {"M", "2"}, {"divergence", "table:" + good},
                                             {"divergence_dim", "1"}}),
                       "divergence_dim"));
  EXPECT_EQ(with(good), "");
}

TEST_F(DivergenceTableTest, GreedyMaskFollowsTheProfile) {
  // §3 R3 greedy_mask: the paper profile masks chosen vertices with −∞ (neg_inf), so a table of
  // negative divergences still gives M distinct out-neighbours, dissimilar_graph(Δ, M, NegInf);
  // the reference's zero mask would pick a chosen vertex again there and is refused, by default
  // in the reference profile or by name in the paper's.
  const Dataset data = random_stream(20, 3, Task::Regression, 7);
  const std::vector<double> values = {0, -1, -2, -1, 0, -1, -2, -1, 0};
  const std::string negative = matrix("negative.txt", values, 3);
  const Params p{{"dict", kDict3}, {"M", "2"}, {"divergence", "table:" + negative}};
  const GraphAidedConfig paper = config(context_for(data), GraphFamily::Sfg, p);
  DivergenceMatrix delta;
  delta.n = 3;
  delta.values = values;
  const FeedbackGraph expected = dissimilar_graph(delta, 2, GreedyMask::NegInf);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(paper.graph.out_neighbours(i), expected.out_neighbours(i)) << i;
  Params zero = p;
  zero.emplace_back("greedy_mask", "zero");
  EXPECT_TRUE(error("omkl-sfg", context_for(data), zero).find("cannot build the similarity graph") != std::string::npos);
  EXPECT_TRUE(error("omkl-sfg", context_for(data, Profile::Reference), p).find("cannot build the similarity graph") !=
              std::string::npos);
}

TEST_F(DivergenceTableTest, ACheckpointRefusesAChangedTable) {
  const Dataset data = random_stream(30, 3, Task::Regression, 7);
  const AlgoContext c = context_for(data);
  const std::string file = write("delta.txt", "0 1 2\n1 0 1\n2 1 0\n");
  const Params params{{"dict", kDict3}, {"D", "5"}, {"M", "2"}, {"beta_rank", "2"}, {"divergence", "table:" + file}};
  auto a = make("omkl-sfg-r", c, params);
  run_steps(*a, data, 0, 10);
  StateWriter out;
  a->save_state(out);
  const auto expected = run_steps(*a, data, 10, 30);
  auto b = make("omkl-sfg-r", c, params);
  StateReader in(out.bytes());
  b->load_state(in);
  EXPECT_EQ(run_steps(*b, data, 10, 30), expected);
  write("delta.txt", "0 1 2\n1 0 3\n2 1 0\n");
  auto changed = make("omkl-sfg-r", c, params);
  StateReader again(out.bytes());
  try {
    changed->load_state(again);
    ADD_FAILURE() << "a checkpoint continued on a changed divergence table";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("divergence table '" + file + "' is not the one"), std::string::npos) << e.what();
  }
}

TEST_F(DivergenceTableTest, AStudyCellIsKeyedOnTheTablesContents) {
  // A cached study cell is reused only with the same numbers: the key holds each named table's
  // checksum (none without tables).
  const Dataset data = random_stream(30, 3, Task::Regression, 7);
  const std::string file = write("delta.txt", "0 1 2\n1 0 1\n2 1 0\n");
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("omkl-sfg:dict=" + kDict3 + ",M=2,divergence=table:" + file)};
  const auto key = [&] { return detail::cell_key(config.algorithms[0], config, data, 1); };
  const auto before = key();
  ASSERT_TRUE(before.contains("tables"));
  EXPECT_EQ(before, key());
  write("delta.txt", "0 1 2\n1 0 3\n2 1 0\n");
  EXPECT_NE(before, key());
  config.algorithms = {parse_algorithm_spec("omkl-sfg:dict=" + kDict3 + ",M=2")};
  EXPECT_FALSE(key().contains("tables"));
}
