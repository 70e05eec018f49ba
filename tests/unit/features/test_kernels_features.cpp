#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "features/random_features.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"

using namespace omkl;
using namespace omkl::detail;

namespace {

// Mean and standard error of the RF kernel estimate (1/D) Σ cos(vᵢᵀδ) over `draws` matrices.
std::pair<double, double> rf_kernel_estimate(const KernelSpec& kernel, RfKind kind, std::size_t d,
                                             std::size_t D, const std::vector<double>& delta,
                                             int draws) {
  double s = 0, s2 = 0;
  for (int k = 0; k < draws; ++k) {
    RandomStream rng(42, k, RngPurpose::Frequencies, 0);
    const auto V = draw_frequencies(kernel, D, d, kind, rng);
    double est = 0;
    for (std::size_t i = 0; i < D; ++i) {
      double a = 0;
      for (std::size_t j = 0; j < d; ++j) a += V[i * d + j] * delta[j];
      est += std::cos(a);
    }
    est /= static_cast<double>(D);
    s += est;
    s2 += est * est;
  }
  const double mean = s / draws;
  const double var = (s2 / draws - mean * mean) * draws / (draws - 1.0);
  return {mean, std::sqrt(std::max(var, 0.0) / draws)};
}

}  // namespace

TEST(KernelSpecTest, EvaluatesClosedForms) {
  const double a[2] = {0.3, -0.2}, b[2] = {0.1, 0.4};
  EXPECT_NEAR(KernelSpec::gaussian(0.5).evaluate(a, b, 2), std::exp(-(0.04 + 0.36) / (2 * 0.25)), 1e-15);
  EXPECT_NEAR(KernelSpec::laplacian(2.0).evaluate(a, b, 2), std::exp(-(0.2 + 0.6) / 2.0), 1e-15);
  EXPECT_NEAR(KernelSpec::cauchy(1.0).evaluate(a, b, 2), 1.0 / (1.04 * 1.36), 1e-15);
  EXPECT_NEAR(KernelSpec::isotropic_laplacian(2.0).evaluate(a, b, 2), std::exp(-std::sqrt(0.04 + 0.36) / 2.0), 1e-15);
  EXPECT_NEAR(KernelSpec::linear().evaluate(a, b, 2), 0.03 - 0.08, 1e-15);
  EXPECT_NEAR(KernelSpec::polynomial(2).evaluate(a, b, 2), 0.0025, 1e-15);
  EXPECT_NEAR(KernelSpec::polynomial(3, 1.0).evaluate(a, b, 2), std::pow(0.95, 3), 1e-15);
}

