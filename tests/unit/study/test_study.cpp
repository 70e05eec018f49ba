// Study runner: README.md's output contract (summary.json, curves.csv), metrics that equal a
// direct Learner run, determinism across threads and runs, the cell cache, validation before
// anything is written or computed (the stream, the configuration, the output folder), and the
// first-error-is-one convention of the reference profile.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "common/test_helpers.h"
#include "core/env_switch.h"
#include "core/state_io.h"
#include "features/rf_backend.h"
#include "omkl/algorithm.h"
#include "omkl/config.h"
#include "omkl/error.h"
#include "omkl/learner.h"
#include "omkl/study.h"
#include "study/scoring.h"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using omkl::AlgorithmResult;
using omkl::Dataset;
using omkl::Profile;
using omkl::StudyConfig;
using omkl::StudyResult;
using omkl::Task;
using omkl::test::ScopedEnv;

constexpr std::size_t kSamples = 400;
constexpr std::size_t kFeatures = 3;
constexpr std::uint64_t kBaseSeed = 11;

class StudyTest : public omkl::test::TempDirTest {
 protected:

  static StudyConfig config(const std::vector<std::string>& algos, std::size_t seeds = 3,
                            Profile profile = Profile::Paper) {
    StudyConfig c;
    for (const auto& a : algos) c.algorithms.push_back(omkl::parse_algorithm_spec(a));
    c.n_seeds = seeds;
    c.base_seed = kBaseSeed;
    c.profile = profile;
    c.threads = 2;
    c.curve_points = 20;
    return c;
  }

  // Predictions of a Learner built as the study builds replicate r.
  static std::vector<double> learner_predictions(const std::string& algo, const Dataset& data,
                                                 Profile profile, std::uint64_t replicate) {
    omkl::LearnerContext context;
    context.n_features = data.n_features;
    context.task = data.task;
    context.profile = profile;
    context.seed = kBaseSeed;
    context.replicate = replicate;
    context.horizon = data.n_samples;
    omkl::Learner learner = omkl::make_learner(omkl::parse_algorithm_spec(algo), context);
    std::vector<double> p(data.n_samples);
    learner.partial_fit_block(data.x.data(), data.y.data(), data.n_samples, p.data());
    return p;
  }

  static std::string read_text(const fs::path& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

};

// Mean over the vector in index order, as the study averages seeds.
double mean_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    if (c == sep && !quoted) {
      out.push_back(cell);
      cell.clear();
    } else {
      cell += c;
    }
  }
  out.push_back(cell);
  return out;
}

void expect_same_numbers(const StudyResult& a, const StudyResult& b) {
  ASSERT_EQ(a.results.size(), b.results.size());
  for (std::size_t i = 0; i < a.results.size(); ++i) {
    const AlgorithmResult& x = a.results[i];
    const AlgorithmResult& y = b.results[i];
    EXPECT_EQ(x.spec, y.spec);
    EXPECT_EQ(x.final_mean, y.final_mean) << x.spec;
    EXPECT_EQ(x.final_std, y.final_std) << x.spec;
    EXPECT_EQ(x.final_per_seed, y.final_per_seed) << x.spec;
    EXPECT_EQ(x.curve_t, y.curve_t) << x.spec;
    EXPECT_EQ(x.curve_mean, y.curve_mean) << x.spec;
    EXPECT_EQ(x.curve_std, y.curve_std) << x.spec;
  }
}

TEST_F(StudyTest, SummaryJsonHasTheContractKeys) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=8", "rf-ogd:D=8"}, 2);
  c.out_dir = (dir_ / "out").string();
  const StudyResult result = omkl::run_study(c, data);

  const fs::path summary_path = dir_ / "out" / "summary.json";
  ASSERT_TRUE(fs::exists(summary_path));
  const json summary = json::parse(read_text(summary_path));
  ASSERT_TRUE(summary.is_object());
  for (const char* key : {"dataset", "n_samples", "n_features", "backend", "device", "results"})
    EXPECT_TRUE(summary.contains(key)) << "summary.json lacks '" << key << "'";
  EXPECT_EQ(summary.at("dataset"), data.name);
  EXPECT_EQ(summary.at("n_samples").get<std::size_t>(), kSamples);
  EXPECT_EQ(summary.at("n_features").get<std::size_t>(), kFeatures);
  EXPECT_EQ(summary.at("backend"), "cpu");
  ASSERT_TRUE(summary.at("device").is_string());
  EXPECT_FALSE(summary.at("device").get<std::string>().empty());

  const json& results = summary.at("results");
  ASSERT_TRUE(results.is_array());
  ASSERT_EQ(results.size(), 2u);
  const char* names[] = {"raker", "rf-ogd"};
  for (std::size_t i = 0; i < 2; ++i) {
    const json& r = results[i];
    for (const char* key : {"algo", "params", "metric", "final_mean", "final_std", "seconds_mean", "seeds"})
      EXPECT_TRUE(r.contains(key)) << "results[" << i << "] lacks '" << key << "'";
    EXPECT_EQ(r.at("algo"), names[i]);
    ASSERT_TRUE(r.at("params").is_object());
    EXPECT_EQ(r.at("params").at("D"), "8");
    EXPECT_EQ(r.at("metric"), "mse");
    ASSERT_TRUE(r.at("final_mean").is_number());
    ASSERT_TRUE(r.at("final_std").is_number());
    ASSERT_TRUE(r.at("seconds_mean").is_number());
    EXPECT_EQ(r.at("seeds").get<std::size_t>(), 2u);
    EXPECT_EQ(r.at("final_mean").get<double>(), result.results[i].final_mean);
    EXPECT_EQ(r.at("final_std").get<double>(), result.results[i].final_std);
    EXPECT_GE(r.at("seconds_mean").get<double>(), 0.0);
    EXPECT_EQ(r.at("seconds_std").get<double>(), result.results[i].seconds_std);
    EXPECT_GE(r.at("final_std").get<double>(), 0.0);
    EXPECT_GT(r.at("final_mean").get<double>(), 0.0);
  }
}

