// Every registered algorithm, whatever its family, under the Learner API's promises
// (learner.h): the same numbers step by step as in blocks of any size; predict() changes
// nothing; a checkpoint continues bit for bit and is a fixed point of load and save;
// parameters() lists every value the learner uses, so that a learner built from them is the same
// learner; bad samples are refused and change nothing; kernel_weights() is a distribution; edge
// streams give finite predictions or a clear refusal. Then a study's promise (a replicate's
// numbers depend on neither threads, schedule nor company) and, on a GPU, the CUDA paths against
// the CPU. The list comes from the registry, so an algorithm added later is held to all of them
// without an edit here. Each family's own tests check what its algorithms compute; this checks
// the contract.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "features/rf_backend.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"
#include "omkl/study.h"

namespace {

using omkl::Dataset;
using omkl::Learner;
using omkl::Profile;
using omkl::Task;

// Short: the exact-kernel baselines' support sets grow with every sample, and the sweep builds
// every algorithm in both profiles and both tasks several times.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
// Under the sanitizers (scripts/check_sanitizers.sh) every step costs tens of times more: a
// shorter stream keeps the same paths (every algorithm, variant and property) within CI's time.
constexpr std::size_t kSweepSamples = 48;
#else
constexpr std::size_t kSweepSamples = 120;
#endif
constexpr std::size_t kSweepFeatures = 3;
constexpr std::size_t kSweepClients = 4;  // the federated algorithms' default, from the stream

struct SweepCase {
  std::string name;
  Profile profile;
  Task task;
  std::string variant;  ///< "" (the defaults) or one parameter that picks another path
  omkl::AlgorithmSpec spec() const {
    return omkl::parse_algorithm_spec(variant.empty() ? name : name + ":" + variant);
  }
};

// Paths besides the default that keep the same contract: the per-step-feedback families' resident
// walk (on the CPU its host driver, the GPU walk's reference), the float feature map, NumPy's
// legacy generator (the graph journal's bit-compatible draws), orthogonal random features, one
// frequency matrix for every kernel, and the losses besides each algorithm's default.
const std::vector<std::string> kVariants = {"",         "step_path=resident", "precision=float", "rng=numpy_legacy",
                                            "rf=orf",   "shared_omega=true",  "loss=absolute",   "loss=hinge",
                                            "loss=logistic"};

std::string describe_case(const SweepCase& c) {
  return c.name + (c.variant.empty() ? "" : ":" + c.variant) + " / " + omkl::to_string(c.profile) + " / " +
         omkl::to_string(c.task);
}

omkl::LearnerContext sweep_context(const SweepCase& c, const Dataset& data) {
  omkl::LearnerContext context;
  context.n_features = data.n_features;
  context.task = data.task;
  context.profile = c.profile;
  context.seed = 11;
  context.replicate = 2;
  context.horizon = data.n_samples;
  context.n_clients = kSweepClients;
  return context;
}

Learner build(const omkl::AlgorithmSpec& spec, const SweepCase& c, const Dataset& data) {
  return omkl::make_learner(spec, sweep_context(c, data));
}

std::vector<double> fit_steps(Learner& learner, const Dataset& data, std::size_t begin, std::size_t end) {
  std::vector<double> p;
  for (std::size_t t = begin; t < end; ++t) p.push_back(learner.partial_fit(data.row(t), data.y[t]));
  return p;
}

std::vector<double> fit_block(Learner& learner, const Dataset& data, std::size_t begin, std::size_t end) {
  std::vector<double> p(end - begin);
  learner.partial_fit_block(data.row(begin), data.y.data() + begin, end - begin, p.data());
  return p;
}

// Where the contract is "within floating point" instead of bit for bit: with
// step_path=resident, predict() takes the host path's arithmetic while partial_fit's prediction
// comes from the walk, and a federated round's block walks while a lone sample of an unfinished
// round takes the host path (the resident program sums its features and rounds its sincos as the
// GPU does; learner.h). 1e-12 of the value is thousands of ulps and far below any difference an
// algorithm's choice could make over these short streams.
bool within_rounding(const std::vector<double>& got, const std::vector<double>& reference) {
  return omkl::test::first_apart(got, reference, 1e-12).empty();
}

using omkl::test::first_difference;
using omkl::test::same_bits;

// Every (algorithm, profile, task, variant) the registry builds; a task or variant an algorithm
// refuses (a ConfigError: e.g. a loss that needs ±1 labels, a path it does not have) is left out,
// but each algorithm must take one task with its defaults.
std::vector<SweepCase> buildable_cases() {
  std::vector<SweepCase> cases;
  for (const std::string& name : omkl::algorithm_names()) {
    std::size_t taken = 0;
    for (const std::string& variant : kVariants)
      for (const Task task : {Task::Regression, Task::Classification}) {
        const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, task);
        for (const Profile profile : {Profile::Paper, Profile::Reference}) {
          const SweepCase c{name, profile, task, variant};
          try {
            build(c.spec(), c, data);
          } catch (const omkl::ConfigError&) {
            continue;
          }
          cases.push_back(c);
          taken += variant.empty() ? 1 : 0;
        }
      }
    EXPECT_GT(taken, 0u) << name << " builds for neither task with its defaults";
  }
  return cases;
}

