// The public Learner API end to end: block vs step-by-step equivalence, side-effect-free
// predict(), checkpoints that resume bit for bit, damaged checkpoints, input validation,
// seeding, and atomic checkpoint writes.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "random/rng.h"
#include "core/algorithm_base.h"
#include "core/state_io.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"

namespace {

namespace fs = std::filesystem;
using omkl::Dataset;
using omkl::Learner;
using omkl::Profile;
using omkl::Task;

constexpr std::size_t kApiSamples = 600;
constexpr std::size_t kApiFeatures = 4;

struct Case {
  std::string algo;
  Profile profile;
  Task task;
};

std::string describe(const Case& c) {
  return c.algo + " / " + omkl::to_string(c.profile) + " / " + omkl::to_string(c.task);
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const std::string algo : {"raker:D=8", "adaraker:D=8"})
    for (const Profile profile : {Profile::Paper, Profile::Reference})
      for (const Task task : {Task::Regression, Task::Classification}) cases.push_back({algo, profile, task});
  return cases;
}

Learner make(const Case& c, const Dataset& data, std::uint64_t seed = 5, std::uint64_t replicate = 0) {
  omkl::LearnerContext context;
  context.n_features = data.n_features;
  context.task = data.task;
  context.profile = c.profile;
  context.seed = seed;
  context.replicate = replicate;
  context.horizon = data.n_samples;
  return omkl::make_learner(omkl::parse_algorithm_spec(c.algo), context);
}

using omkl::test::first_difference;
using omkl::test::same_bits;

std::vector<double> run_block(Learner& learner, const Dataset& data, std::size_t begin, std::size_t end) {
  std::vector<double> p(end - begin);
  learner.partial_fit_block(data.row(begin), data.y.data() + begin, end - begin, p.data());
  return p;
}

std::vector<double> run_steps(Learner& learner, const Dataset& data, std::size_t begin, std::size_t end) {
  std::vector<double> p;
  for (std::size_t t = begin; t < end; ++t) p.push_back(learner.partial_fit(data.row(t), data.y[t]));
  return p;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Runs f; expects an InputError and returns its message.
std::string input_error_of(const std::function<void()>& f) { return omkl::test::message_of<omkl::InputError>(f); }

class LearnerApiTest : public omkl::test::TempDirTest {
 protected:

  // A learner halfway through a regression stream, saved to a checkpoint.
  fs::path saved_checkpoint(const Dataset& data) {
    Learner learner = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
    run_block(learner, data, 0, data.n_samples / 2);
    const fs::path path = dir_ / "model.ckpt";
    learner.save(path.string());
    return path;
  }

};

TEST_F(LearnerApiTest, StepByStepEqualsBlockBitForBit) {
  for (const Case& c : all_cases()) {
    const Dataset data = omkl::test::random_stream(kApiSamples, kApiFeatures, c.task);
    Learner one = make(c, data);
    Learner block = make(c, data);
    const std::vector<double> a = run_steps(one, data, 0, data.n_samples);
    const std::vector<double> b = run_block(block, data, 0, data.n_samples);
    EXPECT_TRUE(same_bits(a, b)) << describe(c) << ": " << first_difference(a, b);
    EXPECT_EQ(one.n_seen(), static_cast<std::int64_t>(kApiSamples));
    EXPECT_EQ(block.n_seen(), static_cast<std::int64_t>(kApiSamples));
    // Blocks of odd sizes (crossing any internal window) give the same numbers too.
    Learner pieces = make(c, data);
    std::vector<double> d;
    for (std::size_t begin = 0, size = 1; begin < data.n_samples; begin += size, size = size * 3 + 1) {
      const std::size_t end = std::min(data.n_samples, begin + size);
      const auto p = run_block(pieces, data, begin, end);
      d.insert(d.end(), p.begin(), p.end());
    }
    EXPECT_TRUE(same_bits(a, d)) << describe(c) << " (uneven blocks): " << first_difference(a, d);
    for (double v : a) ASSERT_TRUE(std::isfinite(v)) << describe(c);
  }
}

TEST_F(LearnerApiTest, PredictDoesNotChangeTheState) {
  for (const Case& c : all_cases()) {
    const Dataset data = omkl::test::random_stream(kApiSamples, kApiFeatures, c.task);
    const std::size_t half = data.n_samples / 2;
    Learner plain = make(c, data);
    Learner probed = make(c, data);
    run_block(plain, data, 0, half);
    run_block(probed, data, 0, half);
    // Many predictions on samples of the past and the future, through both overloads.
    std::vector<double> first_round;
    for (std::size_t t = 0; t < data.n_samples; t += 7) first_round.push_back(probed.predict(data.row(t)));
    std::vector<double> second_round;
    for (std::size_t t = 0; t < data.n_samples; t += 7) {
      const std::vector<double> x(data.row(t), data.row(t) + data.n_features);
      second_round.push_back(probed.predict(x));
    }
    EXPECT_TRUE(same_bits(first_round, second_round))
        << describe(c) << ": predict() is not repeatable: " << first_difference(first_round, second_round);
    EXPECT_EQ(probed.n_seen(), plain.n_seen());
    const double expected_next = plain.predict(data.row(half));
    EXPECT_EQ(probed.predict(data.row(half)), expected_next) << describe(c);
    const std::vector<double> a = run_steps(plain, data, half, data.n_samples);
    const std::vector<double> b = run_steps(probed, data, half, data.n_samples);
    EXPECT_TRUE(same_bits(a, b)) << describe(c) << ": " << first_difference(a, b);
    EXPECT_EQ(a.front(), expected_next) << describe(c) << ": partial_fit returns the prediction before the update";

    // A predict() before every step, from the very first one (interval starts included), changes
    // nothing either, and equals the prediction partial_fit then returns.
    Learner reference = make(c, data);
    Learner asked = make(c, data);
    const std::vector<double> expected = run_block(reference, data, 0, data.n_samples);
    std::vector<double> got, asked_first;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      asked_first.push_back(asked.predict(data.row(t)));
      got.push_back(asked.partial_fit(data.row(t), data.y[t]));
    }
    EXPECT_TRUE(same_bits(expected, got)) << describe(c) << ": " << first_difference(expected, got);
    EXPECT_TRUE(same_bits(expected, asked_first))
        << describe(c) << ": predict() differs from partial_fit's prediction: "
        << first_difference(expected, asked_first);
  }
}

