#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "families/graph_aided/divergence.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "unit/families/graph_aided/quadrature.h"

using omkl::ConfigError;
using omkl::Dictionary;
using omkl::KernelFamily;
using omkl::KernelSpec;
using omkl::parse_dictionary;
using namespace omkl::detail;

namespace {

constexpr double kPi = 3.14159265358979323846;

KernelSpec gauss(double gamma) { return KernelSpec::gaussian_sigma2(gamma); }
KernelSpec lap(double gamma) { return KernelSpec::laplacian(gamma); }

// κ(ρ) for one coordinate value, §1.3 convention.
double kernel_1d(const KernelSpec& k, double x) {
  const double g = kernel_gamma(k);
  return k.family == KernelFamily::Gaussian ? std::exp(-x * x / (2.0 * g)) : std::exp(-std::fabs(x) / g);
}

// κ(ρ) for a 2-vector: Gaussian radial in ‖·‖₂, Laplacian in ‖·‖₁.
double kernel_2d(const KernelSpec& k, double x, double y) {
  const double g = kernel_gamma(k);
  return k.family == KernelFamily::Gaussian ? std::exp(-(x * x + y * y) / (2.0 * g))
                                            : std::exp(-(std::fabs(x) + std::fabs(y)) / g);
}

// Where the kernel has decayed below e^{-60}, and its smallest length scale.
double support(const KernelSpec& k) {
  const double g = kernel_gamma(k);
  return k.family == KernelFamily::Gaussian ? std::sqrt(120.0 * g) : 60.0 * g;
}
double scale(const KernelSpec& k) {
  const double g = kernel_gamma(k);
  return k.family == KernelFamily::Gaussian ? std::sqrt(g) : g;
}

// A crude magnitude of the integrals (∫κ² ≈ length scale per dimension), independent of the
// closed forms, to set absolute quadrature tolerances.
double magnitude(const KernelSpec& a, const KernelSpec& b, int dim) {
  return std::pow(scale(a), dim) + std::pow(scale(b), dim);
}

// Δ_S = ∫_R |κ_a − κ_b|² by quadrature of the definition (§2.2.1); the integrand is even.
double delta_by_quadrature_1d(const KernelSpec& a, const KernelSpec& b) {
  auto f = [&](double x) {
    const double v = kernel_1d(a, x) - kernel_1d(b, x);
    return v * v;
  };
  const double lo = 1e-2 * std::min(scale(a), scale(b));
  return 2.0 * omkl::test::integrate_half_line(f, lo, std::max(support(a), support(b)), 1e-12 * magnitude(a, b, 1));
}

double overlap_by_quadrature_1d(const KernelSpec& a, const KernelSpec& b) {
  auto f = [&](double x) { return kernel_1d(a, x) * kernel_1d(b, x); };
  const double lo = 1e-2 * std::min(scale(a), scale(b));
  return 2.0 * omkl::test::integrate_half_line(f, lo, std::max(support(a), support(b)), 1e-12 * magnitude(a, b, 1));
}

// Δ_S over R²: nested quadrature over the first quadrant (the integrand is even in each
// coordinate and smooth there, the Laplacian's kinks lying on the axes).
double delta_by_quadrature_2d(const KernelSpec& a, const KernelSpec& b) {
  const double lo = 1e-2 * std::min(scale(a), scale(b));
  const double hi = std::max(support(a), support(b));
  const double mag = magnitude(a, b, 2);
  auto outer = [&](double x) {
    auto inner = [&](double y) {
      const double v = kernel_2d(a, x, y) - kernel_2d(b, x, y);
      return v * v;
    };
    return omkl::test::integrate_half_line(inner, lo, hi, 1e-10 * mag / hi);
  };
  return 4.0 * omkl::test::integrate_half_line(outer, lo, hi, 1e-8 * mag);
}

const std::vector<std::pair<KernelSpec, KernelSpec>>& wide_range_pairs() {
  // Extremes of the journal dictionary (γ from 1e-2 to 1e2) in every family combination.
  static const std::vector<std::pair<KernelSpec, KernelSpec>> pairs = {
      {gauss(0.01), gauss(100.0)}, {gauss(1.0), gauss(1.2)},    {gauss(0.01), gauss(0.0120226)},
      {lap(0.01), lap(100.0)},     {lap(1.0), lap(1.4677993)},  {gauss(1.0), lap(1.0)},
      {gauss(100.0), lap(0.01)},   {gauss(0.01), lap(100.0)},   {gauss(0.3), lap(2.0)},
      {lap(0.5), gauss(7.0)},
  };
  return pairs;
}

}  // namespace

