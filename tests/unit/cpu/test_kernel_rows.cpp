/// kernel_rows() over the blocked layout: bit for bit what the row-major path computes (row_dots,
/// the distance expression, fast_exp_neg_div) for every d mod 4 and every cut of the range, the
/// same bits at both FMA levels (AVX2, AVX-512), and SupportSet's blocked copy through pushes, slides, growth
/// and a checkpoint.
#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "common/test_helpers.h"
#include "cpu/aligned_allocator.h"
#include "cpu/fast_exp.h"
#include "cpu/kernel_rows.h"
#include "cpu/row_dots.h"
#include "omkl/error.h"
#include "families/exact_kernel/support_set.h"

using omkl::test::available_simd_levels;
using omkl::test::bits;
using namespace omkl::detail::cpu;

namespace {


// n rows of d features, row-major and blocked, with their squared norms.
struct Rows {
  std::size_t n, d;
  std::vector<double> row_major, norms2;
  std::vector<double, AlignedAllocator<double>> blocked;
  Rows(std::size_t n_rows, std::size_t n_features, std::mt19937_64& rng) : n(n_rows), d(n_features) {
    std::normal_distribution<double> normal(0.0, 0.7);
    const std::size_t capacity = (n + kBlockRows - 1) / kBlockRows * kBlockRows;
    row_major.resize(n * d);
    norms2.assign(capacity, 0.0);
    blocked.assign(capacity * d, 0.0);
    for (std::size_t r = 0; r < n; ++r) {
      double s = 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        const double v = normal(rng);
        row_major[r * d + k] = v;
        blocked[blocked_offset(r, k, d)] = v;
        s += v * v;
      }
      norms2[r] = s;
    }
  }
  BlockedRows view(std::size_t first, std::size_t count) const { return {blocked.data(), norms2.data(), d, first, count}; }
};

// The row-major path of KernelBank::evaluate before the blocked layout, at the default width.
void reference(const Rows& rows, std::size_t first, std::size_t count, const double* x, double x_norm2,
               RowQuantity quantity, double divisor, double* out) {
  std::vector<double> dot(count);
  row_dots(rows.row_major.data() + first * rows.d, count, rows.d, x, dot.data());
  if (quantity == RowQuantity::InnerProduct) {
    for (std::size_t i = 0; i < count; ++i) out[i] = dot[i];
    return;
  }
  Eigen::Map<const Eigen::ArrayXd> norms(rows.norms2.data() + first, static_cast<Eigen::Index>(count));
  Eigen::Map<const Eigen::ArrayXd> dots(dot.data(), static_cast<Eigen::Index>(count));
  Eigen::ArrayXd dist = (norms + x_norm2 - 2.0 * dots).max(0.0);
  if (quantity == RowQuantity::SquaredDistance) {
    for (std::size_t i = 0; i < count; ++i) out[i] = dist[static_cast<Eigen::Index>(i)];
    return;
  }
  fast_exp_neg_div(dist.data(), divisor, out, count);
}

}  // namespace

TEST(KernelRowsTest, EqualsTheRowMajorPathBitForBit) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal(0.0, 0.7);
  const RowQuantity quantities[] = {RowQuantity::InnerProduct, RowQuantity::SquaredDistance, RowQuantity::Gaussian};
  for (std::size_t d : {1, 2, 3, 4, 5, 6, 7, 8, 17, 18, 77}) {
    const Rows rows(45, d, rng);
    std::vector<double> x(d);
    for (double& v : x) v = normal(rng);
    double x_norm2 = 0.0;
    for (double v : x) x_norm2 += v * v;
    // Every start within a block and lengths that end anywhere in one, in two, or past two blocks.
    for (std::size_t first = 0; first < 10; ++first)
      for (std::size_t count : {1, 2, 7, 8, 9, 15, 16, 17, 24, 33})
        for (RowQuantity q : quantities) {
          if (first + count > rows.n) continue;
          std::vector<double> want(count), got(count + 1, -7.0);
          reference(rows, first, count, x.data(), x_norm2, q, 1.3, want.data());
          kernel_rows(rows.view(first, count), x.data(), x_norm2, q, 1.3, got.data());
          for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(bits(got[i]), bits(want[i])) << "d " << d << " first " << first << " count " << count
                                                   << " quantity " << static_cast<int>(q) << " row " << i;
          EXPECT_EQ(got[count], -7.0) << "wrote past the range";
        }
  }
}