TEST_F(StudyTest, AGridsConfigurationsRunAsCellsAndItsBestIsNamed) {
  // "best in hindsight" (the bandit paper's grids): each configuration an ordinary cell, the
  // same numbers as written alone; summary.json names the grid of each and its lowest mean.
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({}, 2);
  for (auto& spec : omkl::expand_algorithm_grid("rf-ogd:D=8,eta=0.5|0.05|0.005")) c.algorithms.push_back(spec);
  c.algorithms.push_back(omkl::parse_algorithm_spec("raker:D=8"));
  c.out_dir = (dir_ / "out").string();
  const StudyResult result = omkl::run_study(c, data);
  ASSERT_EQ(result.results.size(), 4u);
  const StudyResult alone = omkl::run_study(config({"rf-ogd:D=8,eta=0.5", "rf-ogd:D=8,eta=0.05", "rf-ogd:D=8,eta=0.005",
                                                    "raker:D=8"}, 2),
                                            data);
  expect_same_numbers(result, alone);
  std::size_t best = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(result.results[i].grid, "rf-ogd:D=8,eta=0.5|0.05|0.005");
    if (result.results[i].final_mean < result.results[best].final_mean) best = i;
  }
  EXPECT_TRUE(result.results[3].grid.empty());
  const auto grids = omkl::grid_bests(result);
  ASSERT_EQ(grids.size(), 1u);
  EXPECT_EQ(grids[0].configurations, 3u);
  EXPECT_EQ(grids[0].best_spec, result.results[best].spec);
  EXPECT_EQ(grids[0].best_final_mean, result.results[best].final_mean);
  const json summary = json::parse(read_text(dir_ / "out" / "summary.json"));
  ASSERT_EQ(summary.at("grids").size(), 1u);
  EXPECT_EQ(summary.at("grids")[0].at("best_spec"), result.results[best].spec);
  EXPECT_EQ(summary.at("grids")[0].at("configurations"), 3);
  EXPECT_EQ(summary.at("results")[1].at("grid"), "rf-ogd:D=8,eta=0.5|0.05|0.005");
  EXPECT_FALSE(summary.at("results")[3].contains("grid"));
  // A rerun reuses the cells and still names them the grid's.
  const StudyResult again = omkl::run_study(c, data);
  EXPECT_TRUE(again.results[0].reused);
  EXPECT_EQ(again.results[0].grid, "rf-ogd:D=8,eta=0.5|0.05|0.005");
  // A study without a grid has none in summary.json.
  StudyConfig plain = config({"raker:D=8"}, 2);
  plain.out_dir = (dir_ / "plain").string();
  omkl::run_study(plain, data);
  EXPECT_FALSE(json::parse(read_text(dir_ / "plain" / "summary.json")).contains("grids"));
}

TEST(StudyScoringTest, TimeSpreadIsTheStudysSpreadOfTheReplicatesTimes) {
  // The bandit paper's tables give time as mean ± sd over the repetitions: aggregate() reports
  // the spread of the replicates' loop times as it does the metric's (sample by default).
  const Dataset data = omkl::test::random_stream(20, 2, Task::Regression, 3);
  StudyConfig cfg;
  cfg.n_seeds = 3;
  std::vector<omkl::detail::ReplicateRun> runs(3);
  const double times[] = {1.0, 2.0, 4.0};
  for (std::size_t r = 0; r < 3; ++r) {
    runs[r].seconds = times[r];
    runs[r].final_metric = 0.5;
    runs[r].curve.assign(1, 0.5);
  }
  const std::vector<std::size_t> points = {data.n_samples};
  const double mean = 7.0 / 3.0, q = (1 - mean) * (1 - mean) + (2 - mean) * (2 - mean) + (4 - mean) * (4 - mean);
  for (const omkl::Spread spread : {omkl::Spread::Sample, omkl::Spread::Population}) {
    cfg.spread = spread;
    const AlgorithmResult r =
        omkl::detail::aggregate(omkl::parse_algorithm_spec("raker"), true, {}, runs, cfg, data, points);
    EXPECT_DOUBLE_EQ(r.seconds_mean, mean);
    EXPECT_DOUBLE_EQ(r.seconds_std, std::sqrt(q / (spread == omkl::Spread::Sample ? 2.0 : 3.0)));
  }
}