TEST(DivergenceTest, ErfcxMatchesLongDoubleDefinition) {
  // Where exp(x²)·erfc(x) is still representable in long double, it is the definition.
  for (double x = 0.0; x <= 26.0; x += 0.173) {
    const long double lx = x;
    const long double ref = std::exp(lx * lx) * std::erfc(lx);
    EXPECT_NEAR(erfcx(x), static_cast<double>(ref), 4e-15 * static_cast<double>(ref)) << "x = " << x;
  }
  // Asymptotics: erfcx(x) → 1/(x√π) (1 − 1/(2x²) + 3/(4x⁴) − 15/(8x⁶)).
  for (double x : {100.0, 707.0, 1e4}) {
    const double x2 = x * x;
    const double approx = 1.0 / (x * std::sqrt(kPi)) * (1.0 - 0.5 / x2 + 0.75 / (x2 * x2) - 1.875 / (x2 * x2 * x2));
    EXPECT_NEAR(erfcx(x), approx, 1e-12 * approx);
  }
}

TEST(DivergenceTest, OverlapIntegralsMatchQuadratureInOneDimension) {
  for (const auto& [a, b] : wide_range_pairs()) {
    const double closed = std::exp(log_overlap_integral(a, b, 1));
    EXPECT_NEAR(closed, overlap_by_quadrature_1d(a, b), 1e-8 * closed) << a.name() << " vs " << b.name();
  }
}

TEST(DivergenceTest, ClosedFormsMatchQuadratureInOneDimension) {
  for (const auto& [a, b] : wide_range_pairs()) {
    const double closed = kernel_divergence(a, b, DivergenceForm::Exact, 1);
    const double numeric = delta_by_quadrature_1d(a, b);
    // Relative to the self-integrals: Δ is a difference of terms of that size.
    const double size = std::exp(log_overlap_integral(a, a, 1)) + std::exp(log_overlap_integral(b, b, 1));
    EXPECT_NEAR(closed, numeric, 1e-8 * size) << a.name() << " vs " << b.name();
    EXPECT_GT(closed, 0.0);
  }
}

TEST(DivergenceTest, ClosedFormsMatchQuadratureInTwoDimensions) {
  const std::vector<std::pair<KernelSpec, KernelSpec>> pairs = {
      {gauss(0.5), gauss(2.0)}, {gauss(1.0), lap(0.5)}, {lap(0.3), lap(3.0)}, {gauss(0.04), lap(2.0)}};
  for (const auto& [a, b] : pairs) {
    const double closed = kernel_divergence(a, b, DivergenceForm::Exact, 2);
    const double numeric = delta_by_quadrature_2d(a, b);
    EXPECT_NEAR(closed, numeric, 1e-6 * closed) << a.name() << " vs " << b.name();
  }
}

TEST(DivergenceTest, ExactIsSymmetricNonNegativeWithZeroDiagonal) {
  const Dictionary dict = parse_dictionary("jmlr23-76");
  for (std::size_t dim : {1u, 5u, 20u}) {
    const DivergenceMatrix m = divergence_matrix(dict, DivergenceForm::Exact, dim);
    ASSERT_EQ(m.n, dict.size());
    EXPECT_EQ(m.log_scale, 0.0) << "d = 20 and γ = 100 stay below 1e40 (§2.2.2)";
    for (std::size_t i = 0; i < m.n; ++i) {
      EXPECT_EQ(m(i, i), 0.0);
      for (std::size_t j = 0; j < m.n; ++j) {
        EXPECT_EQ(m(i, j), m(j, i));
        EXPECT_TRUE(std::isfinite(m(i, j)));
        if (i != j) {
          EXPECT_GT(m(i, j), 0.0) << i << "," << j << " d=" << dim;
        }
      }
    }
    // The matrix and the pairwise function agree.
    for (std::size_t i : {0u, 30u, 51u, 75u})
      for (std::size_t j : {3u, 50u, 60u})
        EXPECT_NEAR(m(i, j), kernel_divergence(dict[i], dict[j], DivergenceForm::Exact, dim), 1e-12 * m(i, j));
  }
}

