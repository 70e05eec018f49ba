// `omkl run` on live input: rows written one at a time into a pipe get their predictions back
// before the next row is written; a live run gives the numbers of the same rows read from a
// file; rows without a target are predicted only; SIGTERM leaves a valid checkpoint and complete
// predictions; memory does not grow with the stream.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/temp_dir_test.h"
#include "common/text_files.h"

namespace {

namespace fs = std::filesystem;
using omkl::test::lines_of;
using omkl::test::read_text;

#ifndef OMKL_CLI_PATH
#define OMKL_CLI_PATH ""
#endif

// A child `omkl` whose standard input and output are pipes held by the test.
class Child {
 public:
  Child(const std::string& cli, const std::vector<std::string>& args, const fs::path& dir) {
    int in[2], out[2];
    if (::pipe(in) != 0 || ::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::close(in[0]); ::close(in[1]); ::close(out[0]); ::close(out[1]);
      const int err = ::open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (err >= 0) ::dup2(err, STDERR_FILENO);
      if (::chdir(dir.c_str()) != 0) ::_exit(126);
      std::vector<char*> argv{const_cast<char*>(cli.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(cli.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_child_ = in[1];
    from_child_ = out[0];
  }
  ~Child() {
    close_input();
    if (from_child_ >= 0) ::close(from_child_);
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool started() const { return pid_ > 0 && to_child_ >= 0; }
  void write_line(const std::string& line) { write_raw(line + "\n"); }
  void write_raw(const std::string& text) {
    for (std::size_t done = 0; done < text.size();) {
      const ssize_t wrote = ::write(to_child_, text.data() + done, text.size() - done);
      ASSERT_GT(wrote, 0) << "the child closed its input";
      done += static_cast<std::size_t>(wrote);
    }
  }
  // The next line the child writes, waiting at most `timeout_ms`; empty on timeout or end.
  std::string read_line(int timeout_ms = 20000) {
    for (;;) {
      const auto newline = buffered_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffered_.substr(0, newline);
        buffered_.erase(0, newline + 1);
        return line;
      }
      pollfd p{from_child_, POLLIN, 0};
      if (::poll(&p, 1, timeout_ms) <= 0) return {};
      char chunk[4096];
      const ssize_t got = ::read(from_child_, chunk, sizeof chunk);
      if (got <= 0) return {};
      buffered_.append(chunk, static_cast<std::size_t>(got));
    }
  }
  void close_input() {
    if (to_child_ >= 0) ::close(to_child_);
    to_child_ = -1;
  }
  void signal(int number) { ::kill(pid_, number); }
  // Exit status (128 + signal for a signal death).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  // The running child's own high-water resident memory (VmHWM) in KiB. Not wait4's ru_maxrss,
  // which also counts the forked copy of the test process from before the exec.
  long peak_rss_kib() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);)
      if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    return 0;
  }
  std::string rest_of_output() {
    std::string all;
    for (std::string line = read_line(); !line.empty() || !buffered_.empty(); line = read_line()) all += line + "\n";
    return all;
  }

 private:
  pid_t pid_ = -1;
  int to_child_ = -1, from_child_ = -1;
  bool waited_ = false;
  std::string buffered_;
};

// Row i of a small regression stream: 3 features and a target, as CSV.
std::string row(int i) {
  const double a = 0.1 * (i % 7), b = 0.05 * (i % 11), c = 0.3 * ((i * 7) % 5);
  std::ostringstream s;
  s.precision(17);
  s << a << "," << b << "," << c << "," << (a * a - b + 0.5 * c);
  return s.str();
}

class LiveCliTest : public omkl::test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    cli_ = OMKL_CLI_PATH;
    if (cli_.empty() || !fs::exists(cli_)) GTEST_SKIP() << "omkl CLI not built at '" << cli_ << "'";
  }
  int omkl(const std::string& args) const {
    const std::string command = "cd '" + dir_.string() + "' && '" + cli_ + "' " + args + " >out.txt 2>err.txt </dev/null";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string err() const { return read_text(dir_ / "stderr.txt") + read_text(dir_ / "err.txt"); }

  std::string cli_;
};

TEST_F(LiveCliTest, EachRowIsPredictedBeforeTheNextArrives) {
  constexpr int kRows = 6;
  Child child(cli_, {"run", "--data", "-", "--algo", "raker:D=8", "--horizon", std::to_string(kRows), "--predictions", "-"},
              dir_);
  ASSERT_TRUE(child.started());
  child.write_line("a,b,c,y");
  EXPECT_EQ(child.read_line(), "t,y,prediction");
  std::vector<std::string> live;
  for (int i = 0; i < kRows; ++i) {
    child.write_line(row(i));
    const std::string line = child.read_line();  // answered while the pipe is still open
    ASSERT_FALSE(line.empty()) << "no prediction for row " << i + 1 << " before the next row: " << err();
    live.push_back(line);
  }
  child.close_input();
  EXPECT_EQ(child.wait(), 0) << err();
  // The same rows read whole from a file (horizon = its length) give the same predictions.
  std::string csv = "a,b,c,y\n";
  for (int i = 0; i < kRows; ++i) csv += row(i) + "\n";
  std::ofstream(dir_ / "rows.csv") << csv;
  ASSERT_EQ(omkl("run --data rows.csv --algo raker:D=8 --predictions file.csv"), 0) << err();
  const auto from_file = lines_of(read_text(dir_ / "file.csv"));
  ASSERT_EQ(from_file.size(), static_cast<std::size_t>(kRows + 1));
  for (int i = 0; i < kRows; ++i) EXPECT_EQ(live[i], from_file[i + 1]) << "row " << i + 1;
}

TEST_F(LiveCliTest, AFailedPredictionWriteEndsTheRun) {
  // A full disk (/dev/full: every write fails with ENOSPC) must not lose the predictions unseen.
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  std::ofstream(dir_ / "in.csv") << "a,b,c,y\n" << row(0) << "\n" << row(1) << "\n";
  const std::string command = "cd '" + dir_.string() + "' && '" + cli_ +
                              "' run --data - --algo raker:D=8 --horizon 10 --predictions - <in.csv >/dev/full 2>err.txt";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 3) << err();
  EXPECT_NE(err().find("--predictions -: cannot write"), std::string::npos) << err();
  // A bad first row: the run fails naming it, and leaves no predictions file of a header alone.
  std::ofstream(dir_ / "bad.csv") << "a,b,c,y\n1,x,2,3\n";
  const std::string bad = "cd '" + dir_.string() + "' && '" + cli_ +
                          "' run --data - --algo raker:D=8 --horizon 10 --predictions p.csv <bad.csv >out.txt 2>err.txt";
  EXPECT_EQ(WEXITSTATUS(std::system(bad.c_str())), 1);
  EXPECT_NE(err().find("<stdin>:2:2"), std::string::npos) << err();
  EXPECT_FALSE(fs::exists(dir_ / "p.csv"));
}

