// Reproduction checks on the shared data (skipped when the files are absent): the graph journal's
// published numbers, bit-compatibly (rng = numpy_legacy, spec/graph-aided.md §1.9, §5.6,
// Appendix A item 6), and cells of the federated and bandit papers' tables within the specs'
// tolerances. The full tables are bench/reproduce_*.py's job; these are the short versions the
// test suite can afford (Airfoil, T = 1503; Naval's and elevators' fastest cells).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/dataset.h"
#include "omkl/study.h"

namespace {

struct Expected {
  std::string algo;
  double mse_e3;  // 10³ · MSE_T as printed (4 decimals)
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
    // §5.6: with numpy_legacy, float64 and the reference profile, |ours − published| ≤ 0.01
    // (in units of 10⁻³) for every entry; in practice all four printed decimals agree.
    EXPECT_NEAR(results[i].final_mean * 1e3, cases[i].mse_e3, 0.01) << cases[i].algo;
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

TEST(ReproductionTest, GraphJournalAirfoilTwentyRepetitions) {
  if (!std::ifstream(airfoil()).good()) GTEST_SKIP() << airfoil() << " not found";
  // §5.6: the M = 10 column of Tables 1, 3–5 and Raker / RFOMKR, R = 20 (the printed Table 1
  // values are 25.73 / 32.48 / 33.99 / 28.64 / 350.52; the spec's re-run of the authors' code
  // gives these digits).
  const std::vector<Expected> cases = {{"omkl-gf:rng=numpy_legacy,M=10", 25.7359},
                                       {"omkl-sfg:rng=numpy_legacy,M=10", 32.4863},
                                       {"omkl-sfg-r:rng=numpy_legacy,M=10", 33.9900},
                                       {"omkl-sfg-r:rng=numpy_legacy,M=1", 106.6621},
                                       {"raker:rng=numpy_legacy", 28.6416},
                                       {"rfomkr:rng=numpy_legacy", 350.4640}};
  expect_printed_digits(run_notebook(airfoil(), 20, cases), cases);
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

TEST(ReproductionTest, BanditElevatorsSquareLossWithinTable3sTolerance) {
  // spec/bandit.md §8: Table 3 (square loss, elevators, MSE over 10 shuffled repetitions), OKS++
  // 0.0046 and IOKS 0.0077, each within ±10 % as bench/RESULTS.md reproduces them; here the
  // first 3 of the 10 repetitions (measured 0.004565 and 0.007835; the suite also runs under the
  // sanitizers).
  omkl::StudySource source;
  source.path = shared("elevators.csv");
  source.preset = "bandit-oks";
  if (!std::ifstream(source.path).good()) GTEST_SKIP() << source.path << " not found";
  const auto results = run_preset(source, {"oks++", "ioks"}, 3, "square");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_NEAR(results[0].final_mean, 0.0046, 0.1 * 0.0046) << "OKS++";
  EXPECT_NEAR(results[1].final_mean, 0.0077, 0.1 * 0.0077) << "IOKS";
}

}  // namespace
