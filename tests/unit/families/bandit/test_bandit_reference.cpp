// The bandit family's arithmetic against re-implementations written here from spec/bandit.md:
// OKS++'s δ_t past its δ = 1/2 regime (§4.3), IOKS's loss estimate, mixing and rate schedule
// (§5.3), whole runs of OKS (§3), OKS++ (§4), IOKS (§5), their random-feature versions (§6.3, §7.1)
// and LKMBooks (§7.2) compared prediction by prediction, and the switches' profile defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>
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
using omkl::test::run_blocks;
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

namespace {

// ---- whole runs of OKS++ and IOKS, kernelized and on random features, written from the spec ----
//
// Every piece in its direct form, as §2–§6 state it and not as the library organises it: the
// expansion keeps its coefficients α explicitly (no lazy scale) and projects with the norm
// √(αᵀKα) from the Gram matrix (no norm recursion); the features are std::cos / std::sin of
// Ωx/σ_i; q is R's unshifted softmax; the bisection is §5.4's, step by step. Only the random
// streams are the library's: the kernel draws (Selection, bandit.cpp's 0xb0a0 + rule: OKS++ = 1,
// IOKS = 2) and Ω (Frequencies, hypotheses.h's 0xb0b0), read as §2.2 and §6.1 say.

enum class DirectLoss { Square, Logistic, Absolute };

double direct_loss(DirectLoss loss, double f, double y) {
  switch (loss) {
    case DirectLoss::Square: return (f - y) * (f - y);
    case DirectLoss::Logistic: return std::max(-y * f, 0.0) + std::log1p(std::exp(-std::fabs(y * f)));
    case DirectLoss::Absolute: return std::fabs(f - y);
  }
  return 0.0;
}
double direct_derivative(DirectLoss loss, double f, double y) {
  switch (loss) {
    case DirectLoss::Square: return 2.0 * (f - y);
    case DirectLoss::Logistic: return -y / (1.0 + std::exp(y * f));  // −y·σ(−yf)
    case DirectLoss::Absolute: return f > y ? 1.0 : (f < y ? -1.0 : 0.0);
  }
  return 0.0;
}

// The K hypotheses: a kernel expansion per kernel (§2.1) or a weight vector on z_i (§6.1).
class DirectHypotheses {
 public:
  DirectHypotheses(const Dataset& data, std::size_t K, std::size_t D) : data_(data), D_(D), rows_(K), alpha_(K) {
    if (D == 0) return;
    omega_.resize(D * data.n_features);
    RandomStream(3, 0, RngPurpose::Frequencies, 0xb0b0u).normals(omega_.data(), omega_.size());
    w_.assign(K, std::vector<double>(2 * D, 0.0));
  }
  double evaluate(std::size_t i, std::size_t t) const {
    const double* x = data_.row(t);
    double f = 0.0;
    if (D_ == 0) {
      for (std::size_t j = 0; j < rows_[i].size(); ++j) f += alpha_[i][j] * kappa(i, rows_[i][j], t);
      return f;
    }
    const std::vector<double> z = features(i, x);
    for (std::size_t j = 0; j < 2 * D_; ++j) f += w_[i][j] * z[j];
    return f;
  }
  // f_i ← project(f_i + a·κ_i(x_t, ·)): the ball ‖f‖ ≤ U (kernel) or the box |w_j| ≤ U/√D (RF);
  // OKS and RF-OKS do not project (U = ∞).
  void update(std::size_t i, std::size_t t, double a, double U) {
    if (D_ == 0) {
      rows_[i].push_back(t);
      alpha_[i].push_back(a);
      double n2 = 0.0;
      for (std::size_t j = 0; j < rows_[i].size(); ++j)
        for (std::size_t k = 0; k < rows_[i].size(); ++k) n2 += alpha_[i][j] * alpha_[i][k] * kappa(i, rows_[i][j], rows_[i][k]);
      const double norm = std::sqrt(n2);
      if (std::isfinite(U) && norm > U) {
        for (double& v : alpha_[i]) v *= U / norm;
        ++projections;
      }
      return;
    }
    const std::vector<double> z = features(i, data_.row(t));
    const double box = U / std::sqrt(static_cast<double>(D_));
    for (std::size_t j = 0; j < 2 * D_; ++j) {
      const double v = w_[i][j] + a * z[j];
      w_[i][j] = std::max(-box, std::min(box, v));
      projections += v != w_[i][j];
      largest_weight = std::max(largest_weight, std::fabs(w_[i][j]));
    }
  }
  double largest_weight = 0.0;  // RF: max |w_j| over the run
  std::size_t projections = 0;  // ball projections, or box-clipped coordinates

