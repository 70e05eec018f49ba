// The graph journal's regret (spec/graph-aided.md §4.5): the batch kernel-ridge comparator in
// closed form, the regulariser term of the graph-aided family, and `StudyConfig::regret` against
// a direct computation.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/test_helpers.h"
#include "families/graph_aided/graph_aided.h"
#include "omkl/error.h"
#include "omkl/study.h"
#include "study/regret.h"
#include "study/scoring.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;

namespace {

Dataset two_points(double x0, double x1, double y0, double y1) {
  Dataset d;
  d.name = "two";
  d.n_samples = 2;
  d.n_features = 1;
  d.task = Task::Regression;
  d.x = {x0, x1};
  d.y = {y0, y1};
  return d;
}

// In-sample residuals of (K + λI)α = y for K = [[1, k], [k, 1]], solved by hand.
std::vector<double> two_point_residuals(double k, double lambda, double y0, double y1) {
  const double a = 1 + lambda, det = a * a - k * k;
  const double alpha0 = (a * y0 - k * y1) / det, alpha1 = (a * y1 - k * y0) / det;
  const double f0 = alpha0 + k * alpha1, f1 = k * alpha0 + alpha1;
  return {(f0 - y0) * (f0 - y0), (f1 - y1) * (f1 - y1)};
}

}  // namespace

TEST(RegretTest, KernelRidgeMatchesTheTwoPointClosedForm) {
  const Dataset data = two_points(0.1, 0.4, 0.3, 0.8);
  const double lambda = 1e-3;
  // A Gaussian entry with σ² = 2 is scored as exp(−2·δ²) (γ read as an inverse scale).
  const RegretBenchmark g = batch_kernel_ridge(data, {KernelSpec::gaussian_sigma2(2.0)}, lambda);
  const auto expected_g = two_point_residuals(std::exp(-2.0 * 0.09), lambda, 0.3, 0.8);
  ASSERT_EQ(g.residual2.size(), 2u);
  for (int t = 0; t < 2; ++t) EXPECT_NEAR(g.residual2[t], expected_g[t], 1e-15);
  // A Laplacian entry with σ = 3 is exp(−3·|δ|).
  const RegretBenchmark l = batch_kernel_ridge(data, {KernelSpec::laplacian(3.0)}, lambda);
  const auto expected_l = two_point_residuals(std::exp(-3.0 * 0.3), lambda, 0.3, 0.8);
  for (int t = 0; t < 2; ++t) EXPECT_NEAR(l.residual2[t], expected_l[t], 1e-15);
  // Both together: the one with the smaller total wins.
  const bool gaussian_better = expected_g[0] + expected_g[1] < expected_l[0] + expected_l[1];
  const RegretBenchmark both =
      batch_kernel_ridge(data, {KernelSpec::gaussian_sigma2(2.0), KernelSpec::laplacian(3.0)}, lambda);
  EXPECT_EQ(both.kernel, gaussian_better ? KernelSpec::gaussian_sigma2(2.0).name() : KernelSpec::laplacian(3.0).name());
}

TEST(RegretTest, ComparatorRejectsWhatItCannotFit) {
  Dataset data = random_stream(20, 2, Task::Classification);
  EXPECT_THROW(batch_kernel_ridge(data, parse_dictionary("jmlr23-76"), 1e-3), ConfigError);
  data = random_stream(20, 2, Task::Regression);
  EXPECT_THROW(batch_kernel_ridge(data, {KernelSpec::cauchy(1.0)}, 1e-3), ConfigError);
  EXPECT_THROW(batch_kernel_ridge(data, {KernelSpec::gaussian(1.0)}, 0.0), ConfigError);
  Dataset big = random_stream(kRegretMaxSamples + 1, 1, Task::Regression);
  try {
    batch_kernel_ridge(big, {KernelSpec::gaussian(1.0)}, 1e-3);
    ADD_FAILURE() << "no error for a stream past the limit";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("O(T³)"), std::string::npos);
  }
}

TEST(RegretTest, RegularizerIsLambdaTimesTheWeightedThetaNorm) {
  const Dataset data = random_stream(40, 3, Task::Regression);
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    auto algo = make(name, context_for(data, Profile::Reference, {0, 1}),
                     {{"D", "5"}, {"M", "4"}, {"lambda", "0.01"}});
    EXPECT_EQ(algo->regret_regularizer(0), 0.0) << name;  // θ = 0 before any step
    std::vector<double> pred(2);
    for (std::size_t t = 0; t < data.n_samples; ++t) algo->step(data.row(t), data.y[t], pred.data());
    for (std::size_t r = 0; r < 2; ++r) {
      const auto log_w = graph_aided_log_kernel_weights(*algo, r);
      std::vector<double> sum(10, 0.0);
      for (std::size_t k = 0; k < log_w.size(); ++k) {
        const auto theta = graph_aided_theta(*algo, r, k);
        for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += std::exp(log_w[k]) * theta[i];
      }
      double norm2 = 0.0;
      for (double v : sum) norm2 += v * v;
      EXPECT_NEAR(algo->regret_regularizer(r), 0.01 * norm2, 1e-12 * (1 + norm2)) << name;
      EXPECT_GT(norm2, 0.0);
    }
  }
  auto raker = make("raker", context_for(data), {{"D", "5"}});
  EXPECT_TRUE(std::isnan(raker->regret_regularizer(0)));
}

