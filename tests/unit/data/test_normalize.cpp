// Normalisations of a whole stream and their names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "omkl/dataset.h"
#include "omkl/error.h"

namespace {

// 4 samples × 3 features; column 2 is constant.
omkl::Dataset sample() {
  omkl::Dataset data;
  data.name = "sample";
  data.n_samples = 4;
  data.n_features = 3;
  data.x = {1, -2, 0.1,  //
            2, 0, 0.1,   //
            3, 6, 0.1,   //
            4, 2, 0.1};
  data.y = {10, 20, 30, 50};
  return data;
}

TEST(NormalizeTest, ParsesEveryName) {
  EXPECT_EQ(omkl::parse_normalization("none"), omkl::Normalization::None);
  EXPECT_EQ(omkl::parse_normalization("minmax"), omkl::Normalization::MinMaxFeatures);
  EXPECT_EQ(omkl::parse_normalization("minmax-global"), omkl::Normalization::MinMaxGlobal);
  EXPECT_EQ(omkl::parse_normalization("minmax-all"), omkl::Normalization::MinMaxAll);
  EXPECT_EQ(omkl::parse_normalization("zscore"), omkl::Normalization::ZScore);
  EXPECT_EQ(omkl::parse_normalization("unit-rows"), omkl::Normalization::UnitRows);
  EXPECT_EQ(omkl::parse_normalization("jmlr23"), omkl::Normalization::Jmlr23);
}

TEST(NormalizeTest, SymmetricKeepBinaryKeepsZeroOneColumnsAndScalesTheRest) {
  // spec/bandit.md A13's no_rescale_binary: a column of exactly {0, 1} keeps its values; any
  // other column goes to [−1, 1] as with symmetric (a constant one to 0, also all-ones); labels
  // stay; regression targets to [0, 1]. The fitted scaler applies the same to new rows.
  omkl::Dataset data;
  data.name = "binary";
  data.n_samples = 4;
  data.n_features = 5;
  data.x = {0, 0, 1, 3, 0,  //
            1, 1, 1, 5, 0.5,  //
            1, 0, 1, 4, 1,  //
            0, 2, 1, 3, 0};
  data.y = {1, 2, 3, 5};
  omkl::Dataset symmetric = data;
  const omkl::Normalizer keep = omkl::fit_normalizer(data, omkl::Normalization::SymmetricKeepBinary);
  keep.apply(data);
  omkl::normalize(symmetric, omkl::Normalization::Symmetric);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(data.x[t * 5 + 0], (std::vector<double>{0, 1, 1, 0})[t]) << "a {0, 1} column is kept";
    EXPECT_EQ(symmetric.x[t * 5 + 0], (std::vector<double>{-1, 1, 1, -1})[t]) << "symmetric maps it to ±1";
    for (std::size_t j = 1; j < 5; ++j) EXPECT_EQ(data.x[t * 5 + j], symmetric.x[t * 5 + j]) << t << "," << j;
  }
  EXPECT_EQ(data.y, symmetric.y);
  EXPECT_EQ(data.y, (std::vector<double>{0, 0.25, 0.5, 1}));
  // symmetric itself (spec/bandit.md §8.2): per-feature min–max to [−1, 1], a constant column to 0.
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_EQ(symmetric.x[t * 5 + 2], 0.0) << "a constant column";
    EXPECT_EQ(symmetric.x[t * 5 + 3], (std::vector<double>{-1, 1, 0, -1})[t]) << "{3, 5, 4, 3}";
  }
  double row[5] = {1, 0, 1, 5, 0.5}, y = 3;
  keep.apply_row(row, 5, &y);
  EXPECT_EQ(row[0], 1.0);
  EXPECT_EQ(row[1], -1.0);
  EXPECT_EQ(omkl::parse_normalization("symmetric-keep-binary"), omkl::Normalization::SymmetricKeepBinary);
}

TEST(NormalizeTest, UnknownNameListsTheValidOnes) {
  try {
    omkl::parse_normalization("MinMax");
    FAIL() << "no ConfigError";
  } catch (const omkl::ConfigError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("'MinMax'"), std::string::npos) << what;
    for (const char* name : {"none", "minmax", "minmax-global", "minmax-all", "zscore",
                             "unit-rows", "jmlr23"}) {
      EXPECT_NE(what.find(name), std::string::npos) << name << " missing in: " << what;
    }
  }
}