 private:
  double kappa(std::size_t i, std::size_t a, std::size_t b) const {
    return gauss(data_.row(a), data_.row(b), data_.n_features, kSigma[i]);
  }
  std::vector<double> features(std::size_t i, const double* x) const {
    const std::size_t d = data_.n_features;
    std::vector<double> z(2 * D_);
    for (std::size_t j = 0; j < D_; ++j) {
      double angle = 0.0;
      for (std::size_t k = 0; k < d; ++k) angle += omega_[j * d + k] * x[k];
      angle /= kSigma[i];
      z[j] = std::cos(angle) / std::sqrt(static_cast<double>(D_));
      z[D_ + j] = std::sin(angle) / std::sqrt(static_cast<double>(D_));
    }
    return z;
  }
  const Dataset& data_;
  std::size_t D_;
  std::vector<std::vector<std::size_t>> rows_;
  std::vector<std::vector<double>> alpha_;
  std::vector<double> omega_;
  std::vector<std::vector<double>> w_;
};

struct DirectRun {
  std::vector<double> predictions, p, selected, kernel_loss;  // §8.6's logs: Σ ℓ of each kernel's rounds
  std::size_t projections = 0;
  std::size_t small_p_rounds = 0, rate_increases = 0, bisected_rounds = 0;  // IOKS
  double smallest_delta = 1.0;                                             // OKS++
  double largest_weight = 0.0;                                             // RF: max |w_j|
};

std::size_t direct_draw(const std::vector<double>& p, double u) {
  double total = 0.0;
  for (double v : p) total += v;
  double cumulative = 0.0;
  for (std::size_t i = 0; i < p.size(); ++i)
    if ((cumulative += p[i]) > u * total) return i;
  return p.size() - 1;
}

// The part of a round every rule shares (§2.2, §8.6): draw I ~ p from the rule's stream, evaluate
// F = f_I(x_t) alone, and log the prediction, the selection and the drawn kernel's loss.
struct DirectRound {
  std::size_t I;
  double F, y;
};
DirectRound play_direct_round(RandomStream& draws, const std::vector<double>& p, DirectHypotheses& f, const Dataset& data,
                              std::size_t t, DirectLoss loss, DirectRun& run) {
  if (run.selected.empty()) {
    run.selected.assign(p.size(), 0.0);
    run.kernel_loss.assign(p.size(), 0.0);
  }
  const std::size_t I = direct_draw(p, draws.uniform());
  const double F = f.evaluate(I, t), y = data.y[t];
  run.predictions.push_back(F);
  run.selected[I] += 1.0;
  run.kernel_loss[I] += direct_loss(loss, F, y);
  return {I, F, y};
}

// OKS (§3) on random features, RF-OKS (§7.1): L_I += c/p_I, q = softmax(−ηL), p = (1 − δ)q + δ/K
// with δ = (K/T)^{1/3}, η = √(2(1 − δ) ln K/(KT)), λ = c_λ√(δ/(KT)), and no projection.
DirectRun direct_rf_oks(const Dataset& data, DirectLoss loss, std::size_t D, double c_lambda) {
  const std::size_t K = 6, T = data.n_samples;
  const double Kd = 6.0, Td = static_cast<double>(T), delta = std::cbrt(Kd / Td);
  const double eta = std::sqrt(2.0 * (1.0 - delta) * std::log(Kd) / (Kd * Td)), lambda = c_lambda * std::sqrt(delta / (Kd * Td));
  RandomStream draws(3, 0, RngPurpose::Selection, 0xb0a0u);
  DirectHypotheses f(data, K, D);
  DirectRun run;
  std::vector<double> p(K, 1.0 / Kd), L(K, 0.0);
  for (std::size_t t = 0; t < T; ++t) {
    const auto [I, F, y] = play_direct_round(draws, p, f, data, t, loss, run);
    L[I] += direct_loss(loss, F, y) / p[I];
    f.update(I, t, -lambda * direct_derivative(loss, F, y) / p[I], INFINITY);
    double total = 0.0;
    std::vector<double> w(K);
    for (std::size_t i = 0; i < K; ++i) total += (w[i] = std::exp(-eta * L[i]));
    for (std::size_t i = 0; i < K; ++i) p[i] = (1.0 - delta) * w[i] / total + delta / Kd;
  }
  run.p = p;
  run.largest_weight = f.largest_weight;
  return run;
}

// OKS++ (§4.3, Appendix B), U, C₀ and G as §1.3's table (G given: A21's alternative); `reference`
// is §4.4's logistic A = e_t.
DirectRun direct_oks_plus_plus(const Dataset& data, DirectLoss loss, bool reference, std::size_t D, double U,
                               double G = 1.0) {
  const std::size_t K = 6, T = data.n_samples;
  const double Kd = 6.0, C0 = loss == DirectLoss::Square ? 4.0 : 1.0;
  const double A = std::cbrt(G * C0) * std::pow(U * Kd, 2.0 / 3.0);
  RandomStream draws(3, 0, RngPurpose::Selection, 0xb0a1u);
  DirectHypotheses f(data, K, D);
  DirectRun run;
  std::vector<double> p(K, 1.0 / Kd), q(K, 1.0 / Kd), Delta(K, 0.0);
  double C = 0.0, V = 0.0;
  for (std::size_t t = 0; t < T; ++t) {
    const auto [I, F, y] = play_direct_round(draws, p, f, data, t, loss, run);
    const double ct = direct_loss(loss, F, y) / p[I];
    C += ct;
    V += q[I] * ct * ct;
    Delta[I] += ct;
    const double a = reference ? std::exp(-y * F) : A;
    const double lambda = std::pow(U, 4.0 / 3.0) * std::pow(std::max(a * a * a, 8.0 * C), -1.0 / 6.0) /
                          (std::sqrt(4.0 / 3.0) * std::pow(Kd, 1.0 / 6.0) * std::cbrt(G * C0) * std::sqrt(1.0 + Delta[I]));
    f.update(I, t, -lambda * direct_derivative(loss, F, y) / p[I], U);
    const double delta = a / (2.0 * std::max(a, 2.0 * std::cbrt(C)));
    const double eta = std::sqrt(2.0 * std::log(Kd)) / std::sqrt(1.0 + V);
    run.smallest_delta = std::min(run.smallest_delta, delta);
    double total = 0.0;
    for (std::size_t i = 0; i < K; ++i) total += (q[i] = std::exp(-eta * Delta[i]));
    for (std::size_t i = 0; i < K; ++i) p[i] = (1.0 - delta) * (q[i] /= total) + delta / Kd;
  }
  run.p = p;
  run.projections = f.projections;
  return run;
}

// IOKS (§5.2–§5.4, Appendix B), U and G₁ as §1.3's table, the experiments' η (eta_scale 8) and
// ℓ_max = 1 unless given: c = ℓ/ℓ_max, η₀ ∝ ℓ_max.
DirectRun direct_ioks(const Dataset& data, DirectLoss loss, std::size_t D, double U, double eta_scale = 8.0,
                      double lmax = 1.0) {
  const std::size_t K = 6, T = data.n_samples;
  const double Kd = 6.0, Td = static_cast<double>(T), lnT = std::log(Td);
  const double G1 = loss == DirectLoss::Square ? 2.0 * (U + 1.0) : 1.0;
  const double eta0 = eta_scale * lmax * std::pow(Kd, 3.0 / 8.0) / (U * G1 * std::sqrt(Td * lnT));
  const double nu = std::exp(2.0 / (3.0 * lnT)), delta = std::pow(Td, -0.75);
  RandomStream draws(3, 0, RngPurpose::Selection, 0xb0a2u);
  DirectHypotheses f(data, K, D);
  DirectRun run;
  std::vector<double> p(K, 1.0 / Kd), q(K, 1.0 / Kd), eta(K, eta0), rho(K, 2.0 * Kd), Gs(K, 0.0);
  for (std::size_t t = 0; t < T; ++t) {
    const DirectRound round = play_direct_round(draws, p, f, data, t, loss, run);
    const std::size_t I = round.I;  // a variable, not a structured binding: the bisection's lambda captures it
    const double F = round.F, y = round.y;
    const double c = direct_loss(loss, F, y) / lmax, g = direct_derivative(loss, F, y);
    // ‖∇̃‖² = ℓ'²/p², the absolute loss's |sign|² counted as 1 even at F = y [REF].
    Gs[I] += (loss == DirectLoss::Absolute ? 1.0 : g * g) / (p[I] * p[I]);
    const double lambda = U / (std::sqrt(2.0) * std::sqrt(1.0 + Gs[I]));
    f.update(I, t, -lambda * g / p[I], U);
    const double eta_bar = *std::max_element(eta.begin(), eta.end());
    run.small_p_rounds += p[I] < eta_bar;
    const double c_hat = p[I] >= eta_bar ? c / p[I] : c / (p[I] + eta_bar);
    // §5.4: μ = ĉ_I, then μ = 0, then bisection on [0, ĉ_I] to |S − 1| ≤ 1e−5; a base ≤ 0 is S = +∞.
    std::vector<double> next(K);
    const auto S = [&](double mu) {
      double s = 0.0;
      for (std::size_t i = 0; i < K; ++i) {
        const double base = std::pow(q[i], -7.0 / 8.0) + eta[i] * ((i == I ? c_hat : 0.0) - mu);
        if (base <= 0.0) return static_cast<double>(INFINITY);
        s += (next[i] = std::pow(base, -8.0 / 7.0));
      }
      return s;
    };
    if (std::fabs(S(c_hat) - 1.0) > 1e-5 && std::fabs(S(0.0) - 1.0) > 1e-5) {
      ++run.bisected_rounds;
      double lo = 0.0, hi = c_hat;
      for (int k = 0;; ++k) {
        EXPECT_LT(k, 200) << "round " << t;
        const double mid = 0.5 * (lo + hi), s = S(mid);
        if (std::fabs(s - 1.0) <= 1e-5 || k == 200) break;
        (s < 1.0 ? lo : hi) = mid;
      }
    }
    q = next;  // not renormalised
    for (std::size_t i = 0; i < K; ++i) {
      p[i] = (1.0 - delta) * q[i] + delta / Kd;
      if (1.0 / p[i] > rho[i]) {
        rho[i] = 2.0 / p[i];
        eta[i] *= nu;
        ++run.rate_increases;
      }
    }
  }
  run.p = p;
  run.projections = f.projections;
  return run;
}

// The library's run of `name` on `data` by each step path (the host's rounds, and blocks of
// them walked by the resident program's host driver) against `direct`, round by round.
void expect_runs_match(const std::string& name, const Dataset& data, const Params& params, const DirectRun& direct) {
  for (const char* path : {"host", "resident"}) {
    Params with_path = params;
    with_path.emplace_back("step_path", path);
    auto algorithm = make(name, context_for(data), with_path);
    const std::vector<double> got = std::string(path) == "host" ? run_steps(*algorithm, data) : run_blocks(*algorithm, data, 64);
    ASSERT_EQ(got.size(), direct.predictions.size());
    for (std::size_t t = 0; t < got.size(); ++t) {
      const double expected = direct.predictions[t];
      ASSERT_NEAR(got[t], expected, 1e-10 * std::max(1.0, std::fabs(expected))) << name << ", " << path << ", round " << t;
    }
    const BanditLog log = bandit_log(*algorithm, 0);
    for (std::size_t i = 0; i < direct.p.size(); ++i) {
      EXPECT_NEAR(log.p[i], direct.p[i], 1e-10) << name << ", " << path << ", kernel " << i;
      EXPECT_EQ(log.selected[i], direct.selected[i]) << name << ", " << path << ", kernel " << i;
      EXPECT_NEAR(log.kernel_loss[i], direct.kernel_loss[i], 1e-10 * std::max(1.0, direct.kernel_loss[i]))
          << name << ", " << path << ", kernel " << i;
    }
  }
}

// y ∈ {−1, +1} from random_stream's classification labels, inputs in [−1, 1] as for regression.
Dataset bandit_labels(std::size_t n, std::size_t d) {
  Dataset data = omkl::test::random_stream(n, d, Task::Classification, 5);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  return data;
}

}  // namespace

