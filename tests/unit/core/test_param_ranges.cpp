// Every numeric parameter of every registered algorithm declares the values it accepts
// (ParamRange), and a value outside them is a ConfigError at parse time that names the
// algorithm, the parameter, the value and the range — never an internal error later. Values
// inside are run, and the run ends normally or as a divergence (DivergedError), nothing else.
// The parameters come from the registry (each algorithm lists what it reads), so an algorithm
// or parameter added later is swept without an edit here. Then the checks of stored state that
// the families make when a checkpoint is loaded (probabilities, weights, rates).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "common/test_helpers.h"
#include "core/algorithm_base.h"
#include "core/decimal.h"
#include "core/interval_weights.h"
#include "core/kernel_weights.h"
#include "core/params.h"
#include "core/state_io.h"
#include "families/bandit/selection_rules.h"
#include "families/federated/federated_config.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"

namespace param_ranges_test {

using omkl::ConfigError;
using omkl::InputError;
using omkl::Task;
using omkl::detail::ParamDoc;
using omkl::detail::ParamRange;
using omkl::detail::ParamReader;

using omkl::test::message_of;

constexpr std::size_t kSamples = 48, kFeatures = 3, kClients = 4;

// The probe stream of an algorithm: regression, or classification for those that take only it.
struct Probe {
  std::string name;
  Task task;
  std::string base;  ///< "" or a parameter that reaches parameters read only on another path
  std::vector<ParamDoc> numeric;
};

omkl::detail::AlgoContext algo_context(Task task) {
  omkl::detail::AlgoContext context;
  context.n_features = kFeatures;
  context.horizon = kSamples;
  context.n_clients = kClients;
  context.task = task;
  return context;
}

omkl::LearnerContext learner_context(Task task) {
  omkl::LearnerContext context;
  context.n_features = kFeatures;
  context.horizon = kSamples;
  context.n_clients = kClients;
  context.task = task;
  context.seed = 3;
  return context;
}

std::vector<std::pair<std::string, std::string>> parse_base(const std::string& base) {
  if (base.empty()) return {};
  const std::size_t eq = base.find('=');
  return {{base.substr(0, eq), base.substr(eq + 1)}};
}

// Every (algorithm, path) and the numeric parameters it reads there, each parameter once per
// algorithm: with its defaults, and on the paths that read parameters of their own.
const std::vector<Probe>& probes() {
  static const std::vector<Probe> all = [] {
    const std::vector<std::string> bases = {"", "variant=hessian_free", "weight_rule=pow_beta"};
    std::vector<Probe> found;
    for (const omkl::detail::AlgorithmInfo& info : omkl::detail::algorithm_registry()) {
      std::set<std::string> seen;
      for (const std::string& base : bases)
        for (const Task task : {Task::Regression, Task::Classification}) {
          ParamReader reader(info.name, parse_base(base));
          try {
            info.make(reader, algo_context(task));
            reader.finish();
          } catch (const ConfigError&) {
            continue;  // a task or path this algorithm does not have
          }
          Probe probe{info.name, task, base, {}};
          for (const ParamDoc& doc : reader.documented())
            if ((doc.kind == ParamDoc::Kind::Real || doc.kind == ParamDoc::Kind::Integer) && seen.insert(doc.key).second)
              probe.numeric.push_back(doc);
          if (!probe.numeric.empty()) found.push_back(probe);
          break;  // one task a path
        }
    }
    return found;
  }();
  return all;
}

std::string shortest(double v) { return omkl::detail::shortest_decimal(v); }

TEST(ParamRangeTest, AGivenValueOutsideItsRangeNamesAlgorithmParameterValueAndRange) {
  ParamReader p("raker", {{"step_scale", "-1"}, {"eta_w", "1e300"}, {"D", "0"}, {"beta", "nan"}, {"lambda", "0"}});
  std::string m = message_of([&] { p.get_double("step_scale", 1.0, "", ParamRange::above(0)); });
  EXPECT_NE(m.find("algorithm 'raker': parameter 'step_scale' must be in (0, 1e+100], got -1"), std::string::npos) << m;
  m = message_of([&] { p.get_double("eta_w", 0.5, "", ParamRange::at_least(0)); });
  EXPECT_NE(m.find("parameter 'eta_w' must be in [0, 1e+100], got 1e300"), std::string::npos) << m;
  m = message_of([&] { p.get_int("D", 50, "", ParamRange::closed(1, 1000000)); });
  EXPECT_NE(m.find("parameter 'D' must be in [1, 1000000], got 0"), std::string::npos) << m;
  m = message_of([&] { p.get_double("beta", 0.5, "", ParamRange::open_closed(0, 1)); });
  EXPECT_NE(m.find("parameter 'beta' expects a finite number in (0, 1], got 'nan'"), std::string::npos) << m;
  EXPECT_EQ(p.get_double("lambda", 0.01, "", ParamRange::at_least(0)), 0.0) << "a closed end is in the range";
  EXPECT_THROW(p.get_double("lambda", 0.01, "", ParamRange::above(0)), ConfigError) << "an open end is not";
  // The algorithm's own fallback is not the user's value: a sentinel outside the range passes.
  ParamReader none("raker", {});
  EXPECT_EQ(none.get_double("eta", -1.0, "", ParamRange::above(0)), -1.0);
  // Without a declared range a number is still at most kLargestParameter in magnitude.
  ParamReader huge("raker", {{"x", "-1e101"}});
  EXPECT_THROW(huge.get_double("x", 0.0, ""), ConfigError);
  // A number that underflows is named as such, not as "not finite".
  ParamReader tiny("raker", {{"loss_scale", "5e-324"}});
  m = message_of([&] { tiny.get_double("loss_scale", 1.0, "", ParamRange::above(0)); });
  EXPECT_NE(m.find("got '5e-324', too close to 0"), std::string::npos) << m;
  // describe shows such a sentinel as "not set", never as a default outside the range it prints.
  const std::string sfg_r = omkl::describe_algorithm("omkl-sfg-r");
  EXPECT_NE(sfg_r.find("beta (not set by default; in (0, 1])"), std::string::npos) << sfg_r;
}

TEST(ParamRangeTest, DescribeShowsEachRangeAndStatesStreamDependentDefaultsAsRules) {
  // The probe stream's numbers (1/√16 = 0.25, ⌊log2 16⌋ + 1 = 5) are no defaults of a real stream.
  const std::string raker = omkl::describe_algorithm("raker");
  EXPECT_EQ(raker.find("eta (default 0.25"), std::string::npos) << raker;
  EXPECT_NE(raker.find("eta (default from the stream, as below; in (0, 1e+100]): θ step size (default 1/√T, T the "
                       "stream length"),
            std::string::npos)
      << raker;
  EXPECT_NE(raker.find("beta (default 0.5; in (0, 1])"), std::string::npos) << raker;
  EXPECT_NE(raker.find("D (default 50; in [1, 1000000])"), std::string::npos) << raker;
  const std::string adaraker = omkl::describe_algorithm("adaraker");
  EXPECT_EQ(adaraker.find("levels (default 5"), std::string::npos) << adaraker;
  EXPECT_NE(adaraker.find("levels (default from the stream"), std::string::npos) << adaraker;
  // Every algorithm: a default that follows from the stream says its rule in its meaning.
  for (const std::string& name : omkl::algorithm_names()) {
    const std::string text = omkl::describe_algorithm(name);
    for (std::size_t at = text.find("(default from the stream"); at != std::string::npos;
         at = text.find("(default from the stream", at + 1)) {
      const std::string line = text.substr(at, text.find('\n', at) - at);
      EXPECT_TRUE(line.find("default") != line.rfind("default") || line.find("T") != std::string::npos)
          << name << ": a stream-dependent default without its rule: " << line;
    }
  }
}

TEST(ParamRangeTest, EveryNumericParameterOfEveryAlgorithmDeclaresAMeaningfulRange) {
  ASSERT_FALSE(probes().empty());
  std::set<std::string> algorithms;
  for (const Probe& probe : probes()) {
    algorithms.insert(probe.name);
    for (const ParamDoc& doc : probe.numeric) {
      SCOPED_TRACE(probe.name + ":" + doc.key);
      // Nothing here means anything negative but "never" of a step number.
      if (doc.key != "gf_last_regen_step") EXPECT_GE(doc.range.low, 0.0) << doc.range.text();
      EXPECT_LE(doc.range.high, omkl::detail::kLargestParameter) << doc.range.text();
      EXPECT_LE(doc.range.low, doc.range.high);
    }
  }
  // Every algorithm with a numeric parameter was reached (the classification-only ones too).
  for (const std::string& name : {"raker", "adaraker", "rf-ogd", "omkl-gf", "omkl-sfg-r", "pof-mkl", "perfedavg",
                                  "rf-ioks", "lkmbooks", "m-forgetron", "poly", "rbf-1", "omkr"})
    EXPECT_EQ(algorithms.count(name), 1u) << name;
}

// The sweep: bad values (negative, zero, not a number, infinite, huge, tiny) and each range's
// own ends, every numeric parameter of every algorithm, one at a time.
TEST(ParamRangeTest, OutOfRangeValuesAreConfigErrorsAndInRangeValuesRunOrDiverge) {
  const std::vector<std::string> probes_text = {"-1", "0", "nan", "inf", "-inf", "1e300", "-1e300", "1e-300", "1e9"};
  std::size_t refused = 0, ran = 0;
  for (const Probe& probe : probes()) {
    const omkl::Dataset data = omkl::test::random_stream(kSamples, kFeatures, probe.task);
    for (const ParamDoc& doc : probe.numeric) {
      std::vector<std::string> values = probes_text;
      // A closed end is a value to run; a count's upper end only where it is small (D = 10⁶
      // over 76 kernels is gigabytes, which the memory check, not this sweep, is about).
      for (const double end : {doc.range.low, doc.range.high})
        if (!(end == doc.range.low ? doc.range.low_open : doc.range.high_open) &&
            (doc.kind == ParamDoc::Kind::Real || end <= 4096))
          values.push_back(doc.kind == ParamDoc::Kind::Integer ? std::to_string(static_cast<long long>(end))
                                                               : shortest(end));
      for (const std::string& value : values) {
        const std::string spec = probe.name + ":" + (probe.base.empty() ? "" : probe.base + ",") + doc.key + "=" + value;
        SCOPED_TRACE(spec);
        const double number = std::strtod(value.c_str(), nullptr);
        const bool integral = number == std::trunc(number) && std::fabs(number) < 9e18;
        const bool accepted = std::isfinite(number) && doc.range.contains(number) &&
                              (doc.kind == ParamDoc::Kind::Real || (integral && value.find_first_of(".e") == std::string::npos));
        std::optional<omkl::Learner> learner;
        try {
          learner.emplace(omkl::make_learner(omkl::parse_algorithm_spec(spec), learner_context(probe.task)));
        } catch (const ConfigError& e) {
          const std::string m = e.what();
          if (!accepted) {
            ++refused;
            EXPECT_NE(m.find("'" + probe.name + "'"), std::string::npos) << m;
            EXPECT_NE(m.find("'" + doc.key + "'"), std::string::npos) << m;
            EXPECT_NE(m.find(value), std::string::npos) << m;
            EXPECT_NE(m.find(doc.range.text()), std::string::npos) << m;
          }
          // A value in range may still be refused beside the others (M above the dictionary's
          // size, an exploration rate above 1 where eta is one): by name, with the algorithm's.
          else {
            EXPECT_NE(m.find(probe.name), std::string::npos) << m;
          }
          continue;
        } catch (const std::exception& e) {
          ADD_FAILURE() << "not a ConfigError: " << e.what();
          continue;
        }
        EXPECT_TRUE(accepted) << "a value outside " << doc.range.text() << " was taken";
        ++ran;
        std::vector<double> predictions(data.n_samples);
        try {
          learner->partial_fit_block(data.x.data(), data.y.data(), data.n_samples, predictions.data());
        } catch (const omkl::DivergedError&) {
          // A step size or ridge weight at the top of its range may well overflow the model.
        } catch (const std::exception& e) {
          ADD_FAILURE() << "the run failed inside the algorithm: " << e.what();
        }
      }
    }
  }
  EXPECT_GT(refused, 100u);
  EXPECT_GT(ran, 50u);
}

// ---- stored state that no run leaves, refused where a checkpoint is read ---------------------

std::string f64_bytes(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(bits >> (8 * i));
  return out;
}

void put_f64_at(std::string& bytes, std::size_t offset, double v) { bytes.replace(offset, 8, f64_bytes(v)); }

// The payload of a learner trained on a few samples of two features.
std::string trained_payload(const std::string& spec, std::size_t steps = 6) {
  omkl::LearnerContext context;
  context.n_features = 2;
  context.seed = 7;
  context.horizon = 16;
  omkl::Learner learner = omkl::make_learner(omkl::parse_algorithm_spec(spec), context);
  for (std::size_t t = 0; t < steps; ++t)
    learner.partial_fit(std::vector<double>{0.1 * static_cast<double>(t), 1.0 - 0.2 * static_cast<double>(t)},
                        0.3 * static_cast<double>(t));
  return omkl::detail::open_checkpoint(learner.to_bytes(), "<trained>");
}

std::string load_refusal(const std::string& payload) {
  try {
    omkl::Learner::from_bytes(omkl::detail::seal_checkpoint(payload), "damaged.ckpt");
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not an InputError: ") + e.what();
  }
  return "loaded";
}

TEST(StoredStateTest, KernelWeightsThatNoRunLeavesAreRefused) {
  // Raker keeps log-weights, the replicate's the payload's last words: count 2, then the two.
  const std::string payload = trained_payload("raker:D=4,dict=gauss:0.5+gauss:2");
  const std::size_t last = payload.size() - 8, first = last - 8;
  EXPECT_EQ(load_refusal(payload), "loaded");
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& [a, b, why] : std::vector<std::tuple<double, double, std::string>>{
           {-inf, -inf, "checkpoint: raker kernel weights are all zero (every log-weight is −∞)"},
           // NaN and +∞ are the learner's own check, for any number of any state.
           {std::nan(""), 0.0, "damaged.ckpt: the model's state holds 1 numbers that are NaN or infinite"},
           {inf, 0.0, "damaged.ckpt: the model's state holds 1 numbers that are NaN or infinite"}}) {
    std::string damaged = payload;
    put_f64_at(damaged, first, a);
    put_f64_at(damaged, last, b);
    EXPECT_NE(load_refusal(damaged).find(why), std::string::npos) << load_refusal(damaged);
  }
  // One kernel at weight 0 (log −∞) is a state a run reaches: it loads.
  std::string one_zero = payload;
  put_f64_at(one_zero, first, -inf);
  EXPECT_EQ(load_refusal(one_zero), "loaded");

