#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "common/scoped_env.h"
#include "common/test_helpers.h"
#include "core/algorithm_base.h"
#include "core/env_switch.h"
#include "core/closest_name.h"
#include "core/params.h"
#include "core/state_io.h"
#include "families/exact_kernel/support_set.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"

using namespace omkl;
using namespace omkl::detail;

using omkl::test::message_of;

TEST(ParamsTest, ReadsTypedValuesAndRejectsUnknownOnes) {
  ParamReader p("raker", {{"D", "20"}, {"eta", "0.5"}, {"oops", "1"}});
  EXPECT_EQ(p.get_int("D", 50, "features"), 20);
  EXPECT_EQ(p.get_double("eta", 1.0, "step"), 0.5);
  EXPECT_EQ(p.get_double("lambda", 0.01, "ridge"), 0.01);
  const std::string msg = message_of([&] { p.finish(); });
  EXPECT_NE(msg.find("unknown parameter 'oops'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("raker"), std::string::npos);
  EXPECT_NE(msg.find("lambda"), std::string::npos) << "lists the known parameters";
}

TEST(ParamsTest, AnUnknownParameterNamesTheNearestKnownOneWithinTwoEdits) {
  ParamReader typo("raker", {{"D", "20"}, {"lamda", "0.1"}});
  typo.get_int("D", 50, "features");
  typo.get_double("lambda", 0.01, "ridge");
  typo.get_double("eta", 1.0, "step");
  const std::string msg = message_of([&] { typo.finish(); });
  EXPECT_NE(msg.find("unknown parameter 'lamda' (did you mean 'lambda'?)"), std::string::npos) << msg;
  ParamReader far("raker", {{"zzzzzz", "1"}});
  far.get_double("lambda", 0.01, "ridge");
  const std::string none = message_of([&] { far.finish(); });
  EXPECT_EQ(none.find("did you mean"), std::string::npos) << "no suggestion past two edits: " << none;
}

TEST(ClosestNameTest, EditDistanceByHandAndTheFirstOfEqualCandidates) {
  using omkl::detail::closest_name;
  using omkl::detail::edit_distance;
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // k→s, e→i, +g
  EXPECT_EQ(edit_distance("study", "studdy"), 1u);
  EXPECT_EQ(edit_distance("ab", "ba"), 2u);           // no transpositions: two substitutions
  EXPECT_EQ(closest_name("studdy", {"run", "study", "gen"}), "study");
  EXPECT_EQ(closest_name("kitten", {"sitting"}), "") << "three edits is another word";
  EXPECT_EQ(closest_name("kitten", {"sitting"}, 3), "sitting");
  EXPECT_EQ(closest_name("ab", {"aa", "bb"}), "aa") << "equal distances: the first listed";
  EXPECT_EQ(omkl::detail::did_you_mean("--sed", {"--seed", "--seeds"}), " (did you mean '--seed'?)");
  EXPECT_EQ(omkl::detail::did_you_mean("xyzzy", {"--seed"}), "");
}

TEST(ParamsTest, BadValuesNameTheParameter) {
  ParamReader p("raker", {{"D", "2x"}, {"eta", "nan"}, {"rf", "qmc"}, {"flag", "maybe"}, {"lambda", "0x10"}});
  EXPECT_NE(message_of([&] { p.get_int("D", 1, ""); }).find("'D'"), std::string::npos);
  EXPECT_NE(message_of([&] { p.get_double("eta", 1, ""); }).find("'eta'"), std::string::npos);
  EXPECT_NE(message_of([&] { p.get_double("lambda", 1, ""); }).find("got '0x10'"), std::string::npos);
  EXPECT_NE(message_of([&] { p.get_choice("rf", "", {"orf", "rf"}, ""); }).find("orf|rf"), std::string::npos);
  EXPECT_THROW(p.get_bool("flag", false, ""), ConfigError);
}

TEST(ParamsTest, SoftDefaultsApplyWhenUsedAndAreIgnoredOtherwise) {
  ParamReader p("raker", {{"D", "20"}}, {{"D", "50"}, {"lambda", "0.5"}, {"B", "50"}});
  EXPECT_EQ(p.get_int("D", 1, ""), 20) << "explicit parameters win over presets";
  EXPECT_EQ(p.get_double("lambda", 0.01, ""), 0.5);
  EXPECT_NO_THROW(p.finish()) << "a preset key the algorithm does not read is not an error";
}

TEST(ParamsTest, AnAliasIsTheSameParameter) {
  // The other name, given or a preset's, reads as the key; nothing is left unknown.
  ParamReader p("rf-oks++", {{"oks_pp_logistic_mode", "reference"}}, {{"independent_omega_per_kernel", "true"}});
  p.alias("oks_pp_logistic_mode", "logistic_mode");
  p.alias("independent_omega_per_kernel", "independent_omega");
  EXPECT_EQ(p.get_string("logistic_mode", "paper", ""), "reference");
  EXPECT_TRUE(p.given("logistic_mode"));
  EXPECT_TRUE(p.get_bool("independent_omega", false, ""));
  EXPECT_FALSE(p.given("independent_omega"));  // a preset's soft default stays soft
  EXPECT_NO_THROW(p.finish());
  // Both names at once: refused, naming both.
  ParamReader both("rf-oks++", {{"logistic_mode", "paper"}, {"oks_pp_logistic_mode", "paper"}});
  try {
    both.alias("oks_pp_logistic_mode", "logistic_mode");
    ADD_FAILURE() << "both names were taken";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("'oks_pp_logistic_mode' and 'logistic_mode'"), std::string::npos) << e.what();
  }
}

TEST(AlgorithmSpecTest, ParsesNamesAndParameters) {
  auto s = parse_algorithm_spec("adaraker:eta0=10");
  EXPECT_EQ(s.name, "adaraker");
  ASSERT_EQ(s.params.size(), 1u);
  EXPECT_EQ(s.params[0].second, "10");
  s = parse_algorithm_spec("raker:D=20,dict=gauss:0.1+lap:1:eta=0.1");
  ASSERT_EQ(s.params.size(), 3u);
  EXPECT_EQ(s.params[1].second, "gauss:0.1+lap:1");
  EXPECT_EQ(s.params[2].first, "eta");
  EXPECT_EQ(parse_algorithm_spec(s.to_string()).to_string(), s.to_string());
  EXPECT_THROW(parse_algorithm_spec("raker:D"), ConfigError);
  EXPECT_THROW(parse_algorithm_spec(":D=1"), ConfigError);
}

TEST(AlgorithmSpecTest, AGridExpandsToEveryCombinationInTheOrderOfNestedLoops) {
  const auto grid = omkl::expand_algorithm_grid("raker:eta=0.1|0.01|1,D=8,dict=gauss:1+gauss:2|lap:1");
  std::vector<std::string> texts;
  for (const auto& spec : grid) {
    texts.push_back(spec.to_string());
    EXPECT_EQ(spec.grid, "raker:eta=0.1|0.01|1,D=8,dict=gauss:1+gauss:2|lap:1");
  }
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "raker:eta=0.1,D=8,dict=gauss:1+gauss:2", "raker:eta=0.1,D=8,dict=lap:1",
                       "raker:eta=0.01,D=8,dict=gauss:1+gauss:2", "raker:eta=0.01,D=8,dict=lap:1",
                       "raker:eta=1,D=8,dict=gauss:1+gauss:2", "raker:eta=1,D=8,dict=lap:1"}));
  // A spec without alternatives is itself, with no grid.
  const auto one = omkl::expand_algorithm_grid("oks:c_lambda=25");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].to_string(), "oks:c_lambda=25");
  EXPECT_TRUE(one[0].grid.empty());
  EXPECT_EQ(omkl::expand_algorithm_grid("raker").size(), 1u);
  // Refusals name the parameter: an empty or repeated alternative, too many combinations.
  const auto refusal = [](const std::string& text) {
    try {
      omkl::expand_algorithm_grid(text);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refusal("raker:eta=0.1|").find("parameter 'eta' has an empty alternative"), std::string::npos);
  EXPECT_NE(refusal("raker:eta=|0.1").find("empty alternative"), std::string::npos);
  EXPECT_NE(refusal("raker:D=8|16|8").find("parameter 'D' lists '8' twice"), std::string::npos);
  std::string big = "raker:a=1|2|3|4|5|6|7|8|9|10,b=1|2|3|4|5|6|7|8|9|10,c=1|2|3|4|5|6|7|8|9|10,";
  EXPECT_EQ(refusal(big + "d=1|2|3|4|5|6|7|8|9|10"), "");  // 10 000: the most a grid names
  EXPECT_NE(refusal(big + "d=1|2|3|4|5|6|7|8|9|10,e=1|2").find("more than 10000 configurations"), std::string::npos);
  EXPECT_EQ(omkl::expand_algorithm_grid(big + "d=1|2|3|4|5|6|7|8|9|10").back().to_string(), "raker:a=10,b=10,c=10,d=10");
}

