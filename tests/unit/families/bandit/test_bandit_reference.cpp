// The bandit family's arithmetic against re-implementations written here from spec/bandit.md:
// OKS++'s δ_t past its δ = 1/2 regime (§4.3), IOKS's loss estimate, mixing and rate schedule
// (§5.3), and whole runs of OKS (§3) and LKMBooks (§7.2) compared prediction by prediction.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "families/bandit/bandit.h"
#include "families/bandit/selection_rules.h"
#include "random/rng.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::bandit_stream;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::run_steps;

namespace {
using Params = std::vector<std::pair<std::string, std::string>>;

// The oks-6 dictionary (§8.3): exp(−‖a − b‖²/(2σ²)), σ = 2^−2 … 2^3.
constexpr double kSigma[6] = {0.25, 0.5, 1.0, 2.0, 4.0, 8.0};
double gauss(const double* a, const double* b, std::size_t d, double sigma) {
  double s = 0.0;
  for (std::size_t k = 0; k < d; ++k) s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::exp(-s / (2.0 * sigma * sigma));
}

}  // namespace

TEST(BanditRulesTest, OksPlusPlusExplorationPastTheHalfRegime) {
  // Square loss, K = 6: A = 4^{1/3}·6^{2/3}, δ_t = 1/2 while C̃ ≤ (A/2)³ = 18, then A/(4C̃^{1/3}) (§4.3
  // step 6); λ's max{A³ = 144, 8C̃} also changes side. The first observation already has C̃ = 24.
  const std::size_t K = 6;
  auto rule = make_oks_plus_plus_rule(K, bandit_constants(LossKind::Squared), false);
  const double A = std::cbrt(4.0) * std::pow(6.0, 2.0 / 3.0);
  ASSERT_NEAR(A * A * A, 144.0, 1e-12);
  double C = 0.0, V = 0.0;
  std::vector<double> Delta(K, 0.0), q(K, 1.0 / 6.0), p(K, 1.0 / 6.0);
  struct Round { std::size_t I; double F, y; };
  for (const Round r : {Round{2, -1.0, 1.0}, Round{0, 0.5, 0.0}, Round{2, 3.0, 0.0}, Round{5, -2.0, 1.0}}) {
    const double loss = (r.F - r.y) * (r.F - r.y), ct = loss / p[r.I];
    C += ct;
    V += q[r.I] * ct * ct;
    Delta[r.I] += ct;
    const double lambda = std::pow(std::max(144.0, 8.0 * C), -1.0 / 6.0) /
                          (std::sqrt(4.0 / 3.0) * std::pow(6.0, 1.0 / 6.0) * std::cbrt(4.0) * std::sqrt(1.0 + Delta[r.I]));
    ASSERT_GT(C, 18.0);
    const double delta = A / (4.0 * std::cbrt(C));
    ASSERT_LT(delta, 0.5);
    const double eta = std::sqrt(2.0 * std::log(6.0)) / std::sqrt(1.0 + V);
    double total = 0.0;
    for (std::size_t i = 0; i < K; ++i) total += (q[i] = std::exp(-eta * Delta[i]));
    for (std::size_t i = 0; i < K; ++i) p[i] = (1.0 - delta) * (q[i] /= total) + delta / 6.0;
    EXPECT_NEAR(rule->observe(r.I, r.F, r.y, loss, 2.0 * (r.F - r.y)), lambda, 1e-14 * lambda);
    for (std::size_t i = 0; i < K; ++i) EXPECT_NEAR(rule->p()[i], p[i], 1e-14) << "C̃ = " << C << ", i = " << i;
  }
  // Round 1 by hand: C̃ = 4·6 = 24, δ_1 = A/(4·24^{1/3}) ≈ 0.4543, not 1/2.
  EXPECT_NEAR(A / (4.0 * std::cbrt(24.0)), 0.45432, 5e-5);
}

