#include <gtest/gtest.h>

#include <vector>

#include <cmath>

#include "random/rng.h"

using omkl::detail::philox4x32;
using omkl::detail::RandomStream;
using omkl::detail::RngPurpose;

TEST(RngTest, PhiloxMatchesPublishedKnownAnswers) {
  // Known-answer vectors of Philox-4x32-10 (Random123 kat_vectors).
  auto zero = philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(zero[0], 0x6627e8d5u);
  EXPECT_EQ(zero[1], 0xe169c58du);
  EXPECT_EQ(zero[2], 0xbc57ac4cu);
  EXPECT_EQ(zero[3], 0x9b00dbd8u);
  auto ones = philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(ones[0], 0x408f276du);
  EXPECT_EQ(ones[1], 0x41c83b0eu);
  EXPECT_EQ(ones[2], 0xa20bc7c6u);
  EXPECT_EQ(ones[3], 0x6d5451fdu);
}

TEST(RngTest, SameKeySameNumbersDifferentKeysDiffer) {
  RandomStream a(1, 2, RngPurpose::Frequencies, 3), b(1, 2, RngPurpose::Frequencies, 3);
  RandomStream c(1, 3, RngPurpose::Frequencies, 3), d(1, 2, RngPurpose::Selection, 3);
  RandomStream e(1, 2, RngPurpose::Frequencies, 4), f(2, 2, RngPurpose::Frequencies, 3);
  for (int i = 0; i < 100; ++i) {
    const auto va = a.next_u64();
    EXPECT_EQ(va, b.next_u64());
    EXPECT_NE(va, c.next_u64());
    EXPECT_NE(va, d.next_u64());
    EXPECT_NE(va, e.next_u64());
    EXPECT_NE(va, f.next_u64());
  }
}

TEST(RngTest, SeekReproducesTheStreamFromAnyPosition) {
  RandomStream a(5, 0, RngPurpose::Misc);
  std::vector<std::uint32_t> values;
  for (int i = 0; i < 23; ++i) values.push_back(a.next_u32());
  for (std::uint64_t start : {0u, 1u, 3u, 4u, 7u, 13u}) {
    RandomStream b(5, 0, RngPurpose::Misc);
    b.seek(start);
    EXPECT_EQ(b.position(), start);
    for (std::size_t i = start; i < values.size(); ++i) EXPECT_EQ(b.next_u32(), values[i]) << i;
  }
}

TEST(RngTest, DistributionsHaveTheRightMoments) {
  RandomStream rng(11, 0, RngPurpose::Misc);
  const int n = 200000;
  double su = 0, sn = 0, sn2 = 0, sc = 0;
  int cauchy_inside = 0;
  for (int i = 0; i < n; ++i) {
    const double u = rng.uniform();
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    const double g = rng.normal();
    sn += g;
    sn2 += g * g;
    sc += rng.chi_square(3);
    if (std::fabs(rng.cauchy()) < 1.0) ++cauchy_inside;
  }
  EXPECT_NEAR(su / n, 0.5, 4 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(sn / n, 0.0, 4 * std::sqrt(1.0 / n));
  EXPECT_NEAR(sn2 / n, 1.0, 4 * std::sqrt(2.0 / n));
  EXPECT_NEAR(sc / n, 3.0, 4 * std::sqrt(6.0 / n));
  // P(|Cauchy| < 1) = 1/2.
  EXPECT_NEAR(static_cast<double>(cauchy_inside) / n, 0.5, 4 * std::sqrt(0.25 / n));
}

TEST(RngTest, BelowIsUniformOverSmallRanges) {
  RandomStream rng(3, 1, RngPurpose::Selection);
  std::vector<int> counts(7, 0);
  const int n = 70000;
  for (int i = 0; i < n; ++i) ++counts[rng.below(7)];
  for (int c : counts) EXPECT_NEAR(c, n / 7.0, 4 * std::sqrt(n / 7.0));
}

TEST(RngTest, BulkNormalsAndCauchysEqualTheScalarDraws) {
  // From a block boundary and from mid-block (after 1 or 3 words), for lengths around the batch.
  for (int skip : {0, 1, 2, 3}) {
    for (std::size_t n : {0u, 1u, 2u, 3u, 63u, 64u, 65u, 130u, 1001u}) {
      RandomStream a(7, 3, RngPurpose::Frequencies, 5), b(7, 3, RngPurpose::Frequencies, 5);
      for (int i = 0; i < skip; ++i) {
        a.next_u32();
        b.next_u32();
      }
      std::vector<double> bulk(n), scalar(n);
      a.normals(bulk.data(), n);
      for (auto& v : scalar) v = b.normal();
      ASSERT_EQ(bulk, scalar) << "normals skip " << skip << " n " << n;
      a.cauchys(bulk.data(), n);
      for (auto& v : scalar) v = b.cauchy();
      ASSERT_EQ(bulk, scalar) << "cauchys skip " << skip << " n " << n;
      ASSERT_EQ(a.position(), b.position());
      EXPECT_EQ(a.uniform(), b.uniform());  // and the streams continue alike
    }
  }
}

TEST(RngTest, ChiSquareIsTheSumOfSquaredNormals) {
  for (int k : {1, 17, 64, 65, 200}) {
    RandomStream a(2, 0, RngPurpose::Misc), b(2, 0, RngPurpose::Misc);
    double sum = 0.0;
    for (int i = 0; i < k; ++i) {
      const double g = b.normal();
      sum += g * g;
    }
    EXPECT_EQ(a.chi_square(k), sum) << k;
  }
}