TEST(NormalizeTest, NoneLeavesDataUnchanged) {
  omkl::Dataset data = sample();
  omkl::normalize(data, omkl::Normalization::None);
  EXPECT_EQ(data.x, sample().x);
  EXPECT_EQ(data.y, sample().y);
}

TEST(NormalizeTest, MinMaxFeaturesScalesEachColumn) {
  omkl::Dataset data = sample();
  omkl::normalize(data, omkl::Normalization::MinMaxFeatures);
  const std::vector<double> expected = {0, 0, 0, 1.0 / 3, 0.25, 0, 2.0 / 3, 1, 0, 1, 0.5, 0};
  ASSERT_EQ(data.x.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_DOUBLE_EQ(data.x[i], expected[i]) << i;
  EXPECT_EQ(data.y, sample().y);  // targets untouched
}

TEST(NormalizeTest, MinMaxGlobalUsesOneRange) {
  omkl::Dataset data = sample();
  omkl::normalize(data, omkl::Normalization::MinMaxGlobal);
  // global min −2, max 6
  const std::vector<double> raw = sample().x;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    EXPECT_DOUBLE_EQ(data.x[i], (raw[i] + 2) / 8) << i;
  }
  EXPECT_EQ(data.x[1], 0.0);
  EXPECT_EQ(data.x[7], 1.0);
  EXPECT_EQ(data.y, sample().y);
}

TEST(NormalizeTest, MinMaxAllAlsoScalesTargets) {
  omkl::Dataset data = sample();
  omkl::normalize(data, omkl::Normalization::MinMaxAll);
  EXPECT_EQ(data.y, (std::vector<double>{0, 0.25, 0.5, 1}));
  EXPECT_EQ(data.x[0], 0.0);
  EXPECT_EQ(data.x[9], 1.0);
  EXPECT_EQ(data.x[2], 0.0);  // constant column
}

TEST(NormalizeTest, ZScoreUsesPopulationStd) {
  omkl::Dataset data = sample();
  omkl::normalize(data, omkl::Normalization::ZScore);
  // column 0: mean 2.5, population variance 1.25
  const double sd = std::sqrt(1.25);
  for (std::size_t t = 0; t < 4; ++t) {
    EXPECT_DOUBLE_EQ(data.x[t * 3], (static_cast<double>(t + 1) - 2.5) / sd) << t;
    EXPECT_EQ(data.x[t * 3 + 2], 0.0) << t;  // constant 0.1 column, despite a rounded mean
  }
  for (std::size_t j = 0; j < 2; ++j) {
    double mean = 0;
    double squares = 0;
    for (std::size_t t = 0; t < 4; ++t) mean += data.x[t * 3 + j] / 4;
    for (std::size_t t = 0; t < 4; ++t) squares += std::pow(data.x[t * 3 + j] - mean, 2) / 4;
    EXPECT_NEAR(mean, 0.0, 1e-15);
    EXPECT_NEAR(squares, 1.0, 1e-14);
  }
  EXPECT_EQ(data.y, sample().y);
}

TEST(NormalizeTest, UnitRowsKeepsZeroRows) {
  omkl::Dataset data;
  data.n_samples = 2;
  data.n_features = 2;
  data.x = {3, -4, 0, 0};
  data.y = {1, 2};
  omkl::normalize(data, omkl::Normalization::UnitRows);
  EXPECT_DOUBLE_EQ(data.x[0], 0.6);
  EXPECT_DOUBLE_EQ(data.x[1], -0.8);
  EXPECT_EQ(data.x[2], 0.0);
  EXPECT_EQ(data.x[3], 0.0);
}

TEST(NormalizeTest, ConstantColumnsMapToZeroInEveryMode) {
  for (const auto how : {omkl::Normalization::MinMaxFeatures, omkl::Normalization::MinMaxGlobal,
                         omkl::Normalization::MinMaxAll, omkl::Normalization::ZScore}) {
    omkl::Dataset data;
    data.n_samples = 3;
    data.n_features = 1;
    data.x = {7, 7, 7};
    data.y = {5, 5, 5};
    omkl::normalize(data, how);
    EXPECT_EQ(data.x, (std::vector<double>{0, 0, 0}));
    if (how == omkl::Normalization::MinMaxAll) {
      EXPECT_EQ(data.y, (std::vector<double>{0, 0, 0}));
    }
  }
}