TEST(BanditRulesTest, IoksLossEstimateMixingAndRateSchedule) {
  // K = 2, T = 1000, square loss (U = 1, G₁ = 4, ℓ_max = 1), clean bisection. Round 1 pushes
  // p_0 below 1/ρ_0 = 1/4 (its rate grows, ρ_0 = 2/p_0); round 3 pushes it below η̄, so round 4
  // takes ĉ = c/(p + η̄) (§5.3 step 4); p = (1 − δ)q + δ/K (step 6); the schedule is step 7.
  const std::size_t K = 2, T = 1000;
  auto rule = make_ioks_rule(K, T, bandit_constants(LossKind::Squared), 8.0, true);
  const double lnT = std::log(1000.0);
  const double eta0 = 8.0 * std::pow(2.0, 3.0 / 8.0) / (4.0 * std::sqrt(1000.0 * lnT));
  const double delta = std::pow(1000.0, -0.75), nu = std::exp(2.0 / (3.0 * lnT));
  std::vector<double> q{0.5, 0.5}, p{0.5, 0.5}, eta{eta0, eta0}, rho{4.0, 4.0}, G{0.0, 0.0};
  struct Round {
    std::size_t I;
    double F, y;
    bool small_p;       // p_I < η̄: ĉ = c/(p_I + η̄)
    double eta_after0;  // η_0 after the round, in units of η₀
  };
  const Round rounds[] = {{0, 6.5, 0.5, false, nu}, {1, 1.0, 0.5, false, nu}, {0, 20.5, 0.5, false, nu * nu},
                          {0, 1.5, 0.5, true, nu * nu}, {1, 2.5, 0.5, false, nu * nu}};
  for (const Round& r : rounds) {
    const double loss = (r.F - r.y) * (r.F - r.y), g = 2.0 * (r.F - r.y), pI = p[r.I];
    G[r.I] += g * g / (pI * pI);
    const double lambda = 1.0 / (std::sqrt(2.0) * std::sqrt(1.0 + G[r.I]));
    const double eta_bar = std::max(eta[0], eta[1]);
    ASSERT_EQ(pI < eta_bar, r.small_p);
    const double c_hat = pI >= eta_bar ? loss / pI : loss / (pI + eta_bar);
    // μ* with Σq = 1, bisected to the last bit.
    std::vector<double> next(K);
    const auto S = [&](double mu) {
      double s = 0.0;
      for (std::size_t i = 0; i < K; ++i) {
        const double b = std::pow(q[i], -7.0 / 8.0) + eta[i] * ((i == r.I ? c_hat : 0.0) - mu);
        if (!(b > 0)) return static_cast<double>(INFINITY);
        s += (next[i] = std::pow(b, -8.0 / 7.0));
      }
      return s;
    };
    double lo = 0.0, hi = c_hat;
    for (int k = 0; k < 200; ++k) {
      const double mid = 0.5 * (lo + hi);
      (S(mid) < 1.0 ? lo : hi) = mid;
    }
    S(lo);
    q = next;
    for (std::size_t i = 0; i < K; ++i) p[i] = (1.0 - delta) * q[i] + delta / 2.0;
    for (std::size_t i = 0; i < K; ++i)
      if (1.0 / p[i] > rho[i]) {
        rho[i] = 2.0 / p[i];
        eta[i] *= nu;
      }
    EXPECT_NEAR(rule->observe(r.I, r.F, r.y, loss, g), lambda, 1e-10 * lambda);
    const RuleState s = rule->state();
    for (std::size_t i = 0; i < K; ++i) {
      EXPECT_NEAR(rule->p()[i], p[i], 1e-10) << i;
      EXPECT_NEAR(s.p[i], (1.0 - delta) * s.q[i] + delta / 2.0, 1e-16) << i;
      EXPECT_NEAR(s.eta[i], eta[i], 1e-15 * eta[i]) << i;
      EXPECT_NEAR(s.rho[i], rho[i], 1e-8 * rho[i]) << i;
    }
    // By hand: only arm 0's rate grows, in rounds 1 and 3; arm 1 keeps η₀ and ρ = 2K.
    EXPECT_NEAR(s.eta[0], eta0 * r.eta_after0, 1e-15);
    EXPECT_EQ(s.eta[1], eta0);
    EXPECT_EQ(s.rho[1], 4.0);
  }
  EXPECT_LT(p[0], 0.02);
}

TEST(BanditReferenceTest, OksRunMatchesADirectImplementation) {
  // §3 with the oks-6 dictionary, square loss, c_λ = 5, T = 60: L_i += c/p_I, q = softmax(−ηL),
  // p = (1 − δ)q + δ/K, append x with −λℓ'/p_I; the draws are the library's stream (seed 3,
  // replicate 0, Selection, bandit.cpp's 0xb0a0 + rule, OKS = 0) read as §2.2 says.
  const std::size_t T = 60, d = 3, K = 6;
  const Dataset data = bandit_stream(T, d);
  auto oks = make("oks", context_for(data), {{"c_lambda", "5"}});
  const std::vector<double> got = run_steps(*oks, data);
  const double Kd = 6.0, Td = 60.0, delta = std::cbrt(Kd / Td);
  const double eta = std::sqrt(2.0 * (1.0 - delta) * std::log(Kd) / (Kd * Td)), lambda = 5.0 * std::sqrt(delta / (Kd * Td));
  RandomStream draws(3, 0, RngPurpose::Selection, 0xb0a0u);
  std::vector<double> L(K, 0.0), p(K, 1.0 / Kd), selected(K, 0.0);
  std::vector<std::vector<std::size_t>> rows(K);
  std::vector<std::vector<double>> alpha(K);
  double largest = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    const double* x = data.row(t);
    const double target = draws.uniform() * (p[0] + p[1] + p[2] + p[3] + p[4] + p[5]);
    std::size_t I = 0;
    for (double cumulative = p[0]; !(cumulative > target) && I + 1 < K;) cumulative += p[++I];
    double F = 0.0;
    for (std::size_t j = 0; j < rows[I].size(); ++j) F += alpha[I][j] * gauss(data.row(rows[I][j]), x, d, kSigma[I]);
    ASSERT_NEAR(got[t], F, 1e-12 * std::max(1.0, std::fabs(F))) << "round " << t;
    largest = std::max(largest, std::fabs(F));
    const double y = data.y[t], pI = p[I];
    L[I] += (F - y) * (F - y) / pI;
    rows[I].push_back(t);
    alpha[I].push_back(-lambda * 2.0 * (F - y) / pI);
    selected[I] += 1.0;
    double total = 0.0;
    std::vector<double> w(K);
    for (std::size_t i = 0; i < K; ++i) total += (w[i] = std::exp(-eta * L[i]));
    for (std::size_t i = 0; i < K; ++i) p[i] = (1.0 - delta) * w[i] / total + delta / Kd;
  }
  const BanditLog log = bandit_log(*oks, 0);
  for (std::size_t i = 0; i < K; ++i) {
    EXPECT_NEAR(log.p[i], p[i], 1e-12) << i;
    EXPECT_EQ(log.selected[i], selected[i]) << i;
  }
  EXPECT_GE(std::count_if(selected.begin(), selected.end(), [](double n) { return n > 0; }), 3);
  EXPECT_GT(largest, 0.5);  // the expansions grow to matter
}

