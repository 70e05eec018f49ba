#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "cpu/fast_sincos.h"

using omkl::test::available_simd_levels;
using omkl::test::bits;
using namespace omkl::detail::cpu;

namespace {

// Absolute error bound against the long-double reference, for every argument on the fast
// ranges: about one ulp of 1. Measured (x86-64, glibc): 1.6e-16 portable, 1.3e-16 AVX2+FMA.
constexpr double kBound = 2.3e-16;


double fast_limit(SimdLevel level) { return uses_fma_kernels(level) ? kAvx2FastLimit : kPortableFastLimit; }

struct Errors {
  double sin = 0.0, cos = 0.0;
};

// Largest |fast − sinl| and |fast − cosl| over `a`.
Errors max_errors(SimdLevel level, const std::vector<double>& a) {
  std::vector<double> s(a.size()), c(a.size());
  fast_sincos(level, a.data(), s.data(), c.data(), a.size());
  Errors e;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const long double x = a[i];
    e.sin = std::max(e.sin, static_cast<double>(std::fabs(s[i] - std::sin(x))));
    e.cos = std::max(e.cos, static_cast<double>(std::fabs(c[i] - std::cos(x))));
  }
  return e;
}

}  // namespace

TEST(FastSincosTest, RandomArgumentsAcrossMagnitudesAreWithinOneUlpOfOne) {
  std::mt19937_64 rng(2024);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (SimdLevel level : available_simd_levels()) {
    for (int e = -8; e <= 15; ++e) {
      const double magnitude = std::pow(10.0, e);
      std::vector<double> a(4099);  // not a multiple of 4: the tail takes the padded path
      for (double& v : a) v = unit(rng) * magnitude;
      // Beyond the fast range the elements go through the std:: fallback.
      const Errors err = max_errors(level, a);
      EXPECT_LE(err.sin, kBound) << to_string(level) << " |a| ~ 1e" << e;
      EXPECT_LE(err.cos, kBound) << to_string(level) << " |a| ~ 1e" << e;
    }
  }
}

TEST(FastSincosTest, AgreesWithStdSinCosWithinTheStatedBound) {
  // The contract as the backend sees it: the same double argument through std::sin/std::cos.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-8.0, 8.0);
  std::vector<double> a(20000);
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = (i % 2 ? -1.0 : 1.0) * std::pow(10.0, exponent(rng));
  for (SimdLevel level : available_simd_levels()) {
    std::vector<double> s(a.size()), c(a.size());
    fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_NEAR(s[i], std::sin(a[i]), 2.5e-16) << to_string(level) << " a=" << a[i];
      ASSERT_NEAR(c[i], std::cos(a[i]), 2.5e-16) << to_string(level) << " a=" << a[i];
    }
  }
}

TEST(FastSincosTest, MultiplesOfHalfPiAndTheirNeighbours) {
  std::vector<double> a;
  const double half_pi = 1.5707963267948966;
  for (int k = -2000; k <= 2000; ++k) {
    const double m = k * half_pi;
    a.push_back(m);
    a.push_back(std::nextafter(m, HUGE_VAL));
    a.push_back(std::nextafter(m, -HUGE_VAL));
    a.push_back(m + 0.7853981633974483);  // the quadrant boundaries ±π/4
    a.push_back(m - 0.7853981633974483);
  }
  for (double big : {1e6, 1e9, 1e12}) {
    const double k = std::round(big / half_pi);
    a.push_back(k * half_pi);
    a.push_back(-k * half_pi);
  }
  for (SimdLevel level : available_simd_levels()) {
    const Errors err = max_errors(level, a);
    EXPECT_LE(err.sin, kBound) << to_string(level);
    EXPECT_LE(err.cos, kBound) << to_string(level);
  }
}

TEST(FastSincosTest, SignedZerosAndTinyArguments) {
  const std::vector<double> a{0.0, -0.0, 1e-300, -1e-300, 5e-324, -5e-324, 1e-20, -1e-20};
  for (SimdLevel level : available_simd_levels()) {
    std::vector<double> s(a.size()), c(a.size());
    fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(bits(s[i]), bits(a[i])) << to_string(level) << " sin(" << a[i] << ") = " << s[i];
      EXPECT_EQ(c[i], 1.0) << to_string(level) << " cos(" << a[i] << ")";
    }
  }
}

