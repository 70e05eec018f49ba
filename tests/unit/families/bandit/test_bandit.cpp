// Online kernel selection under bandit feedback (spec/bandit.md): the constants of §8.5, OKS++'s
// first round by hand, IOKS's mirror step, the projections, bandit feedback (one hypothesis per
// round), LKMBooks' budget, determinism and checkpoints, errors; the study's shuffle and MAE.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "common/test_helpers.h"
#include "families/bandit/bandit.h"
#include "families/bandit/expansion_step.h"
#include "families/bandit/hypotheses.h"
#include "families/bandit/resident_bandit.h"
#include "families/bandit/rule_kernels.h"
#include "families/bandit/selection_rules.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"
#include "omkl/study.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::bits;
using omkl::test::config_error_message;
using omkl::test::bandit_stream;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {
using Params = std::vector<std::pair<std::string, std::string>>;

// The support-set sizes |S_i| of replicate r of a kernelized OKS / OKS++ / IOKS, read from its
// checkpoint (bandit.cpp save_state(): the rule's state, then KernelHypotheses::save(), whose
// SupportSet::save() writes d, columns, budget, capacity, head, count, rows, norms, coefficients).
std::vector<std::size_t> support_sizes(const Algorithm& a, std::size_t r, std::size_t K, std::size_t d) {
  StateWriter out;
  a.save_state(out);
  StateReader in(out.bytes());
  in.expect_tag("bandit/2");
  in.get_i64();
  std::vector<std::size_t> sizes;
  for (std::size_t rep = 0; rep <= r; ++rep) {
    in.get_u64();  // the draws' position
    const std::string tag = in.get_string();
    EXPECT_TRUE(tag == "oks/2" || tag == "oks++/1" || tag == "ioks/1") << tag;
    const int vectors = tag == "oks++/1" ? 3 : tag == "oks/2" ? 3 : 5;  // L, q, p; Δ, q, p; q, p, η, ρ, G
    if (tag == "oks++/1") in.get_f64(), in.get_f64();  // C̃, V
    for (int v = 0; v < vectors; ++v) EXPECT_EQ(in.get_f64s().size(), K) << tag;
    in.expect_tag("bandit-kernel-hypotheses/1");
    sizes.clear();
    for (std::size_t i = 0; i < K; ++i) {
      for (int w = 0; w < 5; ++w) in.get_u64();
      const std::size_t count = in.get_u64();
      EXPECT_EQ(in.get_f64s().size(), count * d);
      EXPECT_EQ(in.get_f64s().size(), count);
      EXPECT_EQ(in.get_f64s().size(), count);
      in.get_f64();
      in.get_f64();
      sizes.push_back(count);
    }
    in.get_f64s();  // selected
    in.get_f64s();  // kernel_loss
    in.get_f64s();  // kernel_mistakes
  }
  return sizes;
}
}  // namespace

TEST(BanditRulesTest, ConstantsOfTheExperimentsTable) {
  // spec §8.5, elevators (T = 16599) and phishing (T = 11055), K = 6.
  const OksParameters e = oks_parameters(6, 16599);
  EXPECT_NEAR(e.delta, 0.07123, 5e-6);
  EXPECT_NEAR(e.eta, 0.005781, 5e-7);
  EXPECT_NEAR(e.lambda_unit, 8.457e-4, 5e-8);
  const OksParameters p = oks_parameters(6, 11055);
  EXPECT_NEAR(p.delta, 0.08157, 5e-6);
  EXPECT_NEAR(p.eta, 0.007044, 5e-7);
  const IoksParameters square = ioks_parameters(6, 16599, bandit_constants(LossKind::Squared), 8.0);
  EXPECT_NEAR(square.eta0, 9.751e-3, 5e-7);
  EXPECT_NEAR(square.delta, 6.838e-4, 5e-8);
  EXPECT_NEAR(square.nu, 1.07102, 5e-6);
  EXPECT_NEAR(ioks_parameters(6, 16599, bandit_constants(LossKind::Absolute), 8.0).eta0, 3.900e-2, 5e-6);
  EXPECT_NEAR(ioks_parameters(6, 11055, bandit_constants(LossKind::Logistic), 8.0).eta0, 3.255e-3, 5e-7);
}

