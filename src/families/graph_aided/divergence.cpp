/// @file divergence.cpp
/// @brief Kernel divergences of spec/graph-aided.md §2.2.
#include "families/graph_aided/divergence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/number_table.h"
#include "omkl/error.h"

namespace omkl::detail {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrtPi = 1.77245385090551602730;

bool is_gaussian(const KernelSpec& k) { return k.family == KernelFamily::Gaussian; }

// Standard normal CDF, through erfc so that the lower tail keeps its relative accuracy.
double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Canonical argument order, so that every Δ(a, b) and Δ(b, a) is the same floating-point
// expression and the matrices come out exactly symmetric.
bool ordered(const KernelSpec& a, const KernelSpec& b) {
  if (a.family != b.family) return a.family < b.family;
  return a.sigma <= b.sigma;
}

// ∫_0^∞ h(x) dx by exp-sinh quadrature, x = exp((π/2)·sinh t) (Takahasi and Mori's double
// exponential rule for a half-line): the step halves until two levels agree to 1e-14 of the
// sum. `h` must be smooth on (0, ∞), scaled so that its features lie near x ~ 1, and decay
// at least like 1/x² (the callers' integrands do). The overlaps without an elementary closed
// form need it: a Cauchy kernel's with a Laplacian, a Gaussian's with an isotropic Laplacian.
template <typename F>
double integrate_half_line(const F& h) {
  constexpr double kHalfPi = 1.57079632679489661923, kT = 4.5;  // |t| ≤ 4.5: x from 2e-31 to 5e30
  const auto node = [&](double t) {
    const double x = std::exp(kHalfPi * std::sinh(t));
    const double v = h(x);
    return v == 0.0 ? 0.0 : v * x * kHalfPi * std::cosh(t);
  };
  double step = 0.5, sum = node(0.0);
  for (double t = step; t <= kT; t += step) sum += node(t) + node(-t);
  double estimate = sum * step;
  for (int level = 0; level < 12; ++level) {
    step *= 0.5;
    for (double t = step; t <= kT; t += 2.0 * step) sum += node(t) + node(-t);  // the new midpoints
    const double next = sum * step;
    if (std::fabs(next - estimate) <= 1e-14 * std::fabs(next)) return next;
    estimate = next;
  }
  return estimate;
}

// ∫_0^∞ exp(−βu)/(1 + u²) du (β ≥ 0): π/2 at β = 0, ≈ 1/β for large β. Scaled by
// s = 1/(1 + β), so that the integrand's decay sits near u/s ~ 1 for any β.
double laplace_cauchy_integral(double beta) {
  const double s = 1.0 / (1.0 + beta);
  return s * integrate_half_line([&](double v) {
    const double u = s * v;
    return std::exp(-beta * u) / (1.0 + u * u);
  });
}

// log ∫_R κ_a κ_b dρ for one coordinate of the product kernels (§2.2.2, and the same
// integrals for the Cauchy kernel Π 1/(1 + ρ_k²/σ²)); the d-dimensional integral factorises.
// The Gaussian is exp(−ρ²/(2γ)) with γ = σ², the Laplacian exp(−|ρ|/σ); the isotropic
// Laplacian is the Laplacian in one dimension.
double log_overlap_1d(const KernelSpec& a_in, const KernelSpec& b_in) {
  const bool keep = ordered(a_in, b_in);
  const KernelSpec& a = keep ? a_in : b_in;
  const KernelSpec& b = keep ? b_in : a_in;
  const auto laplacian = [](const KernelSpec& k) {
    return k.family == KernelFamily::Laplacian || k.family == KernelFamily::IsotropicLaplacian;
  };
  const double sa = a.sigma, sb = b.sigma;
  if (is_gaussian(a) && is_gaussian(b)) {
    // ∫ exp(−ρ²(1/(2γa) + 1/(2γb))) dρ = sqrt(2π γa γb / (γa + γb)); γa = γb gives sqrt(πγ).
    const double ga = sa * sa, gb = sb * sb;
    return 0.5 * std::log(2.0 * kPi * ga * gb / (ga + gb));
  }
  if (laplacian(a) && laplacian(b)) {
    // ∫ exp(−|ρ|(1/γa + 1/γb)) dρ = 2 γa γb / (γa + γb); γa = γb gives γ.
    return std::log(2.0 * sa * sb / (sa + sb));
  }
  if (is_gaussian(a) && laplacian(b)) {
    // Gaussian γg, Laplacian γl: sqrt(2π γg) · erfcx(sqrt(γg/2)/γl). The exp·Φ form of the spec
    // overflows for wide Gaussians against narrow Laplacians (argument up to ~700).
    const double gg = sa * sa;
    return 0.5 * std::log(2.0 * kPi * gg) + std::log(erfcx(std::sqrt(gg / 2.0) / sb));
  }
  // The Cauchy kernel (it orders after the Gaussian and the Laplacian; c its scale).
  const KernelSpec& other = a.family == KernelFamily::Cauchy ? b : a;
  const double c = a.family == KernelFamily::Cauchy ? sa : sb;
  if (a.family == KernelFamily::Cauchy && b.family == KernelFamily::Cauchy) {
    // ∫ dρ / ((1 + ρ²/a²)(1 + ρ²/b²)) = π a b / (a + b) (partial fractions); a = b gives πa/2.
    return std::log(kPi * sa * sb / (sa + sb));
  }
  if (is_gaussian(other)) {
    // ∫ exp(−ρ²/(2γ)) / (1 + ρ²/c²) dρ = π c · erfcx(c / sqrt(2γ)).
    return std::log(kPi * c * erfcx(c / (std::sqrt(2.0) * other.sigma)));
  }
  // ∫ exp(−|ρ|/l) / (1 + ρ²/c²) dρ = 2c · ∫_0^∞ exp(−(c/l)u)/(1 + u²) du.
  return std::log(2.0 * c * laplace_cauchy_integral(c / other.sigma));
}

// Whether a kernel is radial, κ(ρ) = k(‖ρ‖₂) (the Gaussian and the isotropic Laplacian), and
// whether it is a product over coordinates (the Gaussian, the Laplacian and the Cauchy kernel).
bool radial(const KernelSpec& k) {
  return k.family == KernelFamily::Gaussian || k.family == KernelFamily::IsotropicLaplacian;
}
bool product(const KernelSpec& k) { return k.family != KernelFamily::IsotropicLaplacian; }

// log of the area of the unit sphere in R^d, 2π^{d/2}/Γ(d/2).
double log_sphere_area(double d) { return std::log(2.0) + 0.5 * d * std::log(kPi) - std::lgamma(0.5 * d); }

// log ∫_{R^d} exp(−‖ρ‖²/(2γ)) exp(−‖ρ‖/l) dρ = log S_{d−1} ∫_0^∞ r^{d−1} exp(−r²/(2γ) − r/l) dr
// (d ≥ 2): the radial integral by quadrature, scaled by its peak r* (where (d − 1)/r = r/γ +
// 1/l) so that it is computed as e^{g(r*)} · r* ∫ e^{g(r* v) − g(r*)} dv in log space.
double log_gaussian_isotropic_laplacian(double gamma, double l, double d) {
  const auto g = [&](double r) { return (d - 1.0) * std::log(r) - r * r / (2.0 * gamma) - r / l; };
  const double peak = 0.5 * gamma * (std::sqrt(1.0 / (l * l) + 4.0 * (d - 1.0) / gamma) - 1.0 / l);
  const double top = g(peak);
  const double scaled = integrate_half_line([&](double v) { return std::exp(g(peak * v) - top); });
  return log_sphere_area(d) + top + std::log(peak * scaled);
}

// log ∫_{R^d} exp(−‖ρ‖₂/l) Π_k κ_p(ρ_k) dρ for an isotropic Laplacian of scale l against a
// product kernel κ_p (a Laplacian or a Cauchy kernel; d ≥ 2), which neither factorises nor is
// radial. The isotropic Laplacian is a Gaussian scale mixture (the 1/2-stable subordinator):
// e^{−√s} = ∫_0^∞ φ(t) e^{−st} dt, φ(t) = t^{−3/2} e^{−1/(4t)} / (2√π), so with s = ‖ρ‖²/l²
//   I = ∫_0^∞ φ(t) J(t)^d dt,  J(t) = ∫_R exp(−tρ²/l²) κ_p(ρ) dρ,
// and J has a closed form for both: with c = t/l², a Laplacian of scale b gives
// √(π/c)·erfcx(1/(2b√c)) and a Cauchy kernel of scale a gives π a·erfcx(a√c) (the 1D overlaps
// above with a Gaussian of 1/(2γ) = c). One quadrature in log t, scaled at the integrand's peak
// (found by a golden-section search on log t: the log-integrand rises from −∞ at t → 0 and falls
// as −((d + 3)/2) log t at t → ∞) as log_gaussian_isotropic_laplacian() is.
double log_isotropic_laplacian_product(double l, const KernelSpec& p, double d) {
  const auto log_j = [&](double t) {
    const double c = t / (l * l);
    if (p.family == KernelFamily::Cauchy) return std::log(kPi * p.sigma * erfcx(p.sigma * std::sqrt(c)));
    return 0.5 * std::log(kPi / c) + std::log(erfcx(1.0 / (2.0 * p.sigma * std::sqrt(c))));
  };
  const auto g = [&](double t) {
    return -std::log(2.0 * kSqrtPi) - 1.5 * std::log(t) - 1.0 / (4.0 * t) + d * log_j(t);
  };
  // The peak in u = log t, to a relative 1e-10 of the bracket (the scaling only has to be near it).
  double lo = -80.0, hi = 80.0;
  const double ratio = 0.5 * (std::sqrt(5.0) - 1.0);
  double u1 = hi - ratio * (hi - lo), u2 = lo + ratio * (hi - lo);
  double g1 = g(std::exp(u1)), g2 = g(std::exp(u2));
  while (hi - lo > 1e-10) {
    if (g1 < g2) {
      lo = u1;
      u1 = u2;
      g1 = g2;
      u2 = lo + ratio * (hi - lo);
      g2 = g(std::exp(u2));
    } else {
      hi = u2;
      u2 = u1;
      g2 = g1;
      u1 = hi - ratio * (hi - lo);
      g1 = g(std::exp(u1));
    }
  }
  const double peak = std::exp(0.5 * (lo + hi)), top = g(peak);
  const double scaled = integrate_half_line([&](double v) { return std::exp(g(peak * v) - top); });
  return top + std::log(peak * scaled);
}

// log ∫_{R^dim} κ_a κ_b dρ: the product kernels coordinate by coordinate; in one dimension every
// kernel is a product kernel; the radial pairs in closed form or by one radial quadrature; an
// isotropic Laplacian against a Laplacian or a Cauchy kernel by its Gaussian scale mixture.
double log_overlap(const KernelSpec& a_in, const KernelSpec& b_in, std::size_t dim) {
  const bool keep = ordered(a_in, b_in);
  const KernelSpec& a = keep ? a_in : b_in;
  const KernelSpec& b = keep ? b_in : a_in;
  const double d = static_cast<double>(dim);
  if (dim == 1 || (product(a) && product(b))) return d * log_overlap_1d(a, b);
  if (radial(a) && radial(b)) {
    if (a.family == KernelFamily::IsotropicLaplacian && b.family == KernelFamily::IsotropicLaplacian) {
      // S_{d−1} ∫_0^∞ r^{d−1} exp(−r(1/a + 1/b)) dr = S_{d−1} Γ(d) / (1/a + 1/b)^d.
      return log_sphere_area(d) + std::lgamma(d) - d * std::log(1.0 / a.sigma + 1.0 / b.sigma);
    }
    return log_gaussian_isotropic_laplacian(a.sigma * a.sigma, b.sigma, d);  // a: the Gaussian (ordered)
  }
  // An isotropic Laplacian against a Laplacian or a Cauchy kernel (the Gaussian is radial).
  const KernelSpec& isotropic = a.family == KernelFamily::IsotropicLaplacian ? a : b;
  const KernelSpec& other = a.family == KernelFamily::IsotropicLaplacian ? b : a;
  return log_isotropic_laplacian_product(isotropic.sigma, other, d);
}

// The three logs a divergence needs (I_aa, I_bb, I_ab), per unit of dimension.
struct LogOverlaps {
  double aa, bb, ab;
};

LogOverlaps log_overlaps(const KernelSpec& a, const KernelSpec& b, std::size_t dim) {
  return {log_overlap(a, a, dim), log_overlap(b, b, dim), log_overlap(a, b, dim)};
}

bool same_kernel(const KernelSpec& a, const KernelSpec& b) {
  return a.family == b.family && a.sigma == b.sigma;
}

// Δ_S · exp(−shift), computed from logs so that the shift keeps it finite (§2.2.2 "evaluate in
// log space"). Rounding can make I_aa + I_bb − 2 I_ab slightly negative for near-identical
// kernels; Δ_S ≥ 0 by definition, so clamp.
double exact_scaled(const LogOverlaps& l, double shift) {
  const double v = std::exp(l.aa - shift) + std::exp(l.bb - shift) - 2.0 * std::exp(l.ab - shift);
  return std::max(v, 0.0);
}

double normalized_exact(const LogOverlaps& l) {
  // 2 − 2 I_ab / sqrt(I_aa I_bb) ∈ [0, 4] (Cauchy–Schwarz: the ratio is in (0, 1]).
  const double v = 2.0 - 2.0 * std::exp(l.ab - 0.5 * (l.aa + l.bb));
  return std::max(v, 0.0);
}

// kernel_distance.py (2022), §2.2.3, with p1, p2 the dictionary γ's.
double reference_formula(const KernelSpec& a, const KernelSpec& b) {
  const double ga = kernel_gamma(a);
  const double gb = kernel_gamma(b);
  if (is_gaussian(a) && is_gaussian(b)) {
    return (std::pow(ga, 1.5) + std::pow(gb, 1.5)) / kSqrtPi -
           std::sqrt(ga * gb) / std::sqrt(2.0 * kPi / ga + 2.0 * kPi / gb);
  }
  if (!is_gaussian(a) && !is_gaussian(b)) {
    return (ga + gb) / (4.0 * kPi * kPi) - ga * gb / (2.0 * kPi * kPi * (ga + gb));
  }
  // Symmetric in the argument order: p1 is always the Gaussian's γ, p2 the Laplacian's.
  const double p1 = is_gaussian(a) ? ga : gb;
  const double p2 = is_gaussian(a) ? gb : ga;
  const double x = std::sqrt(p1) / (std::sqrt(2.0) * p2);
  return std::pow(p1, 1.5) / kSqrtPi + p2 / (4.0 * kPi * kPi) -
         (p1 / (2.0 * kPi)) * (1.0 + normal_cdf(x) - normal_cdf(-x));
}

double reference_2021(const KernelSpec& a, const KernelSpec& b) {
  if (!is_gaussian(a) || !is_gaussian(b)) {
    throw ConfigError("divergence 'reference_2021' is defined only for Gaussian kernels, got '" +
                      a.name() + "' and '" + b.name() + "'");
  }
  const double ga = kernel_gamma(a);
  const double gb = kernel_gamma(b);
  return kSqrtPi * (ga + gb - 2.0 * std::sqrt(2.0) * ga * gb / std::sqrt(ga * ga + gb * gb));
}

void check_dim(std::size_t dim) {
  if (dim < 1) throw ConfigError("divergence_dim must be >= 1, got 0");
}

}  // namespace