TEST_F(LearnerApiTest, SaveLoadContinuesBitForBit) {
  for (const Case& c : all_cases()) {
    const Dataset data = omkl::test::random_stream(kApiSamples, kApiFeatures, c.task);
    Learner straight = make(c, data);
    const std::vector<double> expected = run_block(straight, data, 0, data.n_samples);
    // T/2 (+1: an odd split), and the edges: before any sample, after one, at an interval start.
    for (const std::size_t half : {data.n_samples / 2 + 1, std::size_t{0}, std::size_t{1}, std::size_t{256}}) {
      SCOPED_TRACE("saved after " + std::to_string(half) + " samples");
      Learner first = make(c, data);
      const std::vector<double> before = run_block(first, data, 0, half);
      const fs::path path = dir_ / "learner.ckpt";
      first.save(path.string());
      Learner resumed = Learner::load(path.string());
      EXPECT_EQ(resumed.n_seen(), static_cast<std::int64_t>(half)) << describe(c);
      EXPECT_EQ(resumed.n_features(), data.n_features);
      EXPECT_EQ(resumed.task(), data.task);
      EXPECT_EQ(resumed.spec(), first.spec());
      EXPECT_EQ(resumed.predict(data.row(half)), first.predict(data.row(half))) << describe(c);

      std::vector<double> got = before;
      const std::vector<double> after = run_block(resumed, data, half, data.n_samples);
      got.insert(got.end(), after.begin(), after.end());
      EXPECT_TRUE(same_bits(expected, got)) << describe(c) << ": " << first_difference(expected, got);

      // The original learner, continued without the round trip, agrees as well.
      const std::vector<double> original_after = run_steps(first, data, half, data.n_samples);
      EXPECT_TRUE(same_bits(after, original_after)) << describe(c) << ": " << first_difference(after, original_after);

      // Saving the restored learner at the end and loading again still predicts the same.
      const fs::path end_path = dir_ / "end.ckpt";
      resumed.save(end_path.string());
      Learner reloaded = Learner::load(end_path.string());
      EXPECT_EQ(reloaded.n_seen(), static_cast<std::int64_t>(data.n_samples));
      EXPECT_EQ(reloaded.predict(data.row(3)), first.predict(data.row(3))) << describe(c);
    }
  }
}

TEST_F(LearnerApiTest, CorruptedCheckpointIsRejectedByChecksum) {
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  const fs::path path = saved_checkpoint(data);
  std::string bytes = read_bytes(path);
  ASSERT_GT(bytes.size(), 64u);
  for (const std::size_t offset : {bytes.size() / 2, bytes.size() - 12, std::size_t{40}}) {
    std::string damaged = bytes;
    damaged[offset] = static_cast<char>(damaged[offset] ^ 0x5a);
    const fs::path bad = dir_ / ("damaged_" + std::to_string(offset) + ".ckpt");
    write_bytes(bad, damaged);
    const std::string msg = input_error_of([&] { Learner::load(bad.string()); });
    EXPECT_NE(msg.find("checksum"), std::string::npos) << "byte " << offset << ": " << msg;
    EXPECT_NE(msg.find(bad.string()), std::string::npos) << msg;
  }
  // The intact file still loads.
  EXPECT_NO_THROW(Learner::load(path.string()));
}

// A checksum guards against accidental damage only: a file with a valid checksum can still hold
// another model's or a crafted state. Damaged learner states (bytes flipped, small integers
// written over what may be counts or indices), re-sealed with a valid checksum, must load or
// fail with an omkl error; what loads may learn nonsense (damaged θ gives huge or non-finite
// predictions, as a diverging run does, and an exception from that is allowed) but must not
// crash (the sanitizer builds also check that no read goes out of bounds).
TEST_F(LearnerApiTest, ResealedDamagedStateLoadsOrFailsCleanly) {
  const std::string small_dict = "dict=gauss:0.5+gauss:2+lap:1+gauss:8";
  const std::vector<std::pair<std::string, Task>> algorithms = {
      {"raker:D=8", Task::Regression},
      {"raker:D=8,rf=rf,rng=numpy_legacy", Task::Regression},
      {"adaraker:D=8", Task::Regression},
      {"rf-ogd:D=8", Task::Regression},
      {"omkl-gf:D=8,M=2,J=2," + small_dict, Task::Regression},
      {"omkl-sfg:D=8,M=2," + small_dict, Task::Regression},
      {"omkl-sfg-r:D=8,M=2,beta_rank=2," + small_dict, Task::Regression},
      {"omkl-sfg-r:D=8,M=1,beta_rank=2,rf=rf,rng=numpy_legacy," + small_dict, Task::Regression},
      {"sfg-mkl-r:D=8,M=2,beta_rank=2," + small_dict, Task::Regression},
      {"rfomkr:D=8," + small_dict, Task::Regression},
      {"omkr:" + small_dict, Task::Regression},
      {"omkl", Task::Regression},
      {"omkl-b", Task::Regression},
      {"avgmkl", Task::Regression},
      {"adamkl", Task::Regression},
      {"kogd", Task::Regression},
      {"rbf", Task::Regression},
      {"m-forgetron", Task::Classification},
      // Federated (4 clients: 120 samples are 30 rounds; a damaged round in progress too).
      {"pof-mkl:clients=4,D=4,M=2,dict=gauss2:0.5+gauss2:2+gauss2:8", Task::Regression},
      {"vm-kofl:clients=4,D=4,dict=gauss2:0.5+gauss2:2+gauss2:8", Task::Regression},
      {"em-kofl:clients=4,D=4,dict=gauss2:0.5+gauss2:2+gauss2:8", Task::Regression},
      {"perfedavg:clients=4,hidden_layers=1,width=3", Task::Regression},
      // Bandit kernel selection.
      {"oks++", Task::Regression},
      {"ioks", Task::Regression},
      {"rf-oks++:D=8", Task::Regression},
      {"oks++:loss=logistic", Task::Classification},
      {"lkmbooks:B=20", Task::Regression},
  };
  omkl::detail::RandomStream rng(23, 0, omkl::detail::RngPurpose::Misc, 4);
  for (const auto& [algo, task] : algorithms) {
    const Dataset data = omkl::test::random_stream(240, kApiFeatures, task);
    Learner learner = make({algo, Profile::Paper, task}, data);
    run_block(learner, data, 0, 120);
    const fs::path path = dir_ / "model.ckpt";
    learner.save(path.string());
    const std::string payload = omkl::detail::read_checkpoint_file(path.string());
    // Where the algorithm's state starts: after the tag, the spec, the context and n_seen.
    omkl::detail::StateReader header(payload);
    std::size_t state_begin = 8;
    for (int i = 0; i < 3; ++i) state_begin += 8 + header.get_string().size();
    ASSERT_LT(state_begin, payload.size()) << algo;
    int loaded = 0, rejected = 0;
    for (int trial = 0; trial < 150; ++trial) {
      std::string damaged = payload;
      const std::size_t at = state_begin + rng.below(damaged.size() - state_begin);
      if (trial % 2 == 0) {
        damaged[at] = static_cast<char>(damaged[at] ^ (1 + rng.below(255)));
      } else {
        const std::uint64_t small = rng.below(40);
        for (std::size_t b = 0; b < 8 && at + b < damaged.size(); ++b)
          damaged[at + b] = static_cast<char>((small >> (8 * b)) & 0xff);
      }
      const fs::path bad = dir_ / "resealed.ckpt";
      omkl::detail::write_checkpoint_file(bad.string(), damaged);
      std::optional<Learner> restored;
      try {
        restored.emplace(Learner::load(bad.string()));
        ++loaded;
      } catch (const omkl::Error&) {
        ++rejected;
        continue;
      } catch (const std::exception& e) {
        ADD_FAILURE() << algo << ", trial " << trial << ": not an omkl error: " << e.what();
        continue;
      }
      try {
        run_block(*restored, data, 120, 140);
        (void)restored->predict(data.row(141));
      } catch (const std::exception&) {
        // learning from a damaged state may fail; it must not crash
      }
    }
    EXPECT_GT(loaded, 0) << algo;
    EXPECT_GT(rejected, 0) << algo;
  }
}

