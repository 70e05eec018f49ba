// The `omkl` command-line tool end to end: exit codes and located error messages for bad input,
// nothing half-written by a failing study, and the study / gen / run / checkpoint paths.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/scoped_env.h"
#include "common/temp_dir_test.h"
#include "common/text_files.h"
#include "cpu/simd_level.h"
#include "omkl/algorithm.h"

namespace {

namespace fs = std::filesystem;
using omkl::test::lines_of;
using omkl::test::read_text;

#ifndef OMKL_CLI_PATH
#define OMKL_CLI_PATH ""
#endif

struct Outcome {
  int code = -1;  // exit status, or -1 when the process did not exit normally
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class CliTest : public omkl::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    cli_ = OMKL_CLI_PATH;
    if (cli_.empty() || !fs::exists(cli_)) GTEST_SKIP() << "omkl CLI not built at '" << cli_ << "'";
  }

  // Runs `omkl ARGS` inside the test directory; ARGS are passed to the shell as written.
  Outcome omkl(const std::string& args) const {
    const fs::path out = dir_ / "stdout.txt", err = dir_ / "stderr.txt";
    const std::string command = "cd " + quote(dir_.string()) + " && " + quote(cli_) + " " + args + " >" +
                                quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
    const int status = std::system(command.c_str());
    Outcome o;
    if (status != -1 && WIFEXITED(status)) o.code = WEXITSTATUS(status);
    o.out = read_text(out);
    o.err = read_text(err);
    fs::remove(out);
    fs::remove(err);
    return o;
  }

  std::string write(const std::string& name, const std::string& content) const {
    std::ofstream(dir_ / name, std::ios::binary) << content;
    return name;
  }

  // `omkl study` on a bad input must fail with a message containing every part of `parts`,
  // and must not create its output directory.
  void expect_study_fails(const std::string& args, const std::vector<std::string>& parts) const {
    const fs::path out = dir_ / "study_out";
    fs::remove_all(out);
    const Outcome o = omkl("study " + args + " --seeds 1 --out study_out");
    EXPECT_NE(o.code, 0) << args << "\nstdout: " << o.out;
    EXPECT_NE(o.code, -1) << args << ": the CLI crashed instead of exiting with an error";
    for (const auto& part : parts)
      EXPECT_NE(o.err.find(part), std::string::npos) << args << ": stderr lacks '" << part << "':\n" << o.err;
    EXPECT_FALSE(fs::exists(out)) << args << ": a failing study left " << out;
  }

  // `omkl run` on a bad input must fail with a message containing every part of `parts`.
  void expect_run_fails(const std::string& args, const std::vector<std::string>& parts) const {
    const Outcome o = omkl("run " + args);
    EXPECT_NE(o.code, 0) << args << "\nstdout: " << o.out;
    EXPECT_NE(o.code, -1) << args << ": the CLI crashed instead of exiting with an error";
    for (const auto& part : parts)
      EXPECT_NE(o.err.find(part), std::string::npos) << args << ": stderr lacks '" << part << "':\n" << o.err;
  }

  std::string cli_;
};

TEST_F(CliTest, MissingFileIsNamed) {
  expect_run_fails("--data does_not_exist.csv --algo raker:D=8", {"does_not_exist.csv"});
  expect_study_fails("--data does_not_exist.csv --algo raker:D=8", {"does_not_exist.csv"});
}

TEST_F(CliTest, ExitStatusSaysWhatKindOfErrorItWas) {
  // 0 success (help and version included), 1 bad input, 2 bad usage (README, "Command line").
  EXPECT_EQ(omkl("--help").code, 0);
  EXPECT_EQ(omkl("--version").code, 0);
  EXPECT_EQ(omkl("run --data does_not_exist.csv --algo raker:D=8").code, 1);
  write("ragged.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5\n");
  EXPECT_EQ(omkl("run --data ragged.csv --algo raker:D=8").code, 1);
  EXPECT_EQ(omkl("run --data synthetic:dataset2:50 --no-such-option 3").code, 2);
  EXPECT_EQ(omkl("run --data synthetic:dataset2:50 --algo no-such-algo").code, 2);
  EXPECT_EQ(omkl("run --data synthetic:dataset2:50 --algo raker:D=8,bogus_param=1").code, 2);
  EXPECT_EQ(omkl("no-such-command").code, 2);
}

TEST_F(CliTest, OutputPathsAreCheckedBeforeTheRun) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n");
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --save no_such_dir/ck");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--save no_such_dir/ck"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("mse"), std::string::npos) << "refused before learning: " << o.out;
  o = omkl("run --data f.csv --algo raker:D=8 --predictions .");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("folder"), std::string::npos) << o.err;
  o = omkl("study --data f.csv --algo raker:D=8 --seeds 1 --out f.csv/results");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--out f.csv/results"), std::string::npos) << o.err;
  // A folder to create under an existing one is fine.
  EXPECT_EQ(omkl("study --data f.csv --algo raker:D=8 --seeds 1 --out new/deeper").code, 0);
}

TEST_F(CliTest, OutputsNeverOverwriteTheInputsOrEachOther) {
  const std::string rows = "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n";
  write("f.csv", rows);
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --save f.csv");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--save f.csv is the file --data reads"), std::string::npos) << o.err;
  o = omkl("run --data ./f.csv --algo raker:D=8 --predictions f.csv");  // the same file by another name
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(read_text(dir_ / "f.csv"), rows) << "the input was touched";
  o = omkl("run --data f.csv --algo raker:D=8 --predictions p.csv --save p.csv");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("name the same file"), std::string::npos) << o.err;
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --save m.ckpt").code, 0);
  o = omkl("run --data f.csv --resume m.ckpt --predictions m.ckpt");
  EXPECT_EQ(o.code, 2);
  o = omkl("predict --model m.ckpt --data f.csv --predictions m.ckpt");
  EXPECT_EQ(o.code, 2);
  // Resuming and saving back in place is what --save beside --resume is for.
  EXPECT_EQ(omkl("run --data f.csv --resume m.ckpt --save m.ckpt").code, 0);
}

TEST_F(CliTest, PredictionsGoToStandardOutputAlone) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n");
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --predictions - --save m.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "-")) << "a file named '-' was written";
  const auto lines = lines_of(o.out);
  ASSERT_EQ(lines.size(), 4u) << o.out;
  EXPECT_EQ(lines[0], "t,y,prediction");
  EXPECT_EQ(lines[3].rfind("3,0.9", 0), 0u) << lines[3];
  EXPECT_NE(o.err.find("mse"), std::string::npos) << "the report goes to stderr: " << o.err;
  EXPECT_NE(o.err.find("saved checkpoint"), std::string::npos) << o.err;
  o = omkl("predict --model m.ckpt --data f.csv --predictions -");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(lines_of(o.out).size(), 4u) << o.out;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
}

TEST_F(CliTest, CountsAndSecondsAreCheckedAsWritten) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n");
  // Negative and overflowing counts are not wrapped into huge ones; zero where 0 would silently
  // mean "the default" is refused; NaN seconds are no timeout.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"study --data f.csv --seeds -1", "--seeds: expected a positive integer, not '-1'"},
      {"study --data f.csv --seeds 0", "--seeds: must be at least 1"},
      {"run --data f.csv --seed -1", "--seed: expected a non-negative integer"},
      {"run --data f.csv --seed 18446744073709551616", "--seed: '18446744073709551616' is too large"},
      {"study --data f.csv --threads -2", "--threads: expected a non-negative integer"},
      {"study --data f.csv --clients 0 --algo pof-mkl", "--clients: must be at least 1"},
      {"study --data f.csv --rounds 0 --algo pof-mkl", "--rounds: must be at least 1"},
      {"study --data f.csv --curve-points -1", "--curve-points"},
      {"study --data f.csv --message-timeout nan", "--message-timeout: expected a positive, finite number"},
      {"study --data f.csv --message-timeout -1", "--message-timeout"},
      {"run --data - --horizon -1", "--horizon: expected a positive integer"},
      {"gen --kind dataset1 --samples -1 --out g.csv", "--samples: expected a non-negative integer"},
      {"bench --data f.csv --repeat 0", "--repeat: must be at least 1"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome o = omkl(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << ": " << o.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "g.csv"));
  // The bench's JSON path is checked before the measurements.
  const Outcome o = omkl("bench --data f.csv --algo raker:D=8 --repeat 1 --json no_such_dir/b.json");
  EXPECT_EQ(o.code, 2);
  EXPECT_EQ(o.out.find("bench on"), std::string::npos) << "refused before measuring: " << o.out;
  // So is every --algo's parameters, the last one's too: nothing measured before the refusal.
  const Outcome bad = omkl("bench --data f.csv --algo raker:D=8 --algo raker:D=8,eta=-1 --repeat 1");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("'eta'"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out.find("bench on"), std::string::npos) << "refused before the header: " << bad.out;
}

TEST_F(CliTest, ClassifierLabelsDivergenceAndStudyFoldersAreCheckedWithTheirNames) {
  write("c.csv", "a,b,y\n0.1,0.2,1\n0.4,0.5,-1\n0.3,0.1,1\n");
  ASSERT_EQ(omkl("run --data c.csv --algo raker:D=8,loss=logistic --save m.ckpt").code, 0);
  // A classifier resumed on, or predicting, rows whose labels are not ±1: the file's row, not
  // the model's sample count.
  write("three.csv", "a,b,y\n0.1,0.2,1\n0.4,0.5,5\n");
  Outcome o = omkl("run --data three.csv --resume m.ckpt");
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("three.csv: data row 2: label 5, but the model in m.ckpt is a classifier"), std::string::npos)
      << o.err;
  o = omkl("predict --model m.ckpt --data three.csv");  // predict reads rows as a live stream: by line
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("three.csv:3: label 5, but the model in m.ckpt is a classifier"), std::string::npos) << o.err;
  o = omkl("predict --model m.ckpt --data c.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("error_rate"), std::string::npos) << "a classifier's metric: " << o.out;
  // A run whose predictions stop being finite fails and leaves no checkpoint or predictions.
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n0.2,0.9,0.1\n");
  // (A step of 1e100 scaled by 1e100: θ grows about 1e200-fold a row; each is at most 1e100.)
  o = omkl("run --data f.csv --algo raker:D=8,eta=1e100,step_scale=1e100 --save nan.ckpt --predictions p.csv");
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_NE(o.err.find("diverged on f at row"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "nan.ckpt"));
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
  // The last row's update shows in none of the run's predictions: the checkpoint's own check.
  write("f1.csv", "a,b,y\n0.3,0.9,1e120\n");
  o = omkl("run --data f1.csv --algo raker:D=8,eta=1e100,step_scale=1e100 --save nan.ckpt --predictions p.csv");
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_NE(o.err.find("diverged with its update at row 1 of f1"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "nan.ckpt"));
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
  // A study's folder whose cell cache is a file is refused before the study runs.
  fs::create_directories(dir_ / "o1");
  write("o1/cells", "not a folder");
  o = omkl("study --data f.csv --algo raker:D=8 --seeds 1 --out o1");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--out o1/cells: is a file, not a folder"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "o1" / "summary.json"));
}

