/// @file selection_rules.cpp
/// @brief OKS, OKS++ and IOKS sampling distributions and steps (selection_rules.h).
#include "families/bandit/selection_rules.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {

BanditConstants bandit_constants(LossKind loss) {
  BanditConstants c;
  switch (loss) {
    case LossKind::Logistic: c.U = 15.0; c.C0 = 1.0; c.G = 1.0; c.G1 = 1.0; break;
    case LossKind::Squared: c.U = 1.0; c.C0 = 4.0; c.G = 1.0; c.G1 = 4.0; break;  // G₁ = 2(U + 1)
    case LossKind::Absolute: c.U = 1.0; c.C0 = 0.0; c.G = 1.0; c.G1 = 1.0; break;
    default: break;
  }
  c.lmax = 1.0;  // §1.3: the experiments set ℓ_max = 1 for every loss
  return c;
}

namespace {

// q = softmax(−η·L), max-shifted; p = (1 − δ)q + δ/K.
void exponential_weights(const std::vector<double>& L, double eta, double delta, std::vector<double>& q,
                         std::vector<double>& p) {
  const std::size_t K = L.size();
  double lowest = std::numeric_limits<double>::infinity();
  for (double v : L) lowest = std::min(lowest, v);
  double total = 0.0;
  for (std::size_t i = 0; i < K; ++i) total += (q[i] = std::exp(-eta * (L[i] - lowest)));
  for (std::size_t i = 0; i < K; ++i) {
    q[i] /= total;
    p[i] = (1.0 - delta) * q[i] + delta / static_cast<double>(K);
  }
}

class OksRule final : public SelectionRule {
 public:
  OksRule(std::size_t K, std::size_t T, double c_lambda) : L_(K, 0.0), q_(K, 1.0 / static_cast<double>(K)) {
    const OksParameters o = oks_parameters(K, T);
    delta_ = o.delta;
    eta_ = o.eta;
    lambda_ = c_lambda * o.lambda_unit;
    p_.assign(K, 1.0 / static_cast<double>(K));
  }
  double observe(std::size_t I, double, double, double loss, double) override {
    L_[I] += loss / p_[I];
    exponential_weights(L_, eta_, delta_, q_, p_);
    return lambda_;
  }
  Projection projection(bool) const override { return Projection::None; }
  void save(StateWriter& out) const override {
    out.put_tag("oks/1");
    out.put_f64s(L_);
  }
  void load(StateReader& in) override {
    in.expect_tag("oks/1");
    in.get_f64s(L_.data(), L_.size());
    exponential_weights(L_, eta_, delta_, q_, p_);
  }

 private:
  std::vector<double> L_, q_;
  double delta_ = 0.0, eta_ = 0.0, lambda_ = 0.0;
};

class OksPlusPlusRule final : public SelectionRule {
 public:
  OksPlusPlusRule(std::size_t K, const BanditConstants& c, bool reference_logistic)
      : K_(static_cast<double>(K)), c_(c), reference_logistic_(reference_logistic), delta_sum_(K, 0.0),
        q_(K, 1.0 / static_cast<double>(K)) {
    gc_ = c.G * c.C0;
    A_ = std::cbrt(gc_) * std::pow(c.U * K_, 2.0 / 3.0);
    p_.assign(K, 1.0 / K_);
  }
  double observe(std::size_t I, double F, double y, double loss, double) override {
    // §4.3 steps 2–3: the sums include this round before anything is derived from them.
    const double c_tilde = loss / p_[I];
    C_ += c_tilde;
    V_ += q_[I] * c_tilde * c_tilde;
    delta_sum_[I] += c_tilde;
    // §4.4: the reference logistic scripts overwrite A with e_t = exp(−y F) every round.
    const double a = reference_logistic_ ? std::exp(-y * F) : A_;
    const double lambda = std::pow(c_.U, 4.0 / 3.0) * std::pow(std::max(a * a * a, 8.0 * C_), -1.0 / 6.0) /
                          (std::sqrt(4.0 / 3.0) * std::pow(K_, 1.0 / 6.0) * std::cbrt(gc_) *
                           std::sqrt(1.0 + delta_sum_[I]));
    const double delta = a / (2.0 * std::max(a, 2.0 * std::cbrt(C_)));
    const double eta = std::sqrt(2.0 * std::log(K_)) / std::sqrt(1.0 + V_);
    exponential_weights(delta_sum_, eta, delta, q_, p_);
    return lambda;
  }
  Projection projection(bool random_features) const override {
    return random_features ? Projection::Box : Projection::Ball;
  }
  void save(StateWriter& out) const override {
    out.put_tag("oks++/1");
    out.put_f64(C_);
    out.put_f64(V_);
    out.put_f64s(delta_sum_);
    out.put_f64s(q_);
    out.put_f64s(p_);
  }
  void load(StateReader& in) override {
    in.expect_tag("oks++/1");
    C_ = in.get_f64();
    V_ = in.get_f64();
    in.get_f64s(delta_sum_.data(), delta_sum_.size());
    in.get_f64s(q_.data(), q_.size());
    in.get_f64s(p_.data(), p_.size());
  }

