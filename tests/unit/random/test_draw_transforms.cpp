// The host/device-shared draw arithmetic: the transforms' accuracy, the Householder QR, and the
// closed-form recipe the CUDA backend draws frequency matrices by (equal to the host's
// sequential draws bit for bit).
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <vector>

#include "random/draw_transforms.h"
#include "features/frequency_recipe.h"
#include "random/householder.h"
#include "features/random_features.h"
#include "random/rng.h"
#include "common/recipe_grid.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::draw_by_recipe;
using omkl::test::HostBlocks;
using omkl::test::recipe_batches;
using omkl::test::RecipeBatch;

namespace {

constexpr long double kPiL = 3.141592653589793238462643383279502884L;

// |got − ref| in units of the last place of ref (as a double).
double ulps(double got, long double ref) {
  const double r = std::fabs(static_cast<double>(ref));
  const double ulp = std::nextafter(r, INFINITY) - r;
  return static_cast<double>(fabsl(static_cast<long double>(got) - ref) / ulp);
}

}  // namespace

TEST(DrawTransformsTest, NothingIsFusedInThisBuild) {
  // a·b = 1 − 2⁻⁶⁰ rounds to 1 unless fused with the addition: the host must round every
  // operation on its own, as the device's _rn intrinsics do (-ffp-contract=off).
  volatile double a = 1.0 + 0x1p-30, b = 1.0 - 0x1p-30, c = -1.0;
  EXPECT_EQ(draw::add(draw::mul(a, b), c), 0.0);
  EXPECT_EQ(a * b + c, 0.0);
}

TEST(DrawTransformsTest, ElementaryFunctionsAreAccurate) {
  RandomStream rng(1, 0, RngPurpose::Misc);
  double worst_log = 0, worst_cos = 0, worst_cos_abs = 0, worst_tan = 0, worst_laplace = 0;
  for (int i = 0; i < 300000; ++i) {
    double u = rng.uniform();
    if (i % 3 == 0) u = std::ldexp(u, -(i % 60));  // every binade down to 2⁻⁶⁰
    worst_log = std::max(worst_log, ulps(draw::log(u), logl(static_cast<long double>(u))));
    const long double c = cosl(2 * kPiL * static_cast<long double>(u));
    worst_cos_abs = std::max(worst_cos_abs, static_cast<double>(fabsl(draw::cos_two_pi(u) - c)));
    if (fabsl(c) > 1e-3L) worst_cos = std::max(worst_cos, ulps(draw::cos_two_pi(u), c));
    const double w = u - 0.5;
    if (w == 0) continue;
    // tan πw, and near ±½ as cot(π(½ − |w|)) with ½ − |w| exact (πw itself loses digits there).
    const long double aw = fabsl(static_cast<long double>(w));
    const long double t = (aw > 0.25L ? 1.0L / tanl(kPiL * (0.5L - aw)) : tanl(kPiL * aw)) * (w < 0 ? -1 : 1);
    worst_tan = std::max(worst_tan, ulps(draw::tan_pi(w), t));
    const long double laplace = -(w < 0 ? -1 : 1) * logl(1 - 2 * aw);
    worst_laplace = std::max(worst_laplace, ulps(draw::laplace_from(u), laplace));
  }
  // Measured: 0.81, 2.34, 1.9e-16, 3.9 and 0.83.
  EXPECT_LE(worst_log, 1.0);
  EXPECT_LE(worst_cos, 2.5);
  EXPECT_LE(worst_cos_abs, 2.5e-16);
  EXPECT_LE(worst_tan, 4.5);
  EXPECT_LE(worst_laplace, 1.0);
  // Exact points.
  EXPECT_EQ(draw::log(1.0), 0.0);
  EXPECT_EQ(draw::cos_two_pi(0.0), 1.0);
  EXPECT_EQ(draw::cos_two_pi(0.5), -1.0);
  EXPECT_EQ(draw::cos_two_pi(1.0), 1.0);  // a uniform may round up to 1
  EXPECT_EQ(draw::tan_pi(0.0), 0.0);
  EXPECT_DOUBLE_EQ(draw::tan_pi(0.25), 1.0);
}