// spec/graph-aided.md §1.2: y min–max to [0, 1]; x divided by the largest row norm (one
// divisor for the whole stream, no centring, no per-feature scaling).
TEST(NormalizeTest, Jmlr23ScalesTargetsAndDividesByLargestRowNorm) {
  omkl::Dataset data;
  data.n_samples = 3;
  data.n_features = 2;
  data.x = {3, 4,    // norm 5
            -6, 8,   // norm 10 (the largest)
            1, 0};   // norm 1
  data.y = {2, 10, 4};
  omkl::normalize(data, omkl::Normalization::Jmlr23);
  const std::vector<double> x = {0.3, 0.4, -0.6, 0.8, 0.1, 0.0};
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_DOUBLE_EQ(data.x[i], x[i]) << i;
  EXPECT_EQ(data.y[0], 0.0);  // y/8 − 2/8 at the minimum is exactly 0
  EXPECT_DOUBLE_EQ(data.y[1], 1.0);
  EXPECT_DOUBLE_EQ(data.y[2], 0.25);
  double largest = 0.0;
  for (std::size_t t = 0; t < 3; ++t)
    largest = std::max(largest, std::hypot(data.x[2 * t], data.x[2 * t + 1]));
  EXPECT_DOUBLE_EQ(largest, 1.0);
}

TEST(NormalizeTest, Jmlr23KeepsSignsAndOffsetsOfInputs) {
  // Unlike minmax, a column with an offset keeps it: 100 and 101 become 100/‖·‖ and 101/‖·‖.
  omkl::Dataset data;
  data.n_samples = 2;
  data.n_features = 1;
  data.x = {100, -101};
  data.y = {1, 1};
  omkl::normalize(data, omkl::Normalization::Jmlr23);
  EXPECT_DOUBLE_EQ(data.x[0], 100.0 / 101.0);
  EXPECT_DOUBLE_EQ(data.x[1], -1.0);
  EXPECT_EQ(data.y, (std::vector<double>{0, 0}));  // constant target maps to 0
}

