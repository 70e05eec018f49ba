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

// log ∫_R κ_a κ_b dρ for one coordinate (§2.2.2); the d-dimensional integral factorises.
double log_overlap_1d(const KernelSpec& a_in, const KernelSpec& b_in) {
  const bool keep = ordered(a_in, b_in);
  const KernelSpec& a = keep ? a_in : b_in;
  const KernelSpec& b = keep ? b_in : a_in;
  const double ga = kernel_gamma(a);
  const double gb = kernel_gamma(b);
  if (is_gaussian(a) && is_gaussian(b)) {
    // ∫ exp(−ρ²(1/(2γa) + 1/(2γb))) dρ = sqrt(2π γa γb / (γa + γb)); γa = γb gives sqrt(πγ).
    return 0.5 * std::log(2.0 * kPi * ga * gb / (ga + gb));
  }
  if (!is_gaussian(a) && !is_gaussian(b)) {
    // ∫ exp(−|ρ|(1/γa + 1/γb)) dρ = 2 γa γb / (γa + γb); γa = γb gives γ.
    return std::log(2.0 * ga * gb / (ga + gb));
  }
  // Gaussian γg, Laplacian γl: sqrt(2π γg) · erfcx(sqrt(γg/2)/γl). The exp·Φ form of the spec
  // overflows for wide Gaussians against narrow Laplacians (argument up to ~700).
  const double gg = is_gaussian(a) ? ga : gb;
  const double gl = is_gaussian(a) ? gb : ga;
  return 0.5 * std::log(2.0 * kPi * gg) + std::log(erfcx(std::sqrt(gg / 2.0) / gl));
}

// The three logs a divergence needs (I_aa, I_bb, I_ab), per unit of dimension.
struct LogOverlaps {
  double aa, bb, ab;
};

LogOverlaps log_overlaps(const KernelSpec& a, const KernelSpec& b, std::size_t dim) {
  const double d = static_cast<double>(dim);
  return {d * log_overlap_1d(a, a), d * log_overlap_1d(b, b), d * log_overlap_1d(a, b)};
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
  throw ConfigError("kernel divergence is defined only for Gaussian and Laplacian kernels, got '" +
                    kernel.name() + "'");
}

double log_overlap_integral(const KernelSpec& a, const KernelSpec& b, std::size_t dim) {
  check_dim(dim);
  return static_cast<double>(dim) * log_overlap_1d(a, b);
}

double kernel_divergence(const KernelSpec& a_in, const KernelSpec& b_in, DivergenceForm form,
                         std::size_t dim) {
  const bool keep = ordered(a_in, b_in);
  const KernelSpec& a = keep ? a_in : b_in;
  const KernelSpec& b = keep ? b_in : a_in;
  switch (form) {
    case DivergenceForm::ReferenceNan:
      (void)kernel_gamma(a);  // same domain check as the other forms
      (void)kernel_gamma(b);
      return std::numeric_limits<double>::quiet_NaN();
    case DivergenceForm::ReferenceFormula:
      return reference_formula(a, b);
    case DivergenceForm::Reference2021:
      return reference_2021(a, b);
    case DivergenceForm::NormalizedExact:
      check_dim(dim);
      if (same_kernel(a, b)) return static_cast<void>(kernel_gamma(a)), 0.0;
      return normalized_exact(log_overlaps(a, b, dim));
    case DivergenceForm::Exact:
    default: {
      check_dim(dim);
      if (same_kernel(a, b)) return static_cast<void>(kernel_gamma(a)), 0.0;
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