class EveryAlgorithmTest : public ::testing::Test {
 protected:
  static const std::vector<SweepCase>& cases() {
    static const std::vector<SweepCase> all = buildable_cases();
    return all;
  }
};

TEST_F(EveryAlgorithmTest, TheRegistryBuildsEveryAlgorithmInBothProfiles) {
  // Both profiles of every algorithm: ARCHITECTURE.md's one named option, never a missing one.
  for (const std::string& name : omkl::algorithm_names()) {
    std::size_t paper = 0, reference = 0;
    for (const SweepCase& c : cases())
      if (c.name == name && c.variant.empty()) (c.profile == Profile::Paper ? paper : reference) += 1;
    EXPECT_GT(paper, 0u) << name;
    EXPECT_GT(reference, 0u) << name;
  }
  EXPECT_GE(cases().size(), 2 * omkl::algorithm_names().size());
  // The variants reach the families that have them.
  for (const std::string& variant : kVariants) {
    std::size_t n = 0;
    for (const SweepCase& c : cases()) n += c.variant == variant ? 1 : 0;
    EXPECT_GT(n, 0u) << variant;
  }
}

TEST_F(EveryAlgorithmTest, StepsAndBlocksOfAnySizeGiveTheSameBits) {
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    const omkl::AlgorithmSpec spec = c.spec();
    Learner one = build(spec, c, data);
    const std::vector<double> steps = fit_steps(one, data, 0, data.n_samples);
    for (double v : steps) ASSERT_TRUE(std::isfinite(v)) << "a non-finite prediction";
    Learner whole = build(spec, c, data);
    const std::vector<double> block = fit_block(whole, data, 0, data.n_samples);
    // Federated rounds on the resident path: a lone sample of a round takes the host path.
    const bool rounding = c.variant == "step_path=resident" && one.n_clients() > 0;
    EXPECT_TRUE(rounding ? within_rounding(block, steps) : same_bits(steps, block))
        << first_difference(steps, block);
    Learner pieces = build(spec, c, data);
    std::vector<double> uneven;
    for (std::size_t begin = 0, size = 1; begin < data.n_samples; begin += size, size = 2 * size + 1) {
      const std::vector<double> p = fit_block(pieces, data, begin, std::min(data.n_samples, begin + size));
      uneven.insert(uneven.end(), p.begin(), p.end());
    }
    EXPECT_TRUE(rounding ? within_rounding(uneven, steps) : same_bits(steps, uneven))
        << "uneven blocks: " << first_difference(steps, uneven);
    EXPECT_EQ(one.n_seen(), static_cast<std::int64_t>(data.n_samples));
  }
}

