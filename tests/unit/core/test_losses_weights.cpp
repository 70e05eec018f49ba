#include <gtest/gtest.h>

#include <cmath>

#include "core/kernel_weights.h"
#include "core/loss.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;

TEST(LossTest, DerivativesMatchFiniteDifferences) {
  const double h = 1e-6;
  for (LossKind loss : {LossKind::Squared, LossKind::Logistic, LossKind::Hinge,
                        LossKind::SquaredHinge, LossKind::Absolute}) {
    for (double y : {-1.0, 1.0, 0.3}) {
      for (double f : {-2.3, -0.4, 0.2, 0.71, 3.1}) {
        // Skip the kinks, where only a subgradient exists.
        if (std::fabs(1.0 - y * f) < 1e-3 || std::fabs(f - y) < 1e-3) continue;
        const double numeric = (loss_value(loss, f + h, y) - loss_value(loss, f - h, y)) / (2 * h);
        EXPECT_NEAR(loss_derivative(loss, f, y), numeric, 1e-6)
            << to_string(loss) << " f=" << f << " y=" << y;
      }
    }
  }
}

TEST(LossTest, LogisticIsStableForLargeMargins) {
  EXPECT_NEAR(loss_value(LossKind::Logistic, 800.0, 1.0), 0.0, 1e-300);
  EXPECT_NEAR(loss_value(LossKind::Logistic, -800.0, 1.0), 800.0, 1e-9);
  EXPECT_NEAR(loss_derivative(LossKind::Logistic, -800.0, 1.0), -1.0, 1e-15);
  EXPECT_NEAR(loss_derivative(LossKind::Logistic, 800.0, 1.0), 0.0, 1e-300);
  EXPECT_NEAR(loss_derivative(LossKind::Logistic, 0.0, -1.0), 0.5, 1e-15);
}

TEST(KernelWeightsTest, LogDomainEqualsNaiveMultiplicativeWeights) {
  WeightConfig c;
  c.rule = WeightRule::ExpEta;
  c.lambda = 0.01;
  KernelWeights w(3, &c);
  std::vector<double> naive = {1.0, 1.0, 1.0};
  for (int t = 0; t < 50; ++t) {
    const double f[3] = {0.1 * t / 50, 0.5, 0.9 - 0.01 * t};
    const double n2[3] = {0.2, 0.1, 0.4};
    const double y = 0.5 + 0.1 * std::sin(t);
    double total = naive[0] + naive[1] + naive[2];
    const double expected = (naive[0] * f[0] + naive[1] * f[1] + naive[2] * f[2]) / total;
    EXPECT_NEAR(w.combine(f), expected, 1e-13);
    w.update(f, n2, y);
    for (int p = 0; p < 3; ++p)
      naive[p] *= std::exp(-0.5 * ((y - f[p]) * (y - f[p]) + 0.01 * n2[p]));
  }
}

TEST(KernelWeightsTest, LogDomainSurvivesLongStreams) {
  WeightConfig c;
  c.rule = WeightRule::ExpEta;
  c.weight_loss = WeightLoss::DataOnly;
  KernelWeights w(2, &c);
  const double f[2] = {0.0, 1.0};
  for (int t = 0; t < 100000; ++t) w.update(f, nullptr, 0.1);  // raw weights underflow long before
  double out[2];
  w.normalized(out);
  EXPECT_TRUE(std::isfinite(out[0]));
  EXPECT_NEAR(out[0], 1.0, 1e-12);
}

TEST(KernelWeightsTest, MinMaxRuleHandComputed) {
  WeightConfig c;
  c.rule = WeightRule::MinMax;
  KernelWeights w(3, &c);
  const double f[3] = {0.0, 0.5, 1.0};
  w.update(f, nullptr, 0.5);  // errors 0.25, 0, 0.25: M = 0.25, m = 0, ρ ≈ 1, −1, 1
  const double third = 1.0 / 3.0, floor = 1e-12;
  const double rho_hi = (0.25 - 0.125 + floor) / (0.125 + floor);  // exactly 1
  const double rho_lo = (0.0 - 0.125 + floor) / (0.125 + floor);   // −1 + 1.6e−11
  EXPECT_EQ(rho_hi, 1.0);
  EXPECT_NEAR(w.raw()[0], third * std::pow(0.5, rho_hi) + floor, 1e-15);
  EXPECT_NEAR(w.raw()[1], third * std::pow(0.5, rho_lo) + floor, 1e-15);
  EXPECT_NEAR(w.raw()[2], third * std::pow(0.5, rho_hi) + floor, 1e-15);
  EXPECT_GT(w.raw()[1], 4 * w.raw()[0] * 0.999);
}

TEST(KernelWeightsTest, MistakeRuleNormalisesThenPenalises) {
  WeightConfig c;
  c.rule = WeightRule::Mistake;
  KernelWeights w(2, &c);
  w.raw() = {3.0, 1.0};
  const double f[2] = {-0.2, 0.7};
  w.update(f, nullptr, 1.0);  // kernel 0 errs
  EXPECT_NEAR(w.raw()[0], 0.75 * 0.5 + 1e-4, 1e-15);
  EXPECT_NEAR(w.raw()[1], 0.25 + 1e-4, 1e-15);
}