TEST(BanditRulesTest, OksPlusPlusFirstRoundByHand) {
  const std::size_t K = 6;
  const BanditConstants c = bandit_constants(LossKind::Squared);  // U = 1, C0 = 4, G = 1
  auto rule = make_oks_plus_plus_rule(K, c, false);
  for (double v : rule->p()) EXPECT_DOUBLE_EQ(v, 1.0 / 6.0);
  const double loss = 0.3, I = 2;
  const double lambda = rule->observe(2, 0.1, 0.5, loss, 2 * (0.1 - 0.5));
  const double ct = loss * 6.0;  // c / p
  const double A = std::cbrt(4.0) * std::pow(6.0, 2.0 / 3.0);
  const double expected_lambda = std::pow(std::max(A * A * A, 8.0 * ct), -1.0 / 6.0) /
                                 (std::sqrt(4.0 / 3.0) * std::pow(6.0, 1.0 / 6.0) * std::cbrt(4.0) * std::sqrt(1.0 + ct));
  EXPECT_NEAR(lambda, expected_lambda, 1e-14);
  const double delta = A / (2.0 * std::max(A, 2.0 * std::cbrt(ct)));
  const double eta = std::sqrt(2.0 * std::log(6.0)) / std::sqrt(1.0 + ct * ct / 6.0);
  // q ∝ exp(−η Δ): the selected kernel has Δ = ct, the others 0.
  const double wI = std::exp(-eta * ct), total = 5.0 + wI;
  for (std::size_t i = 0; i < K; ++i) {
    const double q = (i == I ? wI : 1.0) / total;
    EXPECT_NEAR(rule->p()[i], (1 - delta) * q + delta / 6.0, 1e-14) << i;
  }
  // The reference logistic mode replaces A by exp(−y F) (§4.4): round 1 with F = 0, U = 15.
  const BanditConstants lc = bandit_constants(LossKind::Logistic);
  auto reference = make_oks_plus_plus_rule(K, lc, true);
  auto paper = make_oks_plus_plus_rule(K, lc, false);
  const double l0 = std::log(2.0), d0 = -0.5;  // logistic loss and derivative at F = 0, y = 1
  EXPECT_NEAR(reference->observe(0, 0.0, 1.0, l0, d0), 5.83, 0.01);  // the spec's ≈ 5.83
  EXPECT_NEAR(paper->observe(0, 0.0, 1.0, l0, d0), 2.34, 0.01);      // and ≈ 2.34
}

TEST(BanditRulesTest, IoksMirrorStepIsABregmanProjection) {
  // q_i^{−7/8} − q_old_i^{−7/8} = η_i(ĉ_i − μ) with one μ for all i, and Σq = 1 within the tolerance.
  std::vector<double> q{0.1, 0.2, 0.3, 0.15, 0.25};
  const std::vector<double> old = q, eta{0.05, 0.07, 0.05, 0.09, 0.06};
  const double c_hat = 3.7;
  ioks_mirror_step(q, eta, 3, c_hat, 1e-12);
  EXPECT_NEAR(std::accumulate(q.begin(), q.end(), 0.0), 1.0, 1e-12);
  std::vector<double> mu(q.size());
  for (std::size_t i = 0; i < q.size(); ++i)
    mu[i] = (i == 3 ? c_hat : 0.0) - (std::pow(q[i], -7.0 / 8.0) - std::pow(old[i], -7.0 / 8.0)) / eta[i];
  for (std::size_t i = 1; i < q.size(); ++i) EXPECT_NEAR(mu[i], mu[0], 1e-9);
  EXPECT_GT(mu[0], 0.0);
  EXPECT_LT(mu[0], c_hat);
  EXPECT_LT(q[3], old[3]);  // the arm that lost mass is the one that suffered the loss
  // No loss: q stays as it is (the first try, μ = ĉ = 0, is accepted).
  std::vector<double> same = old;
  EXPECT_EQ(ioks_mirror_step(same, eta, 1, 0.0, 1e-5), 1);
  for (std::size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(same[i], old[i], 1e-15);
  // A bisection that cannot meet its tolerance (here none can: it is negative) stops after 200
  // evaluations with q unchanged (rule_kernels.h: −1), and the rule's step is an error.
  std::vector<double> stuck = old, scratch(2 * old.size());
  EXPECT_EQ(ioks_mirror_step(stuck.data(), eta.data(), stuck.size(), 3, c_hat, -1.0, scratch.data(),
                             scratch.data() + old.size()),
            -1);
  EXPECT_EQ(stuck, old);
  EXPECT_THROW(ioks_mirror_step(stuck, eta, 3, c_hat, -1.0), Error);
}

TEST(BanditRulesTest, ExponentialWeightsAreMaxShiftedAndEquationFoursTieUsesTheFirstBranch) {
  // §4.3 step 8: q = softmax(−ηΔ) computed with the max-shift, so sums far beyond exp's range
  // still give q_0/q_1 = e and a finite p.
  const double L[3] = {1000.0, 1001.0, 1e6};
  double q[3], p[3];
  exponential_weights(L, 3, 1.0, 0.3, q, p);
  const double e = std::exp(-1.0);
  EXPECT_NEAR(q[0], 1.0 / (1.0 + e), 1e-15);
  EXPECT_NEAR(q[1], e / (1.0 + e), 1e-15);
  EXPECT_EQ(q[2], 0.0);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(p[i], 0.7 * q[i] + 0.1, 1e-15) << i;
  // §10 A6: eq. (4) with p_I = η̄ takes the first branch, ĉ = c/p_I (the paper's ≥), not c/(p_I + η̄).
  auto rule = make_ioks_rule(2, 1000, bandit_constants(LossKind::Absolute), 8.0, true);
  RuleState s = rule->state();
  s.eta[0] = s.eta[1] = 0.5;  // p = (1/2, 1/2) = η̄
  const double c = 0.3;
  rule->observe(0, 0.3, 0.0, c, 1.0);
  const std::vector<double> eta{0.5, 0.5};
  std::vector<double> by_ge{0.5, 0.5}, by_gt{0.5, 0.5};
  ioks_mirror_step(by_ge, eta, 0, c / 0.5, 1e-12);
  ioks_mirror_step(by_gt, eta, 0, c / 1.0, 1e-12);
  const double delta = std::pow(1000.0, -0.75);
  EXPECT_NEAR(rule->p()[0], (1.0 - delta) * by_ge[0] / (by_ge[0] + by_ge[1]) + delta / 2.0, 1e-10);
  EXPECT_GT(std::fabs(by_ge[0] - by_gt[0]), 1e-3) << "the two branches are told apart";
}

TEST(BanditHypothesesTest, BallProjectionTracksTheRkhsNorm) {
  // ‖f‖² = αᵀKα computed directly equals the recursion, and stays ≤ U² after each projection.
  const Dictionary dict = parse_dictionary("gauss:0.5+gauss:2");
  KernelHypotheses h(dict, 2, 16);
  const double U = 0.7;
  const double xs[6][2] = {{0.1, 0.2}, {-0.3, 0.5}, {0.9, -0.1}, {0.0, 0.0}, {0.4, 0.4}, {-0.8, -0.2}};
  for (int t = 0; t < 6; ++t) {
    const double F = h.evaluate(0, xs[t]);
    h.update(0, xs[t], F, 0.45 * (t % 2 ? -1 : 1), Projection::Ball, U);
    double n2 = 0.0;
    const std::size_t n = h.support_size(0);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b)
        n2 += h.coefficient(0, a) * h.coefficient(0, b) * dict[0].evaluate(xs[a], xs[b], 2);
    EXPECT_NEAR(std::sqrt(n2), h.norm(0), 1e-12) << t;
    EXPECT_LE(h.norm(0), U + 1e-12);
  }
  EXPECT_EQ(h.support_size(1), 0u);  // the other kernel was never touched
  // f_0(x) = Σ coefficient·κ(x_j, x).
  double direct = 0.0;
  for (std::size_t j = 0; j < 6; ++j) direct += h.coefficient(0, j) * dict[0].evaluate(xs[j], xs[2], 2);
  EXPECT_NEAR(h.evaluate(0, xs[2]), direct, 1e-12);
}