TEST_F(EveryAlgorithmTest, PredictChangesNothing) {
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    const omkl::AlgorithmSpec spec = c.spec();
    Learner plain = build(spec, c, data);
    Learner asked = build(spec, c, data);
    const std::vector<double> expected = fit_steps(plain, data, 0, data.n_samples);
    std::vector<double> got, asked_first;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      // A sample from elsewhere in the stream first, then the one about to be learned.
      (void)asked.predict(data.row((t * 37 + 5) % data.n_samples));
      asked_first.push_back(asked.predict(data.row(t)));
      got.push_back(asked.partial_fit(data.row(t), data.y[t]));
    }
    EXPECT_TRUE(same_bits(expected, got)) << first_difference(expected, got);
    const bool rounding = c.variant == "step_path=resident";  // predict() is the host path's
    EXPECT_TRUE(rounding ? within_rounding(asked_first, expected) : same_bits(expected, asked_first))
        << "predict() is not partial_fit's prediction: " << first_difference(expected, asked_first);
  }
}

TEST_F(EveryAlgorithmTest, ACheckpointContinuesBitForBit) {
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    const omkl::AlgorithmSpec spec = c.spec();
    Learner straight = build(spec, c, data);
    const std::vector<double> expected = fit_steps(straight, data, 0, data.n_samples);
    for (const std::size_t cut : {std::size_t{0}, data.n_samples / 2 + 1}) {
      Learner first = build(spec, c, data);
      std::vector<double> got = fit_steps(first, data, 0, cut);
      Learner resumed = Learner::from_bytes(first.to_bytes(), describe_case(c));
      EXPECT_EQ(resumed.n_seen(), static_cast<std::int64_t>(cut));
      EXPECT_EQ(resumed.spec(), first.spec());
      EXPECT_EQ(resumed.parameters(), first.parameters());
      EXPECT_EQ(resumed.kernel_weights(), first.kernel_weights());
      const std::vector<double> rest = fit_steps(resumed, data, cut, data.n_samples);
      got.insert(got.end(), rest.begin(), rest.end());
      EXPECT_TRUE(same_bits(expected, got)) << "saved after " << cut << ": " << first_difference(expected, got);
    }
  }
}

TEST_F(EveryAlgorithmTest, ACheckpointIsAFixedPointOfLoadAndSave) {
  // Loading and saving again gives the same bytes: nothing is lost, added or reordered.
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    Learner learner = build(c.spec(), c, data);
    for (const std::size_t at : {std::size_t{0}, std::size_t{37}, data.n_samples}) {
      fit_steps(learner, data, static_cast<std::size_t>(learner.n_seen()), at);
      const std::string bytes = learner.to_bytes();
      EXPECT_EQ(bytes, learner.to_bytes()) << "saving twice after " << at;
      EXPECT_TRUE(Learner::from_bytes(bytes).to_bytes() == bytes) << "after " << at << " samples";
    }
  }
}

TEST_F(EveryAlgorithmTest, BadSamplesAreRefusedAndChangeNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    Learner clean = build(c.spec(), c, data);
    const std::vector<double> expected = fit_steps(clean, data, 0, data.n_samples);
    Learner probed = build(c.spec(), c, data);
    const std::size_t at = data.n_samples / 2;  // the bad samples come here, after `at` good ones
    std::vector<double> got = fit_steps(probed, data, 0, at);
    std::vector<double> x(data.row(at), data.row(at) + data.n_features);
    const auto refused = [&](const std::function<void()>& f, const char* what) {
      EXPECT_THROW(f(), omkl::InputError) << what;
      EXPECT_FALSE(probed.failed()) << what;
      EXPECT_EQ(probed.n_seen(), static_cast<std::int64_t>(at)) << what;
    };
    x[1] = nan;
    refused([&] { probed.partial_fit(x, data.y[at]); }, "a NaN feature");
    x[1] = -inf;
    refused([&] { probed.partial_fit(x, data.y[at]); }, "an infinite feature");
    x[1] = data.row(at)[1];
    refused([&] { probed.partial_fit(x, inf); }, "an infinite target");
    if (c.task == Task::Classification) refused([&] { probed.partial_fit(x, 0.5); }, "a label other than ±1");
    // A block with one bad row in the middle: nothing of it is learned.
    std::vector<double> block(data.row(at), data.row(at) + 10 * data.n_features);
    block[4 * data.n_features] = nan;
    std::vector<double> out(10);
    refused([&] { probed.partial_fit_block(block.data(), data.y.data() + at, 10, out.data()); }, "a bad row in a block");
    const std::vector<double> rest = fit_steps(probed, data, at, data.n_samples);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_TRUE(same_bits(expected, got)) << first_difference(expected, got);
  }
}