TEST(DrawTransformsTest, LawsAreTheTextbookFormulas) {
  // Box–Muller's cosine output, Cauchy by tan and Laplace by the inverse CDF, against the C
  // library's functions (not bitwise: a few ulps).
  RandomStream rng(3, 0, RngPurpose::Misc);
  for (int i = 0; i < 10000; ++i) {
    const double u1 = rng.uniform(), u2 = rng.uniform();
    const double normal = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
    EXPECT_NEAR(draw::normal_from(u1, u2), normal, 1e-14 * std::max(1.0, std::fabs(normal)));
    if (std::fabs(u1 - 0.5) < 0.49) {  // away from the poles, where tan(π(u − ½)) loses digits
      const double cauchy = std::tan(M_PI * (u1 - 0.5));
      EXPECT_NEAR(draw::cauchy_from(u1), cauchy, 1e-13 * std::max(1.0, std::fabs(cauchy)));
    }
    const double w = u2 - 0.5;
    const double laplace = -(w < 0 ? -1.0 : 1.0) * std::log(1.0 - 2.0 * std::fabs(w));
    EXPECT_NEAR(draw::laplace_from(u2), laplace, 1e-14 * std::max(1.0, std::fabs(laplace)));
  }
}

TEST(HouseholderTest, FactorsAndReconstructsWithOrthonormalQ) {
  for (std::size_t d : {1u, 2u, 5u, 17u, 32u}) {
    RandomStream rng(9, d, RngPurpose::Misc);
    std::vector<double> g(d * d), tau(d);
    rng.normals(g.data(), g.size());
    Eigen::MatrixXd G(d, d);
    for (std::size_t i = 0; i < d; ++i)
      for (std::size_t j = 0; j < d; ++j) G(i, j) = g[i * d + j];
    householder_factor(g.data(), d, 1, tau.data());
    for (bool haar : {false, true}) {
      Eigen::MatrixXd Q(d, d), R = Eigen::MatrixXd::Zero(d, d);
      std::vector<double> row(d);
      for (std::size_t i = 0; i < d; ++i) {
        householder_q_row(g.data(), tau.data(), d, 1, i, haar, row.data());
        for (std::size_t j = 0; j < d; ++j) Q(i, j) = row[j];
      }
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = i; j < d; ++j) R(i, j) = g[i * d + j] * (haar && g[i * d + i] < 0 ? -1.0 : 1.0);
      EXPECT_LT((Q.transpose() * Q - Eigen::MatrixXd::Identity(d, d)).cwiseAbs().maxCoeff(), 1e-14) << d;
      EXPECT_LT((Q * R - G).cwiseAbs().maxCoeff(), 1e-13) << d;
      // LAPACK's convention, as Eigen's: the same Q up to rounding.
      Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
      Eigen::MatrixXd eigen_q = qr.householderQ() * Eigen::MatrixXd::Identity(d, d);
      if (haar)
        for (std::size_t k = 0; k < d; ++k)
          if (qr.matrixQR()(k, k) < 0) eigen_q.col(k) = -eigen_q.col(k);
      EXPECT_LT((Q - eigen_q).cwiseAbs().maxCoeff(), 1e-13) << d;
      if (haar)
        for (std::size_t k = 0; k < d; ++k) EXPECT_GE(R(k, k), 0.0);
    }
  }
}

TEST(HouseholderTest, ColumnsWithoutATailTakeNoReflector) {
  // Upper triangular: every τ is 0 and Q is the identity (with the sign fix: diag(sign R_kk)).
  const std::size_t d = 3;
  std::vector<double> g = {2, 1, 1, 0, -3, 1, 0, 0, 4}, tau(d);
  householder_factor(g.data(), d, 1, tau.data());
  for (double t : tau) EXPECT_EQ(t, 0.0);
  std::vector<double> row(d);
  householder_q_row(g.data(), tau.data(), d, 1, 1, false, row.data());
  EXPECT_EQ(row, (std::vector<double>{0, 1, 0}));
  householder_q_row(g.data(), tau.data(), d, 1, 1, true, row.data());
  EXPECT_EQ(row, (std::vector<double>{0, -1, 0}));
}