TEST_F(LiveCliTest, RowsWithoutTargetAreOnlyPredicted) {
  std::ofstream(dir_ / "in.csv") << "a,b,c,y\n" << row(0) << "\n" << "0.1,0.2,0.3,\n" << "0.1,0.2,0.3\n" << row(1) << "\n";
  const std::string command = "cd '" + dir_.string() + "' && '" + cli_ +
                              "' run --data - --algo raker:D=8 --horizon 10 --predictions p.csv <in.csv >out.txt 2>err.txt";
  ASSERT_EQ(std::system(command.c_str()), 0) << err();
  const auto p = lines_of(read_text(dir_ / "p.csv"));
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p[1].rfind("1,", 0), 0u) << p[1];
  EXPECT_EQ(p[2].rfind("2,,", 0), 0u) << "an empty target cell: predicted as sample 2, y empty: " << p[2];
  EXPECT_EQ(p[3].rfind("2,,", 0), 0u) << "a left-out target: the same: " << p[3];
  EXPECT_EQ(p[2], p[3]) << "nothing was learned in between";
  EXPECT_EQ(p[4].rfind("2,", 0), 0u) << "the next labelled row is the model's sample 2: " << p[4];
  // The report counts the rows without a target apart: they are documented input, not an error.
  EXPECT_NE(read_text(dir_ / "out.txt").find("4 rows, 2 learned, 2 without a target, predicted only"),
            std::string::npos)
      << read_text(dir_ / "out.txt");
}