TEST_F(CliTest, TwoClassLabelsMapToPlusMinusOneOnRequest) {
  // spec/bandit.md §8.2: classes written 0/1 are a classification stream with --labels pm1 (0 → −1,
  // 1 → +1); as written they are a regression target, and the logistic loss says how to map them.
  write("b.csv", "a,b,y\n0.1,0.2,1\n0.4,0.5,0\n0.3,0.1,1\n0.8,0.6,0\n0.2,0.2,1\n");
  Outcome o = omkl("run --data b.csv --algo raker:D=8,loss=logistic --labels pm1 --predictions p.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto rows = lines_of(read_text(dir_ / "p.csv"));
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[1].substr(0, 5), "1,1,0") << rows[1];   // t, y (1 → +1), the first prediction 0
  EXPECT_EQ(rows[2].substr(0, 5), "2,-1,") << rows[2];   // 0 → −1
  EXPECT_NE(o.out.find("error_rate"), std::string::npos) << o.out;
  expect_run_fails("--data b.csv --algo raker:D=8,loss=logistic", {"needs labels ±1", "--labels pm1"});
  expect_study_fails("--data b.csv --algo oks++ --preset bandit-oks --loss logistic", {"--labels pm1"});
  o = omkl("study --data b.csv --algo oks++ --preset bandit-oks --loss logistic --labels pm1 --seeds 1 --out s");
  EXPECT_EQ(o.code, 0) << o.err;
  // Without --seeds a preset's study runs its paper's repetitions (§8.4: 10), without one 5.
  o = omkl("study --data b.csv --algo ioks --preset bandit-oks --loss logistic --labels pm1 --out s10");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(read_text(dir_ / "s10" / "summary.json").find("\"seeds\": 10"), std::string::npos);
  o = omkl("study --data b.csv --algo raker:D=4 --out s5");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(read_text(dir_ / "s5" / "summary.json").find("\"seeds\": 5"), std::string::npos);
  // A third class, or a live stream whose classes are not known yet, is refused by name.
  write("three.csv", "a,b,y\n0.1,0.2,1\n0.4,0.5,0\n0.3,0.1,2\n");
  expect_run_fails("--data three.csv --algo raker:D=8 --labels pm1", {"three", "more than two values (1, 0, 2"});
  expect_run_fails("--data - --algo raker:D=8 --horizon 5 --labels pm1", {"--labels pm1", "live"});
  expect_run_fails("--data b.csv --algo raker:D=8 --labels zero_one", {"--labels"});
}

TEST_F(CliTest, OneHotTurnsCategoricalColumnsIntoIndicatorColumns) {
  // --one-hot (LIBSVM's binarisation, spec/bandit.md §10 A13): the model learns on one column per
  // value, named by column and value; a stream read live, whose values are not known yet, is refused.
  write("c.csv", "a,b,y\n-1,0,1\n1,1,-1\n0,1,1\n1,0,-1\n-1,1,1\n");
  Outcome o = omkl("run --data c.csv --algo raker:D=8,loss=logistic --one-hot all --save m.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  o = omkl("study --data c.csv --algo oks++ --preset bandit-oks --loss logistic --one-hot a --seeds 1 --out s");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(read_text(dir_ / "s" / "summary.json").find("\"n_features\": 4"), std::string::npos);
  // The model's columns are the indicators: predict and --resume read a stream as written
  // through them, a value the model never saw as no indicator set; the options are the model's.
  write("new.csv", "a,b,y\n-1,0,1\n2,1,-1\n");
  o = omkl("predict --model m.ckpt --data new.csv --predictions p.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(lines_of(read_text(dir_ / "p.csv")).size(), 3u);
  o = omkl("run --resume m.ckpt --data new.csv --save m2.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  expect_run_fails("--resume m.ckpt --data new.csv --one-hot all", {"--one-hot", "the model fixes it"});
  write("other.csv", "a,c,y\n-1,0,1\n");
  o = omkl("predict --model m.ckpt --data other.csv");
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("features"), std::string::npos) << o.err;
  expect_run_fails("--data c.csv --algo raker:D=8 --one-hot z", {"no feature column 'z'"});
  expect_run_fails("--data - --algo raker:D=8 --horizon 5 --one-hot all", {"--one-hot", "live"});
}

TEST_F(CliTest, AMistypedPathSwitchIsRefusedByName) {
  // The CPU's SIMD level is a path switch like the CUDA ones: a value other than auto, avx2 or
  // portable is a configuration error naming it, not the default taken silently (a process reads
  // it once, so the check runs in a child process).
  omkl::test::ScopedEnv simd("OMKL_CPU_SIMD", "portible");
  const Outcome o = omkl("run --data synthetic:dataset2:50 --algo raker:D=8");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("OMKL_CPU_SIMD must be auto, avx2 or portable, not 'portible'"), std::string::npos) << o.err;
  // A CUDA switch too, in a build that never reads it, and before a study writes anything.
  omkl::test::ScopedEnv fine_simd("OMKL_CPU_SIMD", nullptr), draws("OMKL_CUDA_DRAWS", "bogus");
  for (const char* command : {"run --data synthetic:dataset2:50 --algo raker:D=8",
                              "study --data synthetic:dataset2:50 --algo raker:D=8 --seeds 1 --out never",
                              "bench --data synthetic:dataset2:50 --algo raker:D=8 --seeds 1"}) {
    const Outcome refused = omkl(command);
    EXPECT_EQ(refused.code, 2) << command << ": " << refused.err;
    EXPECT_NE(refused.err.find("OMKL_CUDA_DRAWS must be device or host, not 'bogus'"), std::string::npos)
        << command << ": " << refused.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "never"));
}

TEST_F(CliTest, EveryAlgorithmGivesTheSameBitsAtAvx2AndAvx512) {
  // docs/features.md: the AVX-512 level computes what AVX2 does, bit for bit (the portable level
  // rounds otherwise). Every registered algorithm, the float feature maps and a federated study,
  // at both levels in child processes (a process reads the level once): the same files.
  if (!omkl::detail::cpu::simd_level_available(omkl::detail::cpu::SimdLevel::Avx512))
    GTEST_SKIP() << "this CPU has no AVX-512F: its default level is the AVX2 one";
  std::string ordinary = "study --data synthetic:dataset2:150 --seeds 2";
  std::string classifying = "study --data c.csv --seeds 2 --algo m-forgetron --algo oks++:loss=logistic";
  std::string federated = "study --data synthetic:dataset2:120 --clients 4 --rounds 30 --seeds 2";
  for (const omkl::AlgorithmSummary& a : omkl::list_algorithms()) {
    if (a.family == "federated") federated += " --algo " + a.name;
    else if (a.name != "m-forgetron") ordinary += " --algo " + a.name;
  }
  ordinary += " --algo raker:precision=float --algo adaraker:precision=float --algo omkl-sfg:precision=float";
  federated += " --algo pof-mkl:precision=float";
  std::string rows = "a,b,y\n";
  for (int i = 0; i < 80; ++i)
    rows += std::to_string(i % 7) + ".5," + std::to_string(i % 3) + "," + (i % 5 > 1 ? "1" : "-1") + "\n";
  write("c.csv", rows);
  for (const std::string& study : {ordinary, classifying, federated}) {
    SCOPED_TRACE(study);
    std::string files[2];
    for (int level = 0; level < 2; ++level) {
      omkl::test::ScopedEnv simd("OMKL_CPU_SIMD", level == 0 ? "avx2" : "auto");
      const std::string out = "level" + std::to_string(level);
      const Outcome o = omkl(study + " --out " + out);
      ASSERT_EQ(o.code, 0) << o.err;
      files[level] = read_text(dir_ / out / "curves.csv") + read_text(dir_ / out / "logs.json");
      const auto summary = nlohmann::json::parse(read_text(dir_ / out / "summary.json"));
      for (const auto& r : summary.at("results")) files[level] += r.at("final_per_seed").dump();
    }
    EXPECT_TRUE(files[0] == files[1]) << "the two levels' results differ";
  }
}

TEST_F(CliTest, AGridRunsEveryConfigurationAndNamesTheBest) {
  // (A shell reads '|' as a pipe: the grids are quoted, as a user quotes them.)
  const Outcome o = omkl("study --data synthetic:dataset2:200 --seeds 2 --algo 'rf-ogd:D=8,eta=0.5|0.05' --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("rf-ogd:D=8,eta=0.5 "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("rf-ogd:D=8,eta=0.05 "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("grid rf-ogd:D=8,eta=0.5|0.05 (2 configurations): best rf-ogd:D=8,eta="), std::string::npos)
      << o.out;
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("grids")[0].at("grid"), "rf-ogd:D=8,eta=0.5|0.05");
  // One learner is one configuration.
  const Outcome run = omkl("run --data synthetic:dataset2:200 --algo 'rf-ogd:eta=0.5|0.05'");
  EXPECT_EQ(run.code, 2);
  EXPECT_NE(run.err.find("is a grid of 2 configurations"), std::string::npos) << run.err;
  const Outcome empty = omkl("study --data synthetic:dataset2:200 --algo 'rf-ogd:eta=0.5||0.05'");
  EXPECT_EQ(empty.code, 2);
  EXPECT_NE(empty.err.find("parameter 'eta' has an empty alternative"), std::string::npos) << empty.err;
}

TEST_F(CliTest, PredictTakesRowsWithoutATarget) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n");
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --save m.ckpt").code, 0);
  // An empty target cell, a row that leaves it out, and a row with one: all predicted, the
  // metric over the one with a target, the same prediction for the same features.
  write("new.csv", "a,b,y\n0.4,0.5,\n0.4,0.5\n0.4,0.5,0.6\n");
  Outcome o = omkl("predict --model m.ckpt --data new.csv --predictions p.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("3 rows (1 with a target), mse"), std::string::npos) << o.out;
  const auto lines = lines_of(read_text(dir_ / "p.csv"));
  ASSERT_EQ(lines.size(), 4u);
  const auto field = [](const std::string& line, int k) {
    std::istringstream in(line);
    std::string cell;
    for (int i = 0; i <= k; ++i) std::getline(in, cell, ',');
    return cell;
  };
  EXPECT_EQ(field(lines[1], 1), "");
  EXPECT_EQ(field(lines[2], 1), "");
  EXPECT_EQ(field(lines[3], 1), "0.59999999999999998");
  EXPECT_EQ(field(lines[1], 2), field(lines[3], 2));
  EXPECT_EQ(field(lines[2], 2), field(lines[3], 2));
  // A header without a target column is one feature short; the message says what to do.
  write("features.csv", "a,b\n0.4,0.5\n");
  o = omkl("predict --model m.ckpt --data features.csv");
  EXPECT_EQ(o.code, 1);
  EXPECT_NE(o.err.find("name a target column in the header"), std::string::npos) << o.err;
}