// A study run under a path switch records it beside its numbers (a number measured on an
// opt-in path says so); one run under none has no such key.
TEST_F(StudyTest, SummaryRecordsThePathSwitchesSet) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  const auto summary_of = [&](const std::string& name) {
    StudyConfig c = config({"raker:D=8"}, 1);
    c.out_dir = (dir_ / name).string();
    const StudyResult result = omkl::run_study(c, data);
    return std::make_pair(result, json::parse(read_text(dir_ / name / "summary.json")));
  };
  // Every switch cleared first: the suite may run under one (bench/gpu_session.sh does).
  std::vector<std::unique_ptr<ScopedEnv>> none;
  for (const auto& entry : omkl::detail::kPathSwitches) none.push_back(std::make_unique<ScopedEnv>(entry.name, ""));
  {
    ScopedEnv simd("OMKL_CPU_SIMD", "portable"), lanes("OMKL_HOST_WALK_LANES", "3");
    const auto [result, summary] = summary_of("switched");
    ASSERT_TRUE(summary.contains("path_switches")) << summary.dump();
    EXPECT_EQ(summary.at("path_switches"), json({{"OMKL_CPU_SIMD", "portable"}, {"OMKL_HOST_WALK_LANES", "3"}}));
    ASSERT_EQ(result.path_switches.size(), 2u);
    EXPECT_EQ(result.path_switches[0].first, "OMKL_CPU_SIMD");  // in the README's order
  }
  const auto [result, summary] = summary_of("plain");
  EXPECT_FALSE(summary.contains("path_switches")) << summary.dump();
  EXPECT_TRUE(result.path_switches.empty());
  // A cached cell is reused under the same switches only: its numbers and time are its path's.
  EXPECT_TRUE(summary_of("plain").first.results.at(0).reused);
  ScopedEnv simd("OMKL_CPU_SIMD", "portable");
  EXPECT_FALSE(summary_of("plain").first.results.at(0).reused);
  EXPECT_TRUE(summary_of("plain").first.results.at(0).reused);
}

TEST_F(StudyTest, ADamagedCellCacheIsRecomputed) {
  // A cell file cut short, or missing a field, is not trusted: the cell runs again and gives the
  // numbers of a fresh study.
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=8"}, 2);
  c.out_dir = (dir_ / "cached").string();
  const StudyResult first = omkl::run_study(c, data);
  std::vector<fs::path> cells;
  for (const auto& entry : fs::directory_iterator(dir_ / "cached" / "cells")) cells.push_back(entry.path());
  ASSERT_EQ(cells.size(), 1u);
  const std::string whole = read_text(cells[0]);
  json without_result = json::parse(whole);
  without_result.erase("result");  // the right key, a field missing
  for (const std::string& damaged : {whole.substr(0, whole.size() / 2), without_result.dump()}) {
    std::ofstream(cells[0], std::ios::trunc) << damaged;
    const StudyResult again = omkl::run_study(c, data);
    EXPECT_FALSE(again.results.at(0).reused);
    EXPECT_EQ(again.results.at(0).final_per_seed, first.results.at(0).final_per_seed);
  }
  EXPECT_TRUE(omkl::run_study(c, data).results.at(0).reused);  // rewritten whole by the rerun
}

TEST_F(StudyTest, MetricNameFollowsTheTask) {
  const Dataset reg = omkl::test::random_stream(200, kFeatures, Task::Regression);
  const Dataset cls = omkl::test::random_stream(200, kFeatures, Task::Classification);
  const StudyConfig c = config({"raker:D=8"}, 1);
  EXPECT_EQ(omkl::run_study(c, reg).results.at(0).metric, "mse");
  const StudyResult r = omkl::run_study(c, cls);
  EXPECT_EQ(r.results.at(0).metric, "error_rate");
  EXPECT_GE(r.results[0].final_mean, 0.0);
  EXPECT_LE(r.results[0].final_mean, 1.0) << "error_rate is a fraction, not a percentage";
}

// The study's number is the real metric: the mean over seeds of what a Learner built with
// (base seed, replicate r) achieves on the stream.
TEST_F(StudyTest, FinalMeanEqualsDirectLearnerRuns) {
  for (const Task task : {Task::Regression, Task::Classification}) {
    const Dataset data = omkl::test::random_stream(kSamples, kFeatures, task);
    for (const std::string algo : {"raker:D=8", "adaraker:D=8"}) {
      const std::size_t seeds = 3;
      const StudyResult result = omkl::run_study(config({algo}, seeds), data);
      const AlgorithmResult& r = result.results.at(0);
      ASSERT_EQ(r.final_per_seed.size(), seeds);
      std::vector<double> finals;
      std::vector<std::vector<double>> predictions;
      for (std::size_t s = 0; s < seeds; ++s) {
        const std::vector<double> p = learner_predictions(algo, data, Profile::Paper, s);
        predictions.push_back(p);
        double total = 0.0;
        for (std::size_t t = 0; t < data.n_samples; ++t) {
          const double y = data.y[t];
          total += task == Task::Regression ? (y - p[t]) * (y - p[t]) : (y * p[t] < 0.0 ? 1.0 : 0.0);
        }
        finals.push_back(total / static_cast<double>(data.n_samples));
        EXPECT_DOUBLE_EQ(r.final_per_seed[s], finals.back()) << algo << " seed " << s;
      }
      EXPECT_DOUBLE_EQ(r.final_mean, mean_of(finals)) << algo;
      EXPECT_EQ(r.diverged, 0u);
      // Replicates draw different random features (error rates may tie, predictions may not).
      EXPECT_NE(predictions[0], predictions[1]) << algo;
      if (task == Task::Regression) EXPECT_NE(finals[0], finals[1]) << algo;
    }
  }
}

