/// @file selection_rules.cpp
/// @brief OKS, OKS++ and IOKS sampling distributions and steps (selection_rules.h).
#include "families/bandit/selection_rules.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {

BanditConstants bandit_constants(LossKind loss) {
  BanditConstants c;
  switch (loss) {
    case LossKind::Logistic: c.U = 15.0; c.C0 = 1.0; c.G = 1.0; c.G1 = 1.0; break;
    case LossKind::Squared: c.U = 1.0; c.C0 = 4.0; c.G = 1.0; c.G1 = 4.0; break;  // G₁ = 2(U + 1)
    case LossKind::Absolute: c.U = 1.0; c.C0 = 0.0; c.G = 1.0; c.G1 = 1.0; c.unit_gradient = true; break;
    default: break;
  }
  c.lmax = 1.0;  // §1.3: the experiments set ℓ_max = 1 for every loss
  return c;
}

namespace {

// A checkpoint's rule state that no run leaves: refused when read (a file with a valid checksum
// may still be damaged or crafted), before a kernel is drawn from it.
[[noreturn]] void refuse_stored_rule(const std::string& what) {
  throw InputError("checkpoint: bandit selection rule: " + what);
}

// p and q are distributions over the kernels: IOKS's bisection leaves Σq within its tolerance
// of 1 (1e−5 in the reference mode), far inside this check's.
void check_stored_distribution(const std::vector<double>& v, const char* name) {
  double total = 0.0;
  for (double x : v) {
    if (!(x >= 0.0 && x <= 1.0)) refuse_stored_rule(std::string(name) + " holds " + std::to_string(x) + ", not a probability");
    total += x;
  }
  if (!v.empty() && !(std::fabs(total - 1.0) <= 1e-3))
    refuse_stored_rule(std::string(name) + " sums to " + std::to_string(total) + ", not 1");
}

// Rates (η, ρ) are > 0; sums of losses and squared gradients ≥ 0.
void check_stored_values(const std::vector<double>& v, const char* name, bool strictly_positive) {
  for (double x : v)
    if (strictly_positive ? !(x > 0.0) : !(x >= 0.0))
      refuse_stored_rule(std::string(name) + " holds " + std::to_string(x) + " (a number " +
                         (strictly_positive ? "> 0" : "≥ 0") + " is expected)");
}

// NaN and +∞ are the learner's to refuse (Learner::load refuses any state holding them, once it
// is read); the rules above judge every other number, −∞ included.
bool all_sound(std::initializer_list<const std::vector<double>*> vectors, std::initializer_list<double> scalars) {
  for (const std::vector<double>* v : vectors)
    for (double x : *v)
      if (unsound(x)) return false;
  for (double x : scalars)
    if (unsound(x)) return false;
  return true;
}

// One class for the three rules: the state as vectors, the arithmetic in rule_kernels.h (shared
// with the resident walk), the checkpoint format of each rule as it was.
class Rule final : public SelectionRule {
 public:
  Rule(const RuleConstants& c, double eta0) : c_(c) {
    const std::size_t K = c.K;
    const double Kd = static_cast<double>(K);
    p_.assign(K, 1.0 / Kd);
    q_.assign(K, 1.0 / Kd);
    sums_.assign(K, 0.0);
    if (c.kind == RuleKind::Ioks) {
      eta_.assign(K, eta0);
      rho_.assign(K, 2.0 * Kd);
      scratch_.assign(2 * K, 0.0);
    }
  }
  double observe(std::size_t I, double F, double y, double loss, double derivative) override {
    bool failed = false;
    const double lambda = rule_observe(c_, state(), I, F, y, loss, derivative, failed);
    if (failed) throw Error("IOKS: the mirror step's bisection did not converge");
    return lambda;
  }
  Projection projection(bool random_features) const override {
    if (c_.kind == RuleKind::Oks) return Projection::None;
    return random_features ? Projection::Box : Projection::Ball;
  }
  void save(StateWriter& out) const override {
    switch (c_.kind) {
      case RuleKind::Oks:
        // oks/2 keeps p and q: before the first round they are the uniform p_1 = q_1 = 1/K
        // (spec §3), which the weights of zero sums, (1 − δ)/K + δ/K, are not to the last bit.
        out.put_tag("oks/2");
        out.put_f64s(sums_);
        out.put_f64s(q_);
        out.put_f64s(p_);
        break;
      case RuleKind::OksPlusPlus:
        out.put_tag("oks++/1");
        out.put_f64(C_);
        out.put_f64(V_);
        out.put_f64s(sums_);
        out.put_f64s(q_);
        out.put_f64s(p_);
        break;
      case RuleKind::Ioks:
        out.put_tag("ioks/1");
        out.put_f64s(q_);
        out.put_f64s(p_);
        out.put_f64s(eta_);
        out.put_f64s(rho_);
        out.put_f64s(sums_);
        break;
    }
  }
  void load(StateReader& in) override {
    switch (c_.kind) {
      case RuleKind::Oks: {
        const bool stored_weights = in.expect_one_of_tags({"oks/2", "oks/1"}) == "oks/2";
        in.get_f64s(sums_.data(), sums_.size());
        if (stored_weights) {
          in.get_f64s(q_.data(), q_.size());
          in.get_f64s(p_.data(), p_.size());
        } else {
          // An older checkpoint: the weights of its sums, exact after any round.
          exponential_weights(sums_.data(), sums_.size(), c_.eta, c_.delta, q_.data(), p_.data());
        }
        break;
      }
      case RuleKind::OksPlusPlus:
        in.expect_tag("oks++/1");
        C_ = in.get_f64();
        V_ = in.get_f64();
        in.get_f64s(sums_.data(), sums_.size());
        in.get_f64s(q_.data(), q_.size());
        in.get_f64s(p_.data(), p_.size());
        break;
      case RuleKind::Ioks:
        in.expect_tag("ioks/1");
        in.get_f64s(q_.data(), q_.size());
        in.get_f64s(p_.data(), p_.size());
        in.get_f64s(eta_.data(), eta_.size());
        in.get_f64s(rho_.data(), rho_.size());
        in.get_f64s(sums_.data(), sums_.size());
        break;
    }
    if (!all_sound({&p_, &q_, &sums_, &eta_, &rho_}, {C_, V_})) return;
    check_stored_distribution(p_, "p");
    check_stored_distribution(q_, "q");
    check_stored_values(sums_, "the loss sums", false);
    check_stored_values(eta_, "η", true);  // IOKS's; empty for the others
    check_stored_values(rho_, "ρ", true);
    if (!(C_ >= 0.0 && V_ >= 0.0))
      refuse_stored_rule("OKS++'s C and V (" + std::to_string(C_) + ", " + std::to_string(V_) + ") are not ≥ 0");
  }
  const RuleConstants& constants() const override { return c_; }
  RuleState state() override {
    RuleState s;
    s.p = p_.data();
    s.q = q_.data();
    s.sums = sums_.data();
    s.eta = eta_.data();
    s.rho = rho_.data();
    s.C = &C_;
    s.V = &V_;
    s.scratch = scratch_.data();
    return s;
  }