TEST(EnvSwitchTest, UnsetGivesTheFallbackAndOnlyListedValuesPass) {
  constexpr const char* kName = "OMKL_TEST_ENV_SWITCH";
  unsetenv(kName);
  EXPECT_EQ(env_switch(kName, "auto", {"auto", "fused", "gemm"}), "auto");
  setenv(kName, "gemm", 1);
  EXPECT_EQ(env_switch(kName, "auto", {"auto", "fused", "gemm"}), "gemm");
  setenv(kName, "cublas", 1);
  EXPECT_EQ(message_of([&] { env_switch(kName, "auto", {"auto", "fused", "gemm"}); }),
            "OMKL_TEST_ENV_SWITCH must be auto, fused or gemm, not 'cublas'");
  EXPECT_EQ(message_of([&] { env_switch(kName, "host", {"host", "device"}); }),
            "OMKL_TEST_ENV_SWITCH must be host or device, not 'cublas'");
  EXPECT_THROW(env_switch(kName, "host", {"host", "device"}), ConfigError);
  // A fallback outside the choices ("" for "nothing forced") is accepted as a value too.
  setenv(kName, "", 1);
  EXPECT_EQ(env_switch(kName, "", {"per_slot", "per_kernel"}), "");
  unsetenv(kName);
}