TEST(DivergenceTest, ExactMatrixRescalesInsteadOfOverflowing) {
  const Dictionary dict = {gauss(0.01), gauss(100.0), lap(100.0), lap(0.01)};
  const DivergenceMatrix m = divergence_matrix(dict, DivergenceForm::Exact, 400);  // 100^400 = 1e800
  EXPECT_GT(m.log_scale, 600.0);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j) {
      EXPECT_TRUE(std::isfinite(m(i, j)));
      EXPECT_GE(m(i, j), 0.0);
    }
  // Δ(L100, G0.01) ≈ I(L100,L100) = 100^400 dominates: scaled value ≈ 1.
  EXPECT_NEAR(m(2, 0), 1.0, 1e-9);
  EXPECT_TRUE(std::isinf(kernel_divergence(dict[2], dict[0], DivergenceForm::Exact, 400)));
}

TEST(DivergenceTest, NormalizedVariantIsBoundedSymmetricWithZeroDiagonal) {
  const Dictionary dict = parse_dictionary("jmlr23-76");
  const DivergenceMatrix m = divergence_matrix(dict, DivergenceForm::NormalizedExact, 5);
  for (std::size_t i = 0; i < m.n; ++i) {
    EXPECT_EQ(m(i, i), 0.0);
    for (std::size_t j = 0; j < m.n; ++j) {
      EXPECT_EQ(m(i, j), m(j, i));
      EXPECT_GE(m(i, j), 0.0);
      EXPECT_LE(m(i, j), 4.0);
    }
  }
  // Two Gaussians: 2 − 2·(2 sqrt(γa γb)/(γa+γb))^{d/2}.
  const double v = kernel_divergence(gauss(1.0), gauss(4.0), DivergenceForm::NormalizedExact, 2);
  EXPECT_NEAR(v, 2.0 - 2.0 * (2.0 * 2.0 / 5.0), 1e-14);
}

TEST(DivergenceTest, ReferenceFormulaHasTheDocumentedDiagonalAndNegativeEntries) {
  const Dictionary dict = parse_dictionary("jmlr23-76");
  const DivergenceMatrix m = divergence_matrix(dict, DivergenceForm::ReferenceFormula, 1);
  int negative = 0;
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = 0; j < m.n; ++j) {
      if (m(i, j) < 0.0) ++negative;
      EXPECT_NEAR(m(i, j), m(j, i), 1e-12 * std::fabs(m(i, j)) + 1e-15);
    }
  EXPECT_EQ(negative, 308) << "§2.2.3: 308 of the 76×76 entries are negative";
  // Non-zero diagonals (§2.2.3): GG 1.5 γ^{3/2}/√π, LL γ/(4π²).
  for (std::size_t k : {0u, 25u, 50u}) {
    const double g = kernel_gamma(dict[k]);
    EXPECT_NEAR(m(k, k), 1.5 * std::pow(g, 1.5) / std::sqrt(kPi), 1e-12 * std::pow(g, 1.5));
  }
  for (std::size_t k : {51u, 63u, 75u}) {
    const double g = kernel_gamma(dict[k]);
    EXPECT_NEAR(m(k, k), g / (4.0 * kPi * kPi), 1e-14 * g);
  }
  // The formula is dimension-free.
  EXPECT_EQ(kernel_divergence(dict[3], dict[60], DivergenceForm::ReferenceFormula, 1),
            kernel_divergence(dict[3], dict[60], DivergenceForm::ReferenceFormula, 7));
  // GL with p1 = γ_g, p2 = γ_l: p1^{3/2}/√π + p2/(4π²) − (p1/(2π))·2Φ(a), a = sqrt(p1)/(√2 p2).
  const double p1 = 2.0, p2 = 0.5, a = std::sqrt(p1) / (std::sqrt(2.0) * p2);
  const double phi = 0.5 * std::erfc(-a / std::sqrt(2.0));
  const double expected = std::pow(p1, 1.5) / std::sqrt(kPi) + p2 / (4 * kPi * kPi) - p1 / (2 * kPi) * 2.0 * phi;
  EXPECT_NEAR(kernel_divergence(gauss(p1), lap(p2), DivergenceForm::ReferenceFormula, 1), expected, 1e-14);
  EXPECT_NEAR(kernel_divergence(lap(p2), gauss(p1), DivergenceForm::ReferenceFormula, 1), expected, 1e-14);
}

