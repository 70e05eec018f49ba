// Checkpoints written by an earlier build still load and continue (tests/golden/README.md): one
// small model of every registered algorithm, saved by the build that wrote tests/golden/, and
// what that build predicted from it on the rows after, without learning (predict) and learning
// from them (partial_fit). A change of a checkpoint's format that keeps no loader for the old one
// fails here, as does a change of what a loaded model computes. The comparison allows 1e-12 of a
// value: the files may be read on another SIMD level (docs/features.md: the portable level rounds
// otherwise), and the format, not the last bit, is what they pin.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "omkl/algorithm.h"
#include "omkl/dataset.h"
#include "omkl/learner.h"

namespace {

std::string golden(const std::string& name) { return std::string(OMKL_GOLDEN_DIR) + "/" + name; }

nlohmann::json expected_outputs() {
  std::ifstream in(golden("expected.json"));
  return nlohmann::json::parse(in);
}

}  // namespace

TEST(GoldenCheckpointTest, EveryRegisteredAlgorithmHasOne) {
  // tests/golden/make_golden.py refuses to run without one; this says which is missing.
  const nlohmann::json expected = expected_outputs();
  for (const std::string& name : omkl::algorithm_names())
    EXPECT_TRUE(expected.contains(name)) << name << ": add it to tests/golden/make_golden.py's SPECS and run it";
}

TEST(GoldenCheckpointTest, AnEarlierBuildsCheckpointsLoadAndContinue) {
  const nlohmann::json expected = expected_outputs();
  for (const auto& [name, entry] : expected.items()) {
    SCOPED_TRACE(name + " (" + entry.at("spec").get<std::string>() + ")");
    const omkl::Dataset probe = omkl::load_csv(golden(entry.at("stream").get<std::string>()));
    omkl::Learner learner = omkl::Learner::load(golden("checkpoints/" + name + ".ckpt"));
    EXPECT_EQ(learner.spec().rfind(name, 0), 0u) << learner.spec();
    ASSERT_EQ(learner.n_features(), probe.n_features);
    std::vector<double> predicted, continued;
    for (std::size_t t = 0; t < probe.n_samples; ++t) predicted.push_back(learner.predict(probe.row(t)));
    for (std::size_t t = 0; t < probe.n_samples; ++t) continued.push_back(learner.partial_fit(probe.row(t), probe.y[t]));
    EXPECT_EQ(omkl::test::first_apart(predicted, entry.at("predict").get<std::vector<double>>(), 1e-12), "") << "predict()";
    EXPECT_EQ(omkl::test::first_apart(continued, entry.at("continue").get<std::vector<double>>(), 1e-12), "") << "partial_fit()";
  }
}