// Every path switch is checked by one list (kPathSwitches), also where this build never reads it:
// a CUDA switch set to nonsense in a CPU-only build used to pass unnoticed, and a study recorded
// the value (and keyed its cells by it).
TEST(EnvSwitchTest, EveryPathSwitchRefusesAValueNoPathHas) {
  using omkl::test::ScopedEnv;
  std::vector<std::unique_ptr<ScopedEnv>> cleared;
  for (const PathSwitch& entry : kPathSwitches) cleared.push_back(std::make_unique<ScopedEnv>(entry.name, nullptr));
  EXPECT_NO_THROW(check_path_switches());
  for (const PathSwitch& entry : kPathSwitches) {
    SCOPED_TRACE(entry.name);
    {
      ScopedEnv empty(entry.name, "");  // empty is unset
      EXPECT_NO_THROW(check_path_switches());
      if (entry.kind == PathSwitch::Kind::Choice) {
        EXPECT_EQ(path_switch(entry.name), entry.fallback);
      }
    }
    ScopedEnv bogus(entry.name, "bogus");
    const std::string message = message_of([] { check_path_switches(); });
    EXPECT_EQ(message.rfind(std::string(entry.name) + " must be ", 0), 0u) << message;
    EXPECT_NE(message.find("not 'bogus'"), std::string::npos) << message;
    EXPECT_THROW(check_path_switches(), ConfigError);
    if (entry.kind == PathSwitch::Kind::Choice) {
      for (const char* choice : entry.choices) {
        if (choice == nullptr) break;
        ScopedEnv valid(entry.name, choice);
        EXPECT_NO_THROW(check_path_switches()) << choice;
        EXPECT_EQ(path_switch(entry.name), choice);
      }
    }
  }
  {
    ScopedEnv lanes("OMKL_HOST_WALK_LANES", "128");
    EXPECT_EQ(path_switch_count("OMKL_HOST_WALK_LANES"), 128u);
    for (const char* bad : {"0", "129", "3x", "-1", "99999999999999999999999"}) {
      ScopedEnv wrong("OMKL_HOST_WALK_LANES", bad);
      EXPECT_EQ(message_of([] { check_path_switches(); }),
                std::string("OMKL_HOST_WALK_LANES must be a whole number from 1 to 128, not '") + bad + "'");
    }
  }
  for (const char* on_or_off : {"0", "1"}) {
    ScopedEnv timing("OMKL_TIMING", on_or_off);
    EXPECT_NO_THROW(check_path_switches());
  }
  ScopedEnv drawn("OMKL_CUDA_DRAWS", "bogus");
  EXPECT_EQ(message_of([] { path_switches_set(); }), "OMKL_CUDA_DRAWS must be device or host, not 'bogus'")
      << "a value no path has is not recorded";
  EXPECT_THROW(path_switch("OMKL_NO_SUCH_SWITCH"), Error);
}