TEST_F(LiveCliTest, APredictionsFileIsReplacedOnlyWithTheRunsFirstRow) {
  // Standard input `in`, `--predictions lp.csv`: the exit status.
  const auto live = [&](const std::string& in, const std::string& more = "") {
    const std::string command = "cd '" + dir_.string() + "' && '" + cli_ +
                                "' run --data - --algo raker:D=8 --horizon 5 --predictions lp.csv " + more + " <" +
                                in + " >out.txt 2>err.txt";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  const auto temporaries = [&] {
    std::size_t n = 0;
    for (const auto& entry : fs::directory_iterator(dir_))
      n += entry.path().filename().string().find(".tmp.") != std::string::npos;
    return n;
  };
  std::ofstream(dir_ / "bad_first.csv") << "a,b,y\n0.1,x,1\n";
  std::ofstream(dir_ / "header_only.csv") << "a,b,y\n";
  for (const char* in : {"bad_first.csv", "header_only.csv"}) {
    std::ofstream(dir_ / "lp.csv") << "GOOD\n";
    EXPECT_EQ(live(in), 1) << in << ": " << err();
    EXPECT_EQ(read_text(dir_ / "lp.csv"), "GOOD\n") << in << ": a run that predicted nothing replaced the file";
    EXPECT_EQ(temporaries(), 0u) << in;
  }
  // A bad row after two good ones: the file holds the run's rows up to it, no more.
  std::ofstream(dir_ / "bad_third.csv") << "a,b,y\n0.1,0.2,1\n0.3,0.4,2\n0.5,zz,1\n";
  EXPECT_EQ(live("bad_third.csv"), 1);
  EXPECT_NE(err().find("<stdin>:4:2"), std::string::npos) << err();
  const auto partial = lines_of(read_text(dir_ / "lp.csv"));
  ASSERT_EQ(partial.size(), 3u) << read_text(dir_ / "lp.csv");
  EXPECT_EQ(partial[0], "t,y,prediction");
  EXPECT_EQ(partial[2].rfind("2,2,", 0), 0u) << partial[2];
  EXPECT_EQ(temporaries(), 0u);
  // Through a symbolic link: the file it names is replaced, the link kept.
  fs::remove(dir_ / "lp.csv");
  std::ofstream(dir_ / "target.csv") << "GOOD\n";
  fs::create_symlink("target.csv", dir_ / "lp.csv");
  std::ofstream(dir_ / "good.csv") << "a,b,y\n0.1,0.2,1\n";
  EXPECT_EQ(live("good.csv"), 0) << err();
  EXPECT_TRUE(fs::is_symlink(dir_ / "lp.csv"));
  EXPECT_EQ(lines_of(read_text(dir_ / "target.csv")).size(), 2u) << read_text(dir_ / "target.csv");
  EXPECT_EQ(temporaries(), 0u);
}

TEST_F(LiveCliTest, PredictionsToDevStdoutGoToStandardOutputInOrder) {
  // /dev/stdout behind a pipe names no file ("pipe:[N]"): it is standard output, as "-" is, and
  // the report moves to standard error.
  std::ofstream(dir_ / "in.csv") << "a,b,c,y\n" << row(0) << "\n" << row(1) << "\n";
  const std::string command = "cd '" + dir_.string() + "' && '" + cli_ +
                              "' run --data - --algo raker:D=8 --horizon 5 --predictions /dev/stdout <in.csv "
                              "2>err.txt | cat >piped.txt";
  ASSERT_EQ(std::system(command.c_str()), 0) << err();
  const auto piped = lines_of(read_text(dir_ / "piped.txt"));
  ASSERT_EQ(piped.size(), 3u) << read_text(dir_ / "piped.txt");
  EXPECT_EQ(piped[0], "t,y,prediction");
  EXPECT_NE(err().find("(live): 2 rows"), std::string::npos) << err();
}

TEST_F(LiveCliTest, ResumedModelBringsItsNormalisationToLiveRows) {
  std::string csv = "a,b,c,y\n";
  for (int i = 0; i < 80; ++i) csv += row(i) + "\n";
  std::string rest = "a,b,c,y\n";
  for (int i = 40; i < 80; ++i) rest += row(i) + "\n";
  std::ofstream(dir_ / "all.csv") << csv;
  std::ofstream(dir_ / "rest.csv") << rest;
  ASSERT_EQ(omkl("run --data all.csv --normalize zscore --algo raker:D=8 --save-at 40 --save ck"), 0) << err();
  ASSERT_EQ(omkl("run --data rest.csv --resume ck --predictions file.csv"), 0) << err();
  const std::string live = "cd '" + dir_.string() + "' && '" + cli_ +
                           "' run --data - --resume ck --predictions live.csv <rest.csv >out.txt 2>err.txt";
  ASSERT_EQ(std::system(live.c_str()), 0) << err();
  EXPECT_EQ(read_text(dir_ / "live.csv"), read_text(dir_ / "file.csv"));
}

TEST_F(LiveCliTest, OnlineScalerStateTravelsWithTheModel) {
  // A running z-score: the model saved after row 40 keeps the scaler's state, so resuming on
  // rows 41..80 (a file, or the same rows live) continues the uninterrupted run digit for digit.
  std::string csv = "a,b,c,y\n", rest = "a,b,c,y\n";
  for (int i = 0; i < 80; ++i) {
    csv += row(i) + "\n";
    if (i >= 40) rest += row(i) + "\n";
  }
  std::ofstream(dir_ / "all.csv") << csv;
  std::ofstream(dir_ / "rest.csv") << rest;
  ASSERT_EQ(omkl("run --data all.csv --normalize running-zscore --algo raker:D=8 --predictions straight.csv"), 0)
      << err();
  ASSERT_EQ(omkl("run --data all.csv --normalize running-zscore --algo raker:D=8 --save-at 40 --save ck"), 0) << err();
  ASSERT_EQ(omkl("run --data rest.csv --resume ck --predictions resumed.csv"), 0) << err();
  const std::string live = "cd '" + dir_.string() + "' && '" + cli_ +
                           "' run --data - --resume ck --predictions live.csv <rest.csv >out.txt 2>err.txt";
  ASSERT_EQ(std::system(live.c_str()), 0) << err();
  const auto straight = lines_of(read_text(dir_ / "straight.csv"));
  const auto resumed = lines_of(read_text(dir_ / "resumed.csv"));
  ASSERT_EQ(straight.size(), 81u);
  ASSERT_EQ(resumed.size(), 41u);
  for (std::size_t i = 1; i < resumed.size(); ++i) EXPECT_EQ(resumed[i], straight[40 + i]) << "row " << 40 + i;
  EXPECT_EQ(read_text(dir_ / "live.csv"), read_text(dir_ / "resumed.csv"));
  // A fresh live model may use an online scaler.
  const std::string fresh = "cd '" + dir_.string() + "' && '" + cli_ +
                            "' run --data - --algo raker:D=8 --horizon 40 --normalize running-minmax <rest.csv "
                            ">out.txt 2>err.txt";
  EXPECT_EQ(std::system(fresh.c_str()), 0) << err();
}

TEST_F(LiveCliTest, LibsvmRowsLiveEqualTheWholeFile) {
  // The same sparse rows, read whole (dimension from the largest index) and live (--features).
  std::string svm;
  for (int i = 0; i < 30; ++i) {
    std::ostringstream line;
    line.precision(17);
    line << 0.1 * (i % 5) << " 1:" << 0.1 * (i % 7) << (i % 3 ? " 2:0.5" : "") << " 3:" << 0.05 * (i % 11) << "\n";
    svm += line.str();
  }
  std::ofstream(dir_ / "rows.svm") << svm;
  ASSERT_EQ(omkl("run --data rows.svm --algo raker:D=8 --predictions file.csv"), 0) << err();
  const std::string live = "cd '" + dir_.string() + "' && '" + cli_ +
                           "' run --data - --format libsvm --features 3 --horizon 30 --algo raker:D=8 "
                           "--predictions live.csv <rows.svm >out.txt 2>err.txt";
  ASSERT_EQ(std::system(live.c_str()), 0) << err();
  EXPECT_EQ(read_text(dir_ / "live.csv"), read_text(dir_ / "file.csv"));
  // A line of index:value pairs alone is predicted, not learned from; an index beyond
  // --features is located.
  std::ofstream(dir_ / "more.svm") << "1 1:0.5\n2:0.25\n0.5 4:1\n";
  const std::string more = "cd '" + dir_.string() + "' && '" + cli_ +
                           "' run --data - --format libsvm --features 3 --horizon 5 --predictions p.csv <more.svm "
                           ">out.txt 2>err.txt";
  const int status = std::system(more.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
  EXPECT_NE(read_text(dir_ / "err.txt").find("<stdin>:3:2"), std::string::npos) << read_text(dir_ / "err.txt");
  const auto p = lines_of(read_text(dir_ / "p.csv"));
  ASSERT_GE(p.size(), 3u);
  EXPECT_EQ(p[2].rfind("2,,", 0), 0u) << "predicted as the model's sample 2, no target: " << p[2];
}

TEST_F(LiveCliTest, WhatALiveStreamCannotDoIsRefused) {
  std::ofstream(dir_ / "in.csv") << "a,b,c,y\n" << row(0) << "\n";
  const auto refused = [&](const std::string& args, const std::string& part) {
    const std::string command = "cd '" + dir_.string() + "' && '" + cli_ + "' run --data - " + args +
                                " <in.csv >out.txt 2>err.txt";
    const int status = std::system(command.c_str());
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << args;
    EXPECT_NE(read_text(dir_ / "err.txt").find(part), std::string::npos) << args << ": " << read_text(dir_ / "err.txt");
  };
  refused("--algo raker:D=8", "--horizon");
  refused("--algo raker:D=8 --horizon 5 --normalize zscore", "whole stream");
  refused("--algo raker:D=8 --horizon 5 --save-at 3", "--save-every");
  refused("--algo raker:D=8 --horizon 5 --save-every 2", "--save");
  refused("--algo raker:D=8 --horizon 5 --features 9", "--features 9: <stdin> has 3 features");
  // 0 would read as "not given": refused, not ignored.
  refused("--algo raker:D=8 --horizon 5 --features 0", "--features: must be at least 1");
  refused("--algo raker:D=8 --horizon 5 --save s.ckpt --save-every 0", "--save-every: must be at least 1");
  refused("--algo raker:D=8 --horizon 0", "--horizon: must be at least 1");
  const std::string follow = "cd '" + dir_.string() + "' && '" + cli_ +
                             "' run --data synthetic:dataset1:100 --follow --horizon 5 >out.txt 2>err.txt";
  const int follow_status = std::system(follow.c_str());
  EXPECT_EQ(WIFEXITED(follow_status) ? WEXITSTATUS(follow_status) : -1, 2);
  EXPECT_NE(read_text(dir_ / "err.txt").find("--follow needs a file"), std::string::npos)
      << read_text(dir_ / "err.txt");
  // Standard input is live input for `omkl run` only.
  const std::string study = "cd '" + dir_.string() + "' && '" + cli_ + "' study --data - --seeds 1 <in.csv >out.txt 2>err.txt";
  const int study_status = std::system(study.c_str());
  EXPECT_EQ(WIFEXITED(study_status) ? WEXITSTATUS(study_status) : -1, 2);
  EXPECT_NE(read_text(dir_ / "err.txt").find("omkl run"), std::string::npos) << read_text(dir_ / "err.txt");
  // unit-rows needs no statistics: accepted.
  const std::string ok = "cd '" + dir_.string() + "' && '" + cli_ +
                         "' run --data - --algo raker:D=8 --horizon 5 --normalize unit-rows <in.csv >out.txt 2>err.txt";
  EXPECT_EQ(std::system(ok.c_str()), 0) << read_text(dir_ / "err.txt");
  // A bad cell is located on its line of standard input.
  std::ofstream(dir_ / "bad.csv") << "a,b,c,y\n" << row(0) << "\n0.1,zz,0.3,1\n";
  const std::string bad = "cd '" + dir_.string() + "' && '" + cli_ +
                          "' run --data - --algo raker:D=8 --horizon 5 <bad.csv >out.txt 2>err.txt";
  const int status = std::system(bad.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1);
  EXPECT_NE(read_text(dir_ / "err.txt").find("<stdin>:3:2"), std::string::npos) << read_text(dir_ / "err.txt");
  // A stream that ends without a row is bad input, as an empty file is, and saves nothing.
  std::ofstream(dir_ / "header.csv") << "a,b,c,y\n";
  const std::string empty = "cd '" + dir_.string() + "' && '" + cli_ +
                            "' run --data - --algo raker:D=8 --horizon 5 --save hz.ckpt <header.csv >out.txt 2>err.txt";
  const int empty_status = std::system(empty.c_str());
  EXPECT_EQ(WIFEXITED(empty_status) ? WEXITSTATUS(empty_status) : -1, 1);
  EXPECT_NE(read_text(dir_ / "err.txt").find("<stdin>: empty stream"), std::string::npos) << read_text(dir_ / "err.txt");
  EXPECT_FALSE(fs::exists(dir_ / "hz.ckpt"));
}

TEST_F(LiveCliTest, SigtermLeavesAValidCheckpointAndCompletePredictions) {
  Child child(cli_, {"run", "--data", "-", "--algo", "raker:D=8", "--horizon", "100", "--predictions", "-", "--save",
                     "ck", "--save-every", "2"},
              dir_);
  ASSERT_TRUE(child.started());
  child.write_line("a,b,c,y");
  EXPECT_EQ(child.read_line(), "t,y,prediction");
  for (int i = 0; i < 5; ++i) {
    child.write_line(row(i));
    ASSERT_FALSE(child.read_line().empty()) << err();
  }
  // The child now waits on a quiet pipe: the signal must end that wait.
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 128 + SIGTERM) << err();
  EXPECT_NE(err().find("stopped by signal"), std::string::npos) << err();
  // The final checkpoint holds all 5 rows, and predicts.
  std::ofstream(dir_ / "next.csv") << "a,b,c,y\n" << row(5) << "\n";
  ASSERT_EQ(omkl("predict --model ck --data next.csv"), 0) << err();
  EXPECT_NE(read_text(dir_ / "out.txt").find("after 5 samples"), std::string::npos) << read_text(dir_ / "out.txt");
}

TEST_F(LiveCliTest, ADivergedModelStopsTheStreamWithoutACheckpoint) {
  std::ofstream in(dir_ / "in.csv");
  in << "a,b,c,y\n";
  for (int i = 0; i < 40; ++i) in << row(i) << "\n";
  in.close();
  // A step size that overflows θ within a few rows (θ grows about η-fold a row); a checkpoint
  // after every learned row.
  const std::string command = "cd '" + dir_.string() + "' && '" + cli_ +
                              "' run --data - --algo raker:D=8,eta=1e100 --horizon 40 --save ck --save-every 1 "
                              "--predictions p.csv <in.csv >out.txt 2>err.txt";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 3) << err();
  // The update that diverged is caught at the checkpoint after it, before its row's successor
  // is predicted: every prediction written is finite.
  EXPECT_NE(err().find("diverged with its update at <stdin>:"), std::string::npos) << err();
  const std::string predictions = read_text(dir_ / "p.csv");
  ASSERT_FALSE(predictions.empty());
  EXPECT_EQ(predictions.find("nan"), std::string::npos) << predictions;
  EXPECT_EQ(predictions.find("inf"), std::string::npos) << predictions;
  EXPECT_LT(std::count(predictions.begin(), predictions.end(), '\n'), 41) << "the stream was not stopped";
  // The checkpoint left is from before the divergence: it predicts, and finitely.
  const std::size_t rows_predicted = std::count(predictions.begin(), predictions.end(), '\n') - 1;
  ASSERT_TRUE(fs::exists(dir_ / "ck"));
  std::ofstream(dir_ / "one.csv") << "a,b,c,y\n" << row(1) << "\n";
  EXPECT_EQ(omkl("predict --model ck --data one.csv --predictions q.csv"), 0) << err();
  const std::string report = read_text(dir_ / "out.txt");
  const std::size_t at = report.find("(after ");
  ASSERT_NE(at, std::string::npos) << report;
  EXPECT_LE(std::stoul(report.substr(at + 7)), rows_predicted) << report;
  const std::string again = read_text(dir_ / "q.csv");
  EXPECT_EQ(again.find("nan"), std::string::npos) << again;
  EXPECT_EQ(again.find("inf"), std::string::npos) << again;
  // Without --save-every, the final checkpoint gets the same check: one row whose update
  // overflows θ, and no checkpoint, no report of a finished run.
  std::ofstream(dir_ / "single.csv") << "a,b,c,y\n0.3,0.5,0.9,1e120\n";
  const std::string single = "cd '" + dir_.string() + "' && '" + cli_ +
                             "' run --data - --algo raker:D=8,eta=1e100,step_scale=1e100 --horizon 40 --save last <single.csv "
                             ">out.txt 2>err.txt";
  const int single_status = std::system(single.c_str());
  EXPECT_EQ(WIFEXITED(single_status) ? WEXITSTATUS(single_status) : -1, 3) << err();
  EXPECT_NE(err().find("diverged with its update at <stdin>:2"), std::string::npos) << err();
  EXPECT_FALSE(fs::exists(dir_ / "last"));
  EXPECT_EQ(read_text(dir_ / "out.txt").find("learned"), std::string::npos) << read_text(dir_ / "out.txt");
}