TEST_F(CliTest, TheMainJobTellsItsStory) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "36 000 samples × 5 seeds: checked in the plain build";
#endif
  // `omkl` alone: Raker vs AdaRaker on Dataset 1 under the reference profile, AdaRaker ahead.
  const Outcome o = omkl("");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("synthetic-dataset1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("profile reference"), std::string::npos) << o.out;
  const auto at = o.out.find("AdaRaker's MSE is ");
  ASSERT_NE(at, std::string::npos) << o.out;
  const int percent = std::atoi(o.out.c_str() + at + 18);
  EXPECT_GT(percent, 0);
  EXPECT_LT(percent, 100) << "AdaRaker tracks the switches better than Raker: " << o.out;
  // Its last line says where the commands are.
  const auto lines = lines_of(o.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find("omkl --help"), std::string::npos) << lines.back();
}

TEST_F(CliTest, RaggedRowIsLocated) {
  write("file.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5\n0.7,0.8,0.9\n");
  expect_run_fails("--data file.csv --algo raker:D=8", {"file.csv:3:", "ragged"});
  expect_study_fails("--data file.csv --algo raker:D=8", {"file.csv:3:"});
}

TEST_F(CliTest, NonNumericCellIsLocated) {
  write("words.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,abc,0.9\n");
  expect_run_fails("--data words.csv --algo raker:D=8", {"words.csv:4:2", "abc"});
  expect_study_fails("--data words.csv --algo raker:D=8", {"words.csv:4:2"});
}

TEST_F(CliTest, NanCellIsLocated) {
  write("nan.csv", "a,b,y\n0.1,0.2,0.3\nnan,0.5,0.6\n");
  expect_run_fails("--data nan.csv --algo raker:D=8", {"nan.csv:3:1"});
  expect_study_fails("--data nan.csv --algo raker:D=8", {"nan.csv:3:1"});
}

TEST_F(CliTest, HeaderOnlyAndEmptyFiles) {
  write("header.csv", "a,b,y\n");
  write("empty.csv", "");
  expect_run_fails("--data header.csv --algo raker:D=8", {"header.csv", "no data rows"});
  expect_study_fails("--data header.csv --algo raker:D=8", {"header.csv", "no data rows"});
  expect_run_fails("--data empty.csv --algo raker:D=8", {"empty.csv", "empty"});
  expect_study_fails("--data empty.csv --algo raker:D=8", {"empty.csv", "empty"});
}

TEST_F(CliTest, UnknownAlgorithmAndParameterAreNamed) {
  expect_run_fails("--data synthetic:dataset2:50 --algo no-such-algo", {"no-such-algo"});
  expect_study_fails("--data synthetic:dataset2:50 --algo raker:D=8 --algo no-such-algo", {"no-such-algo"});
  expect_run_fails("--data synthetic:dataset2:50 --algo raker:D=8,bogus_param=1", {"bogus_param"});
  expect_study_fails("--data synthetic:dataset2:50 --algo raker:D=8,bogus_param=1", {"bogus_param", "raker"});
}

TEST_F(CliTest, StudyTooLargeForMemoryIsRefusedUpFront) {
  // 10¹¹ replicates' results cannot be kept anywhere: refused as a configuration error before
  // anything is allocated for them, with what to reduce, and no output folder.
  const Outcome o = omkl("study --data synthetic:dataset2:50 --algo raker:D=8 --seeds 100000000000 --out big");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--seeds 100000000000"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("memory"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "big"));
}

TEST_F(CliTest, UnknownOptionIsNamed) {
  expect_run_fails("--data synthetic:dataset2:50 --no-such-option 3", {"--no-such-option"});
  expect_study_fails("--data synthetic:dataset2:50 --algo raker:D=8 --no-such-option 3", {"--no-such-option"});
}

TEST_F(CliTest, StudyWritesSummaryAndCurves) {
  const Outcome o = omkl("study --data synthetic:dataset2:400 --algo raker:D=8 --seeds 2 --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  ASSERT_TRUE(fs::exists(dir_ / "out" / "summary.json"));
  ASSERT_TRUE(fs::exists(dir_ / "out" / "curves.csv"));
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("n_samples").get<std::size_t>(), 400u);
  ASSERT_EQ(summary.at("results").size(), 1u);
  const auto& r = summary.at("results")[0];
  EXPECT_EQ(r.at("algo"), "raker");
  EXPECT_EQ(r.at("metric"), "mse");
  EXPECT_EQ(r.at("seeds").get<std::size_t>(), 2u);
  EXPECT_TRUE(r.at("final_mean").is_number());
  // Every parameter used, not only the typed D: the default η = 1/√400 = 0.05 among them.
  const auto& resolved = r.at("resolved_params");
  const auto value = [&](const std::string& key) {
    for (const auto& kv : resolved)
      if (kv.at(0) == key) return kv.at(1).get<std::string>();
    return std::string("<absent>");
  };
  EXPECT_EQ(value("D"), "8");
  EXPECT_EQ(value("eta"), "0.05");
  EXPECT_EQ(value("loss"), "squared");
  const auto curves = lines_of(read_text(dir_ / "out" / "curves.csv"));
  EXPECT_GE(curves.size(), 2u) << "a header and at least one point";
}

TEST_F(CliTest, GenThenRun) {
  Outcome o = omkl("gen --kind dataset2 --samples 300 --out f.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  ASSERT_TRUE(fs::exists(dir_ / "f.csv"));
  EXPECT_EQ(lines_of(read_text(dir_ / "f.csv")).size(), 301u) << "header + 300 rows";
  o = omkl("run --data f.csv --algo raker:D=8");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("mse"), std::string::npos) << o.out;
  // σ_α (spec/raker.md §6.2: not given by the paper, 0.01 by default) is exposed: another σ_α,
  // another stream; the default is the one written above.
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --sigma-alpha 0.01 --out same.csv").code, 0);
  EXPECT_EQ(read_text(dir_ / "same.csv"), read_text(dir_ / "f.csv"));
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --sigma-alpha 0.5 --raw --out wide.csv").code, 0);
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --raw --out narrow.csv").code, 0);
  EXPECT_NE(read_text(dir_ / "wide.csv"), read_text(dir_ / "narrow.csv"));
  o = omkl("gen --kind dataset2 --sigma-alpha -1 --out bad.csv");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--sigma-alpha"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "bad.csv"));
}