TEST(BanditHypothesesTest, TheLazyScaleFoldsBeforeItUnderflowsAndKeepsTheDirectForm) {
  // §2.1: with a small U and unit steps each projection shrinks the lazy scale s by ≈ U, so it
  // would underflow within a few hundred rounds; it is folded into the coefficients below 1e−100
  // instead. The expansion with its coefficients kept explicitly and projected by the Gram
  // matrix's norm gives the same f, ‖f‖ and coefficients before and after every fold.
  const std::size_t d = 2, T = 90;
  const Dataset data = bandit_stream(T, d);
  const Dictionary dict = parse_dictionary("gauss:0.5");
  KernelHypotheses h(dict, d, 16);
  const double U = 1e-3;
  std::vector<double> alpha;  // the direct form's coefficients
  std::size_t folds = 0;
  double smallest_scale = 1.0;
  for (std::size_t t = 0; t < T; ++t) {
    const double* x = data.row(t);
    double direct = 0.0;
    for (std::size_t j = 0; j < alpha.size(); ++j) direct += alpha[j] * dict[0].evaluate(data.row(j), x, d);
    const double F = h.evaluate(0, x);
    ASSERT_NEAR(F, direct, 1e-10 * std::fabs(direct) + 1e-300) << "round " << t;
    const double step = t % 3 == 2 ? -1.0 : 1.0, scale_before = h.scale(0);
    h.update(0, x, F, step, Projection::Ball, U);
    alpha.push_back(step);
    double n2 = 0.0;
    for (std::size_t a = 0; a <= t; ++a)
      for (std::size_t b = 0; b <= t; ++b) n2 += alpha[a] * alpha[b] * dict[0].evaluate(data.row(a), data.row(b), d);
    if (std::sqrt(n2) > U)
      for (double& v : alpha) v *= U / std::sqrt(n2);
    ASSERT_NEAR(h.norm(0), std::min(U, std::sqrt(n2)), 1e-10 * U) << "round " << t;
    for (std::size_t j = 0; j <= t; ++j)
      ASSERT_NEAR(h.coefficient(0, j), alpha[j], 1e-10 * std::fabs(alpha[j]) + 1e-300) << "round " << t << ", entry " << j;
    EXPECT_GE(std::fabs(h.scale(0)), kMinExpansionScale) << "round " << t;
    folds += h.scale(0) == 1.0 && scale_before != 1.0;
    smallest_scale = std::min(smallest_scale, std::fabs(h.scale(0)));
  }
  EXPECT_GE(folds, 2u);
  EXPECT_LT(smallest_scale, 1e-90);
}