TEST_F(LearnerApiTest, ContextWithUnknownEnumeratorIsRejected) {
  // The stored task, profile and backend are indices; an index past the last enumerator is
  // damage, reported with the file's name, not cast into an enum.
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  const fs::path path = saved_checkpoint(data);
  const std::string payload = omkl::detail::read_checkpoint_file(path.string());
  omkl::detail::StateReader in(payload);
  const std::string tag = in.get_string(), spec = in.get_string(), blob = in.get_string();
  const std::size_t rest = 3 * 8 + tag.size() + spec.size() + blob.size();
  // Context layout: n_features, task, profile, seed, replicate, horizon, backend (u64 each).
  for (const auto& [word, what] : std::vector<std::pair<std::size_t, std::string>>{{1, "task"}, {2, "profile"},
                                                                                   {6, "backend"}}) {
    std::string damaged_blob = blob;
    damaged_blob[8 * word] = 9;
    omkl::detail::StateWriter out;
    out.put_string(tag);
    out.put_string(spec);
    out.put_string(damaged_blob);
    const fs::path bad = dir_ / ("enum_" + what + ".ckpt");
    omkl::detail::write_checkpoint_file(bad.string(), out.bytes() + payload.substr(rest));
    const std::string msg = input_error_of([&] { Learner::load(bad.string()); });
    EXPECT_NE(msg.find(bad.string()), std::string::npos) << msg;
    EXPECT_NE(msg.find(what + " 9"), std::string::npos) << msg;
  }
}

TEST_F(LearnerApiTest, TruncatedCheckpointIsRejected) {
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  const fs::path path = saved_checkpoint(data);
  const std::string bytes = read_bytes(path);
  for (const std::size_t keep : {std::size_t{0}, std::size_t{5}, std::size_t{30}, bytes.size() / 2,
                                 bytes.size() - 1}) {
    const fs::path bad = dir_ / ("truncated_" + std::to_string(keep) + ".ckpt");
    write_bytes(bad, bytes.substr(0, keep));
    const std::string msg = input_error_of([&] { Learner::load(bad.string()); });
    EXPECT_NE(msg.find(bad.string()), std::string::npos) << "kept " << keep << ": " << msg;
  }
  // Trailing garbage is rejected too.
  const fs::path padded = dir_ / "padded.ckpt";
  write_bytes(padded, bytes + "xyz");
  input_error_of([&] { Learner::load(padded.string()); });
}

TEST_F(LearnerApiTest, MissingCheckpointNamesThePath) {
  const fs::path missing = dir_ / "no_such_dir" / "absent.ckpt";
  const std::string msg = input_error_of([&] { Learner::load(missing.string()); });
  EXPECT_NE(msg.find(missing.string()), std::string::npos) << msg;
}

TEST_F(LearnerApiTest, WrongFeatureCountIsAnInputError) {
  const Dataset data = omkl::test::random_stream(100, kApiFeatures, Task::Regression);
  Learner learner = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
  run_block(learner, data, 0, 10);
  const double before = learner.predict(data.row(10));
  for (const std::size_t n : {kApiFeatures - 1, kApiFeatures + 1, std::size_t{0}}) {
    const std::vector<double> x(n, 0.5);
    std::string msg = input_error_of([&] { learner.predict(x); });
    EXPECT_NE(msg.find(std::to_string(n)), std::string::npos) << msg;
    msg = input_error_of([&] { learner.partial_fit(x, 0.5); });
    EXPECT_NE(msg.find(std::to_string(kApiFeatures)), std::string::npos) << msg;
  }
  EXPECT_EQ(learner.n_seen(), 10) << "a rejected sample is not consumed";
  EXPECT_EQ(learner.predict(data.row(10)), before) << "a rejected sample does not change the state";
}

TEST_F(LearnerApiTest, SeedAndReplicateDetermineTheNumbers) {
  const Dataset data = omkl::test::random_stream(300, kApiFeatures, Task::Regression);
  for (const std::string algo : {"raker:D=8", "adaraker:D=8", "rf-ogd:D=8"}) {
    const Case c{algo, Profile::Paper, Task::Regression};
    Learner a = make(c, data, 9, 0), b = make(c, data, 9, 0);
    Learner other_replicate = make(c, data, 9, 1), other_seed = make(c, data, 10, 0);
    const auto pa = run_block(a, data, 0, data.n_samples);
    const auto pb = run_block(b, data, 0, data.n_samples);
    const auto pr = run_block(other_replicate, data, 0, data.n_samples);
    const auto ps = run_block(other_seed, data, 0, data.n_samples);
    EXPECT_TRUE(same_bits(pa, pb)) << algo << ": " << first_difference(pa, pb);
    EXPECT_FALSE(same_bits(pa, pr)) << algo << ": replicate 1 repeats replicate 0";
    EXPECT_FALSE(same_bits(pa, ps)) << algo << ": seed 10 repeats seed 9";
  }
}

TEST_F(LearnerApiTest, CheckpointWritesAreAtomic) {
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  Learner learner = make({"adaraker:D=8", Profile::Paper, Task::Regression}, data);
  const fs::path path = dir_ / "model.ckpt";
  run_block(learner, data, 0, 50);
  learner.save(path.string());
  run_block(learner, data, 50, 100);
  learner.save(path.string());  // overwrite in place
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
  ASSERT_EQ(names.size(), 1u) << "leftover files next to the checkpoint, e.g. " << names.back();
  EXPECT_EQ(names[0], "model.ckpt");
  EXPECT_EQ(Learner::load(path.string()).n_seen(), 100);

  // A failed save (missing directory) throws InputError naming the path and leaves nothing.
  const fs::path impossible = dir_ / "missing_dir" / "model.ckpt";
  const std::string msg = input_error_of([&] { learner.save(impossible.string()); });
  EXPECT_NE(msg.find(impossible.string()), std::string::npos) << msg;
  names.clear();
  for (const auto& entry : fs::directory_iterator(dir_)) names.push_back(entry.path().filename().string());
  EXPECT_EQ(names.size(), 1u);
}

}  // namespace

