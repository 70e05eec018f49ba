// The published protocols (src/study/presets.cpp): every preset resolves, its keys are read by
// the algorithms it is meant for, and `omkl study --preset jmlr23-graph` runs end to end.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/test_helpers.h"
#include "core/algorithm_base.h"
#include "omkl/dataset.h"
#include "omkl/error.h"
#include "omkl/study.h"

#ifndef OMKL_CLI_PATH
#define OMKL_CLI_PATH ""
#endif

namespace {

namespace fs = std::filesystem;
using Params = std::vector<std::pair<std::string, std::string>>;

std::string value_of(const omkl::Preset& preset, const std::string& key) {
  for (const auto& [k, v] : preset.defaults)
    if (k == key) return v;
  return "<missing>";
}

TEST(PresetsTest, EveryNameResolves) {
  const auto names = omkl::preset_names();
  for (const char* expected : {"jmlr19-regression", "jmlr19-classification", "jmlr23-graph", "conf-sfg"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end()) << expected;
  for (const auto& name : names) {
    const omkl::Preset& preset = omkl::find_preset(name);
    EXPECT_EQ(preset.name, name);
    EXPECT_FALSE(preset.description.empty()) << name;
  }
}

TEST(PresetsTest, UnknownNameListsTheKnownOnes) {
  try {
    omkl::find_preset("jmlr23");
    FAIL() << "no ConfigError";
  } catch (const omkl::ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'jmlr23'"), std::string::npos) << what;
    EXPECT_NE(what.find("jmlr23-graph"), std::string::npos) << what;
    EXPECT_NE(what.find("conf-sfg"), std::string::npos) << what;
  }
}

// spec/graph-aided.md §5.1 and §1.2.
TEST(PresetsTest, Jmlr23GraphHasTheJournalProtocol) {
  const omkl::Preset& p = omkl::find_preset("jmlr23-graph");
  EXPECT_EQ(p.normalization, omkl::Normalization::Jmlr23);
  EXPECT_EQ(value_of(p, "dict"), "jmlr23-76");
  EXPECT_EQ(value_of(p, "D"), "50");
  EXPECT_EQ(std::stod(value_of(p, "lambda")), 1e-3);
  EXPECT_EQ(std::stod(value_of(p, "eta")), 0.1);
  EXPECT_EQ(value_of(p, "eta_schedule"), "inv_sqrt_t");
  EXPECT_EQ(value_of(p, "switch_step"), "300");
  EXPECT_EQ(value_of(p, "M"), "10");
  EXPECT_EQ(value_of(p, "J"), "2");
  // "beta" would be read by omkl-sfg-r as a fixed refinement threshold: it must not be shared.
  EXPECT_EQ(value_of(p, "beta"), "<missing>");
}

// spec/bandit.md §8.2–§8.4: the oks-6 dictionary, features to [−1, 1] and targets to [0, 1], a
// fresh permutation per repetition, the sample standard deviation (R's sd).
TEST(PresetsTest, BanditOksHasThePapersProtocol) {
  const omkl::Preset& p = omkl::find_preset("bandit-oks");
  EXPECT_EQ(p.normalization, omkl::Normalization::Symmetric);
  EXPECT_EQ(value_of(p, "dict"), "oks-6");
  EXPECT_TRUE(p.shuffle);
  EXPECT_EQ(p.federated_rounds, 0u);
  EXPECT_EQ(p.spread, omkl::Spread::Sample);
  EXPECT_EQ(p.algorithms, (std::vector<std::string>{"oks++", "ioks", "rf-oks++", "rf-ioks"}));
  EXPECT_EQ(p.repetitions, 10u);  // §8.4: repetitions 0 … 9
}

TEST(PresetsTest, RepetitionsAreThePapersR) {
  // The count a study runs by default with the preset: graph journal R = 20 (§5.1), conference
  // R = 50 (Appendix B), POF-MKL's 20 draws (§4.6), the bandit paper's 10 (§8.4); the Raker paper
  // reports one RF draw and states none.
  EXPECT_EQ(omkl::find_preset("jmlr23-graph").repetitions, 20u);
  EXPECT_EQ(omkl::find_preset("conf-sfg").repetitions, 50u);
  EXPECT_EQ(omkl::find_preset("fed-pofmkl").repetitions, 20u);
  EXPECT_EQ(omkl::find_preset("jmlr19-regression").repetitions, 0u);
  EXPECT_EQ(omkl::find_preset("jmlr19-classification").repetitions, 0u);
  // A study given no count runs those, or 5 where none is stated or there is no preset.
  EXPECT_EQ(omkl::default_seeds("bandit-oks"), 10u);
  EXPECT_EQ(omkl::default_seeds("conf-sfg"), 50u);
  EXPECT_EQ(omkl::default_seeds("jmlr19-regression"), 5u);
  EXPECT_EQ(omkl::default_seeds(""), 5u);
  EXPECT_THROW(omkl::default_seeds("no-such-preset"), omkl::ConfigError);
}

// spec/graph-aided.md §2.7.
TEST(PresetsTest, ConfSfgHasTheConferenceProtocol) {
  const omkl::Preset& p = omkl::find_preset("conf-sfg");
  EXPECT_EQ(p.normalization, omkl::Normalization::Jmlr23);
  EXPECT_EQ(value_of(p, "dict"), "conf-41");
  EXPECT_EQ(value_of(p, "D"), "50");
  EXPECT_EQ(std::stod(value_of(p, "lambda")), 1e-3);
  EXPECT_EQ(value_of(p, "eta_schedule"), "const");  // ξ = η = 1/√T (the const default)
  EXPECT_EQ(value_of(p, "eta"), "<missing>");
  EXPECT_EQ(value_of(p, "switch_step"), "300");
  EXPECT_EQ(value_of(p, "J"), "1");
  EXPECT_EQ(value_of(p, "M"), "<missing>");  // SFG-MKL 5, OMKL-GF 10: algorithm defaults
  EXPECT_EQ(value_of(p, "beta"), "<missing>");
}

// Soft defaults an algorithm does not read are ignored; a key no algorithm of the preset reads
// would be a silent typo. Each key is given explicitly to the algorithms (finish() rejects an
// explicit key that was never read), and at least one must accept it.
TEST(PresetsTest, EveryKeyIsReadBySomeAlgorithmOfThePreset) {
  const omkl::Dataset data = omkl::test::random_stream(20, 3, omkl::Task::Regression);
  const omkl::detail::AlgoContext context = omkl::test::context_for(data, omkl::Profile::Reference);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"jmlr23-graph", {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "raker", "omkr", "rbf-1", "poly-2", "rfomkr"}},
      {"conf-sfg", {"sfg-mkl", "sfg-mkl-r", "omkl-gf", "raker"}},
  };
  for (const auto& [preset_name, algos] : cases) {
    const omkl::Preset& preset = omkl::find_preset(preset_name);
    for (const auto& [key, value] : preset.defaults) {
      bool read = false;
      for (const auto& algo : algos) {
        try {
          omkl::detail::make_algorithm(algo, Params{{key, value}}, {}, context);
          read = true;
          break;
        } catch (const omkl::ConfigError&) {
        }
      }
      EXPECT_TRUE(read) << preset_name << ": no algorithm reads '" << key << "'";
    }
  }
}