// Streams at the edges: one sample; one feature; every feature constant (every kernel then 1,
// every pair of kernels alike); huge and tiny inputs; a constant target. Each algorithm either
// refuses the stream when it is built (a ConfigError that names it) or predicts finite values.
TEST_F(EveryAlgorithmTest, EdgeStreamsGiveFinitePredictionsOrAClearRefusal) {
  struct Edge {
    const char* what;
    std::size_t n, d;
    double scale;   ///< inputs multiplied by it
    bool constant;  ///< every input 0.5
  };
  const std::vector<Edge> edges = {{"one sample", 1, 3, 1.0, false},   {"two samples", 2, 3, 1.0, false},
                                   {"one feature", 60, 1, 1.0, false}, {"constant inputs", 60, 3, 1.0, true},
                                   {"inputs of 1e6", 60, 3, 1e6, false}, {"inputs of 1e-9", 60, 3, 1e-9, false}};
  for (const SweepCase& c : cases()) {
    if (!c.variant.empty()) continue;
    for (const Edge& edge : edges) {
      SCOPED_TRACE(describe_case(c) + ", " + edge.what);
      Dataset data = omkl::test::random_stream(edge.n, edge.d, c.task);
      for (double& v : data.x) v = edge.constant ? 0.5 : v * edge.scale;
      std::optional<Learner> learner;
      try {
        learner.emplace(build(c.spec(), c, data));
      } catch (const omkl::ConfigError& e) {
        EXPECT_NE(std::string(e.what()).find(c.name), std::string::npos) << "a refusal that names no algorithm: "
                                                                          << e.what();
        continue;
      }
      // Gradient steps of a fixed size on inputs of 1e6 diverge where a kernel grows with x (the
      // linear and polynomial kernels of these baselines' dictionaries) or a network's
      // activations do: the Learner then fails with a DivergedError naming the sample, which
      // `omkl run` reports with its row (a study counts it in `diverged`). Bounded kernels must
      // stay finite.
      static const std::vector<std::string> unbounded = {"linear", "poly",   "poly-2", "omkl",
                                                         "omkl-b", "avgmkl", "adamkl", "perfedavg"};
      const bool may_diverge =
          edge.scale > 1.0 && std::find(unbounded.begin(), unbounded.end(), c.name) != unbounded.end();
      std::vector<double> p;
      try {
        p = fit_block(*learner, data, 0, data.n_samples);
      } catch (const omkl::DivergedError& e) {
        EXPECT_TRUE(may_diverge) << e.what();
        EXPECT_TRUE(learner->failed());
        continue;
      }
      if (may_diverge) continue;  // its last update may still have diverged
      for (std::size_t t = 0; t < p.size(); ++t) EXPECT_TRUE(std::isfinite(p[t])) << "prediction " << t << ": " << p[t];
      EXPECT_TRUE(std::isfinite(learner->predict(data.row(0))));
      for (double w : learner->kernel_weights()) EXPECT_TRUE(std::isfinite(w));
    }
  }
}

TEST_F(EveryAlgorithmTest, ItsParametersRebuildTheSameLearner) {
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    Learner defaults = build(c.spec(), c, data);
    const std::vector<double> expected = fit_steps(defaults, data, 0, data.n_samples);
    // Every parameter given explicitly, with the value the learner reports using.
    omkl::AlgorithmSpec explicit_spec{c.name, defaults.parameters()};
    std::optional<Learner> built;
    try {
      built.emplace(build(explicit_spec, c, data));
    } catch (const omkl::Error& e) {
      ADD_FAILURE() << "its own parameters are refused: " << e.what() << "\n  " << explicit_spec.to_string();
      continue;
    }
    Learner& rebuilt = *built;
    EXPECT_EQ(rebuilt.parameters(), defaults.parameters());
    const std::vector<double> got = fit_steps(rebuilt, data, 0, data.n_samples);
    EXPECT_TRUE(same_bits(expected, got)) << first_difference(expected, got) << "\n  " << explicit_spec.to_string();
  }
}