TEST_F(CliTest, CheckpointResumeEqualsStraightRun) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --out f.csv").code, 0);
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --save-at 150 --save ck --predictions a.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  ASSERT_TRUE(fs::exists(dir_ / "ck"));
  // A resumed model learns on the stream it is given from that stream's first row: the rest of
  // f.csv, rows 151..300, as a file of its own.
  const auto rows = lines_of(read_text(dir_ / "f.csv"));
  std::string rest = rows[0] + "\n";
  for (std::size_t i = 151; i < rows.size(); ++i) rest += rows[i] + "\n";
  write("rest.csv", rest);
  o = omkl("run --data rest.csv --resume ck --predictions b.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  o = omkl("run --data f.csv --algo raker:D=8 --predictions c.csv");
  ASSERT_EQ(o.code, 0) << o.err;

  const auto a = lines_of(read_text(dir_ / "a.csv"));
  const auto b = lines_of(read_text(dir_ / "b.csv"));
  const auto c = lines_of(read_text(dir_ / "c.csv"));
  ASSERT_EQ(a.size(), 151u) << "header + 150 rows";
  ASSERT_EQ(b.size(), 151u) << "header + rows 151..300";
  ASSERT_EQ(c.size(), 301u);
  std::vector<std::string> joined(a.begin() + 1, a.end());
  joined.insert(joined.end(), b.begin() + 1, b.end());
  const std::vector<std::string> straight(c.begin() + 1, c.end());
  ASSERT_EQ(joined.size(), straight.size());
  for (std::size_t i = 0; i < straight.size(); ++i)
    ASSERT_EQ(joined[i], straight[i]) << "row " << i + 1 << " of the resumed run differs";
  // No temporary files are left beside the outputs.
  for (const auto& entry : fs::directory_iterator(dir_))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST_F(CliTest, PredictAppliesAModelWithoutChangingIt) {
  // The prediction for row n + 1 of a model saved after row n is the one the uninterrupted run
  // made there; the model file is untouched.
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --out f.csv").code, 0);
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --save-at 120 --save ck").code, 0);
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --predictions straight.csv").code, 0);
  const std::string model = read_text(dir_ / "ck");
  const auto rows = lines_of(read_text(dir_ / "f.csv"));
  write("next.csv", rows[0] + "\n" + rows[121] + "\n" + rows[200] + "\n");
  const Outcome o = omkl("predict --model ck --data next.csv --predictions p.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("after 120 samples"), std::string::npos) << o.out;
  const auto predicted = lines_of(read_text(dir_ / "p.csv"));
  const auto straight = lines_of(read_text(dir_ / "straight.csv"));
  ASSERT_EQ(predicted.size(), 3u);
  const auto last_field = [](const std::string& line) { return line.substr(line.rfind(',') + 1); };
  EXPECT_EQ(last_field(predicted[1]), last_field(straight[121])) << "row 121's prediction";
  EXPECT_EQ(read_text(dir_ / "ck"), model) << "predict leaves the model file as it was";
  // Options that a model fixes are refused beside it, not ignored.
  expect_run_fails("--data f.csv --resume ck --algo adaraker", {"--algo", "--resume"});
  expect_run_fails("--data f.csv --resume ck --seed 3", {"--seed"});
}

TEST_F(CliTest, ModelKeepsItsNormalisationForResumeAndPredict) {
  // A model trained on a z-scored raw stream stores the training statistics: the rest of the
  // stream, resumed without --normalize, gets the training stream's transform (not statistics of
  // its own), so the resumed run continues the straight one digit for digit.
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --raw --out raw.csv").code, 0);
  ASSERT_EQ(omkl("run --data raw.csv --normalize zscore --algo raker:D=8 --predictions straight.csv").code, 0);
  Outcome o = omkl("run --data raw.csv --normalize zscore --algo raker:D=8 --save-at 150 --save ck");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto rows = lines_of(read_text(dir_ / "raw.csv"));
  std::string rest = rows[0] + "\n";
  for (std::size_t i = 151; i < rows.size(); ++i) rest += rows[i] + "\n";
  write("rest.csv", rest);
  o = omkl("run --data rest.csv --resume ck --predictions resumed.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto straight = lines_of(read_text(dir_ / "straight.csv"));
  const auto resumed = lines_of(read_text(dir_ / "resumed.csv"));
  ASSERT_EQ(straight.size(), 301u);
  ASSERT_EQ(resumed.size(), 151u);
  for (std::size_t i = 1; i < resumed.size(); ++i)
    ASSERT_EQ(resumed[i], straight[150 + i]) << "row " << 150 + i << " of the resumed run";
  // predict applies the same transform: row 151's prediction is the straight run's.
  write("next.csv", rows[0] + "\n" + rows[151] + "\n");
  o = omkl("predict --model ck --data next.csv --predictions p.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto predicted = lines_of(read_text(dir_ / "p.csv"));
  ASSERT_EQ(predicted.size(), 2u);
  const auto last_field = [](const std::string& line) { return line.substr(line.rfind(',') + 1); };
  EXPECT_EQ(last_field(predicted[1]), last_field(straight[151]));
  // Repeating the model's normalisation is allowed; contradicting it is refused, for both commands.
  EXPECT_EQ(omkl("run --data rest.csv --resume ck --normalize zscore").code, 0);
  expect_run_fails("--data rest.csv --resume ck --normalize minmax", {"--normalize minmax", "zscore", "ck"});
  o = omkl("predict --model ck --data next.csv --normalize none");
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("zscore"), std::string::npos) << o.err;
}

TEST_F(CliTest, ResumeOnAStreamWithOtherFeaturesFails) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 200 --out f.csv").code, 0);
  const Outcome o = omkl("run --data f.csv --algo raker:D=8 --save-at 100 --save ck");
  ASSERT_EQ(o.code, 0) << o.err;
  std::string narrow = "a,b,y\n";
  for (int t = 0; t < 200; ++t) narrow += "0.25,0.5,0.75\n";
  write("narrow.csv", narrow);
  expect_run_fails("--data narrow.csv --resume ck", {"features"});
}

TEST_F(CliTest, ColumnsNamedOrOrderedOtherwiseThanTheModelsAreRefused) {
  // A model keeps its training header's feature names: a stream with two columns swapped (same
  // width, so no other check sees it) or renamed is refused by predict (rows read one by one)
  // and by --resume (read whole), naming the column, the model and its names.
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 200 --out f.csv").code, 0);
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --save-at 100 --save ck");
  ASSERT_EQ(o.code, 0) << o.err;
  std::string swapped, renamed;
  for (const std::string& line : lines_of(read_text(dir_ / "f.csv"))) {
    const std::size_t first = line.find(','), second = line.find(',', first + 1);
    swapped += line.substr(first + 1, second - first - 1) + "," + line.substr(0, first) + line.substr(second) + "\n";
    renamed += (renamed.empty() ? "a" + line.substr(line.find(',')) : line) + "\n";
  }
  write("swapped.csv", swapped);
  write("renamed.csv", renamed);
  for (const char* data : {"swapped.csv", "renamed.csv"}) {
    o = omkl(std::string("predict --model ck --data ") + data + " --predictions p.csv");
    EXPECT_EQ(o.code, 1) << data << ": " << o.err;  // an input error
    EXPECT_NE(o.err.find("feature column 1 is '"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("trained with 'x1'"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("x1, x2, x3"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "p.csv")) << data;
    expect_run_fails(std::string("--data ") + data + " --resume ck", {"feature column 1", "ck"});
  }
  // The training header itself passes, and a model saved again after --resume keeps the names.
  o = omkl("run --data f.csv --resume ck --save ck2");
  ASSERT_EQ(o.code, 0) << o.err;
  o = omkl("predict --model ck2 --data swapped.csv");
  EXPECT_NE(o.code, 0);
  EXPECT_NE(o.err.find("feature column 1"), std::string::npos) << o.err;
}

TEST_F(CliTest, APresetWithoutAlgoRunsItsOwnAlgorithms) {
  // A protocol's preset names its tables' algorithms: without --algo a study runs those (the
  // federated ones on a federated stream, not Raker on the dealt rows) and a run the first.
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 1000 --out f.csv").code, 0);
  Outcome o = omkl("study --preset fed-pofmkl --data f.csv --seeds 1 --out fed");
  ASSERT_EQ(o.code, 0) << o.err;
  const std::string summary = read_text(dir_ / "fed" / "summary.json");
  for (const char* algo : {"\"pof-mkl:M=1\"", "\"pof-mkl:M=51\"", "\"em-kofl\"", "\"perfedavg\""})
    EXPECT_NE(summary.find(algo), std::string::npos) << algo;
  EXPECT_EQ(summary.find("\"raker\""), std::string::npos);
  o = omkl("run --preset fed-pofmkl --data f.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("pof-mkl:M=1 on f", 0), 0u) << o.out;
  EXPECT_NE(omkl("list").out.find("without --algo: oks++, ioks, rf-oks++, rf-ioks"), std::string::npos);
}

TEST_F(CliTest, ResumeOfAMissingOrDamagedCheckpointFails) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 100 --out f.csv").code, 0);
  expect_run_fails("--data f.csv --resume absent.ckpt", {"absent.ckpt"});
  write("garbage.ckpt", "this is not a checkpoint at all, just some text");
  expect_run_fails("--data f.csv --resume garbage.ckpt", {"garbage.ckpt"});
}

}  // namespace

TEST_F(CliTest, TimingSwitchReportsConstructionOnStderrOnly) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 50 --out f.csv").code, 0);
  const Outcome plain = omkl("run --data f.csv --algo raker:D=8");
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_EQ(plain.err.find("omkl timing"), std::string::npos) << "off unless asked for";
  setenv("OMKL_TIMING", "1", 1);  // inherited by the CLI's process
  const Outcome timed = omkl("run --data f.csv --algo raker:D=8");
  unsetenv("OMKL_TIMING");
  ASSERT_EQ(timed.code, 0) << timed.err;
  EXPECT_NE(timed.err.find("omkl timing: cpu backend set-up"), std::string::npos) << timed.err;
  EXPECT_NE(timed.err.find("frequency matrices (1 replicates x"), std::string::npos) << timed.err;
  EXPECT_EQ(timed.out, plain.out) << "the report changes nothing else";
}

// ---- federated studies (spec/federated.md) ----------------------------------------------------

namespace {
// Two sites of 60 rows each: columns site, a, b, y.
std::string grouped_csv() {
  std::string csv = "site,a,b,y\n";
  for (int i = 0; i < 120; ++i) {
    const int site = i < 60 ? 0 : 1;
    const double a = 0.01 * i, b = site ? 1.0 - a : a * a;
    csv += std::to_string(site) + "," + std::to_string(a) + "," + std::to_string(b) + "," +
           std::to_string(0.3 + 0.5 * a * b + 0.1 * site) + "\n";
  }
  return csv;
}
}  // namespace

TEST_F(CliTest, FederatedStudyReportsClientsBudgetAndResolvedD) {
  write("air.csv", grouped_csv());
  const Outcome o = omkl("study --preset fed-pofmkl --rounds 20 --data air.csv --group-column site "
                         "--algo pof-mkl:M=25 --algo vm-kofl --seeds 2 --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("n_features").get<std::size_t>(), 2u) << "the group column is not a feature";
  EXPECT_EQ(summary.at("n_samples").get<std::size_t>(), 120u) << "3 clients per site × 2 sites × 20 rounds";
  const auto& pof = summary.at("results").at(0);
  EXPECT_EQ(pof.at("params").at("M"), "25");
  EXPECT_EQ(pof.at("params").at("D"), "20");
  EXPECT_EQ(pof.at("n_clients").get<std::size_t>(), 6u);
  EXPECT_TRUE(pof.at("final_std_clients").is_number());
  // spec/federated.md §8 item 8: eq. (11)'s client regret (mean and spread over the clients).
  EXPECT_TRUE(pof.at("regret_eq11").is_number());
  EXPECT_GE(pof.at("regret_eq11_std_clients").get<double>(), 0.0);
  EXPECT_LE(pof.at("max_uplink_floats").get<double>(), 1000.0);
  EXPECT_EQ(pof.at("downlink_floats_per_client_step").get<double>(), 51 * 40.0);
  const auto& vm = summary.at("results").at(1);
  EXPECT_EQ(vm.at("params").at("D"), "9");
  EXPECT_EQ(vm.at("uplink_floats_per_client_step").get<double>(), 51 * 18.0 + 51);
  // Another client order deals the same rows in another order, shuffled sites other rows to each
  // client: other streams, other numbers. The default site order is chronological.
  for (const char* order : {"--client-order listed", "--within-site-order shuffled", "--within-site-order chronological"}) {
    const Outcome c = omkl("study --preset fed-pofmkl --rounds 20 --data air.csv --group-column site " +
                           std::string(order) + " --algo vm-kofl --seeds 2 --out other");
    ASSERT_EQ(c.code, 0) << order << ": " << c.err;
    const auto other = nlohmann::json::parse(read_text(dir_ / "other" / "summary.json"));
    EXPECT_EQ(other.at("n_samples").get<std::size_t>(), 120u) << order;
    if (std::string(order).find("chronological") != std::string::npos)
      EXPECT_EQ(other.at("results").at(0).at("final_mean"), vm.at("final_mean")) << order;
    else
      EXPECT_NE(other.at("results").at(0).at("final_mean"), vm.at("final_mean")) << order;
  }
}

TEST_F(CliTest, FederatedRegretIncludeRegIsRecordedAndRefusedOffAFederatedStream) {
  write("air.csv", grouped_csv());
  const std::string base = "study --preset fed-pofmkl --rounds 20 --data air.csv --group-column site --seeds 2 "
                           "--regret --regret-features 20 --algo vm-kofl ";
  const Outcome plain = omkl(base + "--out plain");
  ASSERT_EQ(plain.code, 0) << plain.err;
  const Outcome with = omkl(base + "--regret-include-reg --out with");
  ASSERT_EQ(with.code, 0) << with.err;
  EXPECT_NE(with.out.find("with λ‖θ̄‖² (regret.include_reg)"), std::string::npos) << with.out;
  const auto a = nlohmann::json::parse(read_text(dir_ / "plain" / "summary.json"));
  const auto b = nlohmann::json::parse(read_text(dir_ / "with" / "summary.json"));
  EXPECT_FALSE(a.contains("regret_include_reg"));
  EXPECT_TRUE(b.at("regret_include_reg").get<bool>());
  const auto &ra = a.at("results").at(0), &rb = b.at("results").at(0);
  EXPECT_EQ(ra.at("final_mean"), rb.at("final_mean")) << "the terms change the regret, not the run";
  EXPECT_GT(rb.at("regret_batch").get<double>(), ra.at("regret_batch").get<double>());
  // regret.csv is a CSV of six fields a row: the benchmark ("…, D = 20)") is quoted like the spec.
  const auto regret_rows = lines_of(read_text(dir_ / "with" / "regret.csv"));
  ASSERT_GT(regret_rows.size(), 1u);
  for (const std::string& line : regret_rows) {
    int fields = 1;
    bool quoted = false;
    for (char ch : line) {
      if (ch == '"') quoted = !quoted;
      else if (ch == ',' && !quoted) ++fields;
    }
    EXPECT_EQ(fields, 6) << line;
  }
  expect_study_fails("--data air.csv --algo raker --regret-include-reg", {"--regret-include-reg", "not a federated stream"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --data air.csv --group-column site --regret-include-reg "
                     "--algo perfedavg",
                     {"'perfedavg' has no λ‖θ̄‖² term"});
  // The comparator's λ and kernels (--regret-lambda, --regret-dict): named in the benchmark's label.
  const Outcome other = omkl(base + "--regret-lambda 0.5 --regret-dict gauss:1+gauss:4 --out other");
  ASSERT_EQ(other.code, 0) << other.err;
  const auto c = nlohmann::json::parse(read_text(dir_ / "other" / "summary.json"));
  EXPECT_NE(c.at("regret_benchmark").get<std::string>().find("λ = 0.5"), std::string::npos) << c.dump();
  EXPECT_EQ(c.at("results").at(0).at("final_mean"), ra.at("final_mean")) << "the comparator changes the regret only";
  EXPECT_NE(c.at("results").at(0).at("regret_batch"), ra.at("regret_batch"));
  expect_study_fails("--data air.csv --algo raker --regret-lambda 0.5", {"--regret-lambda", "need --regret"});
  expect_study_fails("--data air.csv --algo omkl-sfg --regret --regret-lambda -1", {"--regret-lambda", "> 0"});
  expect_study_fails("--data air.csv --algo omkl-sfg --regret --regret-dict gaus:1", {"--regret-dict"});
}

TEST_F(CliTest, FederatedBadInputIsOneClearMessage) {
  write("air.csv", grouped_csv());
  expect_study_fails("--preset fed-pofmkl --rounds 20 --data air.csv --group-column station --algo pof-mkl",
                     {"air.csv:1:1", "unknown group column 'station'"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --clients 8 --data air.csv --group-column site --algo pof-mkl",
                     {"group 0 has 60 rows"});
  expect_study_fails("--preset fed-pofmkl --rounds 50 --clients 3 --data air.csv --algo pof-mkl",
                     {"3 clients × 50 rounds need 150 rows"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --data air.csv --group-column site --algo pof-mkl:M=52",
                     {"'M'", "[1, 51]"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --data air.csv --group-column site --algo pof-mkl:M=25,D=30",
                     {"'D'", "max_upload"});
  expect_study_fails("--data air.csv --group-column site --algo raker", {"group column 'site'", "federated"});
  expect_study_fails("--data air.csv --algo pof-mkl", {"'clients'", "not federated"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --clients 3 --data air.csv --within-site-order chronological "
                     "--algo pof-mkl",
                     {"--within-site-order (within_site_order) 'chronological'", "--group-column"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --data air.csv --group-column site --within-site-order "
                     "sorted --algo pof-mkl",
                     {"--within-site-order", "sorted"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --clients 3 --data air.csv --client-order listed --algo pof-mkl",
                     {"--client-order (client_order) 'listed'", "--group-column"});
  // A clients= that contradicts how the stream was dealt would mix the clients' rows.
  expect_study_fails("--preset fed-pofmkl --rounds 20 --clients 3 --data air.csv --algo pof-mkl:clients=2",
                     {"'clients' is 2", "dealt to 3 clients"});
  expect_study_fails("--preset fed-pofmkl --rounds 20 --clients 3 --data air.csv --algo ofskl:dict=gauss:3,rbf_convention=textbook",
                     {"'rbf_convention'", "dict="});
}

TEST_F(CliTest, RunLearnsAFederatedStreamAsTheStudyDealsIt) {
  // `omkl run` tells the learner the clients the stream was dealt to (--clients, the preset):
  // one draw of the study, the same numbers.
  write("air.csv", grouped_csv());
  const std::string stream = "--preset fed-pofmkl --rounds 20 --clients 3 --data air.csv --algo pof-mkl";
  const Outcome run = omkl("run " + stream + " --predictions p.csv");
  ASSERT_EQ(run.code, 0) << run.err;
  const Outcome study = omkl("study " + stream + " --seeds 1 --out s");
  ASSERT_EQ(study.code, 0) << study.err;
  const std::string summary = read_text(dir_ / "s" / "summary.json");
  const auto mse_of_run = run.out.substr(run.out.rfind("mse ") + 4);
  const std::size_t at = summary.find("\"final_mean\": ");
  ASSERT_NE(at, std::string::npos) << summary;
  const double study_mse = std::stod(summary.substr(at + 14));
  EXPECT_NEAR(std::stod(mse_of_run), study_mse, 1e-5 * study_mse) << run.out;
  // Resumed, the stream must be dealt to the model's clients again.
  ASSERT_EQ(omkl("run " + stream + " --save m.ckpt").code, 0);
  EXPECT_EQ(omkl("run --rounds 20 --clients 3 --data air.csv --resume m.ckpt").code, 0);
  expect_run_fails("--rounds 20 --clients 2 --data air.csv --resume m.ckpt",
                   {"--resume m.ckpt", "dealt to 3 clients", "air.csv is dealt to 2 clients"});
  expect_run_fails("--data air.csv --resume m.ckpt", {"air.csv is not dealt to federated clients"});
  // predict on the grouped file a model learned: the group column is no feature.
  ASSERT_EQ(omkl("run --preset fed-pofmkl --rounds 20 --data air.csv --group-column site --algo pof-mkl --save gm.ckpt").code, 0);
  const Outcome grouped = omkl("predict --model gm.ckpt --data air.csv --group-column site --predictions gp.csv");
  EXPECT_EQ(grouped.code, 0) << grouped.err;
  EXPECT_EQ(lines_of(read_text(dir_ / "gp.csv")).size(), lines_of(grouped_csv()).size());
  const Outcome ungrouped = omkl("predict --model gm.ckpt --data air.csv");
  EXPECT_EQ(ungrouped.code, 1);
  EXPECT_NE(ungrouped.err.find("stream has"), std::string::npos) << ungrouped.err;
}

// A user's ways to get wrong numbers with exit 0 or half-written files, found by an audit: each
// must now be refused, named, or cleaned up.
TEST_F(CliTest, AuditedInputsAreRefusedOrCleanedUp) {
  ASSERT_EQ(omkl("gen --kind dataset1 --samples 200 --out r.csv").code, 0);
  // 0/1 labels with a classification loss: no error rate made up from sign(f) ≠ y.
  std::string labels01 = "a,b,y\n", labels_pm = "a,b,y\n";
  for (int i = 0; i < 40; ++i) {
    const double a = 0.1 * (i % 7), b = 0.05 * (i % 11);
    labels01 += std::to_string(a) + "," + std::to_string(b) + "," + (a > b ? "1" : "0") + "\n";
    labels_pm += std::to_string(a) + "," + std::to_string(b) + "," + (a > b ? "1" : "-1") + "\n";
  }
  write("c01.csv", labels01);
  write("cpm.csv", labels_pm);
  expect_study_fails("--data c01.csv --loss logistic --algo raker:D=8", {"needs labels ±1"});
  expect_study_fails("--data c01.csv --loss logistic --algo kogd", {"needs labels ±1"});
  expect_study_fails("--data c01.csv --loss logistic --algo pof-mkl --clients 2 --rounds 20", {"needs labels ±1"});
  expect_run_fails("--data c01.csv --algo raker:D=8,loss=hinge", {"'loss'", "needs labels ±1"});
  // A ±1 target is not rescaled to {0, 1} by the normalisations that scale a regression target.
  for (const char* how : {"minmax-all", "jmlr23"}) {
    const Outcome o = omkl(std::string("study --data cpm.csv --normalize ") + how + " --algo raker:D=8 --seeds 1 --out n");
    ASSERT_EQ(o.code, 0) << how << ": " << o.err;
    const auto r = nlohmann::json::parse(read_text(dir_ / "n" / "summary.json")).at("results").at(0);
    EXPECT_EQ(r.at("metric"), "error_rate") << how;
    EXPECT_GT(r.at("final_mean").get<double>(), 0.0) << how << ": labels mapped to {0, 1} read as no mistakes";
  }
  // A column spanning more than a double: named, not NaN features.
  write("huge.csv", "a,b,y\n1e308,1,0.5\n-1e308,2,0.25\n0,3,0.125\n");
  expect_run_fails("--data huge.csv --normalize minmax --algo raker:D=8", {"huge", "feature column 1", "overflows"});
  // The same output spelt two ways (nothing exists yet): refused before anything is written.
  expect_run_fails("--data r.csv --algo raker:D=8 --save q.out --predictions ./q.out", {"name the same file"});
  EXPECT_FALSE(fs::exists(dir_ / "q.out"));
  fs::create_directories(dir_ / "sub");
  expect_run_fails("--data r.csv --algo raker:D=8 --save sub/../q.out --predictions q.out", {"name the same file"});
  // bench --json onto its own input.
  const Outcome bench = omkl("bench --data r.csv --seeds 1 --repeat 1 --algo raker:D=8 --json ./r.csv");
  EXPECT_EQ(bench.code, 2) << bench.err;
  EXPECT_NE(bench.err.find("is the file --data reads"), std::string::npos) << bench.err;
  EXPECT_EQ(read_text(dir_ / "r.csv").rfind("x1", 0), 0u) << "the input was overwritten";
  // Counts that overflow: a clear usage error, not an allocator's message.
  expect_study_fails("--data r.csv --clients 9223372036854775808 --rounds 2 --algo pof-mkl", {"more than 2^64"});
  expect_run_fails("--data synthetic:dataset1:18446744073709551615 --algo raker:D=8", {"larger than any memory"});
  const Outcome no_out = omkl("gen --out -");
  EXPECT_EQ(no_out.code, 2);
  EXPECT_NE(no_out.err.find("--out: a file path is needed"), std::string::npos) << no_out.err;
  // A reused --out keeps no file of an earlier run that this run does not write.
  ASSERT_EQ(omkl("study --data r.csv --algo omkl-gf:D=8 --seeds 1 --regret --out st").code, 0);
  ASSERT_TRUE(fs::exists(dir_ / "st" / "regret.csv"));
  ASSERT_EQ(omkl("study --data r.csv --algo raker:D=8 --seeds 1 --out st").code, 0);
  EXPECT_FALSE(fs::exists(dir_ / "st" / "regret.csv")) << "an earlier run's regret.csv survived";
  // A LIBSVM file whose last feature is absent is narrower than the model that learned it.
  write("a.svm", "1 1:0.5 3:0.2\n-1 2:0.1 3:0.9\n1 1:0.3 3:0.4\n");
  write("b.svm", "1 1:0.5\n-1 2:0.1\n");
  ASSERT_EQ(omkl("run --data a.svm --algo raker:D=8 --save a.ckpt").code, 0);
  const Outcome narrow = omkl("run --data b.svm --resume a.ckpt");
  EXPECT_EQ(narrow.code, 0) << narrow.err;
  write("c.svm", "1 1:0.5 4:1\n");
  expect_run_fails("--data c.svm --resume a.ckpt",
                   {"c.svm:1:3: feature index 4 exceeds n_features = 3 (the model in a.ckpt)"});
  // A CSV named .txt (read as LIBSVM by its name) with --format csv, whole or predicted.
  write("csv.txt", read_text(dir_ / "r.csv"));
  expect_run_fails("--data csv.txt --algo raker:D=8", {"csv.txt:1:1", "label"});
  const Outcome as_csv = omkl("run --data csv.txt --format csv --algo raker:D=8 --save t.ckpt");
  EXPECT_EQ(as_csv.code, 0) << as_csv.err;
  EXPECT_EQ(omkl("study --data csv.txt --format csv --algo raker:D=8 --seeds 1 --out tf").code, 0);
  EXPECT_EQ(omkl("predict --model t.ckpt --data csv.txt --format csv").code, 0);
  expect_run_fails("--data synthetic:dataset1:50 --format csv", {"built-in stream"});
  // Read as CSV, a narrower file is refused, not widened as a LIBSVM file would be.
  write("narrow.txt", "x1,y\n0.5,0.25\n");
  expect_run_fails("--data narrow.txt --format csv --resume t.ckpt", {"narrow.txt: stream has 1 features"});
}

// ---- bandit kernel selection (spec/bandit.md) ---------------------------------------------------

TEST_F(CliTest, BanditStudyWithTheLossOptionAndItsErrors) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --out f.csv").code, 0);
  const Outcome o = omkl("study --preset bandit-oks --loss absolute --data f.csv --algo ioks --algo oks:c_lambda=5 "
                         "--seeds 2 --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  const auto& r = summary.at("results").at(1);
  EXPECT_EQ(r.at("metric"), "mae");
  EXPECT_EQ(r.at("params").at("c_lambda"), "5");
  EXPECT_EQ(r.at("params").at("loss"), "absolute");
  // §8.6 logs: per algorithm and seed, selection counts (summing to T), the final p, the losses.
  const auto logs = nlohmann::json::parse(read_text(dir_ / "out" / "logs.json"));
  ASSERT_EQ(logs.size(), 2u);
  const auto& replicate = logs.at(0).at("replicates").at(1);
  double selected = 0.0;
  for (double v : replicate.at("selected")) selected += v;
  EXPECT_EQ(selected, 300.0);
  EXPECT_EQ(replicate.at("p").size(), 6u);
  EXPECT_EQ(replicate.at("kernel_loss").size(), 6u);
  expect_study_fails("--preset bandit-oks --loss absolute --data f.csv --algo oks++", {"not defined for OKS++"});
  expect_study_fails("--preset bandit-oks --loss logistic --data f.csv --algo ioks", {"labels ±1"});
  expect_study_fails("--preset bandit-oks --loss square --data f.csv --algo rf-oks++:D=0",
                     {"parameter 'D' must be in [1, 1000000], got 0"});
  expect_study_fails("--preset bandit-oks --loss hinge --data f.csv --algo ioks", {"--loss"});
}

// The time-matched mode (§6.4): budgets found against the reference on this machine, reported in
// summary.json; specs that fix their budget, or have none, run as given. What the budgets come to
// is measured, so only their presence and consistency are checked here (bench/ times them).
TEST_F(CliTest, TimeMatchedStudyReportsTheBudgetsItFound) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 400 --out f.csv").code, 0);
  const Outcome o = omkl("study --preset bandit-oks --loss square --data f.csv --algo rf-ioks --algo lkmbooks "
                         "--algo rf-oks++:D=40 --algo oks++ --time-match rf-oks++:D=40 --time-match-rows 200 "
                         "--seeds 2 --out out");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("time-matched budgets"), std::string::npos) << o.out;
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  const auto& match = summary.at("time_match");
  EXPECT_EQ(match.at("reference"), "rf-oks++:D=40");
  EXPECT_GT(match.at("reference_seconds_per_round").get<double>(), 0.0);
  EXPECT_EQ(match.at("probe_rows"), 200);
  const auto& algorithms = match.at("algorithms");
  ASSERT_EQ(algorithms.size(), 4u);
  const auto& results = summary.at("results");
  // rf-ioks got a D, lkmbooks a B, and each ran with it.
  for (const auto& [index, parameter] : {std::pair<int, const char*>{0, "D"}, {1, "B"}}) {
    const auto& entry = algorithms.at(index);
    ASSERT_TRUE(entry.contains(parameter)) << entry.dump();
    const std::string value = std::to_string(entry.at(parameter).get<std::size_t>());
    EXPECT_EQ(entry.at("spec"), entry.at("given").get<std::string>() + ":" + parameter + "=" + value);
    EXPECT_EQ(results.at(index).at("params").at(parameter), value);
    EXPECT_GT(entry.at("seconds_per_round").get<double>(), 0.0);
  }
  EXPECT_EQ(algorithms.at(2).at("spec"), "rf-oks++:D=40");
  EXPECT_NE(algorithms.at(2).at("note").get<std::string>().find("D given"), std::string::npos);
  EXPECT_NE(algorithms.at(3).at("note").get<std::string>().find("no budget parameter"), std::string::npos);
  expect_study_fails("--preset bandit-oks --loss square --data f.csv --algo rf-ioks --time-match rf-okz", {"rf-okz"});
}

TEST_F(CliTest, AnUnknownCommandOrOptionIsNamedWithTheNearestKnownOne) {
  write("f.csv", "a,y\n0.1,0.2\n0.3,0.4\n");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"studdy --data f.csv", {"omkl: error: unknown command 'studdy' (did you mean 'study'?)", "commands: study, run"}},
      {"frobnicate", {"omkl: error: unknown command 'frobnicate' (commands:"}},
      {"run --data f.csv --sed 3", {"omkl: error: unknown option '--sed' of 'omkl run' (did you mean '--seed'?)",
                                    "Run 'omkl run --help'"}},
      {"study --data f.csv --normalise=zscore", {"unknown option '--normalise' of 'omkl study' (did you mean '--normalize'?)"}},
      {"run --data f.csv --frobnicate", {"unknown option '--frobnicate' of 'omkl run'\n"}},
      {"--frob", {"omkl: error: unknown option '--frob'", "Run 'omkl --help'"}},
      {"study --data f.csv stray", {"omkl: error: unexpected argument 'stray' of 'omkl study'"}},
      {"study --data f.csv --seeds abc", {"omkl: error: --seeds: expected a positive integer, not 'abc'"}},
  };
  for (const auto& [args, messages] : cases) {
    const Outcome o = omkl(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    for (const auto& message : messages) EXPECT_NE(o.err.find(message), std::string::npos) << args << ": " << o.err;
  }
  EXPECT_EQ(omkl("--help").code, 0);
}

TEST_F(CliTest, VersionSuggestionsDuplicatesAndHeaderlessFiles) {
  const Outcome v = omkl("--version");
  EXPECT_EQ(v.code, 0);
  EXPECT_NE(v.out.find("omkl 0."), std::string::npos) << v.out;
  write("f.csv", "a,y\n0.1,0.2\n0.3,0.4\n");
  expect_study_fails("--data f.csv --algo rakr", {"unknown algorithm 'rakr'", "did you mean 'raker'"});
  expect_study_fails("--data f.csv --algo raker:D=8,D=9", {"parameter 'D' is given twice"});
  write("numbers.csv", "1,2,3\n4,5,6\n");
  expect_study_fails("--data numbers.csv --algo raker", {"numbers.csv:1:1", "header row"});
  // summary.json records what produced it.
  ASSERT_EQ(omkl("study --data f.csv --algo raker:D=4 --seeds 1 --normalize minmax --out out").code, 0);
  const auto summary = nlohmann::json::parse(read_text(dir_ / "out" / "summary.json"));
  EXPECT_EQ(summary.at("omkl_version").get<std::string>().rfind("0.", 0), 0u);
  EXPECT_NE(summary.at("command").get<std::string>().find("--normalize minmax"), std::string::npos);
  EXPECT_EQ(summary.at("data"), "f.csv");
  EXPECT_EQ(summary.at("normalization"), "minmax");
}

TEST_F(CliTest, ProgressLinesGoToStderrAndChangeNothing) {
  ASSERT_EQ(omkl("gen --kind dataset2 --samples 300 --out f.csv").code, 0);
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --predictions quiet.csv").code, 0);
  const Outcome o = omkl("run --data f.csv --algo raker:D=8 --progress 100 --predictions loud.csv");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(lines_of(o.err).size(), 3u) << o.err;  // after 100, 200 and 300 rows
  EXPECT_NE(o.err.find("300/300 rows, mse so far"), std::string::npos) << o.err;
  EXPECT_EQ(read_text(dir_ / "quiet.csv"), read_text(dir_ / "loud.csv")) << "blocks of 100 rows: the same numbers";
  const Outcome s = omkl("study --data f.csv --algo raker:D=8 --seeds 4 --threads 1 --progress 2");
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_NE(s.err.find("4/4 replicates"), std::string::npos) << s.err;
}

// ---- what the command line takes, and what it refuses, by name ---------------------------------

TEST_F(CliTest, EmptyValuesAndMalformedOptionValuesAreNamed) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n");
  // An empty value ('' from an unset shell variable) would mean "not given": refused by name.
  const std::vector<std::pair<std::string, std::string>> empty = {
      {"study --data f.csv --algo raker:D=8 --seeds 1 --out ''", "--out: empty value"},
      {"run --data f.csv --algo raker:D=8 --save ''", "--save: empty value"},
      {"run --data f.csv --algo raker:D=8 --predictions ''", "--predictions: empty value"},
      {"bench --data f.csv --algo raker:D=8 --json ''", "--json: empty value"},
      {"study --data f.csv --algo raker:D=8 --time-match ''", "--time-match: empty value"},
      {"study --data f.csv --algo raker:D=8 --one-hot ''", "--one-hot: empty value"},
      {"run --data '' --algo raker:D=8", "--data: empty value"},
      {"gen --out ''", "--out: empty value"},
  };
  for (const auto& [args, message] : empty) {
    const Outcome o = omkl(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find("omkl: error: " + message), std::string::npos) << args << ": " << o.err;
    EXPECT_EQ(o.out.find("mse"), std::string::npos) << args << ": ran: " << o.out;
  }
  EXPECT_FALSE(fs::exists(dir_ / "cells"));
  // A value CLI11 cannot read, a missing one and a repeated one read as the tool's other errors.
  const std::vector<std::pair<std::string, std::string>> malformed = {
      {"run --data f.csv --save-at abc", "omkl: error: --save-at: expected an integer, not 'abc'"},
      {"study --data f.csv --regret-lambda abc", "omkl: error: --regret-lambda: expected a number, not 'abc'"},
      {"run --data f.csv --seed", "omkl: error: --seed: a value is missing (expected a non-negative integer)"},
      {"run --data f.csv --algo", "omkl: error: --algo: a value is missing\n"},
      {"run --data f.csv --seed 1 --seed 2", "omkl: error: --seed is given 2 times: it takes one value, give it once"},
  };
  for (const auto& [args, message] : malformed) {
    const Outcome o = omkl(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << ": " << o.err;
    EXPECT_NE(o.err.find("Run 'omkl "), std::string::npos) << args << ": " << o.err;
  }
  // --save-at stops the run for its checkpoint: without --save it would keep nothing.
  const Outcome save_at = omkl("run --data f.csv --algo raker:D=8 --save-at 1");
  EXPECT_EQ(save_at.code, 2) << save_at.err;
  EXPECT_NE(save_at.err.find("--save-at 1 needs --save PATH"), std::string::npos) << save_at.err;
}

TEST_F(CliTest, PathsThatNameStandardOutputAreWrittenAsDash) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n");
  // Standard output a file (the fixture's redirection): the CSV there, the report on stderr,
  // nothing overwritten.
  Outcome o = omkl("run --data f.csv --algo raker:D=8 --predictions /dev/stdout");
  ASSERT_EQ(o.code, 0) << o.err;
  ASSERT_EQ(lines_of(o.out).size(), 4u) << o.out;
  EXPECT_EQ(lines_of(o.out)[0], "t,y,prediction");
  EXPECT_NE(o.err.find("mse"), std::string::npos) << o.err;
  ASSERT_EQ(omkl("run --data f.csv --algo raker:D=8 --save m.ckpt").code, 0);
  o = omkl("predict --model m.ckpt --data f.csv --predictions /dev/stdout");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(lines_of(o.out).size(), 4u) << o.out;
  // Standard output a pipe: /dev/stdout's link names no file ("pipe:[N]").
  const auto piped = [&](const std::string& args) {
    const std::string command = "cd " + quote(dir_.string()) + " && " + quote(cli_) + " " + args +
                                " 2>err.txt </dev/null | cat >piped.txt";
    EXPECT_EQ(std::system(command.c_str()), 0) << args << ": " << read_text(dir_ / "err.txt");
    return read_text(dir_ / "piped.txt");
  };
  EXPECT_EQ(lines_of(piped("run --data f.csv --algo raker:D=8 --predictions /dev/stdout")).size(), 4u);
  EXPECT_NE(read_text(dir_ / "err.txt").find("mse"), std::string::npos) << read_text(dir_ / "err.txt");
  // Any output through the library's writer, too: a pipe is written as it is.
  EXPECT_NE(piped("gen --kind dataset2 --samples 3 --out /dev/stdout").find("x1,"), std::string::npos);
  // A checkpoint is a file of its own.
  o = omkl("run --data f.csv --algo raker:D=8 --save /dev/stdout");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.err.find("--save /dev/stdout: a checkpoint is written to a file of its own"), std::string::npos) << o.err;
}

TEST_F(CliTest, OutputsWhereNothingCanBeCreatedAreRefusedBeforeTheWork) {
  // /proc takes no new files, whoever asks (root's access() says it may): named, before the work.
  if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc";
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"study --data f.csv --algo raker:D=8 --seeds 1 --out /proc/omkl_out", "--out /proc/omkl_out: cannot create files in /proc"},
      {"run --data f.csv --algo raker:D=8 --save /proc/omkl.ckpt", "--save /proc/omkl.ckpt: cannot create files in /proc"},
      {"run --data f.csv --algo raker:D=8 --predictions /proc/omkl.csv", "--predictions /proc/omkl.csv"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome o = omkl(args);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << ": " << o.err;
    EXPECT_EQ(o.out.find("mse"), std::string::npos) << args << ": refused after the work: " << o.out;
  }
}

TEST_F(CliTest, ALibsvmIndexBeyondAnyReasonIsFoundBeforeDensifying) {
  write("train.svm", "1 1:0.5 3:0.2\n-1 2:0.1 3:0.9\n1 1:0.3 3:0.4\n");
  ASSERT_EQ(omkl("run --data train.svm --algo raker:D=8 --save svm.ckpt").code, 0);
  // --resume checks the indices against the model's width first, as predict does: no dense
  // matrix 10^9 columns wide.
  write("idxbig.svm", "1 1000000000:0.5\n-1 1:0.2\n");
  const Outcome resumed = omkl("run --resume svm.ckpt --data idxbig.svm");
  EXPECT_EQ(resumed.code, 1) << resumed.err;
  EXPECT_NE(resumed.err.find("idxbig.svm:1:2: feature index 1000000000 exceeds n_features = 3 (the model in svm.ckpt)"),
            std::string::npos)
      << resumed.err;
  // predict names the model alike.
  const Outcome predicted = omkl("predict --model svm.ckpt --data idxbig.svm");
  EXPECT_EQ(predicted.code, 1) << predicted.err;
  EXPECT_NE(predicted.err.find("idxbig.svm:1:2: feature index 1000000000 exceeds n_features = 3 (the model in svm.ckpt)"),
            std::string::npos)
      << predicted.err;
  // A fresh run: a dense matrix larger than the machine's memory is refused at the index that
  // makes it so, before any allocation.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) GTEST_SKIP() << "the machine's memory is unknown";
  const unsigned long long index = static_cast<unsigned long long>(pages) * static_cast<unsigned long long>(page) / 4;
  write("huge.svm", "1 1:0.5\n-1 1:0.2 " + std::to_string(index) + ":1\n");
  const Outcome fresh = omkl("run --data huge.svm --algo raker:D=8");
  EXPECT_EQ(fresh.code, 1) << fresh.err;
  EXPECT_NE(fresh.err.find("huge.svm:2:3: 2 rows of dimension " + std::to_string(index)), std::string::npos)
      << fresh.err;
  EXPECT_NE(fresh.err.find("more than half of this machine's"), std::string::npos) << fresh.err;
  EXPECT_NE(fresh.err.find("is that index right?"), std::string::npos) << fresh.err;
}

TEST_F(CliTest, OneConfigurationTwiceIsRefusedNamingBoth) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--algo raker:D=8 --algo raker:D=8", "--algo 'raker:D=8' and --algo 'raker:D=8' both name raker:D=8"},
      {"--algo raker:D=8,eta=0.1 --algo raker:eta=0.1,D=8", "both name raker:eta=0.1,D=8"},
      {"--algo 'raker:D=8|16' --algo raker:D=16", "--algo 'raker:D=8|16' and --algo 'raker:D=16' both name"},
      // A default written out, or a number spelled otherwise: the study compares them as built.
      {"--algo raker:D=8 --algo raker:D=8,lambda=1e-2", "'raker:D=8' and 'raker:D=8,lambda=1e-2' are one configuration"},
  };
  for (const auto& [args, message] : cases) {
    const Outcome o = omkl("study --data synthetic:dataset2:50 --seeds 1 --out out " + args);
    EXPECT_EQ(o.code, 2) << args << ": " << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << args << ": " << o.err;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << args;
  }
  const Outcome bench = omkl("bench --data synthetic:dataset2:50 --repeat 1 --algo raker:D=8 --algo raker:D=8");
  EXPECT_EQ(bench.code, 2) << bench.err;
  EXPECT_EQ(bench.out.find("bench on"), std::string::npos) << bench.out;
  // A spec's empty value, and a grid where one configuration is meant.
  expect_run_fails("--data synthetic:dataset2:50 --algo raker:D=", {"parameter 'D' has an empty value in 'raker:D='"});
  expect_study_fails("--data synthetic:dataset2:50 --preset bandit-oks --loss square --algo rf-ioks "
                     "--time-match 'rf-oks++:D=1|2'",
                     {"--time-match 'rf-oks++:D=1|2' is a grid of 2 configurations"});
}

TEST_F(CliTest, BenchChecksEverythingBeforeItMeasuresAndSpeaksForItself) {
  write("f.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n");
  // The largest --seeds is checked before the first measurement, and the message is the bench's.
  Outcome o = omkl("bench --data f.csv --algo raker:D=8 --repeat 1 --seeds 1 100000000000");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("omkl: error: bench: --seeds 100000000000"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("bench on"), std::string::npos) << "measured before refusing: " << o.out;
  o = omkl("bench --data - --algo raker:D=8");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--data -: standard input is read live by `omkl run` and `omkl predict` only; omkl bench measures a whole"),
            std::string::npos)
      << o.err;
  o = omkl("bench --data f.csv --algo raker:D=8 --repeat 4000000000");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--repeat 4000000000: at most 1000"), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("bench on"), std::string::npos) << o.out;
}

TEST_F(CliTest, HeaderNamesAndCellsAreShownAsTheyAreInTheFile) {
  // An unnamed column would let a model's names check through: refused where it is.
  write("unnamed.csv", "a,,y\n0.1,0.2,1.0\n0.3,0.4,2.0\n");
  expect_run_fails("--data unnamed.csv --algo raker:D=8", {"unnamed.csv:1:2: column 2 has no name"});
  // A NUL byte in a cell: the message goes on past it, the byte shown as \x00.
  write("nul.csv", std::string("a,b,y\n0.1,0.2,1.0\n0.3,0") + '\0' + ".4,2.0\n");
  expect_run_fails("--data nul.csv --algo raker:D=8", {"nul.csv:3:2: non-numeric cell '0\\x00.4'"});
}

TEST_F(CliTest, ParametersOutsideTheirRangeAreRefusedByNameValueAndRange) {
  // Negative multipliers ran as if meaningful; zero switch steps reached the graph code's own
  // checks (exit 3, "weights must have a positive sum"); huge values overflowed inside.
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"raker:step_scale=-1", "algorithm 'raker': parameter 'step_scale' must be in (0, 1e+100], got -1"},
      {"raker:shrink_scale=-1", "algorithm 'raker': parameter 'shrink_scale' must be in [0, 1e+100], got -1"},
      {"adaraker:eta_w=-1", "algorithm 'adaraker': parameter 'eta_w' must be in [0, 1e+100], got -1"},
      {"omkl-gf:gf_last_regen_step=-2", "parameter 'gf_last_regen_step' must be in [-1, 1e+18], got -2"},
      {"omkl-sfg:lambda=1e300", "algorithm 'omkl-sfg': parameter 'lambda' must be in [0, 1e+100], got 1e300"},
      {"rf-ioks:U=1e300", "algorithm 'rf-ioks': parameter 'U' must be in (0, 1e+100], got 1e300"},
      {"raker:D=1000000000", "algorithm 'raker': parameter 'D' must be in [1, 1000000], got 1000000000"},
      {"raker:beta=nan", "parameter 'beta' expects a finite number in (0, 1], got 'nan'"}};
  for (const auto& [algo, message] : refused) {
    const Outcome o = omkl("run --data synthetic:dataset1:40 --algo " + algo);
    EXPECT_EQ(o.code, 2) << algo << ": " << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
  }
  // A switch at step 0: OMKL-GF keeps the first step's graph throughout.
  for (const char* algo : {"omkl-gf:switch_step=0", "omkl-gf:gf_last_regen_step=0", "omkl-sfg:switch_step=0"}) {
    const Outcome o = omkl(std::string("run --data synthetic:dataset1:40 --algo ") + algo);
    EXPECT_EQ(o.code, 0) << algo << ": " << o.err;
  }
  // A ridge weight at the top of its range overflows the model: a divergence, not an internal error.
  const Outcome o = omkl("run --data synthetic:dataset1:40 --algo omkl-sfg:lambda=1e100");
  EXPECT_EQ(o.code, 3) << o.err;
  EXPECT_NE(o.err.find("diverged"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("positive sum"), std::string::npos) << o.err;
}