TEST_F(StudyTest, ADivergedRunIsCountedAndExcludedWithoutStoppingTheStudy) {
  // spec/raker.md §7.2: a run whose predictions stop being finite is recorded as diverged,
  // excluded from the mean, and the study goes on with the other cells.
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyResult result;
  ASSERT_NO_THROW(result = omkl::run_study(config({"raker:D=4,eta=1e100", "raker:D=4"}, 2), data));
  ASSERT_EQ(result.results.size(), 2u);
  const AlgorithmResult& wild = result.results[0];
  EXPECT_EQ(wild.diverged, 2u);
  ASSERT_EQ(wild.final_per_seed.size(), 2u);
  for (double v : wild.final_per_seed) EXPECT_TRUE(std::isnan(v));
  const AlgorithmResult& tame = result.results[1];
  EXPECT_EQ(tame.diverged, 0u);
  EXPECT_TRUE(std::isfinite(tame.final_mean));
  for (double v : tame.final_per_seed) EXPECT_TRUE(std::isfinite(v));
}

TEST_F(StudyTest, CurvesCsvEndsAtTheFinalMean) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=8", "adaraker:D=8"}, 2);
  c.out_dir = (dir_ / "out").string();
  const StudyResult result = omkl::run_study(c, data);

  std::ifstream in(dir_ / "out" / "curves.csv");
  ASSERT_TRUE(in) << "curves.csv missing";
  std::string header;
  ASSERT_TRUE(std::getline(in, header));
  const std::vector<std::string> columns = split(header, ',');
  std::size_t algo_col = columns.size(), t_col = columns.size(), mean_col = columns.size(),
              std_col = columns.size();
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == "algo") algo_col = i;
    if (columns[i] == "t") t_col = i;
    if (columns[i] == "mean") mean_col = i;
    if (columns[i] == "std") std_col = i;
  }
  ASSERT_LT(algo_col, columns.size()) << header;
  ASSERT_LT(t_col, columns.size()) << header;
  ASSERT_LT(mean_col, columns.size()) << header;
  ASSERT_LT(std_col, columns.size()) << header;

  // Last row per algorithm, in file order.
  std::vector<std::string> algos;
  std::vector<std::vector<std::string>> last;
  std::size_t rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    ++rows;
    const auto cells = split(line, ',');
    ASSERT_EQ(cells.size(), columns.size()) << line;
    if (algos.empty() || algos.back() != cells[algo_col]) {
      algos.push_back(cells[algo_col]);
      last.emplace_back();
    }
    last.back() = cells;
  }
  ASSERT_EQ(algos.size(), 2u);
  EXPECT_EQ(algos[0], "raker");
  EXPECT_EQ(algos[1], "adaraker");
  EXPECT_EQ(rows, 2 * result.results[0].curve_t.size());
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(std::stoull(last[i][t_col]), kSamples) << "the curve ends at t = T";
    EXPECT_EQ(std::strtod(last[i][mean_col].c_str(), nullptr), result.results[i].final_mean)
        << algos[i];
    EXPECT_EQ(std::strtod(last[i][std_col].c_str(), nullptr), result.results[i].final_std)
        << algos[i];
  }
}

TEST_F(StudyTest, TheSpreadAcrossSeedsIsSampleOrPopulationAsAsked) {
  // final_std and the curves' std from the seeds' finals: √(Σ(x − x̄)²/(n − 1)) by default and
  // without a preset (R's sd, the bandit paper's tables), √(Σ(x − x̄)²/n) with Spread::Population
  // or a preset whose paper reports it (the graph journal's, POF-MKL's); summary.json says which,
  // and a cached cell of the one is not reused for the other.
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=8"}, 3);
  c.out_dir = (dir_ / "out").string();
  const StudyResult sample = omkl::run_study(c, data);
  StudyConfig population_config = c;
  population_config.spread = omkl::Spread::Population;
  const StudyResult population = omkl::run_study(population_config, data);
  EXPECT_EQ(sample.spread, "sample");
  EXPECT_EQ(population.spread, "population");
  EXPECT_FALSE(population.results[0].reused);
  const std::vector<double>& finals = sample.results[0].final_per_seed;
  ASSERT_EQ(finals, population.results[0].final_per_seed);
  const double mean = mean_of(finals);
  double squares = 0.0;
  for (double x : finals) squares += (x - mean) * (x - mean);
  ASSERT_GT(squares, 0.0);
  EXPECT_NEAR(sample.results[0].final_std, std::sqrt(squares / 2.0), 1e-15);
  EXPECT_NEAR(population.results[0].final_std, std::sqrt(squares / 3.0), 1e-15);
  EXPECT_EQ(population.results[0].curve_std.back(), population.results[0].final_std);
  EXPECT_EQ(sample.results[0].curve_std.back(), sample.results[0].final_std);
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("std"), "population");
  // The presets: the graph journal's and POF-MKL's population, the bandit paper's sample.
  EXPECT_EQ(omkl::find_preset("jmlr23-graph").spread, omkl::Spread::Population);
  EXPECT_EQ(omkl::find_preset("fed-pofmkl").spread, omkl::Spread::Population);
  EXPECT_EQ(omkl::find_preset("bandit-oks").spread, omkl::Spread::Sample);
  StudyConfig graph = config({"raker:D=8"}, 3);
  graph.preset = "jmlr23-graph";
  graph.defaults = {{"dict", "gauss:1+gauss:2"}};  // over the preset's 76 kernels: a small study
  EXPECT_EQ(omkl::run_study(graph, data).spread, "population");
  graph.spread = omkl::Spread::Sample;
  EXPECT_EQ(omkl::run_study(graph, data).spread, "sample");
  EXPECT_THROW(omkl::parse_spread("ddof"), omkl::ConfigError);
}