  // Linear weights (the reference rules): finite, ≥ 0, a positive sum.
  omkl::detail::WeightConfig config;
  config.rule = omkl::detail::WeightRule::MinMax;
  omkl::detail::KernelWeights w(2, &config);
  EXPECT_NO_THROW(w.check_stored("w"));
  w.raw() = {-0.5, 1.0};
  EXPECT_THROW(w.check_stored("w"), InputError);
  w.raw() = {0.0, 0.0};
  EXPECT_NE(message_of([&] { w.check_stored("w"); }).find("no positive finite sum"), std::string::npos);
}

TEST(StoredStateTest, GraphAidedGraphStateIsCheckedBeforeTheGraphIsRebuilt) {
  // OMKL-GF's tail: has_graph, regen_w (count 3, 3 values), regen_eta, J·M = 4 uniforms
  // (count, 4 values): the payload's last 11 words. A damaged one reached the graph code's own
  // argument checks ("BipartiteFeedbackGraph::regenerate: weights must have a positive sum").
  const std::string payload = trained_payload("omkl-gf:D=4,M=2,J=2,gf_last_regen_step=1,dict=gauss:0.5+gauss:1+gauss:2");
  const std::size_t w_at = payload.size() - 8 * 9, eta_at = w_at + 8 * 3, uniform_at = eta_at + 16;
  EXPECT_EQ(load_refusal(payload), "loaded");
  std::string zero = payload;
  for (int k = 0; k < 3; ++k) put_f64_at(zero, w_at + 8 * k, 0.0);
  EXPECT_NE(load_refusal(zero).find("OMKL-GF graph weights are all zero"), std::string::npos) << load_refusal(zero);
  std::string rate = payload;
  put_f64_at(rate, eta_at, 2.0);
  EXPECT_NE(load_refusal(rate).find("exploration rate 2.000000 is not in [0, 1]"), std::string::npos)
      << load_refusal(rate);
  std::string draw = payload;
  put_f64_at(draw, uniform_at, 1.5);
  EXPECT_NE(load_refusal(draw).find("graph draw 1.500000 is not in [0, 1)"), std::string::npos) << load_refusal(draw);

  // OMKL-SFG: every kernel log-weight −∞ (after the backend state, the replicate's stream, then
  // log w): no kernel left to predict with.
  const std::string sfg = trained_payload("omkl-sfg:D=4,M=2,dict=gauss:0.5+gauss:1+gauss:2");
  // The replicate's tail: log w (count 3, 3 values), log u (count 3, 3 values), u_valid, u_ref.
  const std::size_t log_w_at = sfg.size() - 8 * 10 + 8;
  std::string all_zero = sfg;
  for (int k = 0; k < 3; ++k) put_f64_at(all_zero, log_w_at + 8 * k, -std::numeric_limits<double>::infinity());
  EXPECT_NE(load_refusal(all_zero).find("kernel weights are all zero"), std::string::npos) << load_refusal(all_zero);
}