TEST_F(LiveCliTest, MemoryDoesNotGrowWithTheStream) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the sanitizers' shadow memory and quarantine make resident memory grow by design";
#endif
  // Peak resident memory after 10^6 rows stays within 10 % (plus 1 MiB of allocator slack) of
  // that after 10^4 rows (about 6 MiB): keeping even one double per row would add 8 MiB.
  // bench/live_memory.sh measures 10^7 rows.
  const auto peak_kib_after = [&](int rows) {
    Child child(cli_, {"run", "--data", "-", "--algo", "raker:D=8", "--horizon", std::to_string(rows)}, dir_);
    EXPECT_TRUE(child.started());
    long peak = 0;
    std::string block = "a,b,c,y\n";
    for (int i = 0; i < rows; ++i) {
      block += row(i) + "\n";
      if (block.size() > (std::size_t{1} << 16)) {
        child.write_raw(block);
        block.clear();
        peak = std::max(peak, child.peak_rss_kib());  // sampled as the stream goes, up to its end
      }
    }
    child.write_raw(block);
    peak = std::max(peak, child.peak_rss_kib());
    child.close_input();
    EXPECT_EQ(child.wait(), 0) << err();
    return peak;
  };
  const long small = peak_kib_after(10000);
  const long large = peak_kib_after(1000000);
  EXPECT_GT(small, 0);
  EXPECT_LE(large, small + small / 10 + 1024) << "peak RSS " << small << " KiB at 10^4 rows, " << large
                                              << " KiB at 10^6 rows";
}

}  // namespace