double erfcx(double x) {
  if (x < 3.0) return std::exp(x * x) * std::erfc(x);
  // Continued fraction erfc(x) = e^{−x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))),
  // evaluated backwards; 60 levels give full double precision for x ≥ 3 (checked in the tests
  // against exp(x²)·erfc(x) in long double).
  double f = x;
  for (int k = 60; k >= 1; --k) f = x + 0.5 * k / f;
  return 1.0 / (kSqrtPi * f);
}

double kernel_gamma(const KernelSpec& kernel) {
  if (kernel.family == KernelFamily::Gaussian) return kernel.sigma * kernel.sigma;
  if (kernel.family == KernelFamily::Laplacian) return kernel.sigma;
  throw ConfigError("the reference code's kernel divergences are defined only for Gaussian and Laplacian kernels, "
                    "got '" + kernel.name() + "'");
}

void check_divergence_kernel(const KernelSpec& kernel) {
  if (!kernel.shift_invariant())
    throw ConfigError("kernel divergence is defined for shift-invariant kernels (Gaussian, Laplacian, isotropic "
                      "Laplacian, Cauchy), got '" + kernel.name() + "'");
}

double log_overlap_integral(const KernelSpec& a, const KernelSpec& b, std::size_t dim) {
  check_dim(dim);
  check_divergence_kernel(a);
  check_divergence_kernel(b);
  return log_overlap(a, b, dim);
}