// The federated and bandit families through the public API: blocks equal steps, and a learner
// saved mid-stream (mid-round for the federated ones) and loaded from its file continues
// bit-identically. The federated learners take their clients from the spec, or from
// LearnerContext::n_clients.
TEST_F(LearnerApiTest, FederatedAndBanditLearnersSaveAndResume) {
  const Dataset data = omkl::test::random_stream(300, kApiFeatures, Task::Regression);
  for (const std::string algo : {"pof-mkl:clients=4,D=6,M=2,dict=gauss2:0.5+gauss2:2+gauss2:8",
                                 "vm-kofl:D=6,dict=gauss2:0.5+gauss2:2", "em-kofl:clients=4,D=6,dict=gauss2:1",
                                 "perfedavg:clients=4", "oks++", "ioks", "rf-ioks:D=16", "lkmbooks:B=30"}) {
    omkl::LearnerContext context;
    context.n_features = data.n_features;
    context.horizon = data.n_samples;
    context.seed = 9;
    context.n_clients = 4;  // read by vm-kofl, which names no clients itself
    Learner straight = omkl::make_learner(omkl::parse_algorithm_spec(algo), context);
    const std::vector<double> expected = run_steps(straight, data, 0, 300);
    Learner blocked = omkl::make_learner(omkl::parse_algorithm_spec(algo), context);
    EXPECT_TRUE(same_bits(run_block(blocked, data, 0, 300), expected)) << algo;
    Learner first = omkl::make_learner(omkl::parse_algorithm_spec(algo), context);
    run_steps(first, data, 0, 150);
    const fs::path path = dir_ / "mid.ckpt";
    first.save(path.string());
    Learner resumed = Learner::load(path.string());
    EXPECT_EQ(resumed.n_seen(), 150);
    const std::vector<double> rest = run_steps(resumed, data, 150, 300);
    EXPECT_TRUE(same_bits(rest, std::vector<double>(expected.begin() + 150, expected.end())))
        << algo << ": " << first_difference(rest, std::vector<double>(expected.begin() + 150, expected.end()));
  }
}

// OKS's checkpoints kept only the loss sums (section "oks/1") and recomputed p from them on
// load, which before the first round is not the uniform p_1 = 1/K to the last bit; "oks/2" keeps
// p and q. An "oks/1" checkpoint written after some rounds still loads and continues bit for bit.
TEST_F(LearnerApiTest, AnOksCheckpointOfTheFirstFormatStillLoads) {
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  const Case c{"oks", Profile::Paper, Task::Regression};
  Learner straight = make(c, data);
  const std::vector<double> expected = run_steps(straight, data, 0, data.n_samples);
  Learner first = make(c, data);
  run_steps(first, data, 0, 80);
  const std::string payload = omkl::detail::open_checkpoint(first.to_bytes(), "<buffer>");
  // The section as the first format wrote it: the tag, then the K sums, and no q and p.
  omkl::detail::StateWriter tag2, tag1;
  tag2.put_tag("oks/2");
  tag1.put_tag("oks/1");
  const std::size_t at = payload.find(tag2.bytes());
  ASSERT_NE(at, std::string::npos);
  ASSERT_EQ(payload.find(tag2.bytes(), at + 1), std::string::npos) << "one OKS section";
  const std::size_t K = first.kernel_weights().size();
  const std::size_t array = sizeof(std::uint64_t) + K * sizeof(double);  // put_f64s: count, values
  const std::size_t sums_end = at + tag2.bytes().size() + array;
  const std::string old_payload = payload.substr(0, at) + tag1.bytes() + payload.substr(at + tag2.bytes().size(),
                                                                                          array) +
                                  payload.substr(sums_end + 2 * array);
  Learner resumed = Learner::from_bytes(omkl::detail::seal_checkpoint(old_payload));
  EXPECT_EQ(resumed.kernel_weights(), first.kernel_weights()) << "p recomputed from the sums after 80 rounds";
  const std::vector<double> rest = run_steps(resumed, data, 80, data.n_samples);
  EXPECT_TRUE(same_bits(rest, std::vector<double>(expected.begin() + 80, expected.end())))
      << first_difference(rest, std::vector<double>(expected.begin() + 80, expected.end()));
  // A section of neither format is refused by name.
  omkl::detail::StateWriter other;
  other.put_tag("oks/9");
  const std::string bad = payload.substr(0, at) + other.bytes() + payload.substr(at + tag2.bytes().size());
  const std::string message = input_error_of([&] { Learner::from_bytes(omkl::detail::seal_checkpoint(bad)); });
  EXPECT_NE(message.find("'oks/9' where 'oks/2' or 'oks/1' was expected"), std::string::npos) << message;
}

// Strict inputs: NaN/Inf features and targets, and classifier labels other than ±1, are refused
// with an InputError naming the sample, and the learner is left as it was.
TEST_F(LearnerApiTest, BadSamplesAreRefusedAndChangeNothing) {
  const Dataset data = omkl::test::random_stream(40, kApiFeatures, Task::Regression);
  Learner learner = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
  run_steps(learner, data, 0, 10);
  Learner twin = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
  run_steps(twin, data, 0, 10);
  std::vector<double> x(data.row(10), data.row(10) + kApiFeatures);
  x[2] = std::nan("");
  EXPECT_NE(input_error_of([&] { learner.partial_fit(x, 0.5); }).find("sample 11: feature 3"), std::string::npos);
  EXPECT_NE(input_error_of([&] { learner.predict(x); }).find("feature 3"), std::string::npos);
  x[2] = 0.1;
  EXPECT_NE(input_error_of([&] { learner.partial_fit(x, INFINITY); }).find("not finite"), std::string::npos);
  // A block with one bad row in the middle learns nothing.
  std::vector<double> xs(data.x.begin() + 10 * kApiFeatures, data.x.begin() + 20 * kApiFeatures);
  std::vector<double> ys(data.y.begin() + 10, data.y.begin() + 20), out(10);
  xs[5 * kApiFeatures] = -INFINITY;
  EXPECT_NE(input_error_of([&] { learner.partial_fit_block(xs.data(), ys.data(), 10, out.data()); }).find("sample 16"),
            std::string::npos);
  EXPECT_EQ(learner.n_seen(), 10);
  EXPECT_TRUE(same_bits(run_steps(learner, data, 10, 40), run_steps(twin, data, 10, 40)));
  // A classifier takes labels ±1 only.
  const Dataset labels = omkl::test::random_stream(20, kApiFeatures, Task::Classification);
  Learner classifier = make({"raker:D=8", Profile::Paper, Task::Classification}, labels);
  EXPECT_NE(input_error_of([&] { classifier.partial_fit(labels.row(0), 0.0); }).find("−1 or +1"), std::string::npos);
  EXPECT_EQ(classifier.n_seen(), 0);
}