 private:
  RuleConstants c_;
  std::vector<double> q_, sums_, eta_, rho_, scratch_;
  double C_ = 0.0, V_ = 0.0;
};

}  // namespace

OksParameters oks_parameters(std::size_t K, std::size_t T) {
  const double k = static_cast<double>(K), t = static_cast<double>(T);
  OksParameters o;
  o.delta = std::cbrt(k / t);
  o.eta = std::sqrt(2.0 * (1.0 - o.delta) * std::log(k) / (k * t));
  o.lambda_unit = std::sqrt(o.delta / (k * t));
  return o;
}

IoksParameters ioks_parameters(std::size_t K, std::size_t T, const BanditConstants& c, double eta_scale) {
  const double k = static_cast<double>(K), t = static_cast<double>(T), lnT = std::log(t);
  IoksParameters o;
  o.eta0 = eta_scale * c.lmax * std::pow(k, 3.0 / 8.0) / (c.U * c.G1 * std::sqrt(t * lnT));
  o.delta = std::pow(t, -0.75);
  o.nu = std::exp(2.0 / (3.0 * lnT));
  return o;
}

int ioks_mirror_step(std::vector<double>& q, const std::vector<double>& eta, std::size_t I, double c_hat,
                     double tolerance) {
  const std::size_t K = q.size();
  std::vector<double> scratch(2 * K);
  const int iterations = ioks_mirror_step(q.data(), eta.data(), K, I, c_hat, tolerance, scratch.data(), scratch.data() + K);
  if (iterations < 0) throw Error("IOKS: the mirror step's bisection did not converge");
  return iterations;
}

std::unique_ptr<SelectionRule> make_oks_rule(std::size_t K, std::size_t T, double c_lambda) {
  const OksParameters o = oks_parameters(K, T);
  RuleConstants c;
  c.kind = RuleKind::Oks;
  c.K = static_cast<std::uint32_t>(K);
  c.delta = o.delta;
  c.eta = o.eta;
  c.lambda = c_lambda * o.lambda_unit;
  return std::make_unique<Rule>(c, 0.0);
}
std::unique_ptr<SelectionRule> make_oks_plus_plus_rule(std::size_t K, const BanditConstants& b,
                                                       bool reference_logistic) {
  RuleConstants c;
  c.kind = RuleKind::OksPlusPlus;
  c.K = static_cast<std::uint32_t>(K);
  c.U = b.U;
  c.gc = b.G * b.C0;
  c.A = std::cbrt(c.gc) * std::pow(b.U * static_cast<double>(K), 2.0 / 3.0);
  c.reference_logistic = reference_logistic ? 1 : 0;
  return std::make_unique<Rule>(c, 0.0);
}
std::unique_ptr<SelectionRule> make_ioks_rule(std::size_t K, std::size_t T, const BanditConstants& b,
                                              double eta_scale, bool clean) {
  const IoksParameters o = ioks_parameters(K, T, b, eta_scale);
  RuleConstants c;
  c.kind = RuleKind::Ioks;
  c.K = static_cast<std::uint32_t>(K);
  c.delta = o.delta;
  c.nu = o.nu;
  c.U = b.U;
  c.lmax = b.lmax;
  c.unit_gradient = b.unit_gradient ? 1 : 0;
  c.clean = clean ? 1 : 0;
  c.tolerance = clean ? 1e-12 : 1e-5;
  return std::make_unique<Rule>(c, o.eta0);
}

}  // namespace omkl::detail
