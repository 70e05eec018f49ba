/// @file selection_rules.h
/// @brief How a bandit kernel-selection learner samples its kernel and sizes its step
/// (spec/bandit.md §3–§5): OKS (exponential weights, fixed exploration and steps), OKS++
/// (adaptive δ_t, η_t and per-kernel λ_{t,i} from the observed losses, §4) and IOKS (online mirror
/// descent with a modified 8-Tsallis regulariser and increasing per-arm rates, §5).
///
/// A rule sees only the sampled kernel's loss. Per round the loop draws I ~ p(), evaluates f_I,
/// then calls observe(), which updates the rule's statistics, returns the step λ for I's gradient
/// step and forms p for the next round.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/loss.h"
#include "core/state_io.h"
#include "families/bandit/hypotheses.h"
#include "families/bandit/rule_kernels.h"

namespace omkl::detail {

/// The loss-dependent constants of §1.3 (experiments): U, C₀, G (OKS++), G₁, ℓ_max (IOKS).
struct BanditConstants {
  double U = 1.0;
  double C0 = 4.0;
  double G = 1.0;
  double G1 = 4.0;
  double lmax = 1.0;
  /// Absolute loss: IOKS's ‖∇̃‖² is 1/p² every round, F = y included (§5.3 step 3), although
  /// the subgradient there is 0.
  bool unit_gradient = false;
};
BanditConstants bandit_constants(LossKind loss);

class SelectionRule {
 public:
  virtual ~SelectionRule() = default;
  /// The sampling distribution of this round.
  const std::vector<double>& p() const { return p_; }
  /// The next round's distribution after the sampled kernel I predicted F on label y with loss
  /// `loss` and derivative `derivative`; returns λ for I's step −λ·(derivative/p_I)·κ_I(x,·).
  virtual double observe(std::size_t I, double F, double y, double loss, double derivative) = 0;
  /// Where the hypotheses are projected after the step.
  virtual Projection projection(bool random_features) const = 0;
  virtual void save(StateWriter& out) const = 0;
  virtual void load(StateReader& in) = 0;
  /// The rule's constants and its state as rule_kernels.h reads them (pointers into this
  /// object, valid while it lives): the resident walk copies the state out and back.
  virtual const RuleConstants& constants() const = 0;
  virtual RuleState state() = 0;

 protected:
  std::vector<double> p_;
};

/// OKS's constants (§3, §8.5): δ = (K/T)^{1/3}, η = √(2(1−δ) ln K/(KT)), and √(δ/(KT)), the λ of
/// c_λ = 1.
struct OksParameters {
  double delta, eta, lambda_unit;
};
OksParameters oks_parameters(std::size_t K, std::size_t T);

/// IOKS's constants (§5.2): the initial rate η, δ = T^{−3/4} and the rate factor ν_η = e^{2/(3 ln T)}.
struct IoksParameters {
  double eta0, delta, nu;
};
IoksParameters ioks_parameters(std::size_t K, std::size_t T, const BanditConstants& c, double eta_scale);

/// OKS (§3): δ, η from oks_parameters(), λ = c_λ√(δ/(KT)); no projection.
std::unique_ptr<SelectionRule> make_oks_rule(std::size_t K, std::size_t T, double c_lambda);

/// OKS++ (§4) with the constants of `loss`; `reference_logistic` runs the authors' logistic
/// scripts, whose A is overwritten by e_t = exp(−y F) each round (§4.4).
std::unique_ptr<SelectionRule> make_oks_plus_plus_rule(std::size_t K, const BanditConstants& c, bool reference_logistic);

/// IOKS (§5): η = eta_scale·ℓ_max K^{3/8}/(U G₁ √(T ln T)) (8 in the experiments, 3/2 in the
/// theory), α = 8, δ = T^{−3/4}, ν_η = e^{2/(3 ln T)}, ρ₁ = 2K; μ* by bisection to `tolerance`
/// (1e−5, not renormalised, as the reference) or, with `clean`, to 1e−12 and renormalised.
std::unique_ptr<SelectionRule> make_ioks_rule(std::size_t K, std::size_t T, const BanditConstants& c, double eta_scale,
                                              bool clean);

/// IOKS's mirror step (§5.3 eq. (5)): q_i = (q_i^{−7/8} + η_i(ĉ_i − μ*))^{−8/7} with μ* ∈ [0, ĉ_I] such
/// that Σq = 1 within `tolerance`; non-positive bases count as S = +∞. Returns the iterations used.
int ioks_mirror_step(std::vector<double>& q, const std::vector<double>& eta, std::size_t I, double c_hat, double tolerance);

}  // namespace omkl::detail