TEST_F(StudyTest, ResultsDoNotDependOnThreadsOrRuns) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig one = config({"raker:D=8", "adaraker:D=8"}, 3);
  one.threads = 1;
  StudyConfig two = one;
  two.threads = 2;
  const StudyResult a = omkl::run_study(one, data);
  const StudyResult b = omkl::run_study(two, data);
  const StudyResult c = omkl::run_study(two, data);
  expect_same_numbers(a, b);
  expect_same_numbers(b, c);
}

TEST_F(StudyTest, RerunReusesCellsAndAChangedConfigurationDoesNot) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=8", "rf-ogd:D=8"}, 2);
  c.out_dir = (dir_ / "out").string();
  const StudyResult first = omkl::run_study(c, data);
  for (const auto& r : first.results) EXPECT_FALSE(r.reused) << r.spec;

  const StudyResult second = omkl::run_study(c, data);
  for (const auto& r : second.results) EXPECT_TRUE(r.reused) << r.spec;
  expect_same_numbers(first, second);
  EXPECT_TRUE(fs::exists(dir_ / "out" / "summary.json"));
  EXPECT_TRUE(fs::exists(dir_ / "out" / "curves.csv"));

  StudyConfig more_seeds = c;
  more_seeds.n_seeds = 3;
  const StudyResult third = omkl::run_study(more_seeds, data);
  for (const auto& r : third.results) {
    EXPECT_FALSE(r.reused) << r.spec;
    EXPECT_EQ(r.seeds, 3u);
    EXPECT_EQ(r.final_per_seed.size(), 3u);
  }
  // Replicates 0 and 1 are the same draws in both configurations.
  EXPECT_EQ(third.results[0].final_per_seed[0], first.results[0].final_per_seed[0]);
  EXPECT_EQ(third.results[0].final_per_seed[1], first.results[0].final_per_seed[1]);

  StudyConfig other_seed = c;
  other_seed.base_seed = kBaseSeed + 1;
  const StudyResult fourth = omkl::run_study(other_seed, data);
  for (const auto& r : fourth.results) EXPECT_FALSE(r.reused) << r.spec;
  EXPECT_NE(fourth.results[0].final_mean, first.results[0].final_mean);

  StudyConfig other_params = c;
  other_params.algorithms = {omkl::parse_algorithm_spec("raker:D=9")};
  EXPECT_FALSE(omkl::run_study(other_params, data).results.at(0).reused);

  // A different stream (same shape and name) must not reuse either.
  Dataset changed = data;
  changed.y[5] += 0.125;
  const StudyResult fifth = omkl::run_study(c, changed);
  for (const auto& r : fifth.results) EXPECT_FALSE(r.reused) << r.spec;
}