TEST(FastSincosTest, ArgumentsBeyondTheFastRangeFallBackToStd) {
  for (SimdLevel level : available_simd_levels()) {
    const double limit = fast_limit(level);
    std::vector<double> a{limit * 1.5, -limit * 3.0,   1e17,    -3.3e19, 1e300,
                          -1e300,      DBL_MAX,        -DBL_MAX, 0.5,     limit};
    std::vector<double> s(a.size()), c(a.size());
    fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::fabs(a[i]) > limit) {
        EXPECT_EQ(s[i], std::sin(a[i])) << to_string(level) << " a=" << a[i];
        EXPECT_EQ(c[i], std::cos(a[i])) << to_string(level) << " a=" << a[i];
      } else {
        EXPECT_NEAR(s[i], static_cast<double>(std::sin(static_cast<long double>(a[i]))), kBound);
        EXPECT_NEAR(c[i], static_cast<double>(std::cos(static_cast<long double>(a[i]))), kBound);
      }
    }
  }
}

TEST(FastSincosTest, NanAndInfinityGiveNan) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> a{nan, 1.0, -nan, inf, 2.0, -inf, nan};
  for (SimdLevel level : available_simd_levels()) {
    std::vector<double> s(a.size()), c(a.size());
    fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (std::isfinite(a[i])) {
        EXPECT_NEAR(s[i], std::sin(a[i]), kBound);
        EXPECT_NEAR(c[i], std::cos(a[i]), kBound);
      } else {
        EXPECT_TRUE(std::isnan(s[i])) << to_string(level) << " sin(" << a[i] << ") = " << s[i];
        EXPECT_TRUE(std::isnan(c[i])) << to_string(level) << " cos(" << a[i] << ") = " << c[i];
      }
    }
  }
}

TEST(FastSincosTest, ResultsDoNotDependOnPositionOrLength) {
  // Determinism: an element gives the same bits whether it sits in a long array, in the tail
  // of a short one or alone.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> unit(-1e4, 1e4);
  std::vector<double> a(37);
  for (double& v : a) v = unit(rng);
  for (SimdLevel level : available_simd_levels()) {
    std::vector<double> s(a.size()), c(a.size());
    fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    for (std::size_t n : {0u, 1u, 2u, 3u, 5u, 16u, 17u}) {
      for (std::size_t offset = 0; offset + n <= a.size(); offset += 7) {
        std::vector<double> s2(n + 1, -7.0), c2(n + 1, -7.0);
        fast_sincos(level, a.data() + offset, s2.data(), c2.data(), n);
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(bits(s2[i]), bits(s[offset + i])) << to_string(level) << " n=" << n;
          ASSERT_EQ(bits(c2[i]), bits(c[offset + i])) << to_string(level) << " n=" << n;
        }
        EXPECT_EQ(s2[n], -7.0) << "wrote past the end";
        EXPECT_EQ(c2[n], -7.0) << "wrote past the end";
      }
    }
  }
}

TEST(FastSincosTest, DefaultLevelIsTheDispatchedOne) {
  const std::vector<double> a{0.1, -2.5, 1e3, 7e7, -1e11, 3.0};
  std::vector<double> s1(a.size()), c1(a.size()), s2(a.size()), c2(a.size());
  fast_sincos(a.data(), s1.data(), c1.data(), a.size());
  fast_sincos(default_simd_level(), a.data(), s2.data(), c2.data(), a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(bits(s1[i]), bits(s2[i]));
    EXPECT_EQ(bits(c1[i]), bits(c2[i]));
  }
  if (!cpu_has_avx2_fma()) EXPECT_EQ(default_simd_level(), SimdLevel::Portable);
}

