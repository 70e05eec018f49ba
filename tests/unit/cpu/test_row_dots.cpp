/// row_dots(): agreement with a long-double reference for every d mod 4, and independence of a
/// row's result from the rows computed beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/test_helpers.h"
#include "cpu/row_dots.h"

using omkl::test::bits;
using omkl::detail::cpu::row_dots;

namespace {
}  // namespace

TEST(RowDotsTest, MatchLongDoubleForEveryWidth) {
  std::mt19937_64 rng(4);
  std::normal_distribution<double> normal(0.0, 3.0);
  for (std::size_t d : {1, 2, 3, 4, 5, 7, 8, 17, 77}) {
    const std::size_t n = 23;
    std::vector<double> rows(n * d), x(d), out(n, NAN);
    for (double& v : rows) v = normal(rng);
    for (double& v : x) v = normal(rng);
    row_dots(rows.data(), n, d, x.data(), out.data());
    for (std::size_t i = 0; i < n; ++i) {
      long double want = 0.0L, magnitude = 0.0L;
      for (std::size_t k = 0; k < d; ++k) {
        want += static_cast<long double>(rows[i * d + k]) * x[k];
        magnitude += std::fabs(static_cast<long double>(rows[i * d + k]) * x[k]);
      }
      // Any summation order is within d·ε·Σ|a_k x_k|.
      const double bound = static_cast<double>(d) * 1.2e-16 * static_cast<double>(magnitude);
      ASSERT_LE(std::fabs(out[i] - static_cast<double>(want)), bound) << "d = " << d << " row " << i;
    }
  }
}

TEST(RowDotsTest, ARowsResultDoesNotDependOnItsNeighbours) {
  std::mt19937_64 rng(6);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t n = 13, d = 10;
  std::vector<double> rows(n * d), x(d), all(n);
  for (double& v : rows) v = unit(rng);
  for (double& v : x) v = unit(rng);
  row_dots(rows.data(), n, d, x.data(), all.data());
  for (std::size_t start = 0; start < n; ++start)
    for (std::size_t count = 1; start + count <= n; ++count) {
      std::vector<double> part(count);
      row_dots(rows.data() + start * d, count, d, x.data(), part.data());
      for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(bits(part[i]), bits(all[start + i])) << start << " " << count;
    }
}