double kernel_divergence(const KernelSpec& a_in, const KernelSpec& b_in, DivergenceForm form,
                         std::size_t dim) {
  const bool keep = ordered(a_in, b_in);
  const KernelSpec& a = keep ? a_in : b_in;
  const KernelSpec& b = keep ? b_in : a_in;
  // Every form compares shift-invariant kernels (the reference code's formulas narrow that
  // further to the Gaussian and the Laplacian, through kernel_gamma()).
  check_divergence_kernel(a);
  check_divergence_kernel(b);
  switch (form) {
    case DivergenceForm::ReferenceNan:  // the NaNs' effect, the index order, depends on no kernel
      return std::numeric_limits<double>::quiet_NaN();
    case DivergenceForm::ReferenceFormula:
      return reference_formula(a, b);
    case DivergenceForm::Reference2021:
      return reference_2021(a, b);
    case DivergenceForm::NormalizedExact:
      check_dim(dim);
      if (same_kernel(a, b)) return 0.0;
      return normalized_exact(log_overlaps(a, b, dim));
    case DivergenceForm::Exact:
    default: {
      check_dim(dim);
      if (same_kernel(a, b)) return 0.0;
      const LogOverlaps l = log_overlaps(a, b, dim);
      const double shift = std::max(l.aa, l.bb);
      // exp(shift) may overflow to +inf for very large d; the documented result then is +inf.
      return exact_scaled(l, shift) * std::exp(shift);
    }
  }
}