TEST(DivergenceTest, Reference2021IsRootTwoTimesTheLengthScaleDivergence) {
  // §2.2.3: √2 × Δ_S of exp(−ρ²/γ²) in one dimension (γ the dictionary parameter).
  for (auto [ga, gb] : {std::pair{0.1, 1.0}, std::pair{0.5, 0.7}, std::pair{2.0, 30.0}}) {
    auto f = [&](double x) {
      const double v = std::exp(-x * x / (ga * ga)) - std::exp(-x * x / (gb * gb));
      return v * v;
    };
    const double numeric = 2.0 * omkl::test::integrate_half_line(f, 1e-3 * ga, 12.0 * gb, 1e-12 * (ga + gb));
    const double value = kernel_divergence(gauss(ga), gauss(gb), DivergenceForm::Reference2021, 1);
    EXPECT_NEAR(value, std::sqrt(2.0) * numeric, 1e-8 * value);
  }
  EXPECT_NEAR(kernel_divergence(gauss(3.0), gauss(3.0), DivergenceForm::Reference2021, 1), 0.0, 1e-14);
  EXPECT_THROW(kernel_divergence(gauss(3.0), lap(3.0), DivergenceForm::Reference2021, 1), ConfigError);
  const DivergenceMatrix m = divergence_matrix(parse_dictionary("conf-41"), DivergenceForm::Reference2021, 1);
  for (std::size_t i = 0; i < m.n; ++i) EXPECT_NEAR(m(i, i), 0.0, 1e-12);
}

TEST(DivergenceTest, ReferenceNanIsNan) {
  EXPECT_TRUE(std::isnan(kernel_divergence(gauss(1.0), lap(2.0), DivergenceForm::ReferenceNan, 1)));
  const DivergenceMatrix m = divergence_matrix(parse_dictionary("jmlr23-76"), DivergenceForm::ReferenceNan, 1);
  EXPECT_TRUE(std::all_of(m.values.begin(), m.values.end(), [](double v) { return std::isnan(v); }));
}

TEST(DivergenceTest, GammaFollowsTheDictionaryConvention) {
  // Appendix A.2: γ_0 = 0.01, γ_25 = 1, γ_50 = 100 (Gaussian variance); γ_51 = 0.01, γ_63 = 1,
  // γ_75 = 100 (Laplacian scale).
  const Dictionary dict = parse_dictionary("jmlr23-76");
  ASSERT_EQ(dict.size(), 76u);
  const std::vector<std::pair<std::size_t, double>> expected = {{0, 0.01}, {25, 1.0}, {50, 100.0},
                                                                {51, 0.01}, {63, 1.0}, {75, 100.0}};
  for (const auto& [k, g] : expected) EXPECT_NEAR(kernel_gamma(dict[k]), g, 1e-12 * g) << k;
  // Gaussian–Gaussian closed form (§2.2.2) with explicit numbers, d = 3.
  const double ga = 0.5, gb = 2.0;
  const double iaa = std::pow(kPi * ga, 1.5), ibb = std::pow(kPi * gb, 1.5);
  const double iab = std::pow(2 * kPi * ga * gb / (ga + gb), 1.5);
  EXPECT_NEAR(kernel_divergence(gauss(ga), gauss(gb), DivergenceForm::Exact, 3), iaa + ibb - 2 * iab, 1e-12);
}

TEST(DivergenceTest, InvalidInputsThrowConfigErrorNamingTheProblem) {
  try {
    divergence_matrix(Dictionary{}, DivergenceForm::Exact, 1);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("dictionary"), std::string::npos) << e.what();
  }
  // The reference code's formulas know the Gaussian and the Laplacian only.
  try {
    kernel_divergence(KernelSpec::cauchy(1.0), gauss(1.0), DivergenceForm::ReferenceFormula, 1);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cauchy"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kernel_divergence(KernelSpec::polynomial(2), gauss(1.0), DivergenceForm::ReferenceNan, 1), ConfigError);
  EXPECT_THROW(kernel_divergence(KernelSpec::linear(), gauss(1.0), DivergenceForm::Exact, 1), ConfigError);
  try {
    kernel_divergence(gauss(1.0), gauss(2.0), DivergenceForm::Exact, 0);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("divergence_dim"), std::string::npos) << e.what();
  }
}