TEST(BanditHypothesesTest, RandomFeaturesApproximateTheKernelAndClipToTheBox) {
  // z_i(x)ᵀz_i(v) → κ_i(x, v) with the shared Ω scaled by 1/σ_i (§6.1); box |w_j| ≤ U/√D.
  const std::size_t D = 20000, d = 3;
  const Dictionary dict = parse_dictionary("gauss:0.5+gauss:2");
  std::vector<double> omega(D * d);
  RandomStream rng(3, 0, RngPurpose::Frequencies, 1);
  rng.normals(omega.data(), omega.size());
  FeatureHypotheses h(dict, d, D, omega, false);
  const double x[3] = {0.2, -0.1, 0.4}, v[3] = {0.5, 0.3, -0.2};
  for (std::size_t i = 0; i < 2; ++i) {
    h.update(i, x, 0.0, 1.0, Projection::None, 1.0);  // w = z_i(x)
    EXPECT_NEAR(h.evaluate(i, x), 1.0, 1e-12) << "‖z‖ = 1";
    EXPECT_NEAR(h.evaluate(i, v), dict[i].evaluate(x, v, d), 0.02) << i;
  }
  FeatureHypotheses boxed(dict, d, D, omega, false);
  boxed.update(0, x, 0.0, 50.0, Projection::Box, 1.0);
  for (double w : boxed.weights(0)) EXPECT_LE(std::fabs(w), 1.0 / std::sqrt(double(D)) + 1e-15);
}

TEST(BanditTest, OneHypothesisPerRoundAndTheLogsAddUp) {
  const Dataset data = bandit_stream(300, 3);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 1});
  for (const char* name : {"oks", "oks++", "ioks", "rf-oks", "rf-oks++", "rf-ioks"}) {
    auto a = make(name, c, std::string(name).rfind("rf-", 0) == 0 ? Params{{"D", "30"}} : Params{});
    run_steps(*a, data);
    for (std::size_t r = 0; r < 2; ++r) {
      const BanditLog log = bandit_log(*a, r);
      EXPECT_EQ(std::accumulate(log.selected.begin(), log.selected.end(), 0.0), 300.0) << name;
      EXPECT_NEAR(std::accumulate(log.p.begin(), log.p.end(), 0.0), 1.0, 1e-4) << name;
      for (double p : log.p) EXPECT_GT(p, 0.0) << name;
      // §2.1: x_t joins S_I every round I is drawn, so |S_i| is kernel i's selection count.
      if (std::string(name).rfind("rf-", 0) == 0) continue;
      const std::vector<std::size_t> sizes = support_sizes(*a, r, log.selected.size(), 3);
      for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(double(sizes[i]), log.selected[i]) << name << " kernel " << i;
    }
  }
}

TEST(BanditTest, ClassifyingTheLogsCountEachKernelsMistakes) {
  // §4.2 / §8.6: classifying, each kernel's mistakes (ŷ = +1 if f_I ≥ 0, else −1) when drawn;
  // over the kernels they add up to the stream's mistakes as the study scores them, and no
  // kernel makes more mistakes than rounds it was drawn. Regression keeps no mistake log.
  const Dataset data = random_stream(400, 3, Task::Classification);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 1});
  for (const char* name : {"oks", "oks++", "ioks", "rf-oks++", "rf-ioks"}) {
    auto a = make(name, c, std::string(name).rfind("rf-", 0) == 0 ? Params{{"D", "20"}} : Params{});
    const std::vector<double> predictions = run_steps(*a, data);
    for (std::size_t r = 0; r < 2; ++r) {
      double mistakes = 0.0;
      for (std::size_t t = 0; t < data.n_samples; ++t)  // as the study scores them
        mistakes += classification_mistake(predictions[t * 2 + r], data.y[t], bandit_metric_convention());
      const BanditLog log = bandit_log(*a, r);
      ASSERT_EQ(log.kernel_mistakes.size(), log.selected.size()) << name;
      EXPECT_EQ(std::accumulate(log.kernel_mistakes.begin(), log.kernel_mistakes.end(), 0.0), mistakes) << name;
      EXPECT_GT(mistakes, 0.0) << name;
      for (std::size_t i = 0; i < log.selected.size(); ++i) EXPECT_LE(log.kernel_mistakes[i], log.selected[i]) << name;
      const auto logs = a->final_logs(r);
      ASSERT_EQ(logs.size(), 4u) << name;
      EXPECT_EQ(logs[3].first, "kernel_mistakes");
      EXPECT_EQ(logs[3].second, log.kernel_mistakes);
    }
  }
  EXPECT_EQ(bandit_mistake(0.0, 1.0), 0.0);  // ties go to +1
  EXPECT_EQ(bandit_mistake(0.0, -1.0), 1.0);
  EXPECT_EQ(bandit_mistake(-0.5, -1.0), 0.0);
  const Dataset regression = bandit_stream(50, 3);
  auto squared = make("oks++", context_for(regression));
  run_steps(*squared, regression);
  for (const auto& [name, values] : squared->final_logs(0)) EXPECT_NE(name, "kernel_mistakes");
  for (double m : bandit_log(*squared, 0).kernel_mistakes) EXPECT_EQ(m, 0.0);
}