DivergenceMatrix divergence_matrix(const Dictionary& dictionary, DivergenceForm form,
                                   std::size_t dim) {
  if (dictionary.empty()) throw ConfigError("dictionary is empty: the divergence needs kernels");
  check_dim(dim);
  const std::size_t n = dictionary.size();
  DivergenceMatrix m;
  m.n = n;
  m.values.assign(n * n, 0.0);
  if (form != DivergenceForm::Exact) {
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        m.values[i * n + j] = kernel_divergence(dictionary[i], dictionary[j], form, dim);
    return m;
  }
  // Exact: one common shift (the largest log self-integral) keeps every entry finite; Δ is
  // dominated by the self-integrals, so entries are at most 2·exp(0) after the shift.
  std::vector<double> log_self(n);
  for (std::size_t i = 0; i < n; ++i) log_self[i] = log_overlap_integral(dictionary[i], dictionary[i], dim);
  const double top = *std::max_element(log_self.begin(), log_self.end());
  // Leave the matrix unscaled whenever its values fit comfortably in a double.
  m.log_scale = top > 600.0 ? top : 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n; ++j) {
      double v = 0.0;
      if (!same_kernel(dictionary[i], dictionary[j])) {
        const LogOverlaps l{log_self[i], log_self[j],
                            log_overlap_integral(dictionary[i], dictionary[j], dim)};
        v = exact_scaled(l, m.log_scale);
      }
      m.values[i * n + j] = v;
      m.values[j * n + i] = v;  // Δ_S is symmetric; computing it once keeps it exactly so
    }
  }
  return m;
}