TEST_F(EveryAlgorithmTest, KernelWeightsAreADistributionWhereKept) {
  for (const SweepCase& c : cases()) {
    SCOPED_TRACE(describe_case(c));
    const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, c.task);
    Learner learner = build(c.spec(), c, data);
    for (const std::size_t checkpoint : {std::size_t{0}, std::size_t{1}, data.n_samples}) {
      fit_steps(learner, data, static_cast<std::size_t>(learner.n_seen()), checkpoint);
      const std::vector<double> w = learner.kernel_weights();
      if (w.empty()) continue;
      double total = 0.0;
      for (double v : w) {
        EXPECT_TRUE(std::isfinite(v) && v >= 0.0) << "weight " << v << " after " << checkpoint;
        total += v;
      }
      EXPECT_NEAR(total, 1.0, 1e-12) << "after " << checkpoint << " samples";
    }
  }
}

}  // namespace

namespace {

// ARCHITECTURE.md: a replicate's result does not depend on the thread count, on which other
// replicates run beside it, or on the schedule (threads, or lockstep as a GPU study runs them).
omkl::StudyResult sweep_study(const std::string& name, const Dataset& data, std::size_t seeds, std::size_t threads,
                              bool lockstep, bool shuffle) {
  omkl::StudyConfig config;
  config.algorithms = {omkl::parse_algorithm_spec(name)};
  config.n_seeds = seeds;
  config.base_seed = 3;
  config.threads = threads;
  config.lockstep_on_cpu = lockstep;
  config.shuffle = shuffle;
  config.curve_points = 7;
  return omkl::run_study(config, data);
}

// The stream a study of `name` takes: regression, classification, or federated (4 clients).
std::optional<Dataset> study_stream(const std::string& name) {
  for (int kind = 0; kind < 3; ++kind) {
    const Dataset data =
        kind == 2 ? omkl::test::federated_stream(kSweepClients, 30, kSweepFeatures, 7)
                  : omkl::test::random_stream(kSweepSamples, kSweepFeatures, kind == 0 ? Task::Regression : Task::Classification);
    omkl::StudyConfig config;
    config.algorithms = {omkl::parse_algorithm_spec(name)};
    try {
      omkl::check_study_algorithms(config, data);
      return data;
    } catch (const omkl::ConfigError&) {
    }
  }
  return std::nullopt;
}

}  // namespace

TEST(EveryAlgorithmStudyTest, AReplicatesNumbersDependOnNeitherThreadsNorScheduleNorCompany) {
  for (const std::string& name : omkl::algorithm_names()) {
    SCOPED_TRACE(name);
    const std::optional<Dataset> data = study_stream(name);
    ASSERT_TRUE(data.has_value()) << "no stream a study of it takes";
    for (const bool shuffle : {false, true}) {
      if (shuffle && data->n_clients > 0) continue;  // a federated stream's order is the protocol
      SCOPED_TRACE(shuffle ? "shuffled" : "in order");
      const omkl::AlgorithmResult one = sweep_study(name, *data, 3, 1, false, shuffle).results.at(0);
      const omkl::AlgorithmResult two = sweep_study(name, *data, 3, 2, false, shuffle).results.at(0);
      const omkl::AlgorithmResult lockstep = sweep_study(name, *data, 3, 1, true, shuffle).results.at(0);
      const omkl::AlgorithmResult fewer = sweep_study(name, *data, 2, 2, false, shuffle).results.at(0);
      ASSERT_EQ(one.final_per_seed.size(), 3u);
      EXPECT_TRUE(same_bits(one.final_per_seed, two.final_per_seed))
          << "threads: " << first_difference(one.final_per_seed, two.final_per_seed);
      EXPECT_TRUE(same_bits(one.curve_mean, two.curve_mean)) << first_difference(one.curve_mean, two.curve_mean);
      EXPECT_TRUE(same_bits(one.final_per_seed, lockstep.final_per_seed))
          << "lockstep: " << first_difference(one.final_per_seed, lockstep.final_per_seed);
      EXPECT_TRUE(same_bits(one.curve_mean, lockstep.curve_mean))
          << "lockstep: " << first_difference(one.curve_mean, lockstep.curve_mean);
      const std::vector<double> first_two(one.final_per_seed.begin(), one.final_per_seed.begin() + 2);
      EXPECT_TRUE(same_bits(first_two, fewer.final_per_seed))
          << "a third replicate beside them: " << first_difference(first_two, fewer.final_per_seed);
      EXPECT_EQ(one.resolved_params, two.resolved_params);
      for (double v : one.final_per_seed) EXPECT_TRUE(std::isfinite(v));
    }
  }
}