TEST(KernelSpecTest, ParsesKernelsAndDictionaries) {
  EXPECT_EQ(parse_kernel("gauss:0.1").sigma, 0.1);
  EXPECT_NEAR(parse_kernel("gauss2:4").sigma, 2.0, 1e-15);
  EXPECT_EQ(parse_kernel("poly:3").degree, 3);
  EXPECT_EQ(parse_kernel("lap_l2:2.5").family, KernelFamily::IsotropicLaplacian);
  EXPECT_EQ(parse_kernel("lap_l2:2.5").sigma, 2.5);
  EXPECT_EQ(parse_kernel(KernelSpec::isotropic_laplacian(0.25).name()).family, KernelFamily::IsotropicLaplacian);
  EXPECT_EQ(parse_kernel("lap:2.5").family, KernelFamily::Laplacian);  // the ℓ1 form
  EXPECT_TRUE(KernelSpec::isotropic_laplacian(1.0).shift_invariant());
  EXPECT_EQ(parse_dictionary("jmlr19-rf").size(), 3u);
  EXPECT_EQ(parse_dictionary("jmlr19-exact").size(), 5u);
  EXPECT_EQ(parse_dictionary("conf-41").size(), 41u);
  const auto graph = parse_dictionary("jmlr23-76");
  ASSERT_EQ(graph.size(), 76u);
  // Gaussians γ = σ² from 1e-2 to 1e2, then Laplacians with scale 1e-2 … 1e2 (graph-aided §1.3).
  EXPECT_NEAR(graph[0].sigma, 0.1, 1e-12);
  EXPECT_NEAR(graph[25].sigma, 1.0, 1e-12);  // Appendix A item 2: γ_25 = 1
  EXPECT_NEAR(graph[50].sigma, 10.0, 1e-12);
  EXPECT_EQ(graph[51].family, KernelFamily::Laplacian);
  EXPECT_NEAR(graph[51].sigma, 0.01, 1e-15);
  EXPECT_EQ(graph[63].family, KernelFamily::Laplacian);
  EXPECT_NEAR(graph[63].sigma, 1.0, 1e-12);  // γ_63 = 1
  EXPECT_NEAR(graph[75].sigma, 100.0, 1e-10);
  EXPECT_EQ(parse_dictionary("gauss:1+lap:2+poly:2").size(), 3u);
  EXPECT_THROW(parse_kernel("gauss:-1"), ConfigError);
  EXPECT_THROW(parse_kernel("bogus"), ConfigError);
  EXPECT_THROW(parse_dictionary("gauss:1++lap:1"), ConfigError);
  // An exponent's sign is not a separator: "1e+0" is one number, also before a '+'.
  const auto exponents = parse_dictionary("gauss:1e+0+lap:2.5E+1+poly:2:1.e+0");
  ASSERT_EQ(exponents.size(), 3u);
  EXPECT_EQ(exponents[0].sigma, 1.0);
  EXPECT_EQ(exponents[1].sigma, 25.0);
  EXPECT_EQ(exponents[2].offset, 1.0);
  EXPECT_EQ(parse_dictionary("gauss:1e-1+gauss:2").size(), 2u);
  EXPECT_THROW(parse_dictionary("gauss:1e+"), ConfigError);   // a trailing '+': an empty kernel
  EXPECT_THROW(parse_dictionary("gauss:1e+lap:1"), ConfigError);  // "1e" is no number
}

TEST(FeatureMapTest, ScaledFeaturesHaveUnitNorm) {
  RandomStream rng(1, 0, RngPurpose::Frequencies);
  for (std::size_t D : {1u, 7u, 50u, 64u}) {
    const auto V = draw_frequencies(KernelSpec::gaussian(0.3), D, 5, RfKind::Rf, rng);
    std::vector<double> x(5), z(2 * D);
    for (auto& v : x) v = rng.normal() * 3;
    feature_map(V.data(), D, 5, x.data(), 1.0 / std::sqrt(static_cast<double>(D)), z.data());
    double n2 = 0;
    for (double v : z) n2 += v * v;
    EXPECT_NEAR(n2, 1.0, 1e-12) << "D = " << D;
    // Sines first, then cosines.
    double a0 = 0;
    for (std::size_t k = 0; k < 5; ++k) a0 += V[k] * x[k];
    EXPECT_NEAR(z[0], std::sin(a0) / std::sqrt(static_cast<double>(D)), 1e-14);
    EXPECT_NEAR(z[D], std::cos(a0) / std::sqrt(static_cast<double>(D)), 1e-14);
  }
}

TEST(FeatureMapTest, RfEstimatesConvergeToTheExactKernels) {
  const std::size_t d = 3;
  const std::vector<double> delta = {0.4, -0.3, 0.25};
  const double zero[3] = {0, 0, 0};
  for (const KernelSpec& kernel : {KernelSpec::gaussian(0.7), KernelSpec::laplacian(0.9),
                                   KernelSpec::cauchy(0.6), KernelSpec::isotropic_laplacian(0.8)}) {
    const auto [mean, se] = rf_kernel_estimate(kernel, RfKind::Rf, d, 400, delta, 200);
    const double exact = kernel.evaluate(delta.data(), zero, d);
    EXPECT_NEAR(mean, exact, 4 * se + 1e-12) << kernel.name();
    EXPECT_LT(se, 0.01) << kernel.name();
  }
}