TEST_F(LiveCliTest, AModelLearnedOnOneHotColumnsReadsLiveRowsThroughThem) {
  // --one-hot's model encodes a stream as written by its own columns' names: live rows, read one
  // at a time, are encoded as a file's rows are (a value it never saw sets no indicator).
  std::ofstream(dir_ / "train.csv") << "a,b,y\n-1,0.5,1\n1,0.25,-1\n0,0.5,1\n1,0.75,-1\n-1,0.1,1\n";
  ASSERT_EQ(omkl("run --data train.csv --algo raker:D=8,loss=logistic --one-hot a --save m.ckpt"), 0) << err();
  std::ofstream(dir_ / "new.csv") << "a,b,y\n-1,0.3,1\n2,0.5,-1\n1,0.2,-1\n";
  ASSERT_EQ(omkl("run --resume m.ckpt --data new.csv --predictions file.csv"), 0) << err();
  const std::string live = "cd '" + dir_.string() + "' && '" + cli_ +
                           "' run --resume m.ckpt --data - --predictions live.csv <new.csv >out.txt 2>err.txt";
  ASSERT_EQ(std::system(live.c_str()), 0) << read_text(dir_ / "err.txt");
  EXPECT_EQ(read_text(dir_ / "live.csv"), read_text(dir_ / "file.csv"));
  EXPECT_EQ(lines_of(read_text(dir_ / "live.csv")).size(), 4u);
}