TEST(BanditTest, EveryAlgorithmLearnsAndReplicatesAreIndependent) {
  const std::size_t T = 2000, half = T / 2;
  const Dataset data = bandit_stream(T, 3);
  double mean = 0.0, var = 0.0;
  for (double y : data.y) mean += y / double(T);
  for (double y : data.y) var += (y - mean) * (y - mean) / double(T);
  for (const std::string name : {"oks", "oks++", "ioks", "rf-oks", "rf-oks++", "rf-ioks", "lkmbooks"}) {
    const Params p{};
    auto both = make(name, context_for(data, Profile::Paper, {0, 7}), p);
    auto alone = make(name, context_for(data, Profile::Paper, {7}), p);
    const auto pb = run_steps(*both, data), pa = run_steps(*alone, data);
    double early = 0.0, late = 0.0;
    for (std::size_t t = 0; t < T; ++t) {
      ASSERT_EQ(bits(pb[t * 2 + 1]), bits(pa[t])) << name << " t " << t;
      const double e = (pb[t * 2] - data.y[t]) * (pb[t * 2] - data.y[t]) / double(half);
      (t < half ? early : late) += e;
    }
    EXPECT_LT(late, early) << name << ": it learns";
    // OKS++ (adaptive steps) and LKMBooks (every kernel's weight moves each round) beat the stream's
    // mean within 2000 rounds; the others, whose steps are set from T for the whole horizon (and the
    // RF versions, with 400 features for 3 inputs), only improve on their first half here.
    if (name == "oks++" || name == "lkmbooks") EXPECT_LT(late, var) << name << ": second-half MSE against the variance of y";
  }
}

TEST(BanditTest, CheckpointsAndPredictContinueBitIdentically) {
  const Dataset data = bandit_stream(200, 3);
  const AlgoContext c = context_for(data, Profile::Reference, {0, 1});
  for (const char* name : {"oks", "oks++", "ioks", "rf-oks++", "rf-ioks", "lkmbooks"}) {
    const Params p = std::string(name).rfind("rf-", 0) == 0 ? Params{{"D", "20"}} : Params{};
    auto whole = make(name, c, p);
    const auto expected = run_steps(*whole, data);
    auto first = make(name, c, p);
    run_steps(*first, data, 0, 77);
    StateWriter out;
    first->save_state(out);
    auto second = make(name, c, p);
    StateReader in(out.bytes());
    second->load_state(in);
    EXPECT_TRUE(in.at_end()) << name;
    double predicted[2];
    second->predict(data.row(77), predicted);
    EXPECT_EQ(bits(predicted[0]), bits(expected[77 * 2])) << name << ": predict() is the next step's prediction";
    const auto rest = run_steps(*second, data, 77, 200);
    for (std::size_t i = 0; i < rest.size(); ++i) ASSERT_EQ(bits(rest[i]), bits(expected[77 * 2 + i])) << name << " " << i;
  }
}

TEST(BanditTest, StepBlockLooksAheadAndGivesStepsNumbers) {
  // One kernel (drawn every round) grows its support set past KernelHypotheses::kLookAheadRows,
  // so step_block() takes upcoming samples' inner products ahead (with AVX-512; elsewhere it
  // computes as step() does). Two kernels exercise kept products that wait for their kernel
  // and rows appended after the products were taken. The numbers are step()'s, bit for bit.
  const Dataset data = bandit_stream(KernelHypotheses::kLookAheadRows + 400, 5);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 1});
  for (const Params& p : {Params{{"dict", "gauss:0.5"}}, Params{{"dict", "gauss:0.5+gauss:3"}}}) {
    for (const char* name : {"oks++", "oks", "ioks"}) {
      auto stepped = make(name, c, p);
      const auto expected = run_steps(*stepped, data);
      auto blocked = make(name, c, p);
      std::vector<double> got(expected.size());
      // Two blocks: the kept products must not outlive the first.
      const std::size_t half = data.n_samples / 2;
      blocked->step_block(data.x.data(), data.y.data(), half, data.n_features, got.data());
      blocked->step_block(data.row(half), data.y.data() + half, data.n_samples - half, data.n_features,
                          got.data() + half * 2);
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(bits(got[i]), bits(expected[i])) << name << " " << p[0].second << " step " << i / 2;
    }
  }
}

TEST(BanditHypothesesTest, KeptInnerProductsGiveTheDirectValues) {
  // evaluate(i, x, upcoming) over a set large enough to look ahead: for the samples it kept,
  // for one that was not among them, after rows were appended, and after forget_upcoming().
  const std::size_t d = 3, n = KernelHypotheses::kLookAheadRows + 5;
  const Dataset data = bandit_stream(n + 12, d);
  const Dictionary dict = parse_dictionary("gauss:0.7");
  KernelHypotheses ahead(dict, d, 16), direct(dict, d, 16);
  for (std::size_t t = 0; t < n; ++t) {
    ahead.update(0, data.row(t), 0.0, 0.01 * std::sin(static_cast<double>(t)), Projection::None, 1.0);
    direct.update(0, data.row(t), 0.0, 0.01 * std::sin(static_cast<double>(t)), Projection::None, 1.0);
  }
  const auto check = [&](std::size_t t, Upcoming upcoming, const char* what) {
    EXPECT_EQ(bits(ahead.evaluate(0, data.row(t), upcoming)), bits(direct.evaluate(0, data.row(t)))) << what << " " << t;
  };
  check(n, {data.row(n + 1), 5}, "takes products ahead");
  check(n + 2, {}, "kept, second upcoming");
  check(n + 1, {}, "kept, first upcoming");
  ahead.update(0, data.row(n + 1), 0.0, 0.3, Projection::None, 1.0);
  direct.update(0, data.row(n + 1), 0.0, 0.3, Projection::None, 1.0);
  check(n + 3, {}, "kept, with a row appended since");
  check(n + 9, {}, "not kept");
  ahead.forget_upcoming();
  check(n + 2, {}, "forgotten");
}