TEST(BanditReferenceTest, OksPlusPlusRunsMatchADirectImplementation) {
  // §4.3 with the ball projection binding, on the square loss (U = 1 and a smaller U = 0.3; G = 4,
  // A21's alternative to the paper's G = 1) and the logistic loss in both of §4.4's modes,
  // kernelized and on D = 16 random features; §8.6's per-kernel loss logs too.
  const std::size_t T = 160, d = 3;
  const Dataset regression = bandit_stream(T, d), labels = bandit_labels(T, d);
  struct Case {
    const char* name;
    DirectLoss loss;
    bool reference;
    double U;
    std::size_t D;
    double G = 1.0;
  };
  for (const Case& c : {Case{"oks++", DirectLoss::Square, false, 1.0, 0}, Case{"oks++", DirectLoss::Square, false, 0.3, 0},
                        Case{"oks++", DirectLoss::Square, false, 0.3, 0, 4.0},
                        Case{"oks++", DirectLoss::Logistic, false, 15.0, 0}, Case{"oks++", DirectLoss::Logistic, true, 15.0, 0},
                        Case{"rf-oks++", DirectLoss::Square, false, 0.3, 16},
                        Case{"rf-oks++", DirectLoss::Logistic, true, 15.0, 16}}) {
    const bool logistic = c.loss == DirectLoss::Logistic;
    const Dataset& data = logistic ? labels : regression;
    Params params{{"U", std::to_string(c.U)}};
    if (logistic) params.emplace_back("logistic_mode", c.reference ? "reference" : "paper");
    if (c.D > 0) params.emplace_back("D", std::to_string(c.D));
    if (c.G != 1.0) params.emplace_back("G", std::to_string(c.G));
    const DirectRun direct = direct_oks_plus_plus(data, c.loss, c.reference, c.D, c.U, c.G);
    SCOPED_TRACE(std::string(c.name) + (logistic ? (c.reference ? " logistic reference" : " logistic paper") : " square") +
                 ", U = " + std::to_string(c.U) + ", G = " + std::to_string(c.G));
    expect_runs_match(c.name, data, params, direct);
    // The paths the comparison is meant to cover were taken.
    EXPECT_GE(std::count_if(direct.selected.begin(), direct.selected.end(), [](double n) { return n > 0; }), 3);
    if (!(logistic && !c.reference)) EXPECT_LT(direct.smallest_delta, 0.5) << "δ_t left its 1/2 regime";
    if (c.U < 1.0 || c.reference) EXPECT_GT(direct.projections, 0u) << "the projection binds";
  }
}