namespace {

// κ(ρ) of any kernel for one coordinate, through KernelSpec::evaluate (the kernel's own
// definition, independent of the closed forms).
double kernel_at(const KernelSpec& k, double x) {
  const double zero = 0.0;
  return k.evaluate(&x, &zero, 1);
}
double kernel_at(const KernelSpec& k, double x, double y) {
  const double point[2] = {x, y}, zero[2] = {0.0, 0.0};
  return k.evaluate(point, zero, 2);
}

// ∫_R κ_a κ_b with a Cauchy kernel among them, of scale c: x = c·tan θ maps R onto (−π/2, π/2)
// and the Cauchy factor cancels the Jacobian, leaving a bounded smooth integrand.
double cauchy_overlap_by_quadrature(const KernelSpec& a, const KernelSpec& b) {
  const double c = a.family == KernelFamily::Cauchy ? a.sigma : b.sigma;
  const double half_pi = 0.5 * kPi;
  auto f = [&](double theta) {
    if (theta >= half_pi) return 0.0;
    const double x = c * std::tan(theta), cos2 = std::cos(theta) * std::cos(theta);
    return kernel_at(a, x) * kernel_at(b, x) * c / cos2;
  };
  return 2.0 * omkl::test::integrate(f, 0.0, half_pi, 1e-13 * c);
}

}  // namespace

// The exact Δ_S beyond §2.2.2's Gaussian and Laplacian (divergence.h): the Cauchy kernel against
// every product kernel and the isotropic Laplacian, each overlap against quadrature of the
// kernels' own definitions.
TEST(DivergenceTest, CauchyOverlapsMatchQuadratureInOneDimension) {
  const KernelSpec cauchy_small = KernelSpec::cauchy(0.05), cauchy = KernelSpec::cauchy(1.3),
                   cauchy_wide = KernelSpec::cauchy(40.0);
  const std::vector<std::pair<KernelSpec, KernelSpec>> pairs = {
      {cauchy, cauchy},        {cauchy_small, cauchy_wide}, {cauchy, gauss(0.01)},   {cauchy, gauss(100.0)},
      {cauchy_wide, gauss(0.3)}, {cauchy, lap(0.01)},       {cauchy, lap(1.0)},      {cauchy_small, lap(100.0)},
      {cauchy_wide, lap(0.02)}, {cauchy, KernelSpec::isotropic_laplacian(0.7)}};
  for (const auto& [a, b] : pairs) {
    const double closed = std::exp(log_overlap_integral(a, b, 1));
    EXPECT_NEAR(closed, cauchy_overlap_by_quadrature(a, b), 1e-10 * closed) << a.name() << " vs " << b.name();
    EXPECT_EQ(log_overlap_integral(a, b, 1), log_overlap_integral(b, a, 1));
    // Product kernels: the d-dimensional overlap is the 1D one to the d-th power.
    if (b.family != KernelFamily::IsotropicLaplacian) {
      const double one = log_overlap_integral(a, b, 1);
      EXPECT_NEAR(log_overlap_integral(a, b, 7), 7.0 * one, 1e-12 * (7.0 * std::fabs(one) + 1.0));
    }
  }
  // Hand values: two equal Cauchy kernels πc/2; unequal ones πab/(a + b).
  EXPECT_NEAR(std::exp(log_overlap_integral(cauchy, cauchy, 1)), kPi * 1.3 / 2.0, 1e-14);
  EXPECT_NEAR(std::exp(log_overlap_integral(KernelSpec::cauchy(1.0), KernelSpec::cauchy(3.0), 1)), kPi * 3.0 / 4.0, 1e-14);
}