// sincos_fma() is the scalar host/device form of the AVX2 kernel: where that kernel runs, the
// two must agree to the bit (the CUDA backend relies on it for CPU-equal features), and on
// its own it must meet the same accuracy bound.
TEST(FastSincosTest, ScalarFmaFormIsAccurateAndEqualsTheAvx2Kernel) {
  std::mt19937_64 rng(77);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<double> a = {0.0, -0.0, 1e-300, -1e-300, 0x1p-30, 1.0, -1.0, omkl::detail::kFmaFastLimit, -omkl::detail::kFmaFastLimit};
  for (double magnitude = 1e-8; magnitude <= 3e13; magnitude *= 10.0)
    for (int i = 0; i < 2000; ++i) a.push_back(unit(rng) * magnitude);
  const double half_pi = 1.5707963267948966;
  for (int k = -2000; k <= 2000; k += 7)
    for (double offset : {0.0, 1e-12, -1e-12, 0.785398163397448})
      a.push_back(k * half_pi + offset);
  std::vector<double> s(a.size()), c(a.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    omkl::detail::sincos_fma(a[i], s[i], c[i]);
    const long double x = a[i];
    worst = std::max({worst, static_cast<double>(std::fabs(s[i] - std::sin(x))),
                      static_cast<double>(std::fabs(c[i] - std::cos(x)))});
  }
  EXPECT_LE(worst, kBound);
  EXPECT_EQ(bits(s[1]), bits(-0.0)) << "sin(-0) = -0";
  EXPECT_EQ(c[1], 1.0);
  double nan_s, nan_c;
  omkl::detail::sincos_fma(std::numeric_limits<double>::quiet_NaN(), nan_s, nan_c);
  EXPECT_TRUE(std::isnan(nan_s) && std::isnan(nan_c));

  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "no AVX2+FMA here: accuracy checked, bitwise equality not";
  for (SimdLevel level : available_simd_levels()) {
    if (!uses_fma_kernels(level)) continue;
    std::vector<double> s_avx(a.size()), c_avx(a.size());
    fast_sincos(level, a.data(), s_avx.data(), c_avx.data(), a.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(bits(s[i]), bits(s_avx[i])) << to_string(level) << ": sin at a = " << a[i];
      ASSERT_EQ(bits(c[i]), bits(c_avx[i])) << to_string(level) << ": cos at a = " << a[i];
    }
  }
}

// The float kernels of precision=float (|a| ≤ kFloatFastLimit): within 2.5e-7 of the exact sin
// and cos of the float argument, portable and AVX2 alike, including multiples of π/2.
TEST(FastSincosTest, FloatKernelsAreWithinTwoFloatUlpsOfOne) {
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<float> args;
  for (int i = 0; i < 200000; ++i) args.push_back(static_cast<float>(unit(rng) * kFloatFastLimit * (i % 2 ? 1.0 : 1e-3)));
  for (int k = -163; k <= 163; ++k)
    for (float delta : {0.0f, 1e-6f, -1e-6f, 0.3f})
      args.push_back(static_cast<float>(k * 1.5707963267948966) + delta);
  args.push_back(0.0f);
  args.push_back(-0.0f);
  args.push_back(1.0f);  // a length that is not a multiple of 8 or 16: the padded tail
  double worst_portable = 0.0;
  for (float a : args) {
    float s, c;
    sincos_float_portable(a, s, c);
    const long double x = a;
    worst_portable = std::max({worst_portable, static_cast<double>(std::fabs(s - sinl(x))),
                               static_cast<double>(std::fabs(c - cosl(x)))});
  }
  EXPECT_LT(worst_portable, 2.5e-7);
  EXPECT_GT(worst_portable, 1e-9) << "float, not double, accuracy";
  std::vector<float> reference_s, reference_c;
  for (SimdLevel level : available_simd_levels()) {
    double worst = 0.0;
    std::vector<float> s(args.size()), c(args.size());
    fast_sincos_float(level, args.data(), s.data(), c.data(), args.size());
    for (std::size_t i = 0; i < args.size(); ++i) {
      const long double x = args[i];
      worst = std::max({worst, static_cast<double>(std::fabs(s[i] - sinl(x))),
                        static_cast<double>(std::fabs(c[i] - cosl(x)))});
    }
    EXPECT_LT(worst, 2.5e-7) << to_string(level);
    if (!uses_fma_kernels(level)) continue;
    // The 8- and 16-lane kernels give the same bits.
    if (reference_s.empty()) {
      reference_s = s;
      reference_c = c;
      continue;
    }
    for (std::size_t i = 0; i < args.size(); ++i) {
      ASSERT_EQ(std::memcmp(&s[i], &reference_s[i], sizeof(float)), 0) << to_string(level) << " sin " << args[i];
      ASSERT_EQ(std::memcmp(&c[i], &reference_c[i], sizeof(float)), 0) << to_string(level) << " cos " << args[i];
    }
  }
}