// An update that throws after changing part of the model (the way IOKS's bisection, a device
// error or memory could) fails the learner: nothing half updated is used or saved afterwards,
// and the error says why and what to do. A refused sample, checked before anything changes,
// does not.
class FailingAlgorithm final : public omkl::detail::Algorithm {
 public:
  explicit FailingAlgorithm(int fail_at) : fail_at_(fail_at) {}
  std::size_t n_replicates() const override { return 1; }
  void step(const double* x, double y, double* predictions) override {
    predictions[0] = weight_ * x[0];
    weight_ += 0.5 * (y - predictions[0]);  // the first half of the update
    if (++steps_ == fail_at_) throw omkl::Error("the mirror step did not converge");
  }
  void predict(const double* x, double* predictions) override { predictions[0] = weight_ * x[0]; }
  void save_state(omkl::detail::StateWriter& out) const override { out.put_f64s(std::vector<double>{weight_}); }
  void load_state(omkl::detail::StateReader& in) override { in.get_f64s(&weight_, 1); }

 private:
  int fail_at_, steps_ = 0;
  double weight_ = 0.0;
};

// Runs f; expects an omkl::Error that is no InputError and returns its message.
std::string failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const omkl::InputError& e) {
    ADD_FAILURE() << "expected a failed learner, got an InputError: " << e.what();
    return "";
  } catch (const omkl::Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an Error, nothing was thrown";
  return "";
}

TEST_F(LearnerApiTest, AnUpdateThatThrowsFailsTheLearner) {
  Learner learner(std::make_unique<FailingAlgorithm>(3), "failing", 1, Task::Regression, "");
  const std::vector<double> x{1.0};
  learner.partial_fit(x, 1.0);
  // A bad sample is refused before the update: the learner stays usable.
  EXPECT_NE(input_error_of([&] { learner.partial_fit({std::nan("")}, 1.0); }).find("must be finite"), std::string::npos);
  EXPECT_FALSE(learner.failed());
  EXPECT_EQ(learner.failure(), "");
  learner.partial_fit(x, 1.0);
  EXPECT_EQ(failure_of([&] { learner.partial_fit(x, 1.0); }), "the mirror step did not converge");
  EXPECT_TRUE(learner.failed());
  EXPECT_EQ(learner.failure(), "the mirror step did not converge");
  EXPECT_EQ(learner.n_seen(), 2);
  // Every later use names the first failure and the way out; nothing is written.
  for (const auto& [what, call] : std::vector<std::pair<std::string, std::function<void()>>>{
           {"partial_fit", [&] { learner.partial_fit(x, 1.0); }},
           {"partial_fit_block", [&] {
              double y = 1.0, prediction = 0.0;
              learner.partial_fit_block(x.data(), &y, 1, &prediction);
            }},
           {"predict", [&] { learner.predict(x); }},
           {"kernel_weights", [&] { learner.kernel_weights(); }},
           {"save", [&] { learner.save((dir_ / "half.ckpt").string()); }},
           {"save", [&] { learner.to_bytes(); }}}) {
    const std::string message = failure_of(call);
    EXPECT_EQ(message.rfind(what + ": the learner failed in an earlier update", 0), 0u) << message;
    EXPECT_NE(message.find("(the mirror step did not converge)"), std::string::npos) << message;
    EXPECT_NE(message.find("restore a checkpoint"), std::string::npos) << message;
  }
  EXPECT_FALSE(fs::exists(dir_ / "half.ckpt"));
  EXPECT_EQ(learner.n_seen(), 2);
  // The same through a block: the failure comes from inside step_block.
  Learner blocked(std::make_unique<FailingAlgorithm>(2), "failing", 1, Task::Regression, "");
  const std::vector<double> xs{1.0, 1.0, 1.0}, ys{1.0, 1.0, 1.0};
  std::vector<double> out(3);
  failure_of([&] { blocked.partial_fit_block(xs.data(), ys.data(), 3, out.data()); });
  EXPECT_TRUE(blocked.failed());
  EXPECT_EQ(blocked.failure(), "the mirror step did not converge");
  EXPECT_EQ(blocked.n_seen(), 0);
  failure_of([&] { blocked.predict(x); });
}

// The training stream's normalisation travels with the model: LearnerContext::preprocessing is
// kept through save/load, statistics and all, so new rows can get the transform of training.
TEST_F(LearnerApiTest, PreprocessingIsKeptInTheCheckpoint) {
  Dataset data = omkl::test::random_stream(60, kApiFeatures, Task::Regression);
  omkl::LearnerContext context;
  context.n_features = data.n_features;
  context.horizon = data.n_samples;
  context.preprocessing = omkl::fit_normalizer(data, omkl::Normalization::ZScore);
  context.preprocessing.apply(data);
  Learner learner = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8"), context);
  run_steps(learner, data, 0, 30);
  const fs::path path = dir_ / "z.ckpt";
  learner.save(path.string());
  const Learner loaded = Learner::load(path.string());
  const omkl::Normalizer& kept = loaded.preprocessing();
  EXPECT_EQ(kept.how, omkl::Normalization::ZScore);
  EXPECT_EQ(kept.n_features, static_cast<std::size_t>(kApiFeatures));
  EXPECT_EQ(kept.offset, context.preprocessing.offset);
  EXPECT_EQ(kept.scale, context.preprocessing.scale);
  EXPECT_EQ(kept.scale_y, context.preprocessing.scale_y);
  // A learner made without one keeps the identity (how = none, no statistics).
  Learner plain = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
  plain.save(path.string());
  EXPECT_EQ(Learner::load(path.string()).preprocessing().how, omkl::Normalization::None);
}

// Learner::parameters(): every parameter with the value used, the typed ones and the defaults
// (Raker's η = 1/√T), the same after a save/load round trip.
TEST_F(LearnerApiTest, ParametersListEveryResolvedValue) {
  const Dataset data = omkl::test::random_stream(100, kApiFeatures, Task::Regression);
  omkl::LearnerContext context;
  context.n_features = data.n_features;
  context.horizon = 100;
  Learner learner = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8,lambda=0.25"), context);
  const auto params = learner.parameters();
  const auto value = [&](const std::vector<std::pair<std::string, std::string>>& list, const std::string& key) {
    for (const auto& kv : list)
      if (kv.first == key) return kv.second;
    return std::string("<absent>");
  };
  EXPECT_EQ(value(params, "D"), "8");
  EXPECT_EQ(value(params, "lambda"), "0.25");
  EXPECT_EQ(value(params, "eta"), "0.1") << "the default 1/√T for T = 100, as the shortest exact text";
  EXPECT_EQ(value(params, "dict"), "jmlr19-rf");
  run_steps(learner, data, 0, 10);
  const fs::path path = dir_ / "p.ckpt";
  learner.save(path.string());
  EXPECT_EQ(Learner::load(path.string()).parameters(), params);
}