TEST(BanditReferenceTest, LkmBooksRunMatchesADirectImplementation) {
  // §7.2, square loss, B = 10, T = 60: ŷ = Σ p_i f_i on one shared support set; shifted linearised
  // expert losses over g_max; P_t = min{1, B/((1 − ν)T^{1−ν}t^ν)}, ν = 1/4; a kept x (while |S| < B)
  // gets −λg/P_t, λ = √((1 + ν)B)/(√(1 − ν)T) (or λ = 0.3, under which g_max grows past 1). The
  // Bernoulli draws are the library's stream (seed 3, replicate 0, Selection, lkmbooks.cpp's
  // 0xb0c0), one uniform per round. With B = 30, P_t's formula exceeds 1 for t ≤ 11 and is
  // clipped to 1 there (§10 A18).
  const std::size_t T = 60, d = 3, K = 6;
  const Dataset data = bandit_stream(T, d, 8);
  const double nu = 0.25, Td = 60.0, eta = std::sqrt(8.0 * std::log(6.0) / Td);
  for (const auto& [B, given_lambda] : std::vector<std::pair<std::size_t, double>>{{10, 0.0}, {10, 0.3}, {30, 0.0}}) {
    Params params{{"B", std::to_string(B)}};
    if (given_lambda > 0) params.emplace_back("lambda", "0.3");
    auto books = make("lkmbooks", context_for(data), params);
    const std::vector<double> got = run_steps(*books, data);
    const double Bd = static_cast<double>(B);
    const double lambda = given_lambda > 0 ? given_lambda : std::sqrt((1.0 + nu) * Bd) / (std::sqrt(1.0 - nu) * Td);
    RandomStream bernoulli(3, 0, RngPurpose::Selection, 0xb0c0u);
    std::vector<double> p(K, 1.0 / 6.0), f(K), alpha;
    std::vector<std::size_t> rows;
    double g_max = 1.0, smallest_kept = 1.0;
    std::size_t clipped = 0;  // rounds whose P_t formula exceeds 1
    for (std::size_t t = 1; t <= T; ++t) {
      const double* x = data.row(t - 1);
      double yhat = 0.0;
      for (std::size_t i = 0; i < K; ++i) {
        f[i] = 0.0;
        for (std::size_t j = 0; j < rows.size(); ++j) f[i] += alpha[j] * gauss(data.row(rows[j]), x, d, kSigma[i]);
        yhat += p[i] * f[i];
      }
      ASSERT_NEAR(got[t - 1], yhat, 1e-12) << "λ " << lambda << ", round " << t;
      const double g = 2.0 * (yhat - data.y[t - 1]);
      const double lo = *std::min_element(f.begin(), f.end()), hi = *std::max_element(f.begin(), f.end());
      double total = 0.0;
      for (std::size_t i = 0; i < K; ++i) {
        const double c = g > 0 ? g * (f[i] - lo) / g_max : g * (f[i] - hi) / g_max;
        EXPECT_GE(c, 0.0);
        total += (p[i] *= std::exp(-eta * c));
      }
      for (double& v : p) v /= total;
      g_max = std::max(g_max, hi - lo);
      const double formula = Bd / ((1.0 - nu) * std::pow(Td, 1.0 - nu) * std::pow(double(t), nu));
      clipped += formula > 1.0;
      const double keep = std::min(1.0, formula);
      if (bernoulli.uniform() < keep && rows.size() < B) {
        rows.push_back(t - 1);
        alpha.push_back(-lambda * g / keep);
        smallest_kept = std::min(smallest_kept, keep);
      }
    }
    if (B == 10) {
      EXPECT_EQ(rows.size(), B);  // the budget fills, and later kept samples are dropped
      EXPECT_LT(smallest_kept, 0.7);
    } else {
      EXPECT_EQ(clipped, 11u);  // t = 1 … 11 kept with P_t = 1, weight 1
    }
    if (given_lambda > 0) EXPECT_GT(g_max, 1.0);
  }
}
