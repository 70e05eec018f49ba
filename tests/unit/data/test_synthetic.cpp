// Synthetic switching streams (spec/raker.md §6): a brute-force reference, determinism,
// thread-count invariance, schedules, normalisation and the documented magnitudes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "random/rng.h"
#include "data/synthetic_internal.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace {

using omkl::SyntheticKind;

// The schedules of §6.1 and §6.2, written out independently of the generator: (last t, σ²).
const std::vector<std::pair<std::size_t, double>> kSchedule1 = {
    {8000, 1.0}, {18000, 10.0}, {26000, 1.0}, {36000, 10.0}};
const std::vector<std::pair<std::size_t, double>> kSchedule2 = {
    {200, 0.01}, {1000, 1.0},  {2000, 10.0}, {2300, 0.01}, {3000, 1.0},
    {3500, 10.0}, {4300, 0.01}, {5100, 1.0},  {5900, 0.01}, {6500, 0.1}};

double reference_sigma2(SyntheticKind kind, std::size_t t) {  // t is 1-based
  const auto& schedule = kind == SyntheticKind::Dataset1 ? kSchedule1 : kSchedule2;
  for (const auto& [last, sigma2] : schedule) {
    if (t <= last) return sigma2;
  }
  return schedule.back().second;
}

// Plain double loop over the documented draw order and formula.
struct Reference {
  std::vector<double> x;
  std::vector<double> alpha;
  std::vector<double> y;
};

Reference brute_force(const omkl::SyntheticOptions& options) {
  const std::size_t n = options.n_samples;
  const std::size_t d = options.n_features;
  const std::uint64_t index = options.kind == SyntheticKind::Dataset1 ? 1 : 2;
  omkl::detail::RandomStream stream(options.seed, 0, omkl::detail::RngPurpose::Synthetic, index);
  Reference ref;
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t k = 0; k < d; ++k) ref.x.push_back(stream.normal());
    ref.alpha.push_back(1.0 + options.sigma_alpha * stream.normal());
  }
  for (std::size_t t = 0; t < n; ++t) {
    double sum = 0.0;
    for (std::size_t tau = 0; tau <= t; ++tau) {
      double d2 = 0.0;
      for (std::size_t k = 0; k < d; ++k) {
        const double diff = ref.x[t * d + k] - ref.x[tau * d + k];
        d2 += diff * diff;
      }
      const std::size_t kernel_of = options.kernel_index_target ? t : tau;
      const double gamma = 1.0 / (2.0 * reference_sigma2(options.kind, kernel_of + 1));
      sum += ref.alpha[tau] * std::exp(-gamma * d2);
    }
    ref.y.push_back(sum);
  }
  return ref;
}

// The generator and the reference do the same operations in the same order, so they agree
// exactly, unless the compiler may contract a*b+c into a fused multiply-add (GCC does so by
// default in C++ wherever the target has one: -march with FMA on x86-64, or AArch64); then each
// side may round differently and only a few ulps of agreement can be asked for.
void expect_same_targets(const std::vector<double>& actual, const std::vector<double>& expected,
                         const std::string& what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
#if defined(__FP_FAST_FMA)
  for (std::size_t t = 0; t < actual.size(); ++t) {
    EXPECT_NEAR(actual[t], expected[t], 1e-13 * std::abs(expected[t])) << what << ", t = " << t;
  }
#else
  EXPECT_EQ(actual, expected) << what;
#endif
}

omkl::SyntheticOptions raw(SyntheticKind kind, std::size_t n, std::uint64_t seed = 7) {
  omkl::SyntheticOptions options;
  options.kind = kind;
  options.n_samples = n;
  options.seed = seed;
  options.normalize = false;
  return options;
}

double mean(const std::vector<double>& v, std::size_t first, std::size_t last) {
  const double sum = std::accumulate(v.begin() + first, v.begin() + last, 0.0);
  return sum / static_cast<double>(last - first);
}

// Medians, not means: single targets are heavy-tailed (a sample close to many earlier ones).
double median(const std::vector<double>& v, std::size_t first, std::size_t last) {
  std::vector<double> part(v.begin() + first, v.begin() + last);
  std::nth_element(part.begin(), part.begin() + part.size() / 2, part.end());
  return part[part.size() / 2];
}

TEST(SyntheticTest, ScheduleMatchesTheSpec) {
  for (const std::size_t t : {1, 8000, 8001, 18000, 18001, 26000, 26001, 36000, 36001, 90000}) {
    EXPECT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset1, t),
              reference_sigma2(SyntheticKind::Dataset1, t))
        << t;
  }
  EXPECT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset1, 8001), 10.0);
  EXPECT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset1, 40000), 10.0);
  for (std::size_t t = 1; t <= 7000; ++t) {
    ASSERT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset2, t),
              reference_sigma2(SyntheticKind::Dataset2, t))
        << t;
  }
  EXPECT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset2, 5901), 0.1);
  EXPECT_EQ(omkl::detail::synthetic_sigma2(SyntheticKind::Dataset2, 7000), 0.1);
}