TEST(StateIoTest, RoundTripsEveryType) {
  StateWriter w;
  w.put_tag("x");
  w.put_u64(0xFFFFFFFFFFFFFFFFull);
  w.put_i64(-5);
  w.put_f64(-0.1);
  w.put_f64s(std::vector<double>{1.5, -2.5, 1e-300});
  w.put_string("héllo");
  StateReader r(w.bytes());
  r.expect_tag("x");
  EXPECT_EQ(r.get_u64(), 0xFFFFFFFFFFFFFFFFull);
  EXPECT_EQ(r.get_i64(), -5);
  EXPECT_EQ(r.get_f64(), -0.1);
  EXPECT_EQ(r.get_f64s(), (std::vector<double>{1.5, -2.5, 1e-300}));
  EXPECT_EQ(r.get_string(), "héllo");
  EXPECT_TRUE(r.at_end());
  EXPECT_THROW(r.get_u64(), InputError);
  StateReader wrong(w.bytes());
  EXPECT_THROW(wrong.expect_tag("y"), InputError);
}

TEST(StateIoTest, DamagedCountsAreTruncationNotHugeAllocations) {
  // 2⁶¹ + 1 values of 8 bytes: the byte count wraps around to 8, which the stored bytes cover;
  // the reader must compare by division and report truncation instead of allocating.
  for (const std::uint64_t count :
       {(std::uint64_t{1} << 61) + 1, std::uint64_t{1} << 61, ~std::uint64_t{0}, std::uint64_t{3}}) {
    StateWriter w;
    w.put_u64(count);
    w.put_f64(1.0);
    w.put_f64(2.0);
    StateReader f64s(w.bytes(), "damaged.state");
    EXPECT_NE(message_of([&] { f64s.get_f64s(); }).find("damaged.state: truncated state"), std::string::npos) << count;
    StateReader u64s(w.bytes(), "damaged.state");
    EXPECT_THROW(u64s.get_u64s(), InputError) << count;
  }
  StateWriter w;
  w.put_u64(2);
  w.put_f64(1.0);
  w.put_f64(2.0);
  StateReader exact(w.bytes());
  EXPECT_EQ(exact.get_f64s(), (std::vector<double>{1.0, 2.0}));
  StateReader room(w.bytes());
  room.get_u64();
  EXPECT_NO_THROW(room.require_values(2, 8));
  EXPECT_THROW(room.require_values(1, 17), InputError);
}