TEST(KernelWeightsTest, RejectsUnknownRules) {
  EXPECT_THROW(parse_weight_rule("softmax"), ConfigError);
  EXPECT_THROW(parse_weight_loss("post"), ConfigError);
  EXPECT_THROW(parse_loss("quadratic"), ConfigError);
}

TEST(LossTest, SubgradientsAtTheKinksAreZero) {
  // spec/raker.md §2.2: where only a subgradient exists, the step uses 0.
  EXPECT_EQ(loss_derivative(LossKind::Hinge, 1.0, 1.0), 0.0);
  EXPECT_EQ(loss_derivative(LossKind::Hinge, -0.5, -2.0), 0.0);  // y·f = 1
  EXPECT_EQ(loss_derivative(LossKind::SquaredHinge, 1.0, 1.0), 0.0);
  EXPECT_EQ(loss_derivative(LossKind::Absolute, 0.3, 0.3), 0.0);
  // Beside the kinks, the one-sided slopes.
  EXPECT_EQ(loss_derivative(LossKind::Hinge, 0.999, 1.0), -1.0);
  EXPECT_EQ(loss_derivative(LossKind::Hinge, 1.001, 1.0), 0.0);
  EXPECT_EQ(loss_derivative(LossKind::Absolute, 0.31, 0.3), 1.0);
  EXPECT_EQ(loss_derivative(LossKind::Absolute, 0.29, 0.3), -1.0);
}

TEST(KernelWeightsTest, DataOnlyDropsTheRidgeTermAndLossScaleDividesTheStep) {
  // spec/raker.md §3.3: `weight_loss = data_only` weighs by ℓ(f, y) alone, `regularized_pre` by
  // ℓ + λ‖θ‖² with θ before the step; `loss_scale` divides the loss, i.e. scales η_w.
  const double f[2] = {0.2, 0.2}, n2[2] = {0.0, 4.0};
  WeightConfig regularized;
  regularized.lambda = 0.1;
  WeightConfig data_only = regularized;
  data_only.weight_loss = WeightLoss::DataOnly;
  KernelWeights a(2, &regularized), b(2, &data_only);
  a.update(f, n2, 0.0);
  b.update(f, n2, 0.0);
  EXPECT_NEAR(a.raw()[1] - a.raw()[0], -0.5 * 0.1 * 4.0, 1e-15);  // w_1/w_0 = e^{−0.2}
  EXPECT_EQ(b.raw()[1], b.raw()[0]);

  WeightConfig scaled = regularized, halved = regularized;
  scaled.loss_scale = 2.0;
  halved.eta_w = 0.25;
  KernelWeights s(2, &scaled), h(2, &halved), plain(2, &regularized);
  for (int t = 0; t < 10; ++t) {
    const double ft[2] = {0.1 * t, 1.0 - 0.05 * t}, nt[2] = {0.3, 0.7};
    s.update(ft, nt, 0.4);
    h.update(ft, nt, 0.4);
    plain.update(ft, nt, 0.4);
  }
  for (int p = 0; p < 2; ++p) EXPECT_NEAR(s.raw()[p], h.raw()[p], 1e-15) << p;
  EXPECT_GT(std::fabs(s.raw()[0] - plain.raw()[0]), 1e-3);
}

TEST(KernelWeightsTest, MinMaxRenormalisesOnceAWeightPassesTenToTheTen) {
  // Reference regression rule (raker.md §3.3 Profile R): with errors 0 and 1 every step, the
  // first kernel's u doubles (ρ = −1) and the second's halves (ρ = 1), each plus the 1e−12 floor;
  // from u = 1/2 the first passes 1e10 at step 35 (0.5·2³⁵ ≈ 1.7e10), where u ← u/Σu.
  WeightConfig c;
  c.rule = WeightRule::MinMax;
  KernelWeights w(2, &c);
  const double f[2] = {0.0, 1.0};
  std::vector<double> u = w.raw();
  for (int t = 1; t <= 40; ++t) {
    const double floor = 1e-12, rho0 = (0.0 - 0.5 + floor) / (0.5 + floor), rho1 = (1.0 - 0.5 + floor) / (0.5 + floor);
    std::vector<double> next = {u[0] * std::pow(0.5, rho0) + floor, u[1] * std::pow(0.5, rho1) + floor};
    const bool renormalised = std::max(next[0], next[1]) > 1e10;
    if (renormalised) {
      const double total = next[0] + next[1];
      for (double& v : next) v /= total;
    }
    EXPECT_EQ(renormalised, t == 35) << t;
    w.update(f, nullptr, 0.0);
    for (int p = 0; p < 2; ++p) ASSERT_NEAR(w.raw()[p], next[p], 1e-12 * std::max(1.0, next[p])) << "step " << t;
    u = next;
  }
  EXPECT_LT(w.raw()[0], 1e10);
  EXPECT_GT(w.raw()[0], 0.99);  // renormalised at step 35, doubled five times since, ≤ 2⁵
}
