/// fast_exp(): accuracy against long double, the special values, the underflow / overflow
/// boundaries, and independence of an element's result from its position in the array.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/test_helpers.h"
#include "cpu/fast_exp.h"

using omkl::test::bits;
using omkl::detail::cpu::fast_exp;

namespace {

// Distance in units in the last place between two finite doubles of the same sign.
double ulps(double a, double b) {
  if (a == b) return 0.0;
  return std::fabs(a - b) / std::ldexp(1.0, std::ilogb(b) - 52);
}

}  // namespace

TEST(FastExpTest, WithinTwoUlpOfLongDoubleOnNormalResults) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> x;
  for (double scale : {1e-12, 1e-6, 1e-3, 0.3, 1.0, 10.0, 100.0, 700.0})
    for (int i = 0; i < 4000; ++i) x.push_back((2.0 * unit(rng) - 1.0) * scale);
  for (int k = -1000; k <= 1000; ++k) x.push_back(k * 0.6931471805599453);  // near the reduction's breakpoints
  std::vector<double> y(x.size());
  fast_exp(x.data(), y.data(), x.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double want = static_cast<double>(std::exp(static_cast<long double>(x[i])));
    if (!(std::fabs(want) >= std::numeric_limits<double>::min())) continue;  // subnormals: below
    worst = std::max(worst, ulps(y[i], want));
    ASSERT_LE(ulps(y[i], want), 2.0) << "x = " << x[i];
  }
  RecordProperty("worst_ulps", std::to_string(worst));
}

TEST(FastExpTest, SpecialValuesAndRangeEnds) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> x = {0.0, -0.0, 1.0, -inf, inf, std::numeric_limits<double>::quiet_NaN(),
                                 709.78, 709.79, 710.0, 1e300, -745.0, -745.2, -746.0, -1e300,
                                 -708.5, -720.0, -740.0};
  std::vector<double> y(x.size());
  fast_exp(x.data(), y.data(), x.size());
  EXPECT_EQ(y[0], 1.0);
  EXPECT_EQ(y[1], 1.0);
  EXPECT_NEAR(y[2], 2.718281828459045, 5e-16);
  EXPECT_EQ(y[3], 0.0);
  EXPECT_EQ(y[4], inf);
  EXPECT_TRUE(std::isnan(y[5]));
  EXPECT_TRUE(std::isfinite(y[6]) && y[6] > 1.7e308) << y[6];
  EXPECT_EQ(y[7], inf);
  EXPECT_EQ(y[8], inf);
  EXPECT_EQ(y[9], inf);
  EXPECT_EQ(y[10], std::exp(-745.0)) << "smallest subnormals";
  EXPECT_EQ(y[11], 0.0);
  EXPECT_EQ(y[12], 0.0);
  EXPECT_EQ(y[13], 0.0);
  // Subnormal results round once: within one subnormal step of the true value.
  for (std::size_t i = 14; i < x.size(); ++i) {
    const double want = static_cast<double>(std::exp(static_cast<long double>(x[i])));
    EXPECT_LE(std::fabs(y[i] - want), std::numeric_limits<double>::denorm_min()) << "x = " << x[i];
  }
}

TEST(FastExpTest, AnElementsResultDoesNotDependOnItsPosition) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal(0.0, 20.0);
  std::vector<double> x(37);
  for (double& v : x) v = normal(rng);
  std::vector<double> whole(x.size());
  fast_exp(x.data(), whole.data(), x.size());
  for (std::size_t start = 0; start < 5; ++start)
    for (std::size_t n = 1; start + n <= x.size(); n += 3) {
      std::vector<double> part(n);
      fast_exp(x.data() + start, part.data(), n);
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(bits(part[i]), bits(whole[start + i])) << start << " " << n;
    }
  std::vector<double> in_place = x;
  fast_exp(in_place.data(), in_place.data(), in_place.size());
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(bits(in_place[i]), bits(whole[i]));
}

TEST(FastExpTest, NegDivEqualsExpOfTheRoundedArgument) {
  std::mt19937_64 rng(12);
  std::uniform_real_distribution<double> unit(0.0, 50.0);
  std::vector<double> d(29);
  for (double& v : d) v = unit(rng);
  d[0] = 0.0;
  for (double divisor : {0.02, 0.5, 3.0, 200.0}) {
    std::vector<double> arg(d.size()), want(d.size()), got(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) arg[i] = -d[i] / divisor;
    omkl::detail::cpu::fast_exp(arg.data(), want.data(), arg.size());
    omkl::detail::cpu::fast_exp_neg_div(d.data(), divisor, got.data(), d.size());
    for (std::size_t i = 0; i < d.size(); ++i) ASSERT_EQ(bits(got[i]), bits(want[i])) << divisor << " " << d[i];
    EXPECT_EQ(got[0], 1.0);
  }
}