TEST(StoredStateTest, ABanditRulesProbabilitiesAndRatesAreChecked) {
  omkl::detail::BanditConstants constants = omkl::detail::bandit_constants(omkl::LossKind::Squared);
  const auto rule_state = [](const std::vector<double>& q, const std::vector<double>& p, double C) {
    omkl::detail::StateWriter w;
    w.put_tag("oks++/1");
    w.put_f64(C);
    w.put_f64(0.5);
    w.put_f64s(std::vector<double>{0.1, 0.2});
    w.put_f64s(q);
    w.put_f64s(p);
    return w.bytes();
  };
  const auto load = [&](const std::string& bytes) {
    auto rule = omkl::detail::make_oks_plus_plus_rule(2, constants, false);
    omkl::detail::StateReader in(bytes, "rule");
    rule->load(in);
  };
  const auto refusal = [&](const std::string& bytes) { return message_of([&] { load(bytes); }); };
  EXPECT_NO_THROW(load(rule_state({0.4, 0.6}, {0.45, 0.55}, 1.0)));
  EXPECT_NE(refusal(rule_state({0.4, 0.6}, {2.0, -1.0}, 1.0)).find("p holds 2.000000, not a probability"),
            std::string::npos);
  EXPECT_NE(refusal(rule_state({0.4, 0.4}, {0.45, 0.55}, 1.0)).find("q sums to 0.800000, not 1"), std::string::npos);
  EXPECT_NE(refusal(rule_state({0.4, 0.6}, {0.45, 0.55}, -1.0)).find("C and V"), std::string::npos);
  // NaN is the learner's own check (Learner::load refuses any state holding one, once read).
  EXPECT_NO_THROW(load(rule_state({0.4, 0.6}, {std::nan(""), 1.0}, 1.0)));
  // −∞ is no number Learner::load refuses (a log-weight may underflow to it): the rule judges it.
  EXPECT_NE(refusal(rule_state({0.4, 0.6}, {-HUGE_VAL, 1.0}, 1.0)).find("not a probability"), std::string::npos);
}

