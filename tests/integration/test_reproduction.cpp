// Reproduction checks on the shared data (skipped when the files are absent): the graph journal's
// published numbers, bit-compatibly (rng = numpy_legacy, spec/graph-aided.md §1.9, §5.6,
// Appendix A item 6), and cells of the Raker, federated and bandit papers' tables within the
// specs' tolerances. The full tables are bench/reproduce_*.py's job; these are the short versions the
// test suite can afford (the graph journal's Airfoil and Concrete, T = 1503 and 1030; Naval's and
// elevators' fastest cells).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/dataset.h"
#include "omkl/error.h"
#include "omkl/study.h"

namespace {

struct Expected {
  std::string algo;
  double mse_e3;      // 10³ · MSE_T as the spec's re-run of the authors' code gives it
  int decimals = 4;   // the decimals given (2 where only the journal's printed value is known)
};

// Runs the jmlr23-graph preset, reference profile, on a shared CSV.
std::vector<omkl::AlgorithmResult> run_notebook(const std::string& file, std::size_t seeds,
                                                const std::vector<Expected>& cases) {
  omkl::Dataset data = omkl::load_csv(file);
  omkl::normalize(data, omkl::Normalization::Jmlr23);
  omkl::StudyConfig config;
  for (const Expected& c : cases) config.algorithms.push_back(omkl::parse_algorithm_spec(c.algo));
  config.n_seeds = seeds;
  config.base_seed = 0;  // np.random.seed(0)
  config.profile = omkl::Profile::Reference;
  config.preset = "jmlr23-graph";
  return omkl::run_study(config, data).results;
}

void expect_printed_digits(const std::vector<omkl::AlgorithmResult>& results, const std::vector<Expected>& cases) {
  ASSERT_EQ(results.size(), cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    // §5.6 asks, with numpy_legacy, float64 and the reference profile, |ours − published| ≤ 0.01
    // (in units of 10⁻³). Ours round to every decimal given: within half a unit of the last
    // (measured 2026-12-02: at most 4.7e−5 from the four-decimal values).
    const double half_unit = 0.5 * std::pow(10.0, -cases[i].decimals);
    EXPECT_NEAR(results[i].final_mean * 1e3, cases[i].mse_e3, half_unit + 1e-9) << cases[i].algo;
  }
}

std::string airfoil() { return std::string(OMKL_SHARED_DATA_DIR) + "/airfoil.csv"; }

TEST(ReproductionTest, GraphJournalAirfoilRepetitionZero) {
  if (!std::ifstream(airfoil()).good()) GTEST_SKIP() << airfoil() << " not found";
  // Appendix A item 6: repetition 0 only (seed 0); each run starts at its place in the stream.
  const std::vector<Expected> cases = {
      {"omkl-gf:rng=numpy_legacy,M=1", 46.1425},     {"omkl-gf:rng=numpy_legacy,M=5", 23.1708},
      {"omkl-gf:rng=numpy_legacy,M=10", 26.8472},    {"omkl-gf:rng=numpy_legacy,M=15", 25.9813},
      {"omkl-gf:rng=numpy_legacy,M=20", 27.0463},    {"omkl-sfg:rng=numpy_legacy,M=1", 50.5726},
      {"omkl-sfg:rng=numpy_legacy,M=5", 33.3562},    {"omkl-sfg:rng=numpy_legacy,M=10", 32.0994},
      {"omkl-sfg:rng=numpy_legacy,M=15", 31.5556},   {"omkl-sfg:rng=numpy_legacy,M=20", 30.6477},
      {"omkl-sfg-r:rng=numpy_legacy,M=1", 107.6928}, {"omkl-sfg-r:rng=numpy_legacy,M=5", 37.8804},
      {"omkl-sfg-r:rng=numpy_legacy,M=10", 33.5525}, {"omkl-sfg-r:rng=numpy_legacy,M=15", 32.0717},
      {"omkl-sfg-r:rng=numpy_legacy,M=20", 30.9993}, {"raker:rng=numpy_legacy", 28.6180},
      {"rfomkr:rng=numpy_legacy", 350.3935}};
  expect_printed_digits(run_notebook(airfoil(), 1, cases), cases);
}

// Tables 1 and 3–5 of one dataset, R = 20: OMKL-GF / SFG / SFG-R at M = 1, 5, 10, 15, 20, then
// Raker and RFOMKR, each with rng = numpy_legacy; `values` in that order (17 numbers).
std::vector<Expected> journal_table_cases(const std::vector<double>& values) {
  std::vector<Expected> cases;
  for (const char* algo : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"})
    for (const char* m : {"1", "5", "10", "15", "20"})
      cases.push_back({std::string(algo) + ":rng=numpy_legacy,M=" + m, 0.0});
  cases.push_back({"raker:rng=numpy_legacy", 0.0});
  cases.push_back({"rfomkr:rng=numpy_legacy", 0.0});
  EXPECT_EQ(values.size(), cases.size());
  for (std::size_t i = 0; i < cases.size() && i < values.size(); ++i) cases[i].mse_e3 = values[i];
  return cases;
}

TEST(ReproductionTest, GraphJournalAirfoilTwentyRepetitions) {
  if (!std::ifstream(airfoil()).good()) GTEST_SKIP() << airfoil() << " not found";
  // §5.6: Tables 1 and 3–5 on Airfoil, R = 20, as the spec's re-run of the authors' code gives
  // them to four decimals (printed: Table 1's M = 10 column 25.73 / 32.49 / 33.99, Raker 28.64,
  // RFOMKR 350.52, §10 A-16; Tables 3–5 to two decimals).
  const std::vector<Expected> cases = journal_table_cases({49.5310, 24.9483, 25.7359, 26.4725, 26.9118,     // GF
                                                           51.0349, 33.4943, 32.4863, 31.8218, 30.8932,     // SFG
                                                           106.6621, 38.0270, 33.9900, 32.4258, 31.2135,    // SFG-R
                                                           28.6416, 350.4640});
  expect_printed_digits(run_notebook(airfoil(), 20, cases), cases);
}

TEST(ReproductionTest, GraphJournalAirfoilCounterRngWithinTheSpecsGate) {
  if (!std::ifstream(airfoil()).good()) GTEST_SKIP() << airfoil() << " not found";
  // §5.6 for the library's own random streams (rng = counter, the default and the GPU's): accept
  // |ours − published| ≤ max(3·s/√R·√2, 2 % of published), s the per-repetition std of our run,
  // 10 % for the heavy-tailed M = 1. Airfoil, R = 20, Tables 1 and 3–5 at M = 1 and 10, and Raker
  // (measured 25.61 / 32.46 / 33.84, 50.69 / 51.30 / 106.09 and 28.65).
  struct Published {
    std::string algo;
    double value;
    bool heavy_tailed;
  };
  const std::vector<Published> table = {{"omkl-gf:M=10", 25.73, false},    {"omkl-sfg:M=10", 32.49, false},
                                        {"omkl-sfg-r:M=10", 33.99, false},  {"omkl-gf:M=1", 49.53, true},
                                        {"omkl-sfg:M=1", 51.03, true},      {"omkl-sfg-r:M=1", 106.66, true},
                                        {"raker", 28.64, false}};
  std::vector<Expected> cases;
  for (const Published& p : table) cases.push_back({p.algo, p.value});
  const auto results = run_notebook(airfoil(), 20, cases);
  ASSERT_EQ(results.size(), table.size());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const double ours = results[i].final_mean * 1e3, s = results[i].final_std * 1e3;
    const double gate = table[i].heavy_tailed ? 0.10 * table[i].value
                                              : std::max(3.0 * s / std::sqrt(20.0) * std::sqrt(2.0), 0.02 * table[i].value);
    EXPECT_NEAR(ours, table[i].value, gate) << table[i].algo << " (std " << s << ")";
  }
}

TEST(ReproductionTest, GraphJournalConcreteTwentyRepetitions) {
  const std::string concrete = std::string(OMKL_SHARED_DATA_DIR) + "/concrete.csv";
  if (!std::ifstream(concrete).good()) GTEST_SKIP() << concrete << " not found";
  // §5.6 on Concrete, R = 20. OMKL-GF at M = 1 is 79.2477 in the spec's re-run of the authors'
  // unmodified code, as here; Table 3 prints 79.27 (bench/RESULTS.md, the bit-compatible block).
  const std::vector<Expected> cases = journal_table_cases({79.2477, 34.5801, 34.4519, 34.0455, 33.8365,     // GF
                                                           79.6030, 48.0359, 37.7472, 33.8285, 32.5900,     // SFG
                                                           110.0837, 50.9580, 38.5830, 34.3229, 32.8477,    // SFG-R
                                                           35.2277, 210.4124});
  expect_printed_digits(run_notebook(concrete, 20, cases), cases);
}

TEST(ReproductionTest, GraphJournalNavalAndBiasTableOneColumn) {
  // Table 1's M = 10 column of the graph-aided methods on the two larger streams, R = 20, from
  // the files the notebooks read (shared/data/README.md), as the spec's re-run of the authors'
  // code gives them (§5.6.1; printed 5.11 / 5.35 / 7.89 and 8.15 / 12.06 / 13.24), Bias with the
  // preset's switch at step 300 (the Bias notebook's 500 does not give the printed values). Naval
  // to three decimals: its SFG-R comes out 7.893049 against the re-run's 7.8931, 1.4e−6 from the
  // rounding boundary (the other two agree to four).
  for (const auto& [file, values, decimals] :
       {std::tuple<std::string, std::vector<double>, int>{"naval_journal.csv", {5.1135, 5.3482, 7.8931}, 3},
        std::tuple<std::string, std::vector<double>, int>{"bias_journal.csv", {8.1504, 12.0574, 13.2418}, 4}}) {
    const std::string path = std::string(OMKL_SHARED_DATA_DIR) + "/" + file;
    if (!std::ifstream(path).good()) GTEST_SKIP() << path << " not found";
    std::vector<Expected> cases;
    for (const char* algo : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"})
      cases.push_back({std::string(algo) + ":rng=numpy_legacy,M=10", values[cases.size()], decimals});
    expect_printed_digits(run_notebook(path, 20, cases), cases);
  }
}

TEST(ReproductionTest, GraphJournalDeterministicBaselines) {
  // Table 1's exact-kernel baselines, which draw nothing (one run): the spec's re-run gives
  // Airfoil RBF-1 33.1686, POLY-2 355.6746 (printed 33.17, 355.67; OMKR 32.68) and Concrete
  // RBF-1 41.7351, POLY-2 50.0601, OMKR 41.7182 (printed 41.73, 50.06, 41.72).
  const std::string concrete = std::string(OMKL_SHARED_DATA_DIR) + "/concrete.csv";
  if (!std::ifstream(airfoil()).good()) GTEST_SKIP() << airfoil() << " not found";
  if (!std::ifstream(concrete).good()) GTEST_SKIP() << concrete << " not found";
  const std::vector<Expected> on_airfoil = {{"rbf-1", 33.1686}, {"poly-2", 355.6746}, {"omkr", 32.68, 2}};
  expect_printed_digits(run_notebook(airfoil(), 1, on_airfoil), on_airfoil);
  const std::vector<Expected> on_concrete = {{"rbf-1", 41.7351}, {"poly-2", 50.0601}, {"omkr", 41.7182}};
  expect_printed_digits(run_notebook(concrete, 1, on_concrete), on_concrete);
}

std::string shared(const std::string& name) { return std::string(OMKL_SHARED_DATA_DIR) + "/" + name; }

// A study as `omkl study --preset PRESET --profile reference [--loss LOSS]` runs it.
std::vector<omkl::AlgorithmResult> run_preset(const omkl::StudySource& source, const std::vector<std::string>& algos,
                                              std::size_t seeds, const std::string& loss = "") {
  const omkl::Dataset data = omkl::load_study_data(source);
  omkl::StudyConfig config;
  for (const std::string& algo : algos) config.algorithms.push_back(omkl::parse_algorithm_spec(algo));
  config.n_seeds = seeds;
  config.profile = omkl::Profile::Reference;
  config.preset = source.preset;
  omkl::set_study_loss(config, loss);
  return omkl::run_study(config, data).results;
}

TEST(ReproductionTest, FederatedNavalBaselinesWithinTable1sTolerance) {
  // spec/federated.md §5.1 / §5.5: Table 1's Naval cells (MSE ×10⁻³) that bench/RESULTS.md
  // reproduces within ±35 % (the baselines' tolerance), with 2 of the 20 draws.
  omkl::StudySource source;
  source.path = shared("naval.csv");
  source.preset = "fed-pofmkl";
  if (!std::ifstream(source.path).good()) GTEST_SKIP() << source.path << " not found";
  const auto results = run_preset(source, {"ofskl", "ofmkl-avg"}, 2);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NEAR(results[0].final_mean * 1e3, 77.77, 0.35 * 77.77) << "OFSKL";
  EXPECT_NEAR(results[1].final_mean * 1e3, 33.25, 0.35 * 33.25) << "OFMKL-Avg";
}

TEST(ReproductionTest, FederatedLayoutsOfTheSharedFiles) {
  // spec/federated.md §4.1–4.3 and §8.6 on the files themselves: Naval i.i.d. to 23 clients × 500
  // rounds of 15 features; Air by site to 240 clients × 500 of 14 features, each client 350 rows
  // of its own site and 50 of each other; then §4.2's scaling over exactly the rows used:
  // max‖x‖ = 1 and y from 0 to 1. A federated stream is not shuffled per replicate on top.
  omkl::StudySource naval;
  naval.path = shared("naval.csv");
  naval.preset = "fed-pofmkl";
  omkl::StudySource air = naval;
  air.path = shared("beijing_air.csv");
  air.group_column = "site";
  if (!std::ifstream(naval.path).good()) GTEST_SKIP() << naval.path << " not found";
  if (!std::ifstream(air.path).good()) GTEST_SKIP() << air.path << " not found";
  struct Layout {
    const omkl::StudySource* source;
    std::size_t clients, features;
  };
  for (const Layout& layout : {Layout{&naval, 23, 15}, Layout{&air, 240, 14}}) {
    const omkl::Dataset data = omkl::load_study_data(*layout.source);
    SCOPED_TRACE(layout.source->path);
    ASSERT_EQ(data.n_clients, layout.clients);
    ASSERT_EQ(data.n_samples, layout.clients * 500);
    ASSERT_EQ(data.n_features, layout.features);
    double largest_norm = 0.0;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      double n2 = 0.0;
      for (std::size_t k = 0; k < data.n_features; ++k) n2 += data.row(t)[k] * data.row(t)[k];
      largest_norm = std::max(largest_norm, std::sqrt(n2));
    }
    EXPECT_NEAR(largest_norm, 1.0, 1e-12);
    EXPECT_EQ(*std::min_element(data.y.begin(), data.y.end()), 0.0);
    EXPECT_NEAR(*std::max_element(data.y.begin(), data.y.end()), 1.0, 1e-15);
  }
  const omkl::Dataset grouped = omkl::load_study_stream(air);
  ASSERT_EQ(grouped.groups.size(), grouped.n_samples);
  const std::size_t K = grouped.n_clients, per_site = K / 4;
  for (std::size_t k = 0; k < K; ++k) {
    std::size_t rows_of[4] = {0, 0, 0, 0};
    for (std::size_t t = 0; t < 500; ++t) ++rows_of[grouped.groups[t * K + k]];
    for (std::size_t s = 0; s < 4; ++s) ASSERT_EQ(rows_of[s], s == k / per_site ? 350u : 50u) << "client " << k << ", site " << s;
  }
  omkl::StudyConfig shuffled;
  shuffled.algorithms.push_back(omkl::parse_algorithm_spec("ofskl"));
  shuffled.n_seeds = 1;
  shuffled.shuffle = true;
  EXPECT_THROW(omkl::run_study(shuffled, omkl::load_study_data(naval)), omkl::ConfigError);
}

TEST(ReproductionTest, FederatedPofMklCellsAndRanking) {
  // spec/federated.md §5.5: Air's POF-MKL cells within ±20 % of Table 1 (M = 25: 9.34; measured
  // 9.00 over 20 draws), and on Naval the ranking that holds, OFMKL-Avg worse than POF-MKL
  // (33.39 against 24.97). Naval's POF-MKL cells themselves are a documented miss (+55 %,
  // bench/RESULTS.md: the published η_k leaves the private weights near uniform).
  omkl::StudySource air;
  air.path = shared("beijing_air.csv");
  air.preset = "fed-pofmkl";
  air.group_column = "site";
  omkl::StudySource naval;
  naval.path = shared("naval.csv");
  naval.preset = "fed-pofmkl";
  if (!std::ifstream(air.path).good()) GTEST_SKIP() << air.path << " not found";
  if (!std::ifstream(naval.path).good()) GTEST_SKIP() << naval.path << " not found";
  const auto on_air = run_preset(air, {"pof-mkl:M=25"}, 1);
  ASSERT_EQ(on_air.size(), 1u);
  EXPECT_NEAR(on_air[0].final_mean * 1e3, 9.34, 0.20 * 9.34) << "POF-MKL M = 25, Air";
  const auto on_naval = run_preset(naval, {"pof-mkl:M=1", "ofmkl-avg"}, 2);
  ASSERT_EQ(on_naval.size(), 2u);
  EXPECT_LT(on_naval[0].final_mean, on_naval[1].final_mean) << "Naval: POF-MKL (M = 1) against OFMKL-Avg";
}

TEST(ReproductionTest, BanditElevatorsTablesWithinTheTolerance) {
  // spec/bandit.md §8.7 / §8.9 on elevators, the first 3 of the 10 shuffled repetitions, each cell
  // within max(3 × the paper's sd, 10 %) (the sds are small: 10 %), as bench/RESULTS.md reproduces
  // them: Table 3 (square loss, MSE), Table 4 (absolute, MAE), Tables 6 and 7 (the time budget's
  // B-D values, square and absolute). And Table 3's ranking OKS++ < OKS (c_λ = 25) < IOKS.
  omkl::StudySource source;
  source.path = shared("elevators.csv");
  source.preset = "bandit-oks";
  if (!std::ifstream(source.path).good()) GTEST_SKIP() << source.path << " not found";
  struct Cell {
    std::string algo;
    double paper;
  };
  struct Table {
    const char* name;
    const char* loss;
    std::vector<Cell> cells;
  };
  const Table tables[] = {
      {"Table 3", "square", {{"oks++", 0.0046}, {"oks:c_lambda=25", 0.0068}, {"ioks", 0.0077}}},
      {"Table 4", "absolute", {{"oks:c_lambda=5", 0.0507}, {"ioks", 0.0492}}},
      {"Table 6", "square",
       {{"rf-oks++:D=400", 0.0051}, {"rf-ioks:D=380", 0.0089}, {"rf-oks:D=450,c_lambda=25", 0.0072}, {"lkmbooks:B=220", 0.0090}}},
      {"Table 7", "absolute", {{"rf-ioks:D=400", 0.0515}, {"rf-oks:D=530,c_lambda=5", 0.0515}, {"lkmbooks:B=230", 0.055}}}};
  for (const Table& table : tables) {
    std::vector<std::string> algos;
    for (const Cell& c : table.cells) algos.push_back(c.algo);
    const auto results = run_preset(source, algos, 3, table.loss);
    ASSERT_EQ(results.size(), algos.size());
    for (std::size_t i = 0; i < algos.size(); ++i)
      EXPECT_NEAR(results[i].final_mean, table.cells[i].paper, 0.1 * table.cells[i].paper) << table.name << ", " << algos[i];
    if (std::string(table.name) == "Table 3") {
      EXPECT_LT(results[0].final_mean, results[1].final_mean) << "OKS++ before OKS";
      EXPECT_LT(results[1].final_mean, results[2].final_mean) << "OKS before IOKS";
    }
    if (std::string(table.name) == "Table 6")
      for (std::size_t i = 1; i < algos.size(); ++i)
        EXPECT_LT(results[0].final_mean, results[i].final_mean) << "RF-OKS++ first in Table 6, before " << algos[i];
  }
}

TEST(ReproductionTest, BanditPhishingOnTheLibsvmColumnsWithinTheTolerance) {
  // spec/bandit.md Table 2 on the paper's data: phishing.csv's 30 UCI columns as LIBSVM's 68
  // indicator columns (--one-hot all, §10 A13), the first 3 of the 10 repetitions. OKS++ (the
  // reference profile's logistic mode, the authors' scripts) within max(3 × 0.49, 10 %) of the
  // published 7.8 %, and the paper's claim: OKS++ before IOKS and OKS (c_λ = 25).
  omkl::StudySource source;
  source.path = shared("phishing.csv");
  source.preset = "bandit-oks";
  source.one_hot = "all";
  if (!std::ifstream(source.path).good()) GTEST_SKIP() << source.path << " not found";
  EXPECT_EQ(omkl::load_study_data(source).n_features, 68u);
  const auto results = run_preset(source, {"oks++", "ioks", "oks:c_lambda=25"}, 3, "logistic");
  ASSERT_EQ(results.size(), 3u);
  EXPECT_NEAR(results[0].final_mean, 0.078, 3 * 0.0049) << "OKS++";
  EXPECT_LT(results[0].final_mean, results[1].final_mean) << "OKS++ before IOKS";
  EXPECT_LT(results[0].final_mean, results[2].final_mean) << "OKS++ before OKS";
}

TEST(ReproductionTest, RakerJournalColumnsWithinTheTolerance) {
  // spec/raker.md §7: Raker and AdaRaker (D = 50, the presets' published steps, mean over 20 RF
  // draws; the paper reports one draw) on Table 4's Twitter and Tom's columns (MSE ×10⁻³: 3.000 /
  // 2.600 and 3.400 / 1.900) and Table 10's Devices column (error %: 2.540 / 0.360). Twitter and
  // Devices within the issue's ±15 % / ±20 %; Tom's within §7.2's ±25 % (its Raker is −17 %, the
  // draws spreading 1.9–4.5). bench/RESULTS.md measured 3.297 / 2.659, 2.829 / 1.705 and
  // 2.562 / 0.363. §7's ordering on the regression columns: AdaRaker < Raker < OMKL-B (B = 50).
  struct Column {
    std::string file, preset;
    double raker, ada_raker, tolerance, unit;
  };
  for (const Column& c : {Column{"twitter.csv", "jmlr19-regression", 3.000, 2.600, 0.15, 1e3},
                          Column{"tomshardware.csv", "jmlr19-regression", 3.400, 1.900, 0.25, 1e3},
                          Column{"devices.csv", "jmlr19-classification", 2.540, 0.360, 0.20, 1e2}}) {
    omkl::StudySource source;
    source.path = shared(c.file);
    source.preset = c.preset;
    if (!std::ifstream(source.path).good()) GTEST_SKIP() << source.path << " not found";
    const bool regression = c.preset == "jmlr19-regression";
    std::vector<std::string> algos = {"raker:D=50", "adaraker:D=50"};
    if (regression) algos.push_back("omkl-b:B=50");
    const auto results = run_preset(source, algos, 20);
    ASSERT_EQ(results.size(), algos.size());
    EXPECT_NEAR(results[0].final_mean * c.unit, c.raker, c.tolerance * c.raker) << "Raker, " << c.file;
    EXPECT_NEAR(results[1].final_mean * c.unit, c.ada_raker, c.tolerance * c.ada_raker) << "AdaRaker, " << c.file;
    if (regression) {
      EXPECT_LT(results[1].final_mean, results[0].final_mean) << c.file;
      EXPECT_LT(results[0].final_mean, results[2].final_mean) << c.file;
    }
  }
}

}  // namespace