DivergenceMatrix read_divergence_table(const std::string& path, std::size_t n) {
  DivergenceMatrix delta;
  delta.n = n;
  delta.values.reserve(n * n);
  const std::string shape = "a divergence table lists " + std::to_string(n) + " rows of " + std::to_string(n) +
                            " numbers, one row per line, for the dictionary's " + std::to_string(n) + " kernels";
  std::size_t rows = 0, row_line = 0, in_row = 0;
  const auto close_row = [&] {
    if (in_row != n)
      throw InputError(path + ":" + std::to_string(row_line) + ": row " + std::to_string(rows) + " has " +
                       std::to_string(in_row) + " numbers (" + shape + ")");
  };
  read_table_cells(path, "divergence table", shape, [&](const TableCell& cell) {
    if (cell.line != row_line) {  // a new row
      if (rows > 0) close_row();
      if (rows == n)
        throw InputError(cell.where + "more than " + std::to_string(n) + " rows (" + shape + ")");
      ++rows;
      row_line = cell.line;
      in_row = 0;
    }
    if (!cell.finite) throw InputError(cell.where + "Δ entry " + cell.text + " is not a finite number");
    delta.values.push_back(cell.value);
    ++in_row;
  });
  if (rows > 0) close_row();
  if (rows != n)
    throw InputError("divergence table '" + path + "' has " + std::to_string(rows) + " rows (" + shape + ")");
  return delta;
}

}  // namespace omkl::detail