TEST(NormalizeTest, Jmlr23LeavesAllZeroInputsAlone) {
  omkl::Dataset data;
  data.n_samples = 2;
  data.n_features = 2;
  data.x = {0, 0, 0, 0};
  data.y = {-1, 3};
  omkl::normalize(data, omkl::Normalization::Jmlr23);
  EXPECT_EQ(data.x, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(data.y, (std::vector<double>{0, 1}));
}

TEST(NormalizeTest, InconsistentShapeIsRejected) {
  omkl::Dataset data = sample();
  data.x.pop_back();
  EXPECT_THROW(omkl::normalize(data, omkl::Normalization::MinMaxFeatures), omkl::InputError);
}

TEST(NormalizeTest, FittedStatisticsApplyToNewRows) {
  // Fitted on sample(), a min-max transform maps a new row with the training minimum and range,
  // so values outside the training range land outside [0, 1].
  const omkl::Normalizer z = omkl::fit_normalizer(sample(), omkl::Normalization::MinMaxFeatures);
  EXPECT_EQ(z.n_features, 3u);
  omkl::Dataset next;
  next.name = "next";
  next.n_samples = 1;
  next.n_features = 3;
  next.x = {5, -2, 7};
  next.y = {99};
  z.apply(next);
  EXPECT_DOUBLE_EQ(next.x[0], 4.0 / 3.0);  // (5 − 1) / 3
  EXPECT_DOUBLE_EQ(next.x[1], 0.0);        // the training minimum
  EXPECT_DOUBLE_EQ(next.x[2], 0.0);        // a constant training column stays 0
  EXPECT_DOUBLE_EQ(next.y[0], 99.0);       // minmax leaves the target alone
  // z-score with the training mean and population std; the target too for minmax-all.
  const omkl::Normalizer s = omkl::fit_normalizer(sample(), omkl::Normalization::ZScore);
  omkl::Dataset one = next;
  one.x = {2.5, 1.5, 0.1};
  s.apply(one);
  EXPECT_NEAR(one.x[0], 0.0, 1e-15);  // the mean of 1..4
  EXPECT_NEAR(one.x[1], 0.0, 1e-15);  // the mean of −2, 0, 6, 2
  const omkl::Normalizer all = omkl::fit_normalizer(sample(), omkl::Normalization::MinMaxAll);
  one.y = {30};
  all.apply(one);
  EXPECT_DOUBLE_EQ(one.y[0], 0.5);  // (30 − 10) / 40
  // Fit-then-apply on the fitted stream is normalize(), bit for bit, in every mode.
  for (const char* name : {"none", "minmax", "minmax-global", "minmax-all", "zscore", "unit-rows", "jmlr23", "symmetric"}) {
    const auto how = omkl::parse_normalization(name);
    omkl::Dataset a = sample(), b = sample();
    omkl::normalize(a, how);
    omkl::fit_normalizer(b, how).apply(b);
    EXPECT_EQ(a.x, b.x) << name;
    EXPECT_EQ(a.y, b.y) << name;
    EXPECT_EQ(omkl::to_string(how), name);
  }
  // A stream of another width is refused.
  omkl::Dataset wide = next;
  wide.n_features = 1;
  wide.n_samples = 3;
  EXPECT_THROW(z.apply(wide), omkl::InputError);
}

TEST(NormalizeTest, OnlineScalersUseOnlyTheRowsSoFar) {
  // Row t is scaled by the statistics of rows 1..t, computed here directly.
  const omkl::Dataset raw = sample();
  for (const char* name : {"running-minmax", "running-zscore"}) {
    const auto how = omkl::parse_normalization(name);
    omkl::Dataset data = raw;
    omkl::Normalizer running = omkl::fit_normalizer(data, how);
    EXPECT_TRUE(running.online()) << name;
    EXPECT_FALSE(running.needs_statistics()) << name;
    omkl::normalize(data, how);  // a copy of the scaler walks the rows; `running` is unchanged
    EXPECT_EQ(running.n_observed, 0u);
    for (std::size_t t = 0; t < raw.n_samples; ++t) {
      for (std::size_t j = 0; j < raw.n_features; ++j) {
        double lo = raw.x[j], hi = raw.x[j], mean = 0.0, squares = 0.0;
        for (std::size_t u = 0; u <= t; ++u) {
          const double v = raw.x[u * raw.n_features + j];
          lo = std::min(lo, v);
          hi = std::max(hi, v);
          mean += v / static_cast<double>(t + 1);
        }
        for (std::size_t u = 0; u <= t; ++u) {
          const double diff = raw.x[u * raw.n_features + j] - mean;
          squares += diff * diff;
        }
        const double v = raw.x[t * raw.n_features + j];
        const double sd = std::sqrt(squares / static_cast<double>(t + 1));
        const double expected = how == omkl::Normalization::RunningMinMax ? (hi > lo ? (v - lo) / (hi - lo) : 0.0)
                                                                          : (sd > 1e-12 ? (v - mean) / sd : 0.0);
        EXPECT_NEAR(data.x[t * raw.n_features + j], expected, 1e-12) << name << " row " << t + 1 << " feature " << j + 1;
      }
      EXPECT_EQ(data.y[t], raw.y[t]) << "targets are left alone";
    }
    // Row by row by hand gives the same numbers, and the scaler's state after the rows.
    omkl::Dataset by_hand = raw;
    for (std::size_t t = 0; t < raw.n_samples; ++t) {
      running.observe_row(by_hand.row(t), raw.n_features);
      running.apply_row(by_hand.x.data() + t * raw.n_features, raw.n_features, &by_hand.y[t]);
    }
    EXPECT_EQ(by_hand.x, data.x) << name;
    EXPECT_EQ(running.n_observed, raw.n_samples);
  }
  // The first row of a running scaler maps to 0 (nothing to compare it with yet).
  omkl::Dataset one = sample();
  one.n_samples = 1;
  one.x.resize(3);
  one.y.resize(1);
  omkl::normalize(one, omkl::Normalization::RunningZScore);
  EXPECT_EQ(one.x, (std::vector<double>{0.0, 0.0, 0.0}));
}

}  // namespace