// The presets as soft defaults build every algorithm they are meant for.
TEST(PresetsTest, AlgorithmsBuildWithThePresetDefaults) {
  const omkl::Dataset data = omkl::test::random_stream(30, 3, omkl::Task::Regression);
  for (const auto profile : {omkl::Profile::Paper, omkl::Profile::Reference}) {
    const auto context = omkl::test::context_for(data, profile);
    for (const char* algo : {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "raker", "omkr", "rbf-1", "poly-2", "rfomkr"}) {
      EXPECT_NO_THROW(omkl::detail::make_algorithm(algo, {}, omkl::find_preset("jmlr23-graph").defaults, context))
          << algo;
    }
    for (const char* algo : {"sfg-mkl", "sfg-mkl-r", "omkl-gf", "raker"}) {
      EXPECT_NO_THROW(omkl::detail::make_algorithm(algo, {}, omkl::find_preset("conf-sfg").defaults, context))
          << algo;
    }
  }
}

// An explicit parameter still overrides the preset.
TEST(PresetsTest, ExplicitParametersOverrideThePreset) {
  const omkl::Dataset data = omkl::test::random_stream(30, 3, omkl::Task::Regression);
  const auto context = omkl::test::context_for(data, omkl::Profile::Reference);
  const auto& defaults = omkl::find_preset("jmlr23-graph").defaults;
  // M = 77 > N = 76 is refused, so the explicit value is the one used.
  EXPECT_THROW(omkl::detail::make_algorithm("omkl-sfg", Params{{"M", "77"}}, defaults, context),
               omkl::ConfigError);
  EXPECT_NO_THROW(omkl::detail::make_algorithm("omkl-sfg", Params{{"M", "5"}}, defaults, context));
}

class PresetCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cli_ = OMKL_CLI_PATH;
    if (cli_.empty() || !fs::exists(cli_)) GTEST_SKIP() << "omkl CLI not built at '" << cli_ << "'";
    dir_ = fs::path(::testing::TempDir()) /
           ("omkl_presets_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  int omkl(const std::string& args) const {
    const std::string command = "cd '" + dir_.string() + "' && '" + cli_ + "' " + args +
                                " >stdout.txt 2>stderr.txt </dev/null";
    const int status = std::system(command.c_str());
    return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string text(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string cli_;
  fs::path dir_;
};

TEST_F(PresetCliTest, StudyWithJmlr23GraphRuns) {
  // 60 samples, 3 inputs with an offset (the §1.2 scaling keeps it), target in the tens.
  const omkl::Dataset data = omkl::test::random_stream(60, 3, omkl::Task::Regression);
  {
    std::ofstream out(dir_ / "small.csv");
    out << "a,b,c,y\n";
    for (std::size_t t = 0; t < data.n_samples; ++t)
      out << 10 + data.x[3 * t] << ',' << data.x[3 * t + 1] << ',' << data.x[3 * t + 2] << ','
          << 20 + 10 * data.y[t] << '\n';
  }
  const int code = omkl(
      "study --preset jmlr23-graph --data small.csv --algo omkl-sfg --algo omkr --seeds 2 "
      "--profile reference --threads 1 --out out");
  ASSERT_EQ(code, 0) << text("stderr.txt") << text("stdout.txt");
  std::ifstream in(dir_ / "out" / "summary.json");
  const auto summary = nlohmann::json::parse(in);
  EXPECT_EQ(summary.at("preset"), "jmlr23-graph");
  ASSERT_EQ(summary.at("results").size(), 2u);
  for (const auto& r : summary.at("results")) {
    EXPECT_EQ(r.at("seeds"), 2);
    const double mse = r.at("final_mean");
    // Targets are scaled to [0, 1] by the preset, so the MSE is well below 1.
    EXPECT_GT(mse, 0.0) << r.at("algo");
    EXPECT_LT(mse, 1.0) << r.at("algo");
  }
}

}  // namespace