TEST(BanditTest, LkmBooksKeepsItsBudget) {
  const Dataset data = bandit_stream(400, 3);
  auto a = make("lkmbooks", context_for(data), {{"B", "15"}});
  run_steps(*a, data);
  StateWriter out;
  a->save_state(out);
  StateReader in(out.bytes());
  in.expect_tag("lkmbooks/1");
  in.get_i64();
  SupportSet support(3, 1, 0, 16);
  support.load(in);
  EXPECT_EQ(support.size(), 15u);  // P_t ≥ 15/400: the budget fills and is never exceeded
}

TEST(BanditTest, BadConfigurationsAreRefusedNamingTheParameter) {
  const Dataset data = bandit_stream(50, 3);
  const AlgoContext c = context_for(data);
  EXPECT_NE(config_error_message("oks++", c, {{"loss", "absolute"}}).find("not defined for OKS++"), std::string::npos);
  EXPECT_NE(config_error_message("ioks", c, {{"loss", "logistic"}}).find("labels ±1"), std::string::npos);
  EXPECT_NE(config_error_message("rf-oks++", c, {{"D", "0"}}).find("'D' must be in [1, 1000000], got 0"),
            std::string::npos);
  EXPECT_NE(config_error_message("lkmbooks", c, {{"B", "0"}}).find("'B'"), std::string::npos);
  EXPECT_NE(config_error_message("oks", c, {{"dict", "linear"}}).find("κ(x, x) = 1"), std::string::npos);
  AlgoContext unknown = c;
  unknown.horizon = 0;
  EXPECT_NE(config_error_message("oks", unknown, {}).find("stream length"), std::string::npos);
  // OKS's δ = (K/T)^{1/3} must be below 1: 6 rounds for 6 kernels are refused (its η would be
  // NaN), 7 are not; and OKS has no ball, so U is no parameter of it.
  AlgoContext short_stream = c;
  short_stream.horizon = 6;
  for (const char* name : {"oks", "rf-oks"})
    EXPECT_NE(config_error_message(name, short_stream, {}).find("T = 6 and K = 6"), std::string::npos) << name;
  short_stream.horizon = 7;
  EXPECT_NO_THROW(make("oks", short_stream));
  EXPECT_NE(config_error_message("oks", c, {{"U", "2"}}).find("'U'"), std::string::npos);
  EXPECT_NO_THROW(make("ioks", c, {{"U", "2"}}));
  // A logistic-only switch on another loss is refused, not silently ignored.
  EXPECT_NE(config_error_message("oks++", c, {{"loss", "squared"}, {"logistic_mode", "reference"}})
                .find("'logistic_mode'"),
            std::string::npos);
  // Each constant is named itself, not its neighbour.
  EXPECT_NE(config_error_message("oks++", c, {{"G", "0"}}).find("'G'"), std::string::npos);
  EXPECT_NE(config_error_message("oks++", c, {{"C0", "-1"}}).find("'C0'"), std::string::npos);
  EXPECT_NE(config_error_message("ioks", c, {{"lmax", "0"}}).find("'lmax'"), std::string::npos);
  EXPECT_NE(config_error_message("ioks", c, {{"G1", "0"}}).find("'G1'"), std::string::npos);
  // IOKS's rates divide by ln T: T = 2 has a rate, T = 1 none.
  AlgoContext two_rounds = c;
  two_rounds.horizon = 2;
  EXPECT_NO_THROW(make("ioks", two_rounds));
  two_rounds.horizon = 1;
  EXPECT_NE(config_error_message("ioks", two_rounds, {}).find("T ≥ 2"), std::string::npos);
  // LKMBooks on one kernel: its expert weights need no rate (η_EA = √(8 ln 1/T) = 0).
  EXPECT_NO_THROW(make("lkmbooks", c, {{"dict", "gauss:1"}}));
  EXPECT_NE(config_error_message("lkmbooks", c, {{"eta", "0"}}).find("'eta'"), std::string::npos);
}