TEST_F(CliTest, RunScoresByTheMetricOfTheLossAsAStudyDoes) {
  std::string rows = "a,b,y\n";
  for (int t = 0; t < 30; ++t)
    rows += std::to_string(0.03 * t) + "," + std::to_string(1.0 - 0.02 * t) + "," + (t % 3 ? "1" : "-1") + "\n";
  write("pm1.csv", rows);
  // --loss square on labels ±1: the squared error, the same number as the study's.
  Outcome o = omkl("run --data pm1.csv --algo raker:D=8 --loss square");
  ASSERT_EQ(o.code, 0) << o.err;
  const std::size_t at = o.out.find(", mse ");
  ASSERT_NE(at, std::string::npos) << o.out;
  const double run_mse = std::stod(o.out.substr(at + 6));
  o = omkl("study --data pm1.csv --algo raker:D=8 --loss square --seeds 1 --out s");
  ASSERT_EQ(o.code, 0) << o.err;
  const nlohmann::json summary = nlohmann::json::parse(read_text(dir_ / "s" / "summary.json"));
  EXPECT_EQ(summary["results"][0]["metric"], "mse");
  EXPECT_NEAR(run_mse, summary["results"][0]["final_mean"].get<double>(), 1e-5 * run_mse);
  // --loss absolute: the mean absolute error, also with --progress's running figure.
  o = omkl("run --data synthetic:dataset1:60 --algo raker:D=8 --loss absolute --progress 30");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", mae "), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("mae so far"), std::string::npos) << o.err;
  // Without --loss, by the task: the error rate of a classifier.
  o = omkl("run --data pm1.csv --algo raker:D=8");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", error_rate "), std::string::npos) << o.out;
}