TEST(DivergenceTest, IsotropicLaplacianOverlapsMatchTheirDefinitions) {
  const KernelSpec narrow = KernelSpec::isotropic_laplacian(0.4), wide = KernelSpec::isotropic_laplacian(3.0);
  // In 1D the isotropic Laplacian is the Laplacian.
  for (const KernelSpec& other : {gauss(0.5), lap(2.0), narrow, KernelSpec::cauchy(0.8)}) {
    const KernelSpec other_1d = other.family == KernelFamily::IsotropicLaplacian ? lap(other.sigma) : other;
    EXPECT_EQ(log_overlap_integral(wide, other, 1), log_overlap_integral(lap(3.0), other_1d, 1)) << other.name();
  }
  // Against itself in R^d: S_{d−1} Γ(d) / (1/a + 1/b)^d; in R³ 8π/c³, in R² 2π/c².
  const double c = 1.0 / 0.4 + 1.0 / 3.0;
  EXPECT_NEAR(std::exp(log_overlap_integral(narrow, wide, 3)), 8.0 * kPi / (c * c * c), 1e-13 * 8.0 * kPi / (c * c * c));
  EXPECT_NEAR(std::exp(log_overlap_integral(narrow, wide, 2)), 2.0 * kPi / (c * c), 1e-13 * 2.0 * kPi / (c * c));
  // Against a Gaussian: as the Laplacian widens, the Gaussian's own integral (2πγ)^{d/2}; in R²
  // a Cartesian quadrature of the definitions.
  for (double d : {2.0, 5.0, 17.0}) {
    const std::size_t dim = static_cast<std::size_t>(d);
    const double gaussian_alone = 0.5 * d * std::log(2.0 * kPi * 0.7);
    EXPECT_NEAR(log_overlap_integral(gauss(0.7), KernelSpec::isotropic_laplacian(1e9), dim), gaussian_alone, 1e-7)
        << "d = " << d;
    EXPECT_LT(log_overlap_integral(gauss(0.7), KernelSpec::isotropic_laplacian(0.5), dim), gaussian_alone);
  }
  for (const auto& [g, l] : std::vector<std::pair<double, double>>{{0.5, 0.3}, {4.0, 2.0}, {0.01, 5.0}}) {
    const KernelSpec a = gauss(g), b = KernelSpec::isotropic_laplacian(l);
    const double hi = std::max(std::sqrt(120.0 * g), 60.0 * l), lo = 1e-2 * std::min(std::sqrt(g), l);
    auto outer = [&](double x) {
      auto inner = [&](double y) { return kernel_at(a, x, y) * kernel_at(b, x, y); };
      return omkl::test::integrate_half_line(inner, lo, hi, 1e-13 * hi);
    };
    const double numeric = 4.0 * omkl::test::integrate_half_line(outer, lo, hi, 1e-11 * hi * hi);
    const double closed = std::exp(log_overlap_integral(a, b, 2));
    EXPECT_NEAR(closed, numeric, 1e-7 * closed) << a.name() << " vs " << b.name();
  }
}

TEST(DivergenceTest, ExactOverADictionaryOfEveryShiftInvariantKernel) {
  // Every pair a closed form (or the radial quadrature) supports, in R^4: symmetric,
  // non-negative, zero diagonal, and the graph builds on it.
  const Dictionary dict = parse_dictionary("gauss:0.5+gauss:4+cauchy:0.3+cauchy:2+lap:1+lap:0.2");
  for (std::size_t dim : {1u, 4u}) {
    const DivergenceMatrix m = divergence_matrix(dict, DivergenceForm::Exact, dim);
    for (std::size_t i = 0; i < m.n; ++i) {
      EXPECT_EQ(m(i, i), 0.0);
      for (std::size_t j = 0; j < m.n; ++j) {
        EXPECT_EQ(m(i, j), m(j, i));
        if (i != j) EXPECT_GT(m(i, j), 0.0) << dict[i].name() << " vs " << dict[j].name() << " d=" << dim;
      }
    }
  }
  const Dictionary radial = parse_dictionary("gauss:0.5+lap_l2:1+lap_l2:0.3+gauss:2");
  const DivergenceMatrix m = divergence_matrix(radial, DivergenceForm::Exact, 6);
  for (std::size_t i = 0; i < m.n; ++i)
    for (std::size_t j = 0; j < m.n; ++j)
      if (i != j) EXPECT_GT(m(i, j), 0.0) << radial[i].name() << " vs " << radial[j].name();
  // With the isotropic Laplacian against the product kernels too, every pair of every family.
  const Dictionary every = parse_dictionary("gauss:0.5+lap:1+cauchy:0.7+lap_l2:1+lap_l2:0.3+cauchy:3");
  for (std::size_t dim : {2u, 5u}) {
    const DivergenceMatrix all = divergence_matrix(every, DivergenceForm::Exact, dim);
    for (std::size_t i = 0; i < all.n; ++i)
      for (std::size_t j = 0; j < all.n; ++j) {
        EXPECT_EQ(all(i, j), all(j, i));
        if (i != j) EXPECT_GT(all(i, j), 0.0) << every[i].name() << " vs " << every[j].name() << " d=" << dim;
      }
  }
}