// Checkpoints through streams and buffers are the file's bytes, and restore the same learner.
TEST_F(LearnerApiTest, SaveAndLoadThroughStreamsAndBuffers) {
  const Dataset data = omkl::test::random_stream(120, kApiFeatures, Task::Regression);
  Learner learner = make({"adaraker:D=8", Profile::Paper, Task::Regression}, data);
  run_steps(learner, data, 0, 60);
  const fs::path path = dir_ / "a.ckpt";
  learner.save(path.string());
  std::ifstream file(path, std::ios::binary);
  const std::string file_bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  EXPECT_EQ(learner.to_bytes(), file_bytes);
  std::stringstream stream(std::ios::in | std::ios::out | std::ios::binary);
  learner.save(stream);
  Learner from_stream = Learner::load(stream);
  Learner from_buffer = Learner::from_bytes(file_bytes);
  // A const learner serves predictions (the model as saved: row 61's is the one learning makes).
  const Learner served = Learner::from_bytes(file_bytes);
  const double served_prediction = served.predict(data.row(60));
  const std::vector<double> expected = run_steps(learner, data, 60, 120);
  EXPECT_EQ(served_prediction, expected.front());
  EXPECT_EQ(served.predict(data.row(60)), served_prediction) << "predicting changed nothing";
  EXPECT_TRUE(same_bits(run_steps(from_stream, data, 60, 120), expected));
  EXPECT_TRUE(same_bits(run_steps(from_buffer, data, 60, 120), expected));
  // A damaged buffer is refused with the name given.
  std::string damaged = file_bytes;
  damaged[damaged.size() / 2] ^= 0x5a;
  EXPECT_NE(input_error_of([&] { Learner::from_bytes(damaged, "model-42"); }).find("model-42"), std::string::npos);
}

// Learner::kernel_weights(): one weight per dictionary kernel, summing to 1, uniform before any
// sample and moved by learning, saved in the checkpoint, for every algorithm that keeps one
// weight per kernel; empty for those that do not.
TEST_F(LearnerApiTest, KernelWeightsAreReadable) {
  const std::string dict = "dict=gauss:0.1+gauss:1+gauss:10";
  const std::vector<std::pair<std::string, Task>> weighted = {
      {"raker:D=8," + dict, Task::Regression},
      {"omkl-gf:D=8,M=2,J=2," + dict, Task::Regression},
      {"omkl-sfg:D=8,M=2," + dict, Task::Regression},
      {"sfg-mkl-r:D=8,M=2,beta_rank=2," + dict, Task::Regression},
      {"omkl:" + dict, Task::Regression},
      {"omkl-b:" + dict, Task::Regression},
      {"m-forgetron:" + dict, Task::Classification},
      {"oks++:" + dict, Task::Regression},
      {"rf-ioks:D=8," + dict, Task::Regression},
  };
  for (const auto& [algo, task] : weighted) {
    SCOPED_TRACE(algo);
    const Dataset data = omkl::test::random_stream(200, kApiFeatures, task);
    Learner learner = make({algo, Profile::Paper, task}, data);
    std::vector<double> w = learner.kernel_weights();
    ASSERT_EQ(w.size(), 3u);
    for (double v : w) EXPECT_DOUBLE_EQ(v, 1.0 / 3.0);
    run_steps(learner, data, 0, 200);
    w = learner.kernel_weights();
    ASSERT_EQ(w.size(), 3u);
    EXPECT_NEAR(w[0] + w[1] + w[2], 1.0, 1e-12);
    EXPECT_FALSE(w[0] == w[1] && w[1] == w[2]) << "learning moved the weights";
    for (double v : w) EXPECT_GE(v, 0.0);
    // The weights are part of the checkpoint.
    const fs::path path = dir_ / "w.ckpt";
    learner.save(path.string());
    EXPECT_EQ(Learner::load(path.string()).kernel_weights(), w);
  }
  for (const std::string algo : {"adaraker:D=8", "avgmkl", "kogd", "perfedavg:clients=2,hidden_layers=1,width=3"}) {
    const Dataset data = omkl::test::random_stream(20, kApiFeatures, Task::Regression);
    EXPECT_TRUE(make({algo, Profile::Paper, Task::Regression}, data).kernel_weights().empty()) << algo;
  }
  // A single-kernel learner's one weight.
  const Dataset data = omkl::test::random_stream(20, kApiFeatures, Task::Regression);
  EXPECT_EQ(make({"rf-ogd:D=8", Profile::Paper, Task::Regression}, data).kernel_weights(), std::vector<double>{1.0});
}

namespace learner_api_guards {

// Runs f; expects an exception of type E and returns it (a failure, and a default one, otherwise).
template <typename E>
E thrown_by(const std::function<void()>& f, const char* what) {
  try {
    f();
  } catch (const E& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": another exception: " << e.what();
    return E("");
  }
  ADD_FAILURE() << what << ": nothing was thrown";
  return E("");
}

omkl::LearnerContext context_of(std::size_t n_features, std::size_t horizon = 100) {
  omkl::LearnerContext context;
  context.n_features = n_features;
  context.horizon = horizon;
  context.seed = 1;
  return context;
}

}  // namespace learner_api_guards