TEST(FrequencyRecipeTest, RecipeGivesTheHostDrawsBitForBit) {
  // Every law and construction in one batch (as a dictionary), sizes with odd D·d, D < d, D not
  // a multiple of d, d = 1 (recipe_batches()); grids of 1, 3 and 64 threads.
  for (const RecipeBatch& batch : recipe_batches()) {
    for (std::size_t i = 0; i < batch.recipes.size(); ++i)
      EXPECT_EQ(batch.recipes[i].orf != 0,
                (batch.kind != RfKind::Rf && batch.families[i] == KernelFamily::Gaussian) ||
                    (batch.kind == RfKind::Orf && batch.families[i] == KernelFamily::IsotropicLaplacian))
          << batch.label << " matrix " << i;
    for (std::size_t n_threads : {1u, 3u, 64u})
      EXPECT_EQ(draw_by_recipe<HostBlocks>(batch.recipes, batch.n_rff, batch.d, n_threads), batch.host)
          << batch.label << " threads " << n_threads;
  }
}

// spec/raker.md §1.4: the isotropic Laplacian exp(−‖δ‖₂/σ)'s rows are g/(σ|h|), the d normals
// g and then h drawn one after the other from the stream, row after row (the MATLAB construction
// asked for: plain rows, as for the ℓ1 Laplacian and the Cauchy kernel).
TEST(FrequencyRecipeTest, IsotropicLaplacianRowsAreNormalsOverOneNormal) {
  const std::size_t D = 4, d = 3;
  const double sigma = 0.5;
  for (RfKind kind : {RfKind::Rf, RfKind::OrfMatlab}) {
    RandomStream rng(7, 2, RngPurpose::Frequencies, 1), by_hand = rng;
    const std::vector<double> V = draw_frequencies(KernelSpec::isotropic_laplacian(sigma), D, d, kind, rng);
    ASSERT_EQ(V.size(), D * d);
    for (std::size_t i = 0; i < D; ++i) {
      double g[3];
      for (double& v : g) v = by_hand.normal();
      const double h = by_hand.normal();
      for (std::size_t k = 0; k < d; ++k)
        EXPECT_NEAR(V[i * d + k], g[k] / (sigma * std::fabs(h)), 1e-15 * std::fabs(V[i * d + k])) << i << " " << k;
    }
  }
}

// rf=orf for the isotropic Laplacian (its spectrum is radial): orthogonal rows within each block,
// row r's length √χ²_d/(σ|h|) from the normals after the blocks', d + 1 of them per row.
TEST(FrequencyRecipeTest, IsotropicLaplacianOrfRowsAreOrthogonalWithRadialCauchyLengths) {
  const std::size_t D = 7, d = 3, n_blocks = 3;
  const double sigma = 0.8;
  RandomStream rng(5, 1, RngPurpose::Frequencies, 2), by_hand = rng;
  const std::vector<double> V = draw_frequencies(KernelSpec::isotropic_laplacian(sigma), D, d, RfKind::Orf, rng);
  std::vector<double> skip(n_blocks * d * d);
  by_hand.normals(skip.data(), skip.size());  // the blocks' Gaussian matrices
  for (std::size_t r = 0; r < D; ++r) {
    double chi = 0.0;
    for (std::size_t k = 0; k < d; ++k) {
      const double n = by_hand.normal();
      chi += n * n;
    }
    const double h = by_hand.normal();
    double norm2 = 0.0;
    for (std::size_t k = 0; k < d; ++k) norm2 += V[r * d + k] * V[r * d + k];
    const double length = std::sqrt(chi) / (sigma * std::fabs(h));
    EXPECT_NEAR(std::sqrt(norm2), length, 1e-13 * length) << "row " << r;
    for (std::size_t s = r + 1; s < std::min(D, (r / d + 1) * d); ++s) {  // the rest of r's block
      double dot = 0.0, other = 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        dot += V[r * d + k] * V[s * d + k];
        other += V[s * d + k] * V[s * d + k];
      }
      EXPECT_LE(std::fabs(dot), 1e-12 * std::sqrt(norm2 * other)) << r << " " << s;
    }
  }
}