class RegretStudyTest : public omkl::test::TempDirTest {};

TEST_F(RegretStudyTest, StudyRegretEqualsADirectComputation) {
  const Dataset data = random_stream(60, 3, Task::Regression, 4);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("omkl-sfg:D=5,M=4")};
  config.n_seeds = 2;
  config.base_seed = 9;
  config.regret = true;
  config.curve_points = 7;
  config.out_dir = (dir_ / "out").string();
  const StudyResult result = run_study(config, data);
  const RegretBenchmark benchmark = batch_kernel_ridge(data, parse_dictionary("jmlr23-76"), 1e-3);
  EXPECT_EQ(result.regret_benchmark, benchmark.kernel);
  // The same learners, stepped here: Σ_t (ŷ_t − y_t)² − m_t + λ‖Σ_k w_k θ_k‖².
  std::vector<double> finals;
  for (std::uint64_t r = 0; r < 2; ++r) {
    auto algo = make("omkl-sfg", context_for(data, Profile::Paper, {r}, 9), {{"D", "5"}, {"M", "4"}});
    double regret = 0.0, pred = 0.0;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      algo->step(data.row(t), data.y[t], &pred);
      regret += (pred - data.y[t]) * (pred - data.y[t]) - benchmark.residual2[t] + algo->regret_regularizer(0);
    }
    finals.push_back(regret);
  }
  const AlgorithmResult& a = result.results.at(0);
  ASSERT_EQ(a.regret_mean.size(), a.curve_t.size());
  ASSERT_EQ(a.curve_t.back(), data.n_samples);
  EXPECT_NEAR(a.regret_mean.back(), 0.5 * (finals[0] + finals[1]), 1e-9 * (1 + std::fabs(finals[0])));
  // regret.csv next to curves.csv, one row per curve point.
  std::ifstream csv(dir_ / "out" / "regret.csv");
  ASSERT_TRUE(csv.good());
  std::string line;
  std::size_t rows = 0;
  std::getline(csv, line);
  EXPECT_EQ(line, "algo,spec,benchmark,t,mean,std");
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, a.curve_t.size());
  // A rerun reuses the cell, regret included.
  const StudyResult again = run_study(config, data);
  EXPECT_TRUE(again.results.at(0).reused);
  EXPECT_EQ(again.results.at(0).regret_mean, a.regret_mean);
}

// With a shuffled stream, each replicate's regret reads the comparator's residual m_t at the
// row it saw at step t (its own order), along the whole curve; in lockstep (the GPU's schedule)
// the same.
TEST_F(RegretStudyTest, ShuffledRegretFollowsEachReplicatesOrder) {
  const Dataset data = random_stream(60, 3, Task::Regression, 4);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("omkl-sfg:D=5,M=4,step_path=resident")};
  config.n_seeds = 2;
  config.base_seed = 9;
  config.regret = true;
  config.shuffle = true;
  config.curve_points = 6;
  const StudyResult result = run_study(config, data);
  const RegretBenchmark benchmark = batch_kernel_ridge(data, parse_dictionary("jmlr23-76"), 1e-3);
  const AlgorithmResult& a = result.results.at(0);
  std::vector<double> mean(a.curve_t.size(), 0.0);
  for (std::uint64_t r = 0; r < 2; ++r) {
    const std::vector<std::size_t> order = stream_order(data.n_samples, 9, r);
    auto algo = make("omkl-sfg", context_for(data, Profile::Paper, {r}, 9), {{"D", "5"}, {"M", "4"}});
    double regret = 0.0, pred = 0.0;
    std::size_t point = 0;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      const std::size_t row = order[t];
      algo->step(data.row(row), data.y[row], &pred);
      regret += (pred - data.y[row]) * (pred - data.y[row]) - benchmark.residual2[row] + algo->regret_regularizer(0);
      if (point < a.curve_t.size() && a.curve_t[point] == t + 1) mean[point++] += 0.5 * regret;
    }
  }
  ASSERT_EQ(a.regret_mean.size(), mean.size());
  for (std::size_t i = 0; i < mean.size(); ++i)
    EXPECT_NEAR(a.regret_mean[i], mean[i], 1e-9 * (1 + std::fabs(mean[i]))) << "point " << i;
  config.lockstep_on_cpu = true;
  const StudyResult lockstep = run_study(config, data);
  EXPECT_EQ(lockstep.results.at(0).regret_mean, a.regret_mean);
}

TEST_F(RegretStudyTest, AlgorithmsWithoutTheRegulariserAreRefused) {
  const Dataset data = random_stream(30, 2, Task::Regression);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("raker:D=4")};
  config.n_seeds = 1;
  config.regret = true;
  config.out_dir = (dir_ / "out").string();
  try {
    run_study(config, data);
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("raker"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out"));
}