TEST(StoredStateTest, FederatedWeightVectorsAndLossesAreChecked) {
  const double inf = std::numeric_limits<double>::infinity();
  const auto load = [](const std::vector<double>& log_w, const std::vector<double>& losses) {
    omkl::detail::StateWriter out;
    omkl::detail::write_federated_weights(out, log_w, losses, losses, 2);
    std::vector<double> w(log_w.size()), round(losses.size()), kernel(losses.size());
    omkl::detail::StateReader in(out.bytes(), "federated");
    omkl::detail::read_federated_weights(in, w, round, kernel, 2);
  };
  const auto refusal = [&](const std::vector<double>& log_w, const std::vector<double>& losses) {
    return message_of([&] { load(log_w, losses); });
  };
  EXPECT_NO_THROW(load({0.0, -inf, -1.0, -2.0}, {0.5, 1.0}));
  // Two vectors of two kernels: the second all −∞.
  EXPECT_NE(refusal({0.0, -1.0, -inf, -inf}, {0.5, 1.0}).find("all zero"), std::string::npos);
  EXPECT_NE(refusal({0.0, -1.0, 0.0, -1.0}, {-0.5, 1.0}).find("losses are ≥ 0"), std::string::npos);
}

TEST(StoredStateTest, IntervalWeightsAreChecked) {
  omkl::detail::IntervalConfig config;
  config.n_levels = 3;
  config.level_rate = {0.5, 0.5, 0.5};
  config.rule = omkl::detail::HRule::Hedge;
  omkl::detail::IntervalWeights hedge(&config);
  hedge.raw() = {-std::numeric_limits<double>::infinity(), 0.0, -2.0};
  EXPECT_NO_THROW(hedge.check_stored("h"));  // log-weights: any number below +∞
  config.rule = omkl::detail::HRule::Matlab;
  omkl::detail::IntervalWeights matlab(&config);
  EXPECT_NO_THROW(matlab.check_stored("g"));
  matlab.raw() = {0.2, -0.1, 0.9};
  EXPECT_THROW(matlab.check_stored("g"), InputError);
}

}  // namespace param_ranges_test

namespace param_ranges_test {

TEST(ParamRangeTest, AModelLargerThanTheMachineIsRefusedBeforeItIsAllocated) {
  // D at its largest over 10⁵ inputs: terabytes of frequencies. An overcommitting system would
  // grant them and kill the process when they are touched; refused first, naming the sizes.
  omkl::LearnerContext context;
  context.n_features = 100000;
  context.horizon = 10;
  const std::string m =
      message_of([&] { omkl::make_learner(omkl::parse_algorithm_spec("raker:D=1000000"), context); });
  EXPECT_NE(m.find("random features: 1 replicate(s) × 3 kernels × D = 1000000 features of 100000 inputs need"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("does not fit in memory (fewer --seeds, a smaller D or dictionary)"), std::string::npos) << m;
}

}  // namespace param_ranges_test