TEST(StateIoTest, ADamagedMessageIsTheRunsFailureNotTheUsersInput) {
  // The same damage, read as stored state and as a message between processes: every way a reader
  // fails is an InputError for the first and a plain Error (exit code 3) naming the message for
  // the second.
  StateWriter w;
  w.put_tag("round");
  w.put_f64s(std::vector<double>{1.0, 2.0});
  const std::vector<std::function<void(StateReader&)>> damages = {
      [](StateReader& in) { in.expect_tag("update"); },
      [](StateReader& in) {
        in.expect_tag("round");
        double three[3];
        in.get_f64s(three, 3);
      },
      [](StateReader& in) {
        in.expect_tag("round");
        in.get_u64();
        in.require_values(3, 8);
      },
      [](StateReader& in) {
        in.expect_tag("round");
        in.get_f64s();
        in.get_u64();
      },
  };
  for (std::size_t i = 0; i < damages.size(); ++i) {
    StateReader stored(w.bytes(), "a.state");
    EXPECT_THROW(damages[i](stored), InputError) << i;
    StateReader message(w.bytes(), "update from rank 2", StateOrigin::Message);
    try {
      damages[i](message);
      ADD_FAILURE() << i << ": no error";
    } catch (const InputError& e) {
      ADD_FAILURE() << i << ": a message's damage read as input: " << e.what();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("update from rank 2: malformed message between processes: ", 0), 0u)
          << i << ": " << e.what();
    }
  }
}

TEST(StateIoTest, CheckpointFilesDetectCorruptionAndTruncation) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "omkl_ckpt_test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "a.ckpt").string();
  write_checkpoint_file(path, "payload bytes");
  EXPECT_EQ(read_checkpoint_file(path), "payload bytes");
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename(), "a.ckpt") << "no temporary file left behind";
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  std::string flipped = bytes;
  flipped[30] ^= 1;
  std::ofstream(path, std::ios::binary) << flipped;
  EXPECT_NE(message_of([&] { read_checkpoint_file(path); }).find("checksum"), std::string::npos);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 3);
  EXPECT_THROW(read_checkpoint_file(path), InputError);
  std::ofstream(path, std::ios::binary) << "not a checkpoint at all, just text";
  EXPECT_NE(message_of([&] { read_checkpoint_file(path); }).find("not an omkl checkpoint"), std::string::npos);
  EXPECT_NE(message_of([&] { read_checkpoint_file((dir / "missing").string()); }).find("missing"),
            std::string::npos);
}

// ---- damaged checkpoints found by fuzzing (fuzz/fuzz_checkpoint.cpp) -------------------------

namespace {
// The payload of a checkpoint of `spec` (two features) after a few samples, saved to `path`.
std::string trained_payload(const std::string& spec, const std::string& path, std::size_t steps = 4) {
  LearnerContext context;
  context.n_features = 2;
  context.seed = 7;
  context.horizon = 16;
  Learner learner = make_learner(parse_algorithm_spec(spec), context);
  for (std::size_t t = 0; t < steps; ++t)
    learner.partial_fit(std::vector<double>{0.1 * static_cast<double>(t), 1.0 - 0.2 * static_cast<double>(t)},
                        0.3 * static_cast<double>(t));
  learner.save(path);
  return read_checkpoint_file(path);
}

std::uint64_t u64_at(const std::string& bytes, std::size_t offset) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t{static_cast<unsigned char>(bytes[offset + i])} << (8 * i);
  return v;
}

void put_u64_at(std::string& bytes, std::size_t offset, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[offset + i] = static_cast<char>(v >> (8 * i));
}

std::string checkpoint_dir() {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "omkl_ckpt_fuzz_regressions";
  std::filesystem::create_directories(dir);
  return dir.string();
}
}  // namespace

TEST(CheckpointFuzzRegressionTest, StoredWidthOrClientCountBeyondAnyModelIsAnInputError) {
  // The model is allocated from the stored context before its state is read: n_features near
  // 2^57 escaped as std::length_error, near 2^62 its products with D wrapped around size_t.
  const std::string path = checkpoint_dir() + "/width.ckpt";
  const std::string payload = trained_payload("raker:D=4,dict=gauss:0.5+lap:2", path);
  // Payload: tag, spec, context blob (whose first word is n_features), each length-prefixed.
  const std::size_t spec_at = 8 + std::string("omkl-learner").size();
  const std::size_t blob_at = spec_at + 8 + u64_at(payload, spec_at);
  const std::size_t width_at = blob_at + 8;
  ASSERT_EQ(u64_at(payload, width_at), 2u);
  for (const std::uint64_t width : {(std::uint64_t{1} << 24) + 1, std::uint64_t{1} << 57,
                                    (std::uint64_t{1} << 62) + 2, ~std::uint64_t{0}}) {
    std::string damaged = payload;
    put_u64_at(damaged, width_at, width);
    write_checkpoint_file(path, damaged);
    EXPECT_NE(message_of([&] { Learner::load(path); }).find("damaged learner context (n_features"),
              std::string::npos)
        << width;
    EXPECT_THROW(Learner::load(path), InputError) << width;
  }
  write_checkpoint_file(path, payload);
  EXPECT_EQ(Learner::load(path).n_features(), 2u);
}

