/// @file rule_kernels.h
/// @brief The bandit selection rules' arithmetic (spec/bandit.md §3–§5) as host/device code over
/// flat arrays: OKS's exponential weights, OKS++'s adaptive δ_t, η_t, λ_{t,i}, IOKS's mirror step
/// with its bisection and rate schedule. SelectionRule (selection_rules.h) keeps a rule's state
/// in vectors and calls these; the resident walk (resident_bandit.h) calls them on its copy of the
/// same state, on the host or the GPU, so the two make the same decisions from the same numbers.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "core/host_device.h"

namespace omkl::detail {

enum class RuleKind : int { Oks = 0, OksPlusPlus = 1, Ioks = 2 };

/// A rule's constants (those of the other rules unused).
struct RuleConstants {
  RuleKind kind = RuleKind::Oks;
  std::uint32_t K = 0;
  double delta = 0.0;  ///< OKS's δ; IOKS's δ = T^{−3/4}
  double eta = 0.0;    ///< OKS's η
  double lambda = 0.0; ///< OKS's λ
  double U = 1.0;      ///< OKS++ and IOKS
  double gc = 1.0, A = 1.0;  ///< OKS++: G·C₀ and (GC₀)^{1/3}(UK)^{2/3}
  int reference_logistic = 0;
  double nu = 1.0, lmax = 1.0, tolerance = 1e-5;  ///< IOKS
  int clean = 0;
  int unit_gradient = 0;  ///< IOKS, absolute loss: ‖∇̃‖² = 1/p² whatever F (§5.3 step 3)
};

/// One replicate's rule state: K-arrays and (OKS++) two running sums.
struct RuleState {
  double* p = nullptr;     ///< this round's sampling distribution
  double* q = nullptr;     ///< OKS / OKS++: softmax weights; IOKS: the mirror iterate
  double* sums = nullptr;  ///< OKS: L_i; OKS++: Δ_i = Σ c̃; IOKS: G_i = Σ‖∇̃‖²
  double* eta = nullptr;   ///< IOKS: per-arm rates
  double* rho = nullptr;   ///< IOKS: rate thresholds
  double* C = nullptr;     ///< OKS++: C̃ = Σ c̃ (one value)
  double* V = nullptr;     ///< OKS++: V = Σ q_I c̃² (one value)
  double* scratch = nullptr;  ///< IOKS: 2K
};

/// q = softmax(−η·L), max-shifted; p = (1 − δ)q + δ/K.
OMKL_HD void exponential_weights(const double* L, std::size_t K, double eta, double delta, double* q, double* p) {
  double lowest = INFINITY;
  for (std::size_t i = 0; i < K; ++i) lowest = L[i] < lowest ? L[i] : lowest;  // std::min(lowest, L_i)
  double total = 0.0;
  for (std::size_t i = 0; i < K; ++i) total += (q[i] = std::exp(-eta * (L[i] - lowest)));
  for (std::size_t i = 0; i < K; ++i) {
    q[i] /= total;
    p[i] = (1.0 - delta) * q[i] + delta / static_cast<double>(K);
  }
}

/// IOKS's mirror step (§5.3 eq. (5)): q_i = (q_i^{−7/8} + η_i(ĉ_i − μ*))^{−8/7} with μ* ∈ [0, ĉ_I] such
/// that Σq = 1 within `tolerance`; non-positive bases count as S = +∞. base0 and next are K
/// scratch values each. Returns the iterations used, or −1 when the bisection did not converge
/// in 200 (q is then unchanged).
OMKL_HD int ioks_mirror_step(double* q, const double* eta, std::size_t K, std::size_t I, double c_hat, double tolerance,
                             double* base0, double* next) {
  for (std::size_t i = 0; i < K; ++i) base0[i] = std::pow(q[i], -7.0 / 8.0) + eta[i] * (i == I ? c_hat : 0.0);
  // S(μ) = Σ_i (base0_i − η_i μ)^{−8/7}, increasing in μ; +∞ once a base is not positive.
  const auto S = [&](double mu) {
    double total = 0.0;
    for (std::size_t i = 0; i < K; ++i) {
      const double b = base0[i] - eta[i] * mu;
      if (!(b > 0)) return static_cast<double>(INFINITY);
      total += (next[i] = std::pow(b, -8.0 / 7.0));
    }
    return total;
  };
  int iterations = 1;
  double mu = c_hat;
  double s = S(mu);
  if (!(std::fabs(s - 1.0) <= tolerance)) {
    mu = 0.0;
    s = S(mu);
    ++iterations;
    double lo = 0.0, hi = c_hat;
    while (!(std::fabs(s - 1.0) <= tolerance)) {
      if (iterations > 200) return -1;
      mu = 0.5 * (lo + hi);
      s = S(mu);
      ++iterations;
      if (s < 1.0) lo = mu;
      else hi = mu;
    }
  }
  for (std::size_t i = 0; i < K; ++i) q[i] = next[i];
  return iterations;
}

/// The next round's p after kernel I predicted F on label y with loss `loss` and derivative
/// `derivative`; returns λ for I's step −λ·(derivative/p_I)·κ_I(x, ·). `failed` is set when
/// IOKS's bisection did not converge (the state is then not advanced past it).
OMKL_HD double rule_observe(const RuleConstants& c, const RuleState& s, std::size_t I, double F, double y, double loss,
                            double derivative, bool& failed) {
  const std::size_t K = c.K;
  const double Kd = static_cast<double>(K);
  if (c.kind == RuleKind::Oks) {
    s.sums[I] += loss / s.p[I];
    exponential_weights(s.sums, K, c.eta, c.delta, s.q, s.p);
    return c.lambda;
  }
  if (c.kind == RuleKind::OksPlusPlus) {
    // §4.3 steps 2–3: the sums include this round before anything is derived from them.
    const double c_tilde = loss / s.p[I];
    *s.C += c_tilde;
    *s.V += s.q[I] * c_tilde * c_tilde;
    s.sums[I] += c_tilde;
    // §4.4: the reference logistic scripts overwrite A with e_t = exp(−y F) every round.
    const double a = c.reference_logistic ? std::exp(-y * F) : c.A;
    const double a3 = a * a * a, c8 = 8.0 * *s.C;
    const double a2c = 2.0 * std::cbrt(*s.C);
    const double lambda = std::pow(c.U, 4.0 / 3.0) * std::pow(a3 < c8 ? c8 : a3, -1.0 / 6.0) /
                          (std::sqrt(4.0 / 3.0) * std::pow(Kd, 1.0 / 6.0) * std::cbrt(c.gc) * std::sqrt(1.0 + s.sums[I]));
    const double delta = a / (2.0 * (a < a2c ? a2c : a));
    const double eta = std::sqrt(2.0 * std::log(Kd)) / std::sqrt(1.0 + *s.V);
    exponential_weights(s.sums, K, eta, delta, s.q, s.p);
    return lambda;
  }
  // IOKS
  const double cost = loss / c.lmax;
  const double pI = s.p[I];
  // Inner step (§5.3 step 3): AdaGrad-style λ from Σ‖∇̃‖², this round included (κ(x, x) = 1).
  // Absolute loss counts |sign|² = 1 even at F = y, where the step's subgradient is 0 [REF].
  const double squared_gradient = c.unit_gradient ? 1.0 : derivative * derivative;
  s.sums[I] += squared_gradient / (pI * pI);
  const double lambda = c.U / (std::sqrt(2.0) * std::sqrt(1.0 + s.sums[I]));
  // Loss estimate (eq. (4)) and the mirror step (eq. (5)) with the rates before this round's increase.
  double eta_max = s.eta[0];
  for (std::size_t i = 1; i < K; ++i) eta_max = eta_max < s.eta[i] ? s.eta[i] : eta_max;
  const double c_hat = pI >= eta_max ? cost / pI : cost / (pI + eta_max);
  if (ioks_mirror_step(s.q, s.eta, K, I, c_hat, c.tolerance, s.scratch, s.scratch + K) < 0) {
    failed = true;
    return lambda;
  }
  if (c.clean) {
    double total = 0.0;
    for (std::size_t i = 0; i < K; ++i) total += s.q[i];
    for (std::size_t i = 0; i < K; ++i) s.q[i] /= total;
  }
  for (std::size_t i = 0; i < K; ++i) s.p[i] = (1.0 - c.delta) * s.q[i] + c.delta / Kd;
  // Rate schedule (step 7).
  for (std::size_t i = 0; i < K; ++i)
    if (1.0 / s.p[i] > s.rho[i]) {
      s.rho[i] = 2.0 / s.p[i];
      s.eta[i] *= c.nu;
    }
  return lambda;
}

/// §2.2: the smallest i with Σ_{k≤i} p_k > u·Σ p (p may miss 1 by IOKS's tolerance).
OMKL_HD std::size_t bandit_draw(const double* p, std::size_t K, double u) {
  double total = 0.0;
  for (std::size_t i = 0; i < K; ++i) total += p[i];
  const double target = u * total;
  double cumulative = 0.0;
  for (std::size_t i = 0; i < K; ++i) {
    cumulative += p[i];
    if (cumulative > target) return i;
  }
  return K - 1;
}

}  // namespace omkl::detail