TEST(DivergenceTest, IsotropicLaplacianAgainstProductKernelsMatchesTheDefinitionAndItsLimits) {
  // exp(−‖ρ‖₂/l) against Π_k κ(ρ_k) for a Laplacian or a Cauchy kernel: its Gaussian scale
  // mixture (divergence.cpp) against a Cartesian quadrature of the definitions in R² (both
  // kernels are even in each coordinate: four times the quadrant).
  for (const auto& [l, other] : std::vector<std::pair<double, KernelSpec>>{{1.0, lap(1.0)},
                                                                           {0.3, lap(2.0)},
                                                                           {4.0, lap(0.5)},
                                                                           {1.0, KernelSpec::cauchy(1.0)},
                                                                           {0.2, KernelSpec::cauchy(3.0)},
                                                                           {5.0, KernelSpec::cauchy(0.4)}}) {
    const KernelSpec iso = KernelSpec::isotropic_laplacian(l);
    const double scale = std::min(l, other.sigma);
    // The Cauchy kernel's tails are long: the quadrature runs far enough that the rest is below
    // the tolerance (∫ beyond R of e^{−r/l} is e^{−R/l}·(R + l)·l·2π).
    const double hi = 80.0 * l, lo = 1e-3 * scale;
    auto outer = [&](double x) {
      auto inner = [&](double y) { return kernel_at(iso, x, y) * kernel_at(other, x) * kernel_at(other, y); };
      return omkl::test::integrate_half_line(inner, lo, hi, 1e-13 * hi);
    };
    const double numeric = 4.0 * omkl::test::integrate_half_line(outer, lo, hi, 1e-11 * hi * hi);
    const double closed = std::exp(log_overlap_integral(iso, other, 2));
    EXPECT_NEAR(closed, numeric, 1e-7 * closed) << iso.name() << " vs " << other.name();
    EXPECT_EQ(log_overlap_integral(iso, other, 2), log_overlap_integral(other, iso, 2));
  }
  // The limits in R^d: a very wide isotropic Laplacian is 1, leaving the product kernel's own
  // integral (2b)^d or (πa)^d; a very narrow one sees the other at 0, leaving S_{d−1} Γ(d) l^d.
  for (const std::size_t dim : {2u, 5u, 17u}) {
    const double d = static_cast<double>(dim);
    const KernelSpec wide = KernelSpec::isotropic_laplacian(1e8), narrow = KernelSpec::isotropic_laplacian(1e-6);
    EXPECT_NEAR(log_overlap_integral(wide, lap(0.7), dim), d * std::log(1.4), 1e-6 * d) << "d = " << dim;
    EXPECT_NEAR(log_overlap_integral(wide, KernelSpec::cauchy(0.7), dim), d * std::log(kPi * 0.7), 1e-6 * d)
        << "d = " << dim;
    const double log_area = std::log(2.0) + 0.5 * d * std::log(kPi) - std::lgamma(0.5 * d);
    const double narrow_alone = log_area + std::lgamma(d) + d * std::log(1e-6);
    EXPECT_NEAR(log_overlap_integral(narrow, lap(0.7), dim), narrow_alone, 1e-4 * d) << "d = " << dim;
    EXPECT_NEAR(log_overlap_integral(narrow, KernelSpec::cauchy(0.7), dim), narrow_alone, 1e-4 * d) << "d = " << dim;
    // Between the limits the overlap lies below both bounds (each kernel is at most 1).
    const double mid = log_overlap_integral(KernelSpec::isotropic_laplacian(1.0), lap(0.7), dim);
    EXPECT_LT(mid, d * std::log(1.4));
    EXPECT_LT(mid, log_area + std::lgamma(d));
  }
}
