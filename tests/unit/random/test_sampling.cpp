#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "random/rng.h"
#include "random/sampling.h"

using namespace omkl::detail;

namespace {

// The definitions of §1.8 as plain linear scans, to check the binary-search implementation.
std::size_t inverse_cdf_by_scan(const std::vector<double>& p, double r) {
  double c = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    c += p[k];
    if (r < c) return k;
  }
  return p.size() - 1;
}

std::size_t shifted_by_scan(const std::vector<double>& p, double r) {
  double exclusive = 0.0;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (r <= exclusive) return k;
    exclusive += p[k];
  }
  return p.size() - 1;
}

std::vector<double> random_pmf(RandomStream& rng, std::size_t n) {
  std::vector<double> p(n);
  double s = 0.0;
  for (double& v : p) s += (v = rng.uniform());
  for (double& v : p) v /= s;
  return p;
}

}  // namespace

TEST(SamplingTest, AppendixAValidationVectors) {
  // Appendix A.3: p = [0.5, 0.3, 0.2].
  const std::vector<double> p = {0.5, 0.3, 0.2};
  EXPECT_EQ(sample_index(p, 0.1, SamplerRule::InverseCdf), 0u);
  EXPECT_EQ(sample_index(p, 0.6, SamplerRule::InverseCdf), 1u);
  EXPECT_EQ(sample_index(p, 0.9, SamplerRule::InverseCdf), 2u);
  EXPECT_EQ(sample_index(p, 0.1, SamplerRule::Shifted), 1u);
  EXPECT_EQ(sample_index(p, 0.6, SamplerRule::Shifted), 2u);
  EXPECT_EQ(sample_index(p, 0.9, SamplerRule::Shifted), 2u);
}

TEST(SamplingTest, BinarySearchAgreesWithTheLinearDefinitions) {
  RandomStream rng(11, 0, RngPurpose::Misc);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<double> p = random_pmf(rng, 1 + rng.below(20));
    const std::vector<double> cdf = cumulative_sums(p);
    for (double r : {rng.uniform(), cdf[0], cdf[cdf.size() / 2], 0.999999999}) {
      EXPECT_EQ(sample_from_cdf(cdf, r, SamplerRule::InverseCdf), inverse_cdf_by_scan(p, r));
      EXPECT_EQ(sample_from_cdf(cdf, r, SamplerRule::Shifted), shifted_by_scan(p, r));
    }
  }
}

TEST(SamplingTest, FrequenciesFollowTheRulesLaw) {
  const std::vector<double> p = {0.05, 0.25, 0.1, 0.3, 0.2, 0.1};
  const int draws = 200000;
  for (SamplerRule rule : {SamplerRule::InverseCdf, SamplerRule::Shifted}) {
    RandomStream rng(3, 1, RngPurpose::Selection, static_cast<int>(rule));
    std::vector<int> count(p.size(), 0);
    for (int i = 0; i < draws; ++i) ++count[draw_node(p, rng, rule)];
    const std::vector<double> law = effective_probabilities(p, rule);
    for (std::size_t k = 0; k < p.size(); ++k) {
      const double freq = static_cast<double>(count[k]) / draws;
      const double se = std::sqrt(law[k] * (1.0 - law[k]) / draws);
      EXPECT_NEAR(freq, law[k], 5.0 * se + 1e-12) << "k = " << k;
    }
    if (rule == SamplerRule::Shifted) {
      EXPECT_EQ(count[0], 0) << "§1.8: index 0 is never returned";
    }
  }
  // The shifted law of §1.8: e_k = p_{k−1}, last index absorbs two masses.
  const std::vector<double> e = effective_probabilities(p, SamplerRule::Shifted);
  const std::vector<double> expected = {0.0, 0.05, 0.25, 0.1, 0.3, 0.3};
  for (std::size_t k = 0; k < e.size(); ++k) EXPECT_NEAR(e[k], expected[k], 1e-15);
}

TEST(SamplingTest, EdgeCases) {
  // One category: both rules return it.
  EXPECT_EQ(sample_index({1.0}, 0.3, SamplerRule::InverseCdf), 0u);
  EXPECT_EQ(sample_index({1.0}, 0.3, SamplerRule::Shifted), 0u);
  // r = 0: the inverse CDF returns the first index with mass, the shifted rule index 0.
  EXPECT_EQ(sample_index({0.0, 0.4, 0.6}, 0.0, SamplerRule::InverseCdf), 1u);
  EXPECT_EQ(sample_index({0.0, 0.4, 0.6}, 0.0, SamplerRule::Shifted), 0u);
  // Indices of probability zero are never returned by the inverse CDF, even when rounding
  // leaves the total mass below r.
  const std::vector<double> p = {0.0, 0.5, 0.0, 0.5 - 1e-15, 0.0};
  for (double r : {1e-17, 0.25, 0.5, 0.75, 0.9999999999999999}) {
    const std::size_t k = sample_index(p, r, SamplerRule::InverseCdf);
    EXPECT_TRUE(k == 1 || k == 3) << "r = " << r << " gave " << k;
  }
  // Ten equal masses of 0.1 sum to 0.9999999999999999: r above that still gets index 9.
  EXPECT_EQ(sample_index(std::vector<double>(10, 0.1), 0.99999999999999994, SamplerRule::InverseCdf), 9u);
  EXPECT_THROW(sample_from_cdf({}, 0.5, SamplerRule::InverseCdf), std::invalid_argument);
}

TEST(SamplingTest, DrawNodeConsumesExactlyOneUniform) {
  RandomStream a(9, 2, RngPurpose::Selection), b(9, 2, RngPurpose::Selection);
  const std::vector<double> p = {0.2, 0.2, 0.6};
  for (int i = 0; i < 50; ++i) {
    const double r = b.uniform();
    EXPECT_EQ(draw_node(p, a, SamplerRule::InverseCdf), sample_index(p, r, SamplerRule::InverseCdf));
    EXPECT_EQ(a.position(), b.position());
  }
}

TEST(SamplingTest, OnePassSamplerEqualsTheCdfSearch) {
  RandomStream rng(17, 0, RngPurpose::Misc);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t n = 1 + rng.below(12);
    std::vector<double> p(n);
    for (double& v : p) v = rng.uniform() < 0.25 ? 0.0 : rng.uniform();  // zero-mass entries too
    double total = 0.0;
    for (double v : p) total += v;
    if (total == 0.0) p[0] = total = 1.0;
    const auto cdf = cumulative_sums(p);
    // Ordinary draws, both ends, and r at or past the (unnormalised) total.
    for (double r : {rng.uniform() * total, 0.0, cdf.back(), cdf.back() * (1 + 1e-15), cdf[rng.below(n)]}) {
      for (SamplerRule rule : {SamplerRule::InverseCdf, SamplerRule::Shifted})
        ASSERT_EQ(sample_index(p, r, rule), sample_from_cdf(cdf, r, rule)) << "trial " << trial << " r " << r;
    }
  }
}