// The spec's names of two switches (§4.4's oks_pp_logistic_mode, §10 A10's
// independent_omega_per_kernel) are the same parameters as logistic_mode and independent_omega:
// the same predictions, and the value each switch's other setting would change; both names at
// once are refused, naming both.
TEST(BanditTest, TheSpecsParameterNamesAreTheShortOnes) {
  const Dataset data = random_stream(150, 3, Task::Classification);
  const AlgoContext c = context_for(data, Profile::Paper, {0, 1});
  const auto run = [&](const char* name, const Params& params) {
    auto a = make(name, c, params);
    return run_steps(*a, data);
  };
  const Params logistic = {{"D", "20"}, {"loss", "logistic"}};
  const auto with = [](Params p, const char* key, const char* value) {
    p.emplace_back(key, value);
    return p;
  };
  const auto reference = run("rf-oks++", with(logistic, "logistic_mode", "reference"));
  EXPECT_EQ(run("rf-oks++", with(logistic, "oks_pp_logistic_mode", "reference")), reference);
  EXPECT_NE(run("rf-oks++", with(logistic, "oks_pp_logistic_mode", "paper")), reference);
  const auto independent = run("rf-ioks", {{"D", "20"}, {"independent_omega", "true"}});
  EXPECT_EQ(run("rf-ioks", {{"D", "20"}, {"independent_omega_per_kernel", "true"}}), independent);
  EXPECT_NE(run("rf-ioks", {{"D", "20"}, {"independent_omega_per_kernel", "false"}}), independent);
  const std::string both = config_error_message(
      "rf-oks++", c, with(with(logistic, "logistic_mode", "paper"), "oks_pp_logistic_mode", "paper"));
  EXPECT_NE(both.find("'oks_pp_logistic_mode' and 'logistic_mode'"), std::string::npos) << both;
}

TEST(BanditTest, IoksSquareLossLipschitzConstantFollowsTheRadius) {
  // §1.3: G₁ = 2(U + 1) for the square loss, so ioks:U=2 is ioks:U=2,G1=6, not G1=4.
  const Dataset data = bandit_stream(60, 3);
  const AlgoContext c = context_for(data);
  const auto predictions = [&](const Params& params) {
    auto algorithm = make("ioks", c, params);
    return run_steps(*algorithm, data);
  };
  const auto wide = predictions({{"U", "2"}});
  EXPECT_EQ(wide, predictions({{"U", "2"}, {"G1", "6"}}));
  EXPECT_NE(wide, predictions({{"U", "2"}, {"G1", "4"}}));
  EXPECT_EQ(predictions({}), predictions({{"G1", "4"}}));  // the experiments' U = 1
}

TEST(BanditRulesTest, IoksAbsoluteLossCountsAUnitGradientAtAnExactPrediction) {
  // §5.3 step 3: with the absolute loss ‖∇̃‖² = 1/p², the round with F = y included (where the
  // subgradient sign(F − y) is 0). λ = U/(√2·√(1 + G̃_I)) shows G̃_I.
  const std::size_t K = 6, T = 1000;
  const double p = 1.0 / 6.0;
  auto absolute = make_ioks_rule(K, T, bandit_constants(LossKind::Absolute), 8.0, false);
  EXPECT_NEAR(absolute->observe(0, 0.25, 0.25, 0.0, 0.0), 1.0 / (std::sqrt(2.0) * std::sqrt(1.0 + 1.0 / (p * p))),
              1e-15);
  // The squared loss at F = y has a zero gradient and counts nothing.
  auto squared = make_ioks_rule(K, T, bandit_constants(LossKind::Squared), 8.0, false);
  EXPECT_NEAR(squared->observe(0, 0.25, 0.25, 0.0, 0.0), 1.0 / std::sqrt(2.0), 1e-15);
}

// §5.3 step 7: a rate grows by ν_η = e^{2/(3 ln T)} only when 1/p_i passes ρ_i, which then at
// least doubles, and 1/p ≤ K·T^{3/4}: over a whole run every η_i stays below e^{1/(2 ln 2)} ≈ 2.06
// times its start. Kernel 0 suffers the largest loss every round, so its p sinks and its rate
// grows (the bound is then tested where it binds); the draws come from p.
TEST(BanditRulesTest, IoksRatesGrowLessThanTheSchedulesBound) {
  const std::size_t K = 4, T = 4000;
  auto rule = make_ioks_rule(K, T, bandit_constants(LossKind::Squared), 8.0, false);
  const IoksParameters o = ioks_parameters(K, T, bandit_constants(LossKind::Squared), 8.0);
  RandomStream draws(17, 0, RngPurpose::Misc);
  std::vector<double> rho_before(K);
  for (std::size_t t = 1; t <= T; ++t) {
    const RuleState s = rule->state();
    std::copy(s.rho, s.rho + K, rho_before.begin());
    const std::vector<double> eta_before(s.eta, s.eta + K);
    const std::size_t I = bandit_draw(rule->p().data(), K, draws.uniform());
    const double loss = I == 0 ? 1.0 : 0.05 * static_cast<double>(I);
    ASSERT_NO_THROW(rule->observe(I, 0.0, 0.0, loss, 0.0)) << "round " << t;
    for (std::size_t i = 0; i < K; ++i)
      if (s.eta[i] != eta_before[i]) {  // an increase: by ν_η, and ρ at least doubled
        EXPECT_DOUBLE_EQ(s.eta[i], eta_before[i] * o.nu) << "round " << t << " kernel " << i;
        EXPECT_GE(s.rho[i], 2.0 * rho_before[i]) << "round " << t << " kernel " << i;
      }
  }
  const RuleState s = rule->state();
  const double bound = std::exp(1.0 / (2.0 * std::log(2.0)));
  for (std::size_t i = 0; i < K; ++i) EXPECT_LT(s.eta[i] / o.eta0, bound) << "kernel " << i;
  EXPECT_GT(s.eta[0], o.eta0 * o.nu) << "kernel 0's rate never grew twice: the bound was not tested";
}