TEST_F(StudyTest, InvalidConfigurationThrowsAndWritesNothing) {
  const Dataset data = omkl::test::random_stream(100, kFeatures, Task::Regression);
  const fs::path out = dir_ / "nested" / "out";
  StudyConfig unknown_algo = config({"raker:D=8", "no-such-algorithm"}, 1);
  unknown_algo.out_dir = out.string();
  try {
    omkl::run_study(unknown_algo, data);
    ADD_FAILURE() << "no ConfigError for an unknown algorithm";
  } catch (const omkl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-algorithm"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(dir_ / "nested"));

  StudyConfig unknown_param = config({"raker:D=8", "adaraker:D=8,bogus_param=3"}, 1);
  unknown_param.out_dir = out.string();
  try {
    omkl::run_study(unknown_param, data);
    ADD_FAILURE() << "no ConfigError for an unknown parameter";
  } catch (const omkl::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bogus_param"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(out));

  StudyConfig bad_value = config({"raker:D=eight"}, 1);
  bad_value.out_dir = out.string();
  EXPECT_THROW(omkl::run_study(bad_value, data), omkl::ConfigError);
  EXPECT_FALSE(fs::exists(out));

  StudyConfig no_seeds = config({"raker:D=8"}, 0);
  no_seeds.out_dir = out.string();
  EXPECT_THROW(omkl::run_study(no_seeds, data), omkl::ConfigError);
  EXPECT_FALSE(fs::exists(out));

  StudyConfig bad_preset = config({"raker:D=8"}, 1);
  bad_preset.preset = "no-such-preset";
  bad_preset.out_dir = out.string();
  EXPECT_THROW(omkl::run_study(bad_preset, data), omkl::ConfigError);
  EXPECT_FALSE(fs::exists(out));
}

// Profile R counts the error at t = 1 as 1 (spec/raker.md §2.4, §7.3); profile P does not.
TEST_F(StudyTest, ReferenceClassificationCountsTheFirstErrorAsOne) {
  const Dataset data = omkl::test::random_stream(300, kFeatures, Task::Classification);
  const double T = static_cast<double>(data.n_samples);
  for (const std::string algo : {"raker:D=8", "adaraker:D=8"}) {
    const std::size_t seeds = 2;
    for (const Profile profile : {Profile::Reference, Profile::Paper}) {
      const StudyResult result = omkl::run_study(config({algo}, seeds, profile), data);
      const AlgorithmResult& r = result.results.at(0);
      EXPECT_EQ(r.metric, "error_rate");
      std::vector<double> finals;
      for (std::size_t s = 0; s < seeds; ++s) {
        const std::vector<double> p = learner_predictions(algo, data, profile, s);
        double mistakes_after_first = 0.0;
        for (std::size_t t = 1; t < data.n_samples; ++t)
          mistakes_after_first += data.y[t] * p[t] < 0.0 ? 1.0 : 0.0;
        const double first = profile == Profile::Reference ? 1.0 : (data.y[0] * p[0] < 0.0 ? 1.0 : 0.0);
        finals.push_back((first + mistakes_after_first) / T);
        EXPECT_DOUBLE_EQ(r.final_per_seed.at(s), finals.back())
            << algo << " " << omkl::to_string(profile) << " seed " << s;
      }
      EXPECT_DOUBLE_EQ(r.final_mean, mean_of(finals)) << algo << " " << omkl::to_string(profile);
    }
  }
}

}  // namespace

// step_path = resident through a whole study (the runner hands the algorithms blocks of
// samples): every replicate's final metric and curve equal the host path's within rounding,
// for a graph-aided, a bandit and a federated algorithm.
// A shuffled study in lockstep (the GPU's schedule, here on the CPU): the resident paths take
// every replicate's own permutation in one algorithm, the others fall back to one replicate per
// task; every seed's numbers are those of the study that runs each replicate alone.
// The same with the stream in its own order: host-only algorithms (the kernelized bandit, the
// bandit host path) still run one replicate per task beside the lockstep cells.
TEST_F(StudyTest, ShuffledReplicatesInLockstepEqualSeparateRuns) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  for (bool shuffle : {true, false}) {
    StudyConfig c = config({"rf-oks++:D=8,dict=gauss:0.5+gauss:1+gauss:2,step_path=resident",
                            "omkl-sfg-r:D=8,M=3,switch_step=150,step_path=resident",
                            "rf-ioks:D=8,dict=gauss:0.5+gauss:1+gauss:2,step_path=host", "raker:D=4",
                            "oks++:dict=gauss:0.5+gauss:2", "ioks:dict=gauss:0.5+lap:2,step_path=resident"},
                           3);
    c.shuffle = shuffle;
    const StudyResult separate = omkl::run_study(c, data);
    c.lockstep_on_cpu = true;
    const StudyResult lockstep = omkl::run_study(c, data);
    ASSERT_EQ(separate.results.size(), lockstep.results.size());
    for (std::size_t a = 0; a < separate.results.size(); ++a) {
      const AlgorithmResult& x = separate.results[a];
      const AlgorithmResult& y = lockstep.results[a];
      ASSERT_EQ(x.final_per_seed.size(), 3u);
      ASSERT_EQ(y.final_per_seed.size(), 3u);
      for (std::size_t s = 0; s < 3; ++s)
        EXPECT_EQ(omkl::test::bits(y.final_per_seed[s]), omkl::test::bits(x.final_per_seed[s]))
            << x.spec << " seed " << s << (shuffle ? " shuffled" : "");
      EXPECT_EQ(y.curve_mean, x.curve_mean) << x.spec;
      // Each replicate saw its own order, or its own random draws.
      EXPECT_NE(x.final_per_seed[0], x.final_per_seed[1]) << x.spec;
    }
  }
}

// A grid of device-resident cells in lockstep runs its cells side by side (walks_on_device():
// no host work between launches), each with all its repetitions: the same numbers as the
// study that runs every repetition alone.
TEST_F(StudyTest, ResidentCellsRunSideBySide) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  StudyConfig c = config({"oks:c_lambda=1,dict=gauss:0.5+gauss:2,step_path=resident",
                          "oks:c_lambda=5,dict=gauss:0.5+gauss:2,step_path=resident",
                          "rf-oks++:D=8,dict=gauss:0.5+gauss:1+gauss:2,step_path=resident",
                          "pof-mkl:D=6,M=2,dict=gauss2:0.5+gauss2:2+gauss2:8,step_path=resident"},
                         3);
  c.shuffle = true;
  c.algorithms.pop_back();  // federated streams are not shuffled: the last one on its own below
  const StudyResult separate = omkl::run_study(c, data);
  c.lockstep_on_cpu = true;
  const StudyResult side_by_side = omkl::run_study(c, data);
  for (std::size_t a = 0; a < separate.results.size(); ++a)
    EXPECT_EQ(side_by_side.results[a].final_per_seed, separate.results[a].final_per_seed) << separate.results[a].spec;
  Dataset federated = omkl::test::random_stream(4 * 60, kFeatures, Task::Regression);
  federated.n_clients = 4;
  StudyConfig f = config({"pof-mkl:D=6,M=2,dict=gauss2:0.5+gauss2:2+gauss2:8,step_path=resident",
                          "em-kofl:D=6,dict=gauss2:0.5+gauss2:2+gauss2:8,step_path=resident",
                          "perfedavg:width=5,step_path=resident"},
                         2);
  const StudyResult fed_separate = omkl::run_study(f, federated);
  f.lockstep_on_cpu = true;
  const StudyResult fed_side_by_side = omkl::run_study(f, federated);
  for (std::size_t a = 0; a < fed_separate.results.size(); ++a)
    EXPECT_EQ(fed_side_by_side.results[a].final_per_seed, fed_separate.results[a].final_per_seed)
        << fed_separate.results[a].spec;
}