TEST(SyntheticTest, Dataset1EqualsBruteForceReference) {
  for (const bool target : {false, true}) {
    omkl::SyntheticOptions options = raw(SyntheticKind::Dataset1, 300);
    options.kernel_index_target = target;
    const omkl::Dataset data = omkl::make_synthetic(options);
    const Reference ref = brute_force(options);
    EXPECT_EQ(data.name, "synthetic-dataset1");
    EXPECT_EQ(data.task, omkl::Task::Regression);
    ASSERT_EQ(data.n_samples, 300u);
    ASSERT_EQ(data.n_features, 10u);
    EXPECT_EQ(data.x, ref.x);
    expect_same_targets(data.y, ref.y, "kernel_index_target = " + std::to_string(target));
  }
}

TEST(SyntheticTest, Dataset2EqualsBruteForceReferenceAcrossRegimes) {
  // 1100 samples span the σ² = 0.01, 1 and 10 ranges, so both readings differ here.
  for (const bool target : {false, true}) {
    omkl::SyntheticOptions options = raw(SyntheticKind::Dataset2, 1100, 11);
    options.kernel_index_target = target;
    options.n_features = 4;
    options.sigma_alpha = 0.3;
    const omkl::Dataset data = omkl::make_synthetic(options);
    const Reference ref = brute_force(options);
    EXPECT_EQ(data.name, "synthetic-dataset2");
    EXPECT_EQ(data.x, ref.x);
    expect_same_targets(data.y, ref.y, "kernel_index_target = " + std::to_string(target));
  }
}

TEST(SyntheticTest, TargetsDoNotDependOnThreadCount) {
  omkl::detail::RandomStream stream(5, 0, omkl::detail::RngPurpose::Misc, 0);
  const std::size_t n = 1500;
  const std::size_t d = 3;
  std::vector<double> x(n * d);
  std::vector<double> alpha(n);
  std::vector<double> gamma(n);
  for (double& v : x) v = stream.normal();
  for (std::size_t t = 0; t < n; ++t) {
    alpha[t] = 1.0 + stream.normal();
    gamma[t] = 0.1 + stream.uniform();
  }
  for (const bool target : {false, true}) {
    const std::vector<double> one =
        omkl::detail::synthetic_targets(x, n, d, alpha, gamma, target, 1);
    for (const unsigned threads : {0u, 2u, 3u, 8u, 200u}) {
      EXPECT_EQ(omkl::detail::synthetic_targets(x, n, d, alpha, gamma, target, threads), one)
          << threads << " threads";
    }
  }
}

TEST(SyntheticTest, DeterministicInSeed) {
  const omkl::SyntheticOptions options = raw(SyntheticKind::Dataset2, 200, 42);
  const omkl::Dataset a = omkl::make_synthetic(options);
  const omkl::Dataset b = omkl::make_synthetic(options);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  const omkl::Dataset c = omkl::make_synthetic(raw(SyntheticKind::Dataset2, 200, 43));
  EXPECT_NE(a.x, c.x);
  EXPECT_NE(a.y, c.y);
  // The two kinds draw from different streams even with the same seed.
  const omkl::Dataset d = omkl::make_synthetic(raw(SyntheticKind::Dataset1, 200, 42));
  EXPECT_NE(a.x, d.x);
  // A prefix of a longer stream is the shorter stream (the draws are sequential in t).
  const omkl::Dataset longer = omkl::make_synthetic(raw(SyntheticKind::Dataset2, 260, 42));
  EXPECT_TRUE(std::equal(a.x.begin(), a.x.end(), longer.x.begin()));
  EXPECT_TRUE(std::equal(a.y.begin(), a.y.end(), longer.y.begin()));
}

TEST(SyntheticTest, NormalisationMapsFeaturesAndTargetsToUnitRange) {
  omkl::SyntheticOptions options = raw(SyntheticKind::Dataset2, 400, 3);
  const omkl::Dataset plain = omkl::make_synthetic(options);
  options.normalize = true;
  const omkl::Dataset data = omkl::make_synthetic(options);
  for (std::size_t j = 0; j < data.n_features; ++j) {
    double lo = 1.0;
    double hi = 0.0;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      lo = std::min(lo, data.row(t)[j]);
      hi = std::max(hi, data.row(t)[j]);
    }
    EXPECT_EQ(lo, 0.0) << j;
    EXPECT_EQ(hi, 1.0) << j;
  }
  EXPECT_EQ(*std::min_element(data.y.begin(), data.y.end()), 0.0);
  EXPECT_EQ(*std::max_element(data.y.begin(), data.y.end()), 1.0);
  // y is generated from the raw x, then rescaled: the normalised stream is the min-max image
  // of the raw one.
  omkl::Dataset rescaled = plain;
  omkl::normalize(rescaled, omkl::Normalization::MinMaxAll);
  EXPECT_EQ(data.x, rescaled.x);
  EXPECT_EQ(data.y, rescaled.y);
}