TEST(BanditStudyTest, ShuffledReplicatesAndTheAbsoluteLoss) {
  const Dataset data = bandit_stream(150, 2);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("ioks:loss=absolute"), parse_algorithm_spec("kogd")};
  config.n_seeds = 3;
  config.threads = 2;
  config.shuffle = true;
  config.metric = "mae";
  const StudyResult a = run_study(config, data);
  config.threads = 1;
  const StudyResult b = run_study(config, data);
  ASSERT_EQ(a.results.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(a.results[i].metric, "mae");
    ASSERT_EQ(a.results[i].final_per_seed.size(), 3u);
    for (std::size_t s = 0; s < 3; ++s) EXPECT_EQ(bits(a.results[i].final_per_seed[s]), bits(b.results[i].final_per_seed[s]));
  }
  // Even the deterministic kogd differs between replicates: each sees its own order.
  EXPECT_NE(a.results[1].final_per_seed[0], a.results[1].final_per_seed[1]);
  // Without the shuffle, the MAE is kogd's on the stream as it is (the metric against a direct run).
  config.shuffle = false;
  config.n_seeds = 1;
  const StudyResult plain = run_study(config, data);
  LearnerContext lc;
  lc.n_features = data.n_features;
  lc.horizon = data.n_samples;
  Learner kogd = make_learner(parse_algorithm_spec("kogd"), lc);
  double mae = 0.0;
  for (std::size_t t = 0; t < data.n_samples; ++t) mae += std::fabs(kogd.partial_fit(data.row(t), data.y[t]) - data.y[t]);
  EXPECT_NEAR(plain.results[1].final_mean, mae / double(data.n_samples), 1e-12);
  // §8.6: the per-kernel loss log adds up, over the kernels, to the study's metric × T (each
  // round's loss is its drawn kernel's), per seed.
  ASSERT_EQ(a.results[0].logs.size(), 3u);
  for (std::size_t s = 0; s < 3; ++s) {
    std::vector<double> kernel_loss;
    for (const auto& [name, values] : a.results[0].logs[s])
      if (name == "kernel_loss") kernel_loss = values;
    ASSERT_EQ(kernel_loss.size(), 6u) << "seed " << s;
    EXPECT_NEAR(std::accumulate(kernel_loss.begin(), kernel_loss.end(), 0.0) / double(data.n_samples),
                a.results[0].final_per_seed[s], 1e-12)
        << "seed " << s;
  }
}

TEST(BanditStudyTest, AScoreOfZeroPredictsPlusOne) {
  // §2.3: ŷ = +1 if f ≥ 0. Every bandit algorithm's first prediction is f = 0 (no support, or
  // w = 0), so on a stream starting with y = −1 the first row is a mistake; under Raker's rule
  // (spec/raker.md §2.4: a mistake iff y·f < 0) it is not.
  MetricConvention bandit;
  bandit.zero_score_is_positive = true;
  EXPECT_EQ(classification_mistake(0.0, -1.0, bandit), 1.0);
  EXPECT_EQ(classification_mistake(0.0, 1.0, bandit), 0.0);
  EXPECT_EQ(classification_mistake(-0.5, -1.0, bandit), 0.0);
  EXPECT_EQ(classification_mistake(0.0, -1.0, MetricConvention{}), 0.0);
  EXPECT_EQ(classification_mistake(0.5, -1.0, MetricConvention{}), 1.0);
  Dataset data = random_stream(40, 3, Task::Classification, 9);
  data.y[0] = -1.0;
  LearnerContext lc;
  lc.n_features = data.n_features;
  lc.task = Task::Classification;
  lc.horizon = data.n_samples;
  for (const char* name : {"oks", "oks++", "ioks", "rf-oks", "rf-oks++", "rf-ioks", "lkmbooks"}) {
    Learner learner = make_learner(parse_algorithm_spec(std::string(name) + ":loss=logistic"), lc);
    EXPECT_EQ(learner.partial_fit(data.row(0), data.y[0]), 0.0) << name;
    EXPECT_EQ(learner.mistake(0.0, -1.0), 1.0) << name;
  }
  Learner raker = make_learner(parse_algorithm_spec("raker"), lc);
  EXPECT_EQ(raker.mistake(0.0, -1.0), 0.0);
  // The study counts it: one row of one mistake.
  Dataset first = data;
  first.n_samples = 1;
  first.x.resize(data.n_features);
  first.y.resize(1);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("lkmbooks")};
  config.n_seeds = 1;
  EXPECT_EQ(run_study(config, first).results[0].final_mean, 1.0);
}