// spec/raker.md §1.3 for the Gaussian: rf=orf stacks the Q factors of d × d standard normal
// matrices, with the sign fix Q·diag(sign R_kk) that makes Q Haar-distributed (so Q is the one
// with R's diagonal positive, whatever the Householder convention), and scales each row by
// √χ²_d/σ, χ²_d from the d normals after the blocks'; orf_matlab takes Q without the fix and
// scales the rows by √χ²₁/σ, one normal each. Checked against Eigen's QR of the same normals.
TEST(FrequencyRecipeTest, GaussianOrfRowsAreHaarQRowsWithChiLengths) {
  const std::size_t D = 7, d = 3, n_blocks = 3;
  const double sigma = 0.8;
  for (const RfKind kind : {RfKind::Orf, RfKind::OrfMatlab}) {
    RandomStream rng(5, 1, RngPurpose::Frequencies, 2), by_hand = rng;
    const std::vector<double> V = draw_frequencies(KernelSpec::gaussian(sigma), D, d, kind, rng);
    std::vector<Eigen::MatrixXd> haar_q;
    for (std::size_t b = 0; b < n_blocks; ++b) {
      Eigen::MatrixXd G(d, d);
      for (std::size_t i = 0; i < d; ++i)
        for (std::size_t j = 0; j < d; ++j) G(i, j) = by_hand.normal();
      const Eigen::HouseholderQR<Eigen::MatrixXd> qr(G);
      Eigen::MatrixXd Q = qr.householderQ();
      for (std::size_t k = 0; k < d; ++k)
        if (qr.matrixQR()(k, k) < 0) Q.col(k) = -Q.col(k);
      haar_q.push_back(Q);
    }
    for (std::size_t r = 0; r < D; ++r) {
      const double chi = by_hand.chi_square(kind == RfKind::Orf ? int(d) : 1);
      const double length = std::sqrt(chi) / sigma;
      Eigen::VectorXd row(d);
      for (std::size_t k = 0; k < d; ++k) row(k) = V[r * d + k];
      EXPECT_NEAR(row.norm(), length, 1e-13 * length) << "row " << r;
      if (kind == RfKind::Orf) {
        const Eigen::VectorXd q = haar_q[r / d].row(r % d).transpose();
        EXPECT_LT((row / row.norm() - q).norm(), 1e-12) << "row " << r;
      } else {
        // Without the sign fix Q's columns keep the Householder convention's signs: the same
        // entries up to sign, and the rows of a block still orthogonal.
        const Eigen::VectorXd q = haar_q[r / d].row(r % d).transpose();
        EXPECT_LT((row.cwiseAbs() / row.norm() - q.cwiseAbs()).norm(), 1e-12) << "row " << r;
        for (std::size_t s = r / d * d; s < r; ++s) {
          double dot = 0.0, other = 0.0;
          for (std::size_t k = 0; k < d; ++k) {
            dot += V[r * d + k] * V[s * d + k];
            other += V[s * d + k] * V[s * d + k];
          }
          EXPECT_LE(std::fabs(dot), 1e-12 * row.norm() * std::sqrt(other)) << r << " " << s;
        }
      }
    }
  }
}

TEST(FrequencyRecipeTest, UnitsAreBlocksForOrfAndRowsOtherwise) {
  RandomStream rng(1, 0, RngPurpose::Frequencies, 0);
  const std::vector<MatrixRecipe> recipes = {matrix_recipe(KernelSpec::gaussian(1.0), 17, RfKind::Orf, rng),
                                             matrix_recipe(KernelSpec::laplacian(1.0), 17, RfKind::Orf, rng),
                                             matrix_recipe(KernelSpec::gaussian(1.0), 17, RfKind::Rf, rng),
                                             matrix_recipe(KernelSpec::gaussian(1.0), 17, RfKind::OrfMatlab, rng)};
  // D = 50, d = 17: ⌈50/17⌉ = 3 ORF blocks; 50 rows otherwise (ORF applies to Gaussians only).
  EXPECT_EQ(recipe_unit_offsets(recipes, 50, 17), (std::vector<std::size_t>{0, 3, 53, 103, 106}));
  EXPECT_EQ(recipes[0].dof, 17u);
  EXPECT_EQ(recipes[3].dof, 1u);
  EXPECT_EQ(recipes[3].haar, 0u);
}

TEST(FrequencyRecipeTest, RecipeOfAKernelWithoutFeaturesIsAnError) {
  RandomStream rng(1, 0, RngPurpose::Frequencies, 0);
  EXPECT_THROW(matrix_recipe(KernelSpec::linear(), 3, RfKind::Rf, rng), ConfigError);
}