TEST(BanditReferenceTest, IoksRunsMatchADirectImplementation) {
  // §5.3–§5.4 on the square, absolute and logistic losses (U = 15: costs above 1, §10 A8),
  // kernelized and on D = 16 random features, with the experiments' η and one 5 times larger, and
  // ℓ_max = 2 (costs halved, η₀ doubled);
  // between them, both branches of eq. (4) and, in the long random-feature runs, the rates
  // growing several times (step 7).
  const std::size_t d = 3;
  struct Case {
    const char* name;
    DirectLoss loss;
    double U;
    std::size_t D, T;
    double eta_scale = 8.0, lmax = 1.0;
  };
  std::size_t small_p_rounds = 0, rounds = 0, most_increases = 0;
  for (const Case& c : {Case{"ioks", DirectLoss::Square, 1.0, 0, 300}, Case{"ioks", DirectLoss::Absolute, 1.0, 0, 300},
                        Case{"ioks", DirectLoss::Logistic, 15.0, 0, 300}, Case{"ioks", DirectLoss::Square, 0.2, 0, 300},
                        Case{"rf-ioks", DirectLoss::Absolute, 0.2, 16, 300}, Case{"rf-ioks", DirectLoss::Logistic, 15.0, 16, 300},
                        Case{"rf-ioks", DirectLoss::Absolute, 1.0, 16, 4000},
                        Case{"rf-ioks", DirectLoss::Square, 1.0, 16, 4000, 40.0},
                        Case{"ioks", DirectLoss::Absolute, 1.0, 0, 300, 8.0, 2.0}}) {
    const bool logistic = c.loss == DirectLoss::Logistic;
    const Dataset data = logistic ? bandit_labels(c.T, d) : bandit_stream(c.T, d);
    const char* loss = c.loss == DirectLoss::Square ? "squared" : (logistic ? "logistic" : "absolute");
    Params params{{"U", std::to_string(c.U)}, {"loss", loss}};
    if (c.D > 0) params.emplace_back("D", std::to_string(c.D));
    params.emplace_back("eta_scale", std::to_string(c.eta_scale));
    if (c.lmax != 1.0) params.emplace_back("lmax", std::to_string(c.lmax));
    const DirectRun direct = direct_ioks(data, c.loss, c.D, c.U, c.eta_scale, c.lmax);
    SCOPED_TRACE(std::string(c.name) + " " + loss + ", U = " + std::to_string(c.U) + ", T = " + std::to_string(c.T) +
                 ", ℓ_max = " + std::to_string(c.lmax));
    expect_runs_match(c.name, data, params, direct);
    EXPECT_GT(direct.bisected_rounds, c.T / 2);
    if (c.U < 1.0) EXPECT_GT(direct.projections, 0u) << "the projection binds";
    most_increases = std::max(most_increases, direct.rate_increases);
    small_p_rounds += direct.small_p_rounds;
    rounds += c.T;
  }
  EXPECT_GE(most_increases, 5u);
  EXPECT_GT(small_p_rounds, 0u);
  EXPECT_LT(small_p_rounds, rounds);
}