// GPU contexts are a GPU study's: a CPU study makes none and its summary has no
// device_setup_seconds (CudaTest.StudiesReuseTheirDeviceContexts checks the GPU side).
TEST_F(StudyTest, CpuStudiesMakeNoDeviceContexts) {
  const Dataset data = omkl::test::random_stream(60, kFeatures, Task::Regression);
  StudyConfig c = config({"raker:D=4"}, 2);
  c.out_dir = (dir_ / "cpu").string();
  const StudyResult result = omkl::run_study(c, data);
  EXPECT_EQ(result.device_setup_seconds, 0.0);
  EXPECT_EQ(read_text(dir_ / "cpu" / "summary.json").find("device_setup_seconds"), std::string::npos);
  if (!omkl::detail::cuda_available()) EXPECT_EQ(omkl::make_device_contexts(), nullptr);
}

TEST_F(StudyTest, ResidentStepPathGivesTheHostPathsStudy) {
  const Dataset data = omkl::test::random_stream(kSamples, kFeatures, Task::Regression);
  Dataset federated = omkl::test::random_stream(4 * 60, kFeatures, Task::Regression);
  federated.n_clients = 4;
  const std::vector<std::pair<const Dataset*, std::string>> cases = {
      {&data, "omkl-sfg-r:D=8,M=3,switch_step=150"},
      {&data, "rf-oks++:D=8,dict=gauss:0.5+gauss:1+gauss:2"},
      {&federated, "pof-mkl:D=6,M=2,dict=gauss2:0.5+gauss2:2+gauss2:8"}};
  for (const auto& [stream, algo] : cases) {
    const StudyResult host = omkl::run_study(config({algo + ",step_path=host"}, 3), *stream);
    const StudyResult resident = omkl::run_study(config({algo + ",step_path=resident"}, 3), *stream);
    const AlgorithmResult& x = host.results.at(0);
    const AlgorithmResult& y = resident.results.at(0);
    ASSERT_EQ(x.final_per_seed.size(), y.final_per_seed.size());
    for (std::size_t i = 0; i < x.final_per_seed.size(); ++i)
      EXPECT_NEAR(y.final_per_seed[i], x.final_per_seed[i], 1e-10 * std::max(1.0, std::fabs(x.final_per_seed[i])))
          << algo;
    ASSERT_EQ(x.curve_mean.size(), y.curve_mean.size());
    for (std::size_t i = 0; i < x.curve_mean.size(); ++i)
      EXPECT_NEAR(y.curve_mean[i], x.curve_mean[i], 1e-10 * std::max(1.0, std::fabs(x.curve_mean[i]))) << algo;
  }
}

// A Dataset filled by hand is checked before any work: its x and y must hold n_samples ×
// n_features and n_samples values (else the study would read past them), and its numbers must be
// finite (InputError, as Learner refuses such samples; not replicates counted as "diverged").
// A stream without a name is called "<dataset>".
TEST_F(StudyTest, AStreamOfTheWrongShapeOrWithNonFiniteNumbersIsRefused) {
  using omkl::test::message_of;
  const StudyConfig cfg = config({"raker:D=8"}, 1);
  const auto refusal = [&](const Dataset& data) {
    return message_of<omkl::InputError>([&] { omkl::run_study(cfg, data); });
  };
  Dataset ragged;
  ragged.n_samples = 10;
  ragged.n_features = 3;
  ragged.x.assign(5, 0.0);
  ragged.y.assign(10, 0.0);
  EXPECT_NE(refusal(ragged).find("<dataset>: x holds 5 values and y 10 for 10 samples of 3 features"),
            std::string::npos)
      << refusal(ragged);
  Dataset short_y = omkl::test::random_stream(50, 2, Task::Regression);
  short_y.name = "s";
  short_y.y.resize(3);
  EXPECT_NE(refusal(short_y).find("s: x holds 100 values and y 3"), std::string::npos) << refusal(short_y);
  Dataset nan_x = omkl::test::random_stream(50, 2, Task::Regression);
  nan_x.name = "n";
  nan_x.x[7] = NAN;
  EXPECT_NE(refusal(nan_x).find("n: sample 4, feature 2 is nan"), std::string::npos) << refusal(nan_x);
  Dataset inf_y = omkl::test::random_stream(50, 2, Task::Regression);
  inf_y.y[9] = INFINITY;
  EXPECT_NE(refusal(inf_y).find("sample 10: target inf is not finite"), std::string::npos) << refusal(inf_y);
  EXPECT_EQ(refusal(Dataset{}), "<dataset>: empty stream");
}