// A model whose numbers overflow, on finite input, is caught by the learner itself (not only by
// `omkl run`): the sample whose prediction is not finite fails the learner with a DivergedError
// that names it and says what may help, and nothing of it is ever saved.
TEST_F(LearnerApiTest, ADivergedModelFailsTheLearnerAndIsNeverSaved) {
  using learner_api_guards::thrown_by;
  const omkl::LearnerContext context = learner_api_guards::context_of(3);
  // Features near the largest double: their random features overflow at once.
  Learner huge = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8"), context);
  const std::vector<double> x{0.1, 0.2, 0.3}, big{1e308, 1e308, 1e308};
  huge.partial_fit(x, 0.5);
  const omkl::DivergedError diverged =
      thrown_by<omkl::DivergedError>([&] { huge.partial_fit(big, 1.0); }, "features of 1e308");
  const std::string message = diverged.what();
  EXPECT_EQ(diverged.sample(), 2);
  EXPECT_FALSE(std::isfinite(diverged.prediction()));
  EXPECT_NE(message.find("diverged at sample 2 (prediction "), std::string::npos) << message;
  EXPECT_EQ(message.find("-nan"), std::string::npos) << "NaN shown as nan: " << message;
  EXPECT_NE(message.find("a smaller step size (eta, step_scale)"), std::string::npos) << message;
  EXPECT_TRUE(huge.failed());
  EXPECT_EQ(huge.failure(), message);
  EXPECT_EQ(huge.n_seen(), 2);
  for (const auto& refused : std::vector<std::function<void()>>{[&] { huge.save((dir_ / "nan.ckpt").string()); },
                                                                [&] { huge.to_bytes(); },
                                                                [&] { huge.partial_fit(x, 0.5); }})
    EXPECT_NE(std::string(thrown_by<omkl::Error>(refused, "after the divergence").what()).find("diverged at sample 2"),
              std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "nan.ckpt"));
  // Targets of 1e200 overflow the squared loss within a few samples.
  Learner target = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8"), context);
  thrown_by<omkl::DivergedError>(
      [&] {
        for (int t = 0; t < 10; ++t) target.partial_fit(x, 1e200);
      },
      "targets of 1e200");
  EXPECT_TRUE(target.failed());
  // In a block: the block is learned and its predictions filled, the first bad one named.
  const Dataset data = omkl::test::random_stream(8, 3, Task::Regression);
  // (A step of 1e100 scaled by 1e100, each at the top of its range: θ grows 1e200-fold a sample.)
  Learner block = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8,eta=1e100,step_scale=1e100"), context);
  std::vector<double> predictions(8);
  const omkl::DivergedError in_block = thrown_by<omkl::DivergedError>(
      [&] { block.partial_fit_block(data.x.data(), data.y.data(), 8, predictions.data()); }, "a block");
  ASSERT_GE(in_block.sample(), 2);
  ASSERT_LE(in_block.sample(), 8);
  for (std::int64_t t = 1; t < in_block.sample(); ++t) EXPECT_TRUE(std::isfinite(predictions[t - 1])) << t;
  EXPECT_FALSE(std::isfinite(predictions[in_block.sample() - 1]));
  EXPECT_EQ(block.n_seen(), 8);
  EXPECT_TRUE(block.failed());
}

// The last update's divergence shows in no prediction yet: save() finds it in the state, and
// refuses to write a model that load() would refuse.
TEST_F(LearnerApiTest, ALastUpdateThatDivergedIsNotSaved) {
  using learner_api_guards::thrown_by;
  Learner learner =
      omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8,eta=1e100,step_scale=1e100"),
                         learner_api_guards::context_of(2));
  const std::vector<double> x{0.3, 0.9};
  EXPECT_TRUE(std::isfinite(learner.partial_fit(x, 1e120)));  // θ = 0 predicted it; the update overflowed θ
  EXPECT_FALSE(learner.failed());
  const omkl::DivergedError refused =
      thrown_by<omkl::DivergedError>([&] { learner.save((dir_ / "last.ckpt").string()); }, "save");
  EXPECT_EQ(refused.sample(), 0);
  EXPECT_NE(std::string(refused.what()).find("NaN, infinite or all zero"), std::string::npos) << refused.what();
  EXPECT_FALSE(fs::exists(dir_ / "last.ckpt"));
  std::ostringstream stream;
  EXPECT_THROW(learner.save(stream), omkl::DivergedError);
  EXPECT_TRUE(stream.str().empty());
}

// Whatever save() writes loads: a model on its way to diverging (the loss overflowed, so every
// log-weight is −∞, while θ and the prediction just made are still finite) is refused at save as
// load would refuse it, not written as a file that no load accepts.
TEST_F(LearnerApiTest, WhateverSaveWritesLoadsOnTheWayToADivergence) {
  omkl::SyntheticOptions options;
  options.n_samples = 300;
  options.n_features = 3;
  const Dataset data = omkl::make_synthetic(options);
  for (const std::string spec : {"raker:D=8,eta=1e40", "rf-ogd:D=8,eta=1e40", "adaraker:D=8,eta0=1e50,eta_cap=1e50",
                                 "adaraker:D=8,step_scale=1e40", "omkl-gf:D=8,eta=1e30,eta_e=0.5"}) {
    SCOPED_TRACE(spec);
    Learner learner =
        omkl::make_learner(omkl::parse_algorithm_spec(spec), learner_api_guards::context_of(3, data.n_samples));
    std::size_t refused_at = 0;
    for (std::size_t t = 0; t < data.n_samples && !learner.failed(); ++t) {
      try {
        learner.partial_fit(data.row(t), data.y[t]);
      } catch (const omkl::DivergedError& e) {
        // A prediction that is not finite: the learner is failed, nothing to save. The advice
        // names this algorithm's own step parameters.
        if (spec.rfind("adaraker", 0) == 0)
          EXPECT_NE(std::string(e.what()).find("a smaller step size (eta0, eta_cap, step_scale)"), std::string::npos)
              << e.what();
        break;
      }
      std::string bytes;
      try {
        bytes = learner.to_bytes();
      } catch (const omkl::DivergedError&) {
        if (refused_at == 0) refused_at = t + 1;
        continue;
      }
      EXPECT_NO_THROW(Learner::from_bytes(bytes, "model")) << "saved at sample " << t + 1;
      EXPECT_EQ(refused_at, 0u) << "a state refused at sample " << refused_at << " saved again at " << t + 1;
    }
    EXPECT_GT(refused_at + learner.failed(), 0u) << "the step sizes were to make it diverge";
  }
}

// A checkpoint whose model holds NaN or infinite numbers (re-sealed with a valid checksum) is not
// loaded: it would predict NaN and learn nothing.
TEST_F(LearnerApiTest, ACheckpointWithNonFiniteNumbersIsRefused) {
  const Dataset data = omkl::test::random_stream(200, kApiFeatures, Task::Regression);
  for (const std::string algo : {"raker", "adaraker"}) {
    SCOPED_TRACE(algo);
    Learner learner = make({algo + ":D=8", Profile::Paper, Task::Regression}, data);
    run_block(learner, data, 0, 100);
    const std::string payload = omkl::detail::open_checkpoint(learner.to_bytes(), "model");
    // Where the first θ value is: after the learner's header (tag, spec, context, n_seen), the
    // family's tag and step count, the backend's tag and shape, and replicate 0's frequencies.
    omkl::detail::StateReader in(payload);
    std::size_t at = 8;
    for (int i = 0; i < 3; ++i) at += 8 + in.get_string().size();
    in.get_i64();
    at += 8 + 8 + algo.size() + 8;  // n_seen, the family's tag, t
    in.expect_tag(algo);
    in.get_i64();
    in.expect_tag("rf-backend");
    at += 8 + std::string("rf-backend").size() + 5 * 8;
    std::uint64_t shape[5];
    for (std::uint64_t& v : shape) v = in.get_u64();
    at += shape[1] * (8 + shape[3] * shape[4] * 8) + 8;  // every kernel's Ω, then θ's length
    ASSERT_LT(at + 8, payload.size());
    for (const double bad : {-INFINITY, NAN}) {
      std::string damaged = payload;
      std::memcpy(&damaged[at], &bad, 8);
      const fs::path path = dir_ / "nan.ckpt";
      omkl::detail::write_checkpoint_file(path.string(), damaged);
      const std::string message = input_error_of([&] { Learner::load(path.string()); });
      EXPECT_NE(message.find(path.string()), std::string::npos) << message;
      EXPECT_NE(message.find("NaN or infinite"), std::string::npos) << message;
    }
  }
  // The rule: NaN and +∞ anywhere; −∞ too among θ and the random features, though elsewhere it is
  // a log-weight that underflowed.
  omkl::detail::StateWriter out;
  out.put_f64(-INFINITY);
  out.put_f64s(std::vector<double>{1.0, -INFINITY});
  EXPECT_EQ(out.non_finite(), 0u);
  const std::vector<double> theta{1.0, -INFINITY, NAN};
  out.put_finite_f64s(theta.data(), theta.size());
  out.put_f64(INFINITY);
  EXPECT_EQ(out.non_finite(), 3u);
  omkl::detail::StateReader in(out.bytes());
  in.get_f64();
  in.get_f64s();
  std::vector<double> back(3);
  in.get_finite_f64s(back.data(), back.size());
  in.get_f64();
  EXPECT_EQ(in.non_finite(), 3u);
}

