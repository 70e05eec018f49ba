// Normalisations of a whole stream and their names.
#include <gtest/gtest.h>

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
}

TEST(NormalizeTest, UnknownNameListsTheValidOnes) {
  try {
    omkl::parse_normalization("MinMax");
    FAIL() << "no ConfigError";
  } catch (const omkl::ConfigError& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("'MinMax'"), std::string::npos) << what;
    for (const char* name : {"none", "minmax", "minmax-global", "minmax-all", "zscore",
                             "unit-rows"}) {
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

TEST(NormalizeTest, InconsistentShapeIsRejected) {
  omkl::Dataset data = sample();
  data.x.pop_back();
  EXPECT_THROW(omkl::normalize(data, omkl::Normalization::MinMaxFeatures), omkl::InputError);
}

}  // namespace