TEST(CheckpointFuzzRegressionTest, SupportSetCapacityIsBoundedByTheStoredRows) {
  // A grown (unbudgeted) support set never pops, so its head is 0; a damaged head let the
  // capacity check (capacity / 4 ≤ head + count + 16) pass for a capacity of 2^40 rows.
  StateWriter w;
  w.put_u64(2);                        // d
  w.put_u64(1);                        // columns
  w.put_u64(0);                        // budget: unbounded
  w.put_u64(std::uint64_t{1} << 40);   // capacity
  w.put_u64(std::uint64_t{1} << 38);   // head
  w.put_u64(0);                        // count
  w.put_f64s(std::vector<double>{});
  w.put_f64s(std::vector<double>{});
  w.put_f64s(std::vector<double>{});
  SupportSet damaged(2, 1, 0, 8);
  StateReader in(w.bytes(), "support");
  EXPECT_NE(message_of([&] { damaged.load(in); }).find("inconsistent support-set layout"), std::string::npos);

  // A set that really grew (8 → 16 rows) still loads.
  SupportSet grown(2, 1, 0, 8);
  for (int i = 0; i < 9; ++i) grown.push_back(Eigen::VectorXd::Constant(2, i), 2.0 * i * i);
  StateWriter saved;
  grown.save(saved);
  SupportSet restored(2, 1, 0, 8);
  StateReader back(saved.bytes(), "support");
  restored.load(back);
  EXPECT_EQ(restored.size(), 9u);
  EXPECT_TRUE(back.at_end());
}

TEST(CheckpointFuzzRegressionTest, GraphAidedStateWithoutItsGraphPastTheLastRegenerationIsRefused) {
  // OMKL-GF regenerates its bipartite graph only up to gf_last_regen_step; a checkpoint past it
  // whose "has graph" flag was cleared loaded, and the first predict() threw
  // std::invalid_argument from the graph code (no kernel linked to any node).
  const std::string path = checkpoint_dir() + "/gf.ckpt";
  const std::string payload =
      trained_payload("omkl-gf:D=4,M=2,J=2,gf_last_regen_step=1,dict=gauss:0.5+gauss:1+gauss:2", path);
  // The OMKL-GF tail of the state: has_graph (1), regen_w (3 values), regen_eta, J·M = 4 uniforms.
  std::size_t flag_at = std::string::npos;
  for (std::size_t i = 0; i + 8 * 11 <= payload.size(); ++i)
    if (u64_at(payload, i) == 1 && u64_at(payload, i + 8) == 3 && u64_at(payload, i + 8 * 6) == 4 &&
        i + 8 * 11 == payload.size())
      flag_at = i;
  ASSERT_NE(flag_at, std::string::npos) << "OMKL-GF state layout changed";
  EXPECT_NO_THROW(Learner::load(path).predict(std::vector<double>{0.5, 0.5}));
  std::string damaged = payload;
  put_u64_at(damaged, flag_at, 0);
  write_checkpoint_file(path, damaged);
  EXPECT_NE(message_of([&] { Learner::load(path); }).find("has no feedback graph"), std::string::npos);
}