// A model read from a file (--resume, predict) is scored by the loss it was trained with: a
// model of --loss absolute keeps reporting the mean absolute error.
TEST_F(CliTest, AResumedOrServedModelIsScoredByItsOwnLoss) {
  Outcome o = omkl("run --data synthetic:dataset1:80 --algo raker:D=8 --loss absolute --save-at 40 --save m.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", mae "), std::string::npos) << o.out;
  o = omkl("run --data synthetic:dataset1:80 --resume m.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", mae "), std::string::npos) << o.out;
  o = omkl("predict --data synthetic:dataset1:80 --model m.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find("mae"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("mse"), std::string::npos) << o.out;
  // A squared-loss model keeps the task's metric.
  o = omkl("run --data synthetic:dataset1:80 --algo raker:D=8 --save-at 40 --save s.ckpt");
  ASSERT_EQ(o.code, 0) << o.err;
  o = omkl("run --data synthetic:dataset1:80 --resume s.ckpt");
  EXPECT_NE(o.out.find(", mse "), std::string::npos) << o.out;
}

// bench --json to standard output: the JSON is all of stdout, the table goes to stderr; a study
// has no standard-output form (it writes a folder).
TEST_F(CliTest, BenchJsonOnStandardOutputMovesTheTableToStderr) {
  Outcome o = omkl("bench --data synthetic:dataset1:60 --algo raker:D=4 --seeds 1 --repeat 1 --json -");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  const nlohmann::json doc = nlohmann::json::parse(o.out);
  EXPECT_EQ(doc["results"].size(), 1u) << o.out;
  EXPECT_NE(o.err.find("bench on"), std::string::npos) << o.err;
  o = omkl("study --data synthetic:dataset1:60 --algo raker:D=4 --seeds 1 --out -");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--out -: a study writes a folder"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(dir_ / "-"));
  // --save-at written as -1 (the option's "not given" inside) is refused as any negative count.
  o = omkl("run --data synthetic:dataset1:60 --algo raker:D=4 --save-at -1 --save x.ckpt");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("--save-at -1 is negative"), std::string::npos) << o.err;
  // A control byte in an argument is shown escaped, not sent to the terminal.
  o = omkl("run --data synthetic:dataset1:60 --algo \"$(printf 'ra\\001ker')\"");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("ra\\x01ker"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\x01'), std::string::npos) << o.err;
}

TEST_F(CliTest, ARegressionLossMakesTargetsOfPlusOrMinusOneARegressionTarget) {
  // A constant target of 1 reads as labels (every value is ±1); --loss square says otherwise.
  write("consty.csv", "a,b,y\n0.1,0.2,1\n0.3,0.4,1\n0.5,0.1,1\n0.2,0.9,1\n");
  Outcome o = omkl("run --data consty.csv --algo omkl-gf:D=4 --loss square");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.out.find(", mse "), std::string::npos) << o.out;
  o = omkl("run --data consty.csv --algo omkl-gf:D=4");
  EXPECT_EQ(o.code, 2) << o.err;
  EXPECT_NE(o.err.find("regression"), std::string::npos) << o.err;
}

TEST_F(CliTest, AClassificationPresetRefusesTargetsThatAreNotLabels) {
  write("reg.csv", "a,b,y\n0.1,0.2,0.3\n0.4,0.5,0.6\n0.7,0.8,0.9\n0.2,0.9,0.1\n");
  expect_study_fails("--data reg.csv --preset jmlr19-classification --algo raker:D=8",
                     {"preset 'jmlr19-classification' is a classification protocol", "reg.csv",
                      "--labels pm1", "jmlr19-regression"});
  const Outcome o = omkl("run --data reg.csv --preset jmlr19-classification --algo raker:D=8");
  EXPECT_EQ(o.code, 2) << o.err;
  // Two classes written 0/1, mapped to ±1: the protocol's stream.
  write("01.csv", "a,b,y\n0.1,0.2,0\n0.4,0.5,1\n0.7,0.8,1\n0.2,0.9,0\n");
  EXPECT_EQ(omkl("run --data 01.csv --labels pm1 --preset jmlr19-classification --algo raker:D=8").code, 0);
}

TEST_F(CliTest, TheBanditPresetTakesTheAbsoluteLossTablesAlgorithms) {
  std::string rows = "a,b,y\n";
  for (int t = 0; t < 40; ++t) rows += std::to_string(0.02 * t) + "," + std::to_string(0.5 - 0.01 * t) + "," +
                                       std::to_string(0.1 + 0.015 * (t % 7)) + "\n";
  write("elev.csv", rows);
  // OKS++ has no absolute-loss rows (Tables 4 and 7): OKS and RF-OKS run in its place.
  Outcome o = omkl("study --preset bandit-oks --loss absolute --data elev.csv --seeds 1");
  ASSERT_EQ(o.code, 0) << o.err;
  for (const char* algo : {"\noks ", "\nioks ", "\nrf-oks ", "\nrf-ioks "})
    EXPECT_NE(o.out.find(algo), std::string::npos) << algo << " missing:\n" << o.out;
  EXPECT_EQ(o.out.find("oks++"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mae"), std::string::npos) << o.out;
  o = omkl("run --preset bandit-oks --loss absolute --data elev.csv");
  EXPECT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("oks++"), std::string::npos) << o.out;
  o = omkl("list");
  EXPECT_NE(o.out.find("without --algo, loss absolute: oks, ioks, rf-oks, rf-ioks"), std::string::npos) << o.out;
}

TEST_F(CliTest, DescribeStatesStreamDependentDefaultsAsRulesAndEveryRange) {
  Outcome o = omkl("describe raker");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.out.find("eta (default 0.25"), std::string::npos) << "a probe stream's 1/√16:\n" << o.out;
  EXPECT_NE(o.out.find("eta (default from the stream"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("1/√T, T the stream length"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("step_scale (default 1; in (0, 1e+100])"), std::string::npos) << o.out;
  o = omkl("describe adaraker");
  EXPECT_EQ(o.out.find("levels (default 5"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("⌊log2 T⌋ + 1"), std::string::npos) << o.out;
}

TEST_F(CliTest, ARawStreamFarFromUnitScaleGetsOneNoteUnlessANormalisationWasAsked) {
  std::string rows = "freq,b,y\n";
  for (int t = 0; t < 30; ++t)
    rows += std::to_string(200 + 600 * t) + "," + std::to_string(0.01 * t) + "," + std::to_string(100 + t) + "\n";
  write("loud.csv", rows);
  const std::string note = "omkl: note: loud is not normalised and far from unit scale (feature 'freq' spans 200 to "
                           "1.76e+04, the target 100 to 129)";
  Outcome o = omkl("run --data loud.csv --algo raker:D=8");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find(note), std::string::npos) << o.err;
  EXPECT_EQ(o.out.find("note"), std::string::npos) << "the note is for stderr: " << o.out;
  o = omkl("study --data loud.csv --algo raker:D=8 --seeds 1");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_NE(o.err.find(note), std::string::npos) << o.err;
  // Asked for a normalisation (none included), or resuming a model, which keeps its own: no note.
  for (const char* quiet : {"run --data loud.csv --algo raker:D=8 --normalize none --save m.ckpt",
                            "run --data loud.csv --algo raker:D=8 --normalize minmax-all",
                            "study --data loud.csv --algo raker:D=8 --seeds 1 --normalize zscore",
                            "run --data loud.csv --resume m.ckpt", "predict --model m.ckpt --data loud.csv"}) {
    o = omkl(quiet);
    ASSERT_EQ(o.code, 0) << quiet << ": " << o.err;
    EXPECT_EQ(o.err.find("note:"), std::string::npos) << quiet << ": " << o.err;
  }
  // A stream of unit scale gets none.
  o = omkl("run --data synthetic:dataset2:60 --algo raker:D=8");
  ASSERT_EQ(o.code, 0) << o.err;
  EXPECT_EQ(o.err.find("note:"), std::string::npos) << o.err;
}

TEST_F(CliTest, ShuffleGivesEachReplicateItsOwnOrderAndIsRefusedOnAFederatedStream) {
  const auto finals = [&](const std::string& extra, const std::string& out) {
    const Outcome o = omkl("study --data synthetic:dataset2:120 --algo raker:D=8 --seeds 2 --seed 5 --out " + out +
                           " " + extra);
    EXPECT_EQ(o.code, 0) << o.err;
    return nlohmann::json::parse(read_text(dir_ / out / "summary.json")).at("results").at(0).at("final_per_seed");
  };
  const auto shuffled = finals("--shuffle", "a"), again = finals("--shuffle", "b"), in_order = finals("", "c");
  EXPECT_EQ(shuffled, again);
  EXPECT_NE(shuffled, in_order);
  // The finished cells are keyed by the order too: the unshuffled folder is not reused for --shuffle.
  EXPECT_EQ(finals("--shuffle", "c"), shuffled);
  const Outcome federated =
      omkl("study --data synthetic:dataset2:120 --clients 4 --rounds 30 --algo pof-mkl:M=1 --seeds 1 --shuffle");
  EXPECT_EQ(federated.code, 2) << federated.err;
  EXPECT_NE(federated.err.find("cannot also be shuffled"), std::string::npos) << federated.err;
}