TEST(BanditReferenceTest, RfOksRunMatchesADirectImplementation) {
  // §7.1: OKS on the shared-Ω random features, no clipping, λ = c_λ√(δ/(KT)) with c_λ = 25; the
  // weights grow past the box U/√D that RF-OKS++ would clip them to.
  const std::size_t T = 160, d = 3, D = 16;
  const Dataset data = bandit_stream(T, d);
  const DirectRun direct = direct_rf_oks(data, DirectLoss::Square, D, 25.0);
  expect_runs_match("rf-oks", data, {{"D", std::to_string(D)}, {"c_lambda", "25"}}, direct);
  EXPECT_GT(direct.largest_weight * std::sqrt(double(D)), 1.0) << "a U = 1 box would have bound";
}

TEST(BanditReferenceTest, ProfileDefaultsOfTheSwitches) {
  // §10 A1: OKS++'s logistic A is the paper's in the paper profile and e_t in the reference
  // profile; §5.4: IOKS's bisection is the reference one unless `clean`, which renormalises q so
  // that Σp = 1 to rounding; §7.2: LKMBooks' ν_B and λ follow the loss (1/7 and 10/√T logistic,
  // 1/5 and √((1 + ν_B)B)/(√(1 − ν_B)T) absolute).
  const std::size_t T = 120, d = 3;
  const Dataset labels = bandit_labels(T, d), regression = bandit_stream(T, d);
  for (const char* name : {"oks++", "rf-oks++"}) {
    const Params base = std::string(name) == "rf-oks++" ? Params{{"D", "20"}} : Params{};
    const auto run = [&](Profile profile, const char* mode) {
      Params params = base;
      if (mode) params.emplace_back("logistic_mode", mode);
      return run_steps(*make(name, context_for(labels, profile), params), labels);
    };
    EXPECT_EQ(run(Profile::Paper, nullptr), run(Profile::Paper, "paper")) << name;
    EXPECT_NE(run(Profile::Paper, nullptr), run(Profile::Paper, "reference")) << name;
    EXPECT_EQ(run(Profile::Reference, nullptr), run(Profile::Reference, "reference")) << name;
  }
  const auto final_mass = [&](const char* bisection) {
    auto algo = make("ioks", context_for(labels), {{"bisection", bisection}});
    run_steps(*algo, labels);
    const std::vector<double> p = bandit_log(*algo, 0).p;
    return std::accumulate(p.begin(), p.end(), 0.0);
  };
  EXPECT_NEAR(final_mass("clean"), 1.0, 1e-14);
  EXPECT_GT(std::fabs(final_mass("reference") - 1.0), 1e-9) << "q not renormalised: Σp misses 1 by the tolerance's order";
  char lambda[32];
  std::snprintf(lambda, sizeof lambda, "%.17g", 10.0 / std::sqrt(double(T)));
  EXPECT_EQ(run_steps(*make("lkmbooks", context_for(labels), {{"B", "10"}}), labels),
            run_steps(*make("lkmbooks", context_for(labels), {{"B", "10"}, {"nu_B", "0.14285714285714285"}, {"lambda", lambda}}), labels));
  std::snprintf(lambda, sizeof lambda, "%.17g", std::sqrt(1.2 * 10.0) / (std::sqrt(0.8) * double(T)));
  const Params absolute{{"B", "10"}, {"loss", "absolute"}};
  EXPECT_EQ(run_steps(*make("lkmbooks", context_for(regression), absolute), regression),
            run_steps(*make("lkmbooks", context_for(regression), omkl::test::with_param(omkl::test::with_param(absolute, "nu_B", "0.2"), "lambda", lambda)), regression));
  EXPECT_NE(run_steps(*make("lkmbooks", context_for(regression), absolute), regression),
            run_steps(*make("lkmbooks", context_for(regression), omkl::test::with_param(absolute, "nu_B", "0.25")), regression));
}
