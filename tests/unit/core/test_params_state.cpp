#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/algorithm_base.h"
#include "core/env_switch.h"
#include "core/params.h"
#include "core/state_io.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"

using namespace omkl;
using namespace omkl::detail;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

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

TEST(ParamsTest, BadValuesNameTheParameter) {
  ParamReader p("raker", {{"D", "2x"}, {"eta", "nan"}, {"rf", "qmc"}, {"flag", "maybe"}});
  EXPECT_NE(message_of([&] { p.get_int("D", 1, ""); }).find("'D'"), std::string::npos);
  EXPECT_NE(message_of([&] { p.get_double("eta", 1, ""); }).find("'eta'"), std::string::npos);
  EXPECT_NE(message_of([&] { p.get_choice("rf", "", {"orf", "rf"}, ""); }).find("orf|rf"), std::string::npos);
  EXPECT_THROW(p.get_bool("flag", false, ""), ConfigError);
}

TEST(ParamsTest, SoftDefaultsApplyWhenUsedAndAreIgnoredOtherwise) {
  ParamReader p("raker", {{"D", "20"}}, {{"D", "50"}, {"lambda", "0.5"}, {"B", "50"}});
  EXPECT_EQ(p.get_int("D", 1, ""), 20) << "explicit parameters win over presets";
  EXPECT_EQ(p.get_double("lambda", 0.01, ""), 0.5);
  EXPECT_NO_THROW(p.finish()) << "a preset key the algorithm does not read is not an error";
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