TEST(KernelRowsTest, SeveralSamplesInOnePassAndGaussiansFromProducts) {
  std::mt19937_64 rng(15);
  std::normal_distribution<double> normal(0.0, 0.8);
  for (std::size_t d : {2, 5, 18}) {
    const Rows rows(61, d, rng);
    std::vector<std::vector<double>> x(kMaxInnerProducts, std::vector<double>(d));
    for (auto& v : x)
      for (double& e : v) e = normal(rng);
    for (SimdLevel w : available_simd_levels())
      for (std::size_t first : {0, 3, 8})
        for (std::size_t count : {1, 9, 50})
          for (std::size_t n_x = 1; n_x <= kMaxInnerProducts; ++n_x) {
            std::vector<std::vector<double>> got(n_x, std::vector<double>(count + 1, -7.0));
            const double* xs[kMaxInnerProducts];
            double* outs[kMaxInnerProducts];
            for (std::size_t q = 0; q < n_x; ++q) {
              xs[q] = x[q].data();
              outs[q] = got[q].data();
            }
            inner_products(w, rows.view(first, count), xs, n_x, outs);
            for (std::size_t q = 0; q < n_x; ++q) {
              std::vector<double> want(count), gauss(count), from_products(count);
              kernel_rows(w, rows.view(first, count), xs[q], 0.0, RowQuantity::InnerProduct, 1.0, want.data());
              for (std::size_t i = 0; i < count; ++i)
                ASSERT_EQ(bits(got[q][i]), bits(want[i])) << "d " << d << " sample " << q << " of " << n_x << " row " << i;
              EXPECT_EQ(got[q][count], -7.0) << "wrote past the range";
              // The Gaussian from the products, for a power-of-two divisor and another one.
              for (double divisor : {0.5, 1.7}) {
                kernel_rows(w, rows.view(first, count), xs[q], 2.0, RowQuantity::Gaussian, divisor, gauss.data());
                gaussian_from_inner_products(w, rows.norms2.data() + first, got[q].data(), count, 2.0, divisor,
                                             from_products.data());
                for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(bits(from_products[i]), bits(gauss[i])) << divisor;
              }
            }
          }
  }
  const double* none[1] = {nullptr};
  double* sink[1] = {nullptr};
  EXPECT_THROW(inner_products(Rows(8, 2, rng).view(0, 8), none, 0, sink), omkl::Error);
  EXPECT_THROW(inner_products(Rows(8, 2, rng).view(0, 8), none, kMaxInnerProducts + 1, sink), omkl::Error);
}

TEST(KernelRowsTest, APowerOfTwoDivisorGivesTheQuotientsBits) {
  // A divisor 2^k is applied as a product with its exact reciprocal: the argument must round as
  // −v / 2^k does, for every v (large, small, subnormal results, zeros, infinities, NaN).
  std::mt19937_64 rng(16);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> v;
  for (double scale : {1e-310, 1e-300, 1e-8, 0.3, 1.0, 50.0, 1e3, 1e300})
    for (int i = 0; i < 200; ++i) v.push_back(unit(rng) * scale);
  for (double s : {0.0, -0.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN(),
                   std::numeric_limits<double>::denorm_min(), 3.0})
    v.push_back(s);
  for (double divisor : {0x1p-1022, 0x1p-600, 0.125, 0.5, 1.0, 2.0, 32.0, 0x1p600, 0x1p1022, 0x1p1023, 3.0, 0.1}) {
    std::vector<double> quotient(v.size()), want(v.size()), got(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) quotient[i] = -v[i] / divisor;
    for (SimdLevel w : available_simd_levels()) {
      fast_exp(w, quotient.data(), want.data(), v.size());
      fast_exp_neg_div(w, v.data(), divisor, got.data(), v.size());
      for (std::size_t i = 0; i < v.size(); ++i)
        ASSERT_EQ(bits(got[i]), bits(want[i])) << "exp(-" << v[i] << " / " << divisor << ") width " << static_cast<int>(w);
    }
  }
}