// On a GPU (skipped without one): every algorithm that has a CUDA path, with its defaults, on
// --backend cuda, against the CPU backend and under the Learner contract as the GPU keeps it
// (learner.h: within floating point where the walk and the host path meet). A learner per
// algorithm steps with predict() before each sample, is saved halfway and resumed by a second one
// that learns the rest as one block: two GPU learners an algorithm, to keep the GPU session short.
TEST(CudaEveryAlgorithmTest, EveryCudaPathAgreesWithTheCpuAndResumesFromItsCheckpoint) {
  if (!omkl::detail::cuda_available()) GTEST_SKIP() << "no usable CUDA device (or a CPU-only build)";
  std::size_t on_gpu = 0;
  for (const std::string& name : omkl::algorithm_names()) {
    for (const Task task : {Task::Regression, Task::Classification}) {
      const SweepCase c{name, Profile::Paper, task, ""};
      SCOPED_TRACE(describe_case(c));
      const Dataset data = omkl::test::random_stream(kSweepSamples, kSweepFeatures, task);
      omkl::LearnerContext cpu_context = sweep_context(c, data), gpu_context = cpu_context;
      gpu_context.backend = omkl::BackendKind::Cuda;
      std::optional<Learner> cpu, gpu;
      try {
        cpu.emplace(omkl::make_learner(c.spec(), cpu_context));
        gpu.emplace(omkl::make_learner(c.spec(), gpu_context));
      } catch (const omkl::ConfigError&) {
        continue;  // the task, or a CUDA path, this algorithm does not have
      }
      ++on_gpu;
      const std::vector<double> reference = fit_steps(*cpu, data, 0, data.n_samples);
      const std::size_t half = data.n_samples / 2;
      std::vector<double> stepped, asked;
      std::string saved;
      for (std::size_t t = 0; t < data.n_samples; ++t) {
        if (t == half) saved = gpu->to_bytes();
        asked.push_back(gpu->predict(data.row(t)));
        stepped.push_back(gpu->partial_fit(data.row(t), data.y[t]));
      }
      for (double v : stepped) ASSERT_TRUE(std::isfinite(v));
      // Double precision throughout: the backends differ by rounding (sums in another order,
      // contractions), far below 1e-6 over 120 samples unless a draw lands on a boundary.
      EXPECT_EQ(omkl::test::first_apart(stepped, reference, 1e-6), "") << "GPU against CPU";
      EXPECT_EQ(omkl::test::first_apart(asked, stepped, 1e-9), "") << "predict() against partial_fit";
      Learner resumed = Learner::from_bytes(saved, describe_case(c));
      const std::vector<double> rest = fit_block(resumed, data, half, data.n_samples);
      const std::vector<double> expected(stepped.begin() + static_cast<std::ptrdiff_t>(half), stepped.end());
      EXPECT_EQ(omkl::test::first_apart(rest, expected, 1e-9), "") << "resumed as a block";
      break;  // one task an algorithm
    }
  }
  EXPECT_GT(on_gpu, 0u) << "no algorithm has a CUDA path";
}