// The isotropic Laplacian's ORF (orthogonal directions, radial Cauchy lengths) estimates its
// kernel without bias, as its plain rows do (FeatureMapTest.RfEstimatesConvergeToTheExactKernels).
TEST(FeatureMapTest, IsotropicLaplacianOrfIsUnbiased) {
  const std::size_t d = 4, D = 10;  // two full blocks and two rows
  const std::vector<double> delta = {0.3, -0.2, 0.1, 0.25};
  const double zero[4] = {};
  const KernelSpec kernel = KernelSpec::isotropic_laplacian(0.7);
  const auto [mean, se] = rf_kernel_estimate(kernel, RfKind::Orf, d, D, delta, 800);
  EXPECT_NEAR(mean, kernel.evaluate(delta.data(), zero, d), 4 * se);
  EXPECT_LT(se, 0.01);
}

TEST(FeatureMapTest, OrfIsUnbiasedAndOrthogonalWithinBlocks) {
  const std::size_t d = 6, D = 15;  // two full blocks + 3 rows
  const std::vector<double> delta = {0.2, -0.1, 0.3, 0.05, -0.2, 0.1};
  const double zero[6] = {};
  const KernelSpec kernel = KernelSpec::gaussian(0.8);
  const auto [mean, se] = rf_kernel_estimate(kernel, RfKind::Orf, d, D, delta, 400);
  EXPECT_NEAR(mean, kernel.evaluate(delta.data(), zero, d), 3.5 * se);
  RandomStream rng(9, 0, RngPurpose::Frequencies);
  const auto V = draw_frequencies(kernel, D, d, RfKind::Orf, rng);
  for (std::size_t block = 0; block < 3; ++block) {
    for (std::size_t i = block * d; i < std::min(D, (block + 1) * d); ++i) {
      for (std::size_t j = i + 1; j < std::min(D, (block + 1) * d); ++j) {
        double dot = 0, ni = 0, nj = 0;
        for (std::size_t k = 0; k < d; ++k) {
          dot += V[i * d + k] * V[j * d + k];
          ni += V[i * d + k] * V[i * d + k];
          nj += V[j * d + k] * V[j * d + k];
        }
        EXPECT_LE(std::fabs(dot), 1e-10 * std::sqrt(ni * nj)) << i << "," << j;
      }
    }
  }
}

TEST(FeatureMapTest, MatlabOrfApproximatesItsOwnKernelNotTheGaussian) {
  // spec/raker.md Appendix A: d = 10, s = 1 gives ≈ 0.9416 (≈ (1 + s²‖δ‖²/d)^(-1/2) = 0.9425),
  // far from the Gaussian 0.533 — the reason the reference profile is only for reproduction.
  const std::size_t d = 10;
  std::vector<double> delta(d, 0.0);
  delta[0] = std::sqrt(1.2569);  // ‖δ‖² chosen so that the Gaussian with σ = 1 gives 0.533
  const auto [mean, se] = rf_kernel_estimate(KernelSpec::gaussian(1.0), RfKind::OrfMatlab, d, 50, delta, 400);
  const double formula = 1.0 / std::sqrt(1.0 + 1.2569 / d);
  EXPECT_NEAR(mean, formula, 4 * se + 0.003);
  EXPECT_GT(mean, 0.9);
}

TEST(FeatureMapTest, RejectsKernelsWithoutRandomFeatures) {
  RandomStream rng(1, 0, RngPurpose::Frequencies);
  EXPECT_THROW(draw_frequencies(KernelSpec::linear(), 4, 2, RfKind::Rf, rng), ConfigError);
  EXPECT_THROW(parse_rf_kind("qmc"), ConfigError);
}