TEST(CheckpointFuzzRegressionTest, VertexWeightReferenceBelowTheLargestVertexLogWeightIsRefused) {
  // OMKL-SFG keeps its vertex weights as log u and a reference u_ref (max log u at the last
  // refresh; log u only decreases after it). A checkpoint with u_ref below max log u loaded, the
  // vertex weights exp(log u − u_ref) overflowed to ∞ and the next update made every weight NaN.
  const std::string path = checkpoint_dir() + "/sfg.ckpt";
  const std::string payload = trained_payload("omkl-sfg:D=4,M=2,dict=gauss:0.5+gauss:1+gauss:2", path, 6);
  // The replicate's tail: log u (count 3, 3 values), u_valid, u_ref: the last 6 words.
  const std::size_t ref_at = payload.size() - 8;
  const std::size_t valid_at = ref_at - 8;
  const std::size_t log_u_at = valid_at - 8 * 3;
  ASSERT_EQ(u64_at(payload, log_u_at - 8), 3u) << "OMKL-SFG state layout changed";
  ASSERT_EQ(u64_at(payload, valid_at), 1u) << "the vertex weights are in use after 6 samples";
  const auto f64_at = [&](std::size_t offset) {
    const std::uint64_t bits = u64_at(payload, offset);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  };
  double max_log_u = f64_at(log_u_at);
  for (int i = 1; i < 3; ++i) max_log_u = std::max(max_log_u, f64_at(log_u_at + 8 * i));
  ASSERT_GE(f64_at(ref_at), max_log_u);
  const double prediction = Learner::load(path).predict(std::vector<double>{0.5, 0.5});
  EXPECT_TRUE(std::isfinite(prediction));
  for (const double bad_ref : {max_log_u - 1.0, max_log_u - 1e-9, std::nan("")}) {
    std::string damaged = payload;
    std::uint64_t bits;
    std::memcpy(&bits, &bad_ref, sizeof bits);
    put_u64_at(damaged, ref_at, bits);
    write_checkpoint_file(path, damaged);
    EXPECT_NE(message_of([&] { Learner::load(path); }).find("vertex-weight reference"), std::string::npos) << bad_ref;
    EXPECT_THROW(Learner::load(path), InputError) << bad_ref;
  }
  // A reference above the largest log-weight is a state the algorithm can be in: it loads.
  std::string raised = payload;
  const double higher = f64_at(ref_at) + 0.5;
  std::uint64_t bits;
  std::memcpy(&bits, &higher, sizeof bits);
  put_u64_at(raised, ref_at, bits);
  write_checkpoint_file(path, raised);
  EXPECT_TRUE(std::isfinite(Learner::load(path).predict(std::vector<double>{0.5, 0.5})));
}

// ---- the registry: families and their algorithms -------------------------------------------

TEST(RegistryTest, EveryAlgorithmBelongsToARegisteredFamily) {
  const auto& families = omkl::detail::algorithm_families();
  ASSERT_FALSE(families.empty());
  std::set<std::string> family_names;
  for (const auto& f : families) EXPECT_TRUE(family_names.insert(f.name).second) << "family listed twice: " << f.name;
  const auto listed = omkl::list_algorithms();
  const auto names = omkl::algorithm_names();
  ASSERT_EQ(listed.size(), names.size());
  std::set<std::string> seen_families;
  for (std::size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(listed[i].name, names[i]);
    EXPECT_EQ(family_names.count(listed[i].family), 1u) << listed[i].name << " has family '" << listed[i].family << "'";
    EXPECT_FALSE(listed[i].summary.empty()) << listed[i].name;
    seen_families.insert(listed[i].family);
    if (i > 0) EXPECT_LT(listed[i - 1].name, listed[i].name) << "names are sorted and unique";
  }
  // Every family registers at least one algorithm.
  EXPECT_EQ(seen_families, family_names);
  // The family is named by describe, which builds the algorithm through the same registry.
  EXPECT_NE(omkl::describe_algorithm("omkl-sfg").find("(family: graph_aided)"), std::string::npos);
  EXPECT_NE(omkl::describe_algorithm("adaraker").find("(family: raker)"), std::string::npos);
}