 private:
  double K_;
  BanditConstants c_;
  bool reference_logistic_;
  double gc_ = 1.0, A_ = 1.0;
  double C_ = 0.0, V_ = 0.0;  // C̃ = Σ c̃, V = Σ q_I c̃²
  std::vector<double> delta_sum_, q_;  // Δ_i = Σ c̃ of kernel i; q of this round
};

class IoksRule final : public SelectionRule {
 public:
  IoksRule(std::size_t K, std::size_t T, const BanditConstants& c, double eta_scale, bool clean)
      : K_(static_cast<double>(K)), c_(c), clean_(clean), q_(K, 1.0 / static_cast<double>(K)), G_(K, 0.0) {
    const IoksParameters o = ioks_parameters(K, T, c, eta_scale);
    nu_ = o.nu;
    delta_ = o.delta;
    eta_.assign(K, o.eta0);
    rho_.assign(K, 2.0 * K_);
    p_.assign(K, 1.0 / K_);
  }
  double observe(std::size_t I, double, double, double loss, double derivative) override {
    const double c = loss / c_.lmax;
    const double pI = p_[I];
    // Inner step (§5.3 step 3): AdaGrad-style λ from Σ‖∇̃‖², this round included (κ(x, x) = 1).
    G_[I] += derivative * derivative / (pI * pI);
    const double lambda = c_.U / (std::sqrt(2.0) * std::sqrt(1.0 + G_[I]));
    // Loss estimate (eq. (4)) and the mirror step (eq. (5)) with the rates before this round's increase.
    const double eta_max = *std::max_element(eta_.begin(), eta_.end());
    const double c_hat = pI >= eta_max ? c / pI : c / (pI + eta_max);
    ioks_mirror_step(q_, eta_, I, c_hat, clean_ ? 1e-12 : 1e-5);
    if (clean_) {
      double total = 0.0;
      for (double v : q_) total += v;
      for (double& v : q_) v /= total;
    }
    for (std::size_t i = 0; i < q_.size(); ++i) p_[i] = (1.0 - delta_) * q_[i] + delta_ / K_;
    // Rate schedule (step 7).
    for (std::size_t i = 0; i < q_.size(); ++i)
      if (1.0 / p_[i] > rho_[i]) {
        rho_[i] = 2.0 / p_[i];
        eta_[i] *= nu_;
      }
    return lambda;
  }
  Projection projection(bool random_features) const override {
    return random_features ? Projection::Box : Projection::Ball;
  }
  void save(StateWriter& out) const override {
    out.put_tag("ioks/1");
    out.put_f64s(q_);
    out.put_f64s(p_);
    out.put_f64s(eta_);
    out.put_f64s(rho_);
    out.put_f64s(G_);
  }
  void load(StateReader& in) override {
    in.expect_tag("ioks/1");
    in.get_f64s(q_.data(), q_.size());
    in.get_f64s(p_.data(), p_.size());
    in.get_f64s(eta_.data(), eta_.size());
    in.get_f64s(rho_.data(), rho_.size());
    in.get_f64s(G_.data(), G_.size());
  }

 private:
  double K_;
  BanditConstants c_;
  bool clean_;
  double nu_ = 1.0, delta_ = 0.0;
  std::vector<double> q_, eta_, rho_, G_;
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
  std::vector<double> base0(K);
  for (std::size_t i = 0; i < K; ++i) base0[i] = std::pow(q[i], -7.0 / 8.0) + eta[i] * (i == I ? c_hat : 0.0);
  std::vector<double> next(K);
  // S(μ) = Σ_i (base0_i − η_i μ)^{−8/7}, increasing in μ; +∞ once a base is not positive.
  const auto S = [&](double mu) {
    double total = 0.0;
    for (std::size_t i = 0; i < K; ++i) {
      const double b = base0[i] - eta[i] * mu;
      if (!(b > 0)) return std::numeric_limits<double>::infinity();
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
      if (iterations > 200) throw Error("IOKS: the mirror step's bisection did not converge");
      mu = 0.5 * (lo + hi);
      s = S(mu);
      ++iterations;
      if (s < 1.0) lo = mu;
      else hi = mu;
    }
  }
  q = next;
  return iterations;
}

std::unique_ptr<SelectionRule> make_oks_rule(std::size_t K, std::size_t T, double c_lambda) {
  return std::make_unique<OksRule>(K, T, c_lambda);
}
std::unique_ptr<SelectionRule> make_oks_plus_plus_rule(std::size_t K, const BanditConstants& c,
                                                       bool reference_logistic) {
  return std::make_unique<OksPlusPlusRule>(K, c, reference_logistic);
}
std::unique_ptr<SelectionRule> make_ioks_rule(std::size_t K, std::size_t T, const BanditConstants& c,
                                              double eta_scale, bool clean) {
  return std::make_unique<IoksRule>(K, T, c, eta_scale, clean);
}

}  // namespace omkl::detail