// One configuration given twice is refused before any work, also where the two differ only by a
// default written out or by the order of their parameters; a different value of any parameter,
// or another algorithm with the same parameters, is a configuration of its own.
TEST_F(StudyTest, AConfigurationGivenTwiceIsRefusedByItsParametersAsBuilt) {
  using omkl::test::message_of;
  const Dataset data = omkl::test::random_stream(40, kFeatures, Task::Regression);
  const auto refusal = [&](const std::vector<std::string>& algos) {
    return message_of<ConfigError>([&] { omkl::run_study(config(algos, 1), data); });
  };
  const std::string defaults = refusal({"raker:D=8", "raker:D=8,lambda=0.01"});
  EXPECT_NE(defaults.find("'raker:D=8' and 'raker:D=8,lambda=0.01' are one configuration"), std::string::npos)
      << defaults;
  EXPECT_NE(refusal({"raker:D=8,eta=0.1", "raker:eta=1e-1,D=08"}).find("are one configuration"), std::string::npos);
  EXPECT_NO_THROW(omkl::run_study(config({"raker:D=8", "raker:D=8,lambda=0.001", "adaraker:D=8"}, 1), data));
}

// An out_dir the study could not write to (under a file, its cell cache a file) is refused
// before anything is computed, with a ConfigError naming it; write_study_outputs() refuses one
// the same way, and a folder that cannot be made is an omkl error, not a std::filesystem one.
TEST_F(StudyTest, AnOutputFolderThatCannotBeWrittenIsRefusedBeforeTheStudyRuns) {
  using omkl::test::message_of;
  const Dataset data = omkl::test::random_stream(60, kFeatures, Task::Regression);
  std::ofstream(dir_ / "file") << "not a folder";
  StudyConfig under_a_file = config({"raker:D=8"}, 1);
  under_a_file.out_dir = (dir_ / "file" / "sub").string();
  std::size_t replicates_run = 0;
  under_a_file.progress = [&](std::size_t, std::size_t) { ++replicates_run; };
  std::string message = message_of<omkl::ConfigError>([&] { omkl::run_study(under_a_file, data); });
  EXPECT_NE(message.find("out_dir (--out) " + under_a_file.out_dir + ": " + (dir_ / "file").string() +
                         " is not a folder"),
            std::string::npos)
      << message;
  EXPECT_EQ(replicates_run, 0u) << "refused before the study ran";
  fs::create_directories(dir_ / "o1");
  std::ofstream(dir_ / "o1" / "cells") << "not a folder";
  StudyConfig cells_a_file = under_a_file;
  cells_a_file.out_dir = (dir_ / "o1").string();
  message = message_of<omkl::ConfigError>([&] { omkl::run_study(cells_a_file, data); });
  EXPECT_NE(message.find("cells: is a file, not a folder"), std::string::npos) << message;
  EXPECT_EQ(replicates_run, 0u);
  EXPECT_FALSE(fs::exists(dir_ / "o1" / "summary.json"));
  // write_study_outputs alone.
  const StudyResult result = omkl::run_study(config({"raker:D=8"}, 1), data);
  message = message_of<omkl::ConfigError>(
      [&] { omkl::write_study_outputs(result, (dir_ / "file" / "x").string()); });
  EXPECT_NE(message.find((dir_ / "file").string() + " is not a folder"), std::string::npos) << message;
  message = message_of<omkl::InputError>([&] { omkl::detail::create_folders((dir_ / "file" / "x").string()); });
  EXPECT_NE(message.find("cannot create the folder"), std::string::npos) << message;
}

// The library's messages name the setting for both audiences: the C++/Python name and the
// command line's option.
TEST_F(StudyTest, ConfigurationErrorsNameTheSettingAndItsOption) {
  using omkl::test::message_of;
  const Dataset data = omkl::test::random_stream(60, kFeatures, Task::Regression);
  std::string message = message_of<omkl::ConfigError>([&] { omkl::run_study(config({"raker:D=8"}, 0), data); });
  EXPECT_NE(message.find("n_seeds (--seeds) must be at least 1"), std::string::npos) << message;
  message = message_of<omkl::ConfigError>([&] { omkl::run_study(config({}, 1), data); });
  EXPECT_NE(message.find("no algorithm given (algorithms, --algo)"), std::string::npos) << message;
  StudyConfig error_rate = config({"raker:D=8"}, 1);
  error_rate.metric = "error_rate";
  message = message_of<omkl::ConfigError>([&] { omkl::run_study(error_rate, data); });
  EXPECT_NE(message.find("--labels pm1, labels=\"pm1\" in Python, map_labels_to_pm1() in C++"), std::string::npos)
      << message;
  if (!OMKL_WITH_CUDA) {
    StudyConfig cuda = config({"raker:D=8"}, 1);
    cuda.backend = omkl::BackendKind::Cuda;
    message = message_of<omkl::Error>([&] { omkl::run_study(cuda, data); });
    EXPECT_NE(message.find("backend cuda (BackendKind::Cuda, --backend cuda): this omkl build has no CUDA backend"),
              std::string::npos)
        << message;
  }
}

// StudyConfig's seed count is the command line's and Python's when no preset says otherwise.
TEST(StudyDefaultsTest, TheDefaultSeedCountIsTheFrontEnds) {
  EXPECT_EQ(StudyConfig{}.n_seeds, omkl::default_seeds(""));
}