TEST(SyntheticTest, Dataset1EarlyMagnitudes) {
  const omkl::SyntheticOptions options = raw(SyntheticKind::Dataset1, 500);
  const omkl::Dataset data = omkl::make_synthetic(options);
  const Reference ref = brute_force(raw(SyntheticKind::Dataset1, 1));
  EXPECT_EQ(data.y[0], ref.alpha[0]);  // y_1 = α_1 κ(x_1, x_1) = α_1
  EXPECT_NEAR(data.y[0], 1.0, 0.05);
  // Every target contains its own α_t ≈ 1, and y grows with the samples already seen.
  EXPECT_GT(*std::min_element(data.y.begin(), data.y.end()), 0.9);
  EXPECT_GT(mean(data.y, 400, 500), mean(data.y, 0, 100) + 0.5)
      << mean(data.y, 0, 100) << " -> " << mean(data.y, 400, 500);
  EXPECT_GT(median(data.y, 400, 500), median(data.y, 0, 100))
      << median(data.y, 0, 100) << " -> " << median(data.y, 400, 500);
}

TEST(SyntheticTest, Dataset2DefaultLengthAndRawRange) {
  omkl::SyntheticOptions options;
  options.kind = SyntheticKind::Dataset2;
  options.normalize = false;
  const omkl::Dataset data = omkl::make_synthetic(options);
  EXPECT_EQ(data.n_samples, 6500u);
  EXPECT_EQ(data.n_features, 10u);
  const auto [lo, hi] = std::minmax_element(data.y.begin(), data.y.end());
  // §6.4: raw y ≈ 0.97 … 954.
  EXPECT_GT(*lo, 0.9);
  EXPECT_LT(*lo, 1.0);
  EXPECT_GT(*hi, 500.0);
  EXPECT_LT(*hi, 1500.0);
}

TEST(SyntheticTest, TargetReadingJumpsAtTheFirstSwitch) {
  // §6.4: with the kernel of the target sample, y jumps at t = 8001 (≈ 3.5 → 4.4e3 for one
  // sample); with the kernel of the source sample it keeps growing smoothly.
  omkl::SyntheticOptions options = raw(SyntheticKind::Dataset1, 8020);
  options.kernel_index_target = true;
  const omkl::Dataset target = omkl::make_synthetic(options);
  const double before = median(target.y, 7980, 8000);
  const double after = median(target.y, 8000, 8020);
  // Before: Σ of 8000 σ²=1 terms, typically tens; after: 8001 σ²=10 terms of ≈ 0.4 each.
  EXPECT_GT(after, 20.0 * before) << before << " -> " << after;
  EXPECT_LT(before, 200.0);
  EXPECT_GT(after, 2000.0);
  options.kernel_index_target = false;
  const omkl::Dataset source = omkl::make_synthetic(options);
  EXPECT_LT(median(source.y, 8000, 8020), 10.0 * median(source.y, 7980, 8000));
  // The source reading agrees with the target reading before the first switch.
  EXPECT_TRUE(std::equal(source.y.begin(), source.y.begin() + 8000, target.y.begin()));
  EXPECT_EQ(source.x, target.x);
}

TEST(SyntheticTest, InvalidOptionsAreConfigErrors) {
  omkl::SyntheticOptions options = raw(SyntheticKind::Dataset1, 10);
  options.n_features = 0;
  EXPECT_THROW(omkl::make_synthetic(options), omkl::ConfigError);
  options = raw(SyntheticKind::Dataset1, 10);
  options.sigma_alpha = -1.0;
  EXPECT_THROW(omkl::make_synthetic(options), omkl::ConfigError);
}

TEST(SyntheticTest, LoadStreamParsesSyntheticSpecs) {
  omkl::SyntheticOptions options;
  options.kind = SyntheticKind::Dataset2;
  options.n_samples = 50;
  options.seed = 9;
  const omkl::Dataset expected = omkl::make_synthetic(options);
  const omkl::Dataset data = omkl::load_stream("synthetic:dataset2:50", 9);
  EXPECT_EQ(data.name, "synthetic-dataset2");
  EXPECT_EQ(data.x, expected.x);
  EXPECT_EQ(data.y, expected.y);
  const omkl::Dataset first = omkl::load_stream("synthetic:dataset1:30", 9);
  EXPECT_EQ(first.name, "synthetic-dataset1");
  EXPECT_EQ(first.n_samples, 30u);
  EXPECT_EQ(omkl::load_stream("synthetic:dataset2", 9).n_samples, 6500u);
  for (const char* bad : {"synthetic:dataset3", "synthetic:", "synthetic:dataset1:0",
                          "synthetic:dataset1:-5", "synthetic:dataset1:+5", "synthetic:dataset1:",
                          "synthetic:dataset1:12x", "synthetic:dataset2:99999999999999999999999"}) {
    EXPECT_THROW(omkl::load_stream(bad), omkl::ConfigError) << bad;
  }
}

}  // namespace