TEST(StateIoTest, SeveralFilesAreWrittenAllOrNone) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("omkl_all_or_none_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string first = (dir / "curves.csv").string(), second = (dir / "summary.json").string();
  // The second file cannot be written (its folder is missing): neither appears, no temporary is
  // left, and the error names the file with the system's reason.
  const std::string message = message_of([&] {
    write_files_atomic({{first, "a,b\n"}, {(dir / "missing" / "summary.json").string(), "{}"}});
  });
  EXPECT_NE(message.find("summary.json: cannot open for writing: No such file or directory"), std::string::npos)
      << message;
  EXPECT_TRUE(fs::is_empty(dir)) << "a file of the failed set was left";
  // Both can: both appear, with their contents.
  write_files_atomic({{first, "a,b\n"}, {second, "{}"}});
  std::ifstream in(second);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{}");
  EXPECT_TRUE(fs::exists(first));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
  fs::remove_all(dir);
}

// Where the bytes go: through a link to its file (the link kept), into a pipe or device as it is
// (a rename would replace it), never over a folder, and never twice to one file in a set.
TEST(StateIoTest, LinksPipesAndFoldersAreWrittenAsTheyAre) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("omkl_destinations_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  const auto read = [](const fs::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  // A relative link, to a file in another folder.
  std::ofstream(dir / "sub" / "model.bin") << "old";
  fs::create_symlink(fs::path("sub") / "model.bin", dir / "model.link");
  write_file_atomic((dir / "model.link").string(), "new");
  EXPECT_TRUE(fs::is_symlink(dir / "model.link")) << "the link was replaced by a file";
  EXPECT_EQ(read(dir / "sub" / "model.bin"), "new");
  // A FIFO: read by a reader on the other end, not replaced by a regular file.
  const fs::path fifo = dir / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read(fifo); });
  write_file_atomic(fifo.string(), "t,y,prediction\n");
  reader.join();
  EXPECT_EQ(received, "t,y,prediction\n");
  EXPECT_TRUE(fs::is_fifo(fifo));
  // A full device fails the set, and the set's regular file is not replaced.
  if (fs::exists("/dev/full")) {
    std::ofstream(dir / "keep.csv") << "old";
    const std::string full = message_of([&] {
      write_files_atomic({{(dir / "keep.csv").string(), "new"}, {"/dev/full", "x"}});
    });
    EXPECT_NE(full.find("/dev/full: write failed"), std::string::npos) << full;
    EXPECT_EQ(read(dir / "keep.csv"), "old");
    EXPECT_TRUE(fs::is_character_file("/dev/full"));
  }
  EXPECT_NE(message_of([&] { write_file_atomic((dir / "sub").string(), "x"); }).find("not a regular file (a folder)"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              write_files_atomic({{(dir / "sub" / "model.bin").string(), "a"}, {(dir / "model.link").string(), "b"}});
            }).find("written twice"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              write_files_atomic({{(dir / "a.csv").string(), "a"}, {(dir / "sub" / ".." / "a.csv").string(), "b"}});
            }).find("written twice"),
            std::string::npos);
  EXPECT_EQ(read(dir / "sub" / "model.bin"), "new");
  fs::remove_all(dir);
}

TEST(LearnerTest, FeatureNamesTravelWithTheModel) {
  // The training header's names are saved in the context (appended: checkpoints without them
  // load with none) and survive a save/load and a replaced normalisation.
  LearnerContext context;
  context.n_features = 2;
  context.horizon = 10;
  context.feature_names = {"depth", "speed"};
  Learner learner = make_learner(parse_algorithm_spec("raker:D=4"), context);
  EXPECT_EQ(learner.feature_names(), context.feature_names);
  const double x[2] = {0.25, 0.5};
  learner.partial_fit(x, 1.0);
  Normalizer scaler;
  scaler.how = Normalization::ZScore;
  scaler.n_features = 2;
  scaler.offset = {0.0, 0.0};
  scaler.scale = {1.0, 1.0};
  learner.set_preprocessing(scaler);
  const Learner restored = Learner::from_bytes(learner.to_bytes());
  EXPECT_EQ(restored.feature_names(), context.feature_names);
  EXPECT_EQ(restored.preprocessing().how, Normalization::ZScore);
  context.feature_names.clear();
  EXPECT_TRUE(Learner::from_bytes(make_learner(parse_algorithm_spec("raker:D=4"), context).to_bytes())
                  .feature_names()
                  .empty());
}