TEST(KernelRowsTest, Avx512GivesTheAvx2Bits) {
  if (!simd_level_available(SimdLevel::Avx2Fma)) GTEST_SKIP() << "no AVX2+FMA here";
  if (!simd_level_available(SimdLevel::Avx512)) GTEST_SKIP() << "no AVX-512F here: one width only";
  std::mt19937_64 rng(12);
  std::normal_distribution<double> normal(0.0, 2.0);
  for (std::size_t d : {1, 3, 4, 9, 18, 30}) {
    const Rows rows(203, d, rng);
    std::vector<double> x(d);
    for (double& v : x) v = normal(rng);
    for (RowQuantity q : {RowQuantity::InnerProduct, RowQuantity::SquaredDistance, RowQuantity::Gaussian}) {
      std::vector<double> narrow(200), wide(200);
      kernel_rows(SimdLevel::Avx2Fma, rows.view(3, 200), x.data(), 4.0, q, 0.7, narrow.data());
      kernel_rows(SimdLevel::Avx512, rows.view(3, 200), x.data(), 4.0, q, 0.7, wide.data());
      for (std::size_t i = 0; i < 200; ++i) ASSERT_EQ(bits(narrow[i]), bits(wide[i])) << "d " << d << " row " << i;
    }
  }
  // The exp kernel alone, over its whole range and the special values.
  std::vector<double> a;
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (double scale : {1e-9, 1e-3, 1.0, 30.0, 700.0, 800.0})
    for (int i = 0; i < 999; ++i) a.push_back(unit(rng) * scale);
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, inf, -inf, std::numeric_limits<double>::quiet_NaN(), -745.2, 709.79}) a.push_back(v);
  std::vector<double> narrow(a.size()), wide(a.size());
  fast_exp(SimdLevel::Avx2Fma, a.data(), narrow.data(), a.size());
  fast_exp(SimdLevel::Avx512, a.data(), wide.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(bits(narrow[i]), bits(wide[i])) << "exp(" << a[i] << ")";
  fast_exp_neg_div(SimdLevel::Avx2Fma, a.data(), 2.5, narrow.data(), a.size());
  fast_exp_neg_div(SimdLevel::Avx512, a.data(), 2.5, wide.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(bits(narrow[i]), bits(wide[i])) << "exp(-" << a[i] << "/2.5)";
}

TEST(KernelRowsTest, EveryLevelIsAccurate) {
  std::mt19937_64 rng(13);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t d = 11;
  const Rows rows(37, d, rng);
  std::vector<double> x(d);
  for (double& v : x) v = normal(rng);
  double x_norm2 = 0.0;
  for (double v : x) x_norm2 += v * v;
  for (SimdLevel w : available_simd_levels()) {
    std::vector<double> got(37);
    kernel_rows(w, rows.view(0, 37), x.data(), x_norm2, RowQuantity::Gaussian, 3.0, got.data());
    for (std::size_t r = 0; r < 37; ++r) {
      long double dist = 0.0L;
      for (std::size_t k = 0; k < d; ++k) {
        const long double diff = static_cast<long double>(rows.row_major[r * d + k]) - x[k];
        dist += diff * diff;
      }
      // The distance comes from ‖a‖² + ‖b‖² − 2aᵀb: absolute error a few ε·(‖a‖² + ‖b‖²).
      const double want = static_cast<double>(std::exp(-dist / 3.0L));
      EXPECT_NEAR(got[r], want, 1e-14 * (rows.norms2[r] + x_norm2)) << "level " << static_cast<int>(w) << " row " << r;
    }
  }
}

TEST(KernelRowsTest, SupportSetKeepsItsBlockedCopyInStep) {
  using omkl::detail::SupportSet;
  std::mt19937_64 rng(14);
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t d = 5;
  const auto check = [&](const SupportSet& s, const char* when) {
    const BlockedRows view = s.blocked();
    ASSERT_EQ(view.count, s.size()) << when;
    for (std::size_t i = 0; i < s.size(); ++i) {
      for (std::size_t k = 0; k < d; ++k)
        ASSERT_EQ(bits(view.values[blocked_offset(view.first + i, k, d)]), bits(s.row(i)[k])) << when << " row " << i;
      ASSERT_EQ(bits(view.norms2[view.first + i]), bits(s.norm2(i))) << when << " row " << i;
    }
  };
  const auto sample = [&] {
    Eigen::VectorXd x(static_cast<Eigen::Index>(d));
    for (Eigen::Index k = 0; k < x.size(); ++k) x[k] = normal(rng);
    return x;
  };
  SupportSet budgeted(d, 1, 6, 0);  // slides back to row 0 every few steps
  for (int t = 0; t < 40; ++t) {
    const Eigen::VectorXd x = sample();
    budgeted.push_back(x, x.squaredNorm());
    if (budgeted.size() > 6) budgeted.pop_front();
    check(budgeted, "budgeted");
  }
  SupportSet growing(d, 2, 0, 8);  // doubles its capacity
  for (int t = 0; t < 70; ++t) {
    const Eigen::VectorXd x = sample();
    growing.push_back(x, x.squaredNorm());
  }
  check(growing, "growing");
  omkl::detail::StateWriter out;
  budgeted.save(out);
  SupportSet restored(d, 1, 6, 0);
  omkl::detail::StateReader in(out.bytes());
  restored.load(in);
  check(restored, "restored");
}