// A learner moved from holds no model: every call that needs one says so instead of crashing.
TEST_F(LearnerApiTest, AMovedFromLearnerRefusesEveryCall) {
  using learner_api_guards::thrown_by;
  Learner moved = omkl::make_learner(omkl::parse_algorithm_spec("raker:D=8"), learner_api_guards::context_of(2));
  Learner owner = std::move(moved);
  const std::vector<double> x{0.1, 0.2};
  double y = 0.5, prediction = 0.0;
  for (const auto& call : std::vector<std::function<void()>>{
           [&] { moved.predict(x); }, [&] { moved.predict(x.data()); }, [&] { moved.partial_fit(x, y); },
           [&] { moved.partial_fit(x.data(), y); }, [&] { moved.partial_fit_block(x.data(), &y, 1, &prediction); },
           [&] { moved.save((dir_ / "m.ckpt").string()); }, [&] { moved.to_bytes(); },
           [&] { moved.kernel_weights(); }, [&] { moved.parameters(); }, [&] { moved.mistake(1.0, 1.0); },
           [&] { moved.n_clients(); }, [&] { moved.feature_names(); },
           [&] { moved.set_preprocessing(omkl::Normalizer{}); }}) {
    const omkl::Error e = thrown_by<omkl::Error>(call, "a moved-from learner");
    EXPECT_NE(std::string(e.what()).find("moved from"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "m.ckpt"));
  EXPECT_TRUE(std::isfinite(owner.partial_fit(x, y)));
  moved = std::move(owner);  // assigned again, it is whole
  EXPECT_EQ(moved.n_seen(), 1);
  EXPECT_TRUE(std::isfinite(moved.predict(x)));
}

// A sample of another width names the sample (partial_fit) or the sample to predict.
TEST_F(LearnerApiTest, AWrongWidthNamesTheSample) {
  const Dataset data = omkl::test::random_stream(20, kApiFeatures, Task::Regression);
  Learner learner = make({"raker:D=8", Profile::Paper, Task::Regression}, data);
  run_steps(learner, data, 0, 10);
  const std::vector<double> narrow(kApiFeatures - 1, 0.5);
  const std::string expects = " has " + std::to_string(kApiFeatures - 1) + " features, the model expects " +
                              std::to_string(kApiFeatures);
  std::string message = input_error_of([&] { learner.partial_fit(narrow, 0.5); });
  EXPECT_NE(message.find("sample 11" + expects), std::string::npos) << message;
  message = input_error_of([&] { learner.predict(narrow); });
  EXPECT_NE(message.find("the sample to predict" + expects), std::string::npos) << message;
}

// make_learner() refuses a context whose checkpoint would not load (feature names of another
// count, a normalisation of another width or with statistics that are not one per feature), as
// set_preprocessing() does; one that fits saves and loads.
TEST_F(LearnerApiTest, AContextThatWouldNotLoadIsRefusedWhenMade) {
  using learner_api_guards::thrown_by;
  const omkl::AlgorithmSpec spec = omkl::parse_algorithm_spec("raker:D=8");
  const auto refusal = [&](const omkl::LearnerContext& context) {
    return std::string(thrown_by<omkl::ConfigError>([&] { omkl::make_learner(spec, context); }, "make_learner").what());
  };
  omkl::LearnerContext names = learner_api_guards::context_of(3);
  names.feature_names = {"a"};
  EXPECT_NE(refusal(names).find("feature_names: 1 feature names for 3 features"), std::string::npos) << refusal(names);
  omkl::Normalizer wide;
  wide.how = omkl::Normalization::ZScore;
  wide.n_features = 7;
  wide.offset.assign(7, 0.0);
  wide.scale.assign(7, 1.0);
  omkl::LearnerContext too_wide = learner_api_guards::context_of(3);
  too_wide.preprocessing = wide;
  EXPECT_NE(refusal(too_wide).find("preprocessing: a zscore normalisation of 7 features for a learner of 3"),
            std::string::npos)
      << refusal(too_wide);
  omkl::Normalizer short_statistics = wide;
  short_statistics.n_features = 3;
  short_statistics.offset.assign(1, 0.0);
  short_statistics.scale.clear();
  omkl::LearnerContext inconsistent = learner_api_guards::context_of(3);
  inconsistent.preprocessing = short_statistics;
  EXPECT_NE(refusal(inconsistent).find("1 offsets and 0 scales (it takes 3 of each)"), std::string::npos)
      << refusal(inconsistent);
  // set_preprocessing: the same rule.
  Learner learner = omkl::make_learner(spec, learner_api_guards::context_of(3));
  for (const omkl::Normalizer& bad : {wide, short_statistics})
    EXPECT_THROW(learner.set_preprocessing(bad), omkl::ConfigError);
  // What fits is kept through a checkpoint.
  omkl::LearnerContext fits = learner_api_guards::context_of(3);
  fits.feature_names = {"a", "b", "c"};
  fits.preprocessing.how = omkl::Normalization::MinMaxGlobal;
  fits.preprocessing.n_features = 3;
  fits.preprocessing.offset = {0.0};
  fits.preprocessing.scale = {2.0};
  const Learner loaded = Learner::from_bytes(omkl::make_learner(spec, fits).to_bytes());
  EXPECT_EQ(loaded.feature_names(), fits.feature_names);
  EXPECT_EQ(loaded.preprocessing().scale, std::vector<double>{2.0});
}
