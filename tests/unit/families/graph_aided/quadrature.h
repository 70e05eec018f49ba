/// @file quadrature.h
/// @brief Adaptive Simpson quadrature for the divergence tests: an independent check of the
/// closed forms of spec/graph-aided.md §2.2.2 against the definition §2.2.1.
#pragma once

#include <cmath>

namespace omkl::test {

// Absolute tolerance on purpose: |κ_a − κ_b|² cancels where the kernels cross, and a relative
// criterion would chase rounding noise there.
template <class F>
double adaptive_simpson_step(const F& f, double a, double b, double fa, double fm, double fb,
                             double whole, double abs_tol, int depth) {
  const double m = 0.5 * (a + b);
  const double lm = 0.5 * (a + m), rm = 0.5 * (m + b);
  const double flm = f(lm), frm = f(rm);
  const double left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
  const double right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
  const double delta = left + right - whole;
  if (depth <= 0 || std::fabs(delta) <= 15.0 * abs_tol) return left + right + delta / 15.0;
  return adaptive_simpson_step(f, a, m, fa, flm, fm, left, 0.5 * abs_tol, depth - 1) +
         adaptive_simpson_step(f, m, b, fm, frm, fb, right, 0.5 * abs_tol, depth - 1);
}

/// ∫_a^b f to about abs_tol, with a minimum of 8 panels (so a narrow feature cannot hide
/// between the first nodes).
template <class F>
double integrate(const F& f, double a, double b, double abs_tol) {
  double total = 0.0;
  const int panels = 8;
  for (int i = 0; i < panels; ++i) {
    const double lo = a + (b - a) * i / panels, hi = a + (b - a) * (i + 1) / panels;
    const double flo = f(lo), fmid = f(0.5 * (lo + hi)), fhi = f(hi);
    const double whole = (hi - lo) / 6.0 * (flo + 4.0 * fmid + fhi);
    total += adaptive_simpson_step(f, lo, hi, flo, fmid, fhi, whole, abs_tol / panels, 30);
  }
  return total;
}

/// ∫_0^upper f over geometric pieces [0, s], [s, 2s], [2s, 4s], …: multi-scale integrands
/// (γ from 0.01 to 100) get panels at every scale. The integrand must be negligible at `upper`.
template <class F>
double integrate_half_line(const F& f, double smallest_scale, double upper, double abs_tol) {
  int pieces = 1;
  for (double lo = smallest_scale; lo < upper; lo *= 2.0) ++pieces;
  const double tol = abs_tol / pieces;
  double total = integrate(f, 0.0, smallest_scale, tol);
  for (double lo = smallest_scale; lo < upper; lo *= 2.0) total += integrate(f, lo, std::fmin(2.0 * lo, upper), tol);
  return total;
}

}  // namespace omkl::test
