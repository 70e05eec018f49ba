/// @file naive_kogd.h
/// @brief Direct implementations of kernel OGD (spec/raker.md §5.1) and OMKL / OMKL-B (§5.4–5.5)
/// with explicit coefficients, the references the exact-kernel engine and AdaMKL are tested
/// against (test_exact_kernel.cpp, test_ada_mkl.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <string>
#include <vector>

#include "core/loss.h"
#include "omkl/kernel_spec.h"

namespace omkl::test {

// A direct implementation of spec §5.1 with explicit coefficients (the shrink multiplies
// every α) and KernelSpec::evaluate, as the reference the engine must match.
struct NaiveKogd {
  Dictionary kernels;  // κ = mean of these (one kernel: that kernel)
  LossKind loss = LossKind::Squared;
  double eta = 0.1, lambda = 0.0, ridge_scale = 2.0, step_scale = 1.0;
  bool inv_sqrt_t = false;
  std::size_t budget = 0;  // OMKL-B (§5.5): keep the `budget` most recent samples (0: all)
  std::vector<double> alpha;
  std::vector<const double*> rows;
  std::size_t d = 0;

  double kernel(const double* a, const double* b) const {
    double k = 0.0;
    for (const auto& spec : kernels) k += spec.evaluate(a, b, d);
    return k / static_cast<double>(kernels.size());
  }
  double predict(const double* x) const {
    double f = 0.0;
    for (std::size_t i = 0; i < rows.size(); ++i) f += alpha[i] * kernel(x, rows[i]);
    return f;
  }
  double norm2() const {
    double s = 0.0;
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t j = 0; j < rows.size(); ++j) s += alpha[i] * alpha[j] * kernel(rows[i], rows[j]);
    return s;
  }
  double step(const double* x, double y) {
    const double f = predict(x);
    const double e = inv_sqrt_t ? eta / std::sqrt(static_cast<double>(rows.size() + 1)) : eta;
    const double c = 1.0 - ridge_scale * e * lambda;
    for (double& a : alpha) a *= c;
    alpha.push_back(-step_scale * e * detail::loss_derivative(loss, f, y));
    rows.push_back(x);
    if (budget > 0 && rows.size() > budget) {
      alpha.erase(alpha.begin());
      rows.erase(rows.begin());
    }
    return f;
  }
};

// OMKL (§5.4) and OMKL-B (§5.5) directly: one NaiveKogd per kernel, combined by the exp_eta
// rule on C(f_p, y) + λ‖f_p‖²_H (the norm as the double sum; Profile P) or by the min-max rule
// with its 1e−12 floor and renormalisation above 1e10 (§3.3; Profile R), η_w = β = 0.5.
struct NaiveOmkl {
  std::vector<NaiveKogd> learners;
  bool reference = false;
  std::vector<double> weights;  // log-weights (P) or raw u (R), uniform at the start

  NaiveOmkl(const std::vector<std::string>& kernels, bool reference_profile, double eta, double lambda,
            std::size_t budget, std::size_t d)
      : reference(reference_profile) {
    for (const std::string& k : kernels) {
      NaiveKogd learner;
      learner.kernels = {parse_kernel(k)};
      learner.eta = eta;
      learner.lambda = lambda;
      learner.ridge_scale = reference ? 0.1 : 2.0;  // squared loss, regression
      learner.step_scale = reference ? 0.1 : 1.0;
      learner.budget = budget;
      learner.d = d;
      learners.push_back(learner);
    }
    const double P = static_cast<double>(kernels.size());
    weights.assign(kernels.size(), reference ? 1.0 / P : -std::log(P));
  }
  double step(const double* x, double y) {
    const std::size_t P = learners.size();
    std::vector<double> f(P), n2(P), w(P);
    for (std::size_t p = 0; p < P; ++p) {
      f[p] = learners[p].predict(x);
      n2[p] = learners[p].norm2();
    }
    const double top = *std::max_element(weights.begin(), weights.end());
    double num = 0.0, den = 0.0;
    for (std::size_t p = 0; p < P; ++p) {
      w[p] = reference ? weights[p] : std::exp(weights[p] - top);
      num += w[p] * f[p];
      den += w[p];
    }
    if (reference) {
      std::vector<double> e(P);
      for (std::size_t p = 0; p < P; ++p) e[p] = (y - f[p]) * (y - f[p]);
      const double hi = *std::max_element(e.begin(), e.end()), lo = *std::min_element(e.begin(), e.end());
      for (std::size_t p = 0; p < P; ++p) {
        const double rho = (e[p] - 0.5 * (hi + lo) + 1e-12) / (0.5 * (hi - lo) + 1e-12);
        weights[p] = weights[p] * std::pow(0.5, rho) + 1e-12;
      }
      if (*std::max_element(weights.begin(), weights.end()) > 1e10) {
        const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
        for (double& u : weights) u /= total;
      }
    } else {
      for (std::size_t p = 0; p < P; ++p) weights[p] -= 0.5 * ((y - f[p]) * (y - f[p]) + learners[p].lambda * n2[p]);
    }
    for (NaiveKogd& learner : learners) learner.step(x, y);
    return num / den;
  }
};

}  // namespace omkl::test
