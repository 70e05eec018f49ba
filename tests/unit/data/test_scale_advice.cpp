// The note for a raw stream far from unit scale (omkl::scale_advice, omkl/dataset.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "omkl/dataset.h"

namespace {

// 3 samples × 2 features named a and b, every entry and target within [−1, 1].
omkl::Dataset unit_scale_stream() {
  omkl::Dataset data;
  data.name = "stream";
  data.n_samples = 3;
  data.n_features = 2;
  data.x = {0.5, -1.0,  //
            0.25, 0.0,  //
            -0.75, 1.0};
  data.y = {0.1, -0.2, 0.9};
  data.feature_names = {"a", "b"};
  return data;
}

bool mentions(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ScaleAdviceTest, AUnitScaleStreamGetsNoNote) {
  EXPECT_EQ(omkl::scale_advice(unit_scale_stream()), "");
  omkl::Dataset empty = unit_scale_stream();
  empty.n_samples = 0;
  empty.x.clear();
  empty.y.clear();
  EXPECT_EQ(omkl::scale_advice(empty), "");
}

TEST(ScaleAdviceTest, TheLimitsAreExclusive) {
  omkl::Dataset data = unit_scale_stream();
  data.x[3] = -omkl::kUnitScaleFeatureLimit;  // b's 0 → −100
  data.y[2] = omkl::kUnitScaleTargetLimit;
  EXPECT_EQ(omkl::scale_advice(data), "");
  data.x[3] = -100.5;
  EXPECT_NE(omkl::scale_advice(data), "");
}

TEST(ScaleAdviceTest, NamesTheFeatureOfLargestMagnitudeWithItsRange) {
  omkl::Dataset data = unit_scale_stream();
  data.x[0] = 250.0;   // a up to 250
  data.x[5] = -4000;   // b down to −4000: the larger magnitude
  const std::string note = omkl::scale_advice(data);
  EXPECT_TRUE(mentions(note, "stream is not normalised")) << note;
  EXPECT_TRUE(mentions(note, "feature 'b' spans -4000 to 0")) << note;
  EXPECT_FALSE(mentions(note, "'a'")) << note;
  EXPECT_FALSE(mentions(note, "target")) << note;  // the targets are within the limit
  EXPECT_TRUE(mentions(note, "the normalisations zscore, minmax and symmetric scale the features")) << note;
  EXPECT_TRUE(mentions(note, "; --normalize none keeps the values and silences this note")) << note;
  EXPECT_TRUE(mentions(omkl::scale_advice(data, "normalize='none'"), "; normalize='none' keeps the values")) << note;
}

TEST(ScaleAdviceTest, AColumnWithoutANameIsNamedByItsPlace) {
  omkl::Dataset data = unit_scale_stream();
  data.feature_names.clear();  // LIBSVM and synthetic streams have none
  data.x[3] = 1e6;
  EXPECT_TRUE(mentions(omkl::scale_advice(data), "feature 2 spans -1 to 1e+06"));
}

TEST(ScaleAdviceTest, ARegressionTargetFarFromZeroAsksForATargetScaling) {
  omkl::Dataset data = unit_scale_stream();
  data.y = {103.4, 141.0, 120.0};
  std::string note = omkl::scale_advice(data);
  EXPECT_TRUE(mentions(note, "(the target spans 103.4 to 141)")) << note;
  EXPECT_TRUE(mentions(note, "the normalisations minmax-all, symmetric and jmlr23 scale features and target")) << note;
  data.x[1] = 2e4;
  note = omkl::scale_advice(data);
  EXPECT_TRUE(mentions(note, "(feature 'b' spans 0 to 2e+04, the target 103.4 to 141)")) << note;
}

TEST(ScaleAdviceTest, ClassificationLabelsAreNeverTheCause) {
  omkl::Dataset data = unit_scale_stream();
  data.task = omkl::Task::Classification;
  data.y = {-1.0, 1.0, 1.0};
  EXPECT_EQ(omkl::scale_advice(data), "");
  // A large feature still gets the note, with nothing about the labels.
  data.x[0] = 500;
  const std::string note = omkl::scale_advice(data);
  EXPECT_TRUE(mentions(note, "feature 'a' spans -0.75 to 500")) << note;
  EXPECT_FALSE(mentions(note, "target")) << note;
}

// A feature named like the target must not be taken for it.
TEST(ScaleAdviceTest, AFeatureCalledTargetIsAFeature) {
  omkl::Dataset data = unit_scale_stream();
  data.feature_names = {"target_speed", "b"};
  data.x[0] = 300;
  const std::string note = omkl::scale_advice(data);
  EXPECT_TRUE(mentions(note, "the normalisations zscore, minmax and symmetric scale the features")) << note;
}

}  // namespace
