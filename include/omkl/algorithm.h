/// @file algorithm.h
/// @brief Algorithm specifications and the learner factory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "omkl/dataset.h"
#include "omkl/learner.h"
#include "omkl/types.h"

namespace omkl {

/// An algorithm name with optional parameters, as written on the command line:
/// "raker", "adaraker:eta0=10", "raker:D=20,eta=0.01".
struct AlgorithmSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
  /// The grid this configuration was expanded from (expand_algorithm_grid(): its text as
  /// written, "oks:c_lambda=1|5|10|25"); empty for a configuration written alone. Not part of
  /// to_string(): it names the family of configurations, not this one.
  std::string grid;

  /// Canonical text form: name[:k=v,k=v] with the parameters in the given order.
  std::string to_string() const;
  /// Adds or replaces a parameter.
  void set(const std::string& key, const std::string& value);
  /// Value of a parameter, or nullptr.
  const std::string* find(const std::string& key) const;
};

/// Parses "name[:k=v[,k=v]...]" (":" also separates parameters). Throws ConfigError.
AlgorithmSpec parse_algorithm_spec(const std::string& text);

/// Most configurations one grid may name.
inline constexpr std::size_t kMaxGridConfigurations = 10000;

/// A parameter grid: a spec whose values may list alternatives joined by '|'
/// ("raker:eta=0.1|0.01,D=20|50"), as every combination, in the order of nested loops over the
/// parameters as written (the first outermost: eta=0.1,D=20; eta=0.1,D=50; eta=0.01,D=20; …).
/// Each configuration keeps the grid's text in AlgorithmSpec::grid; a spec without '|' is one
/// configuration with an empty grid. ConfigError, naming the parameter, for an empty or repeated
/// alternative, and for more than kMaxGridConfigurations combinations.
std::vector<AlgorithmSpec> expand_algorithm_grid(const std::string& text);

/// What a learner needs to know about its stream and its randomness.
struct LearnerContext {
  std::size_t n_features = 0;
  Task task = Task::Regression;
  Profile profile = Profile::Paper;
  std::uint64_t seed = 0;       ///< base seed of the run
  std::uint64_t replicate = 0;  ///< replicate index: randomness derives from (seed, replicate)
  std::size_t horizon = 0;      ///< stream length T if known (default steps 1/√T); 0 = unknown
  BackendKind backend = BackendKind::Cpu;
  /// Federated streams (Dataset::n_clients): K clients whose samples arrive in rounds, row
  /// t·K + k being client k's t-th sample; 0 for an ordinary stream. The federated algorithms
  /// read it as their default number of clients.
  std::size_t n_clients = 0;
  /// The normalisation (with its statistics) of the stream the learner is trained on: saved with
  /// the model, so that new rows for it get the same transform (Learner::preprocessing()).
  Normalizer preprocessing;
  /// The features' names in order (a CSV header's, its target and group columns left out);
  /// empty when unknown (LIBSVM, synthetic streams, arrays). Saved with the model, so that
  /// `omkl predict` and `--resume` refuse a stream whose columns are named or ordered otherwise.
  std::vector<std::string> feature_names;
  /// Default parameters (e.g. from a preset) applied under the spec's own parameters;
  /// keys an algorithm does not use are ignored (unlike the spec's, which must be known).
  std::vector<std::pair<std::string, std::string>> defaults;
};

/// Creates a learner. Throws ConfigError for an unknown algorithm, an unknown parameter or an
/// invalid value, naming the algorithm and the parameter.
Learner make_learner(const AlgorithmSpec& spec, const LearnerContext& context);

/// One registered algorithm as `omkl list` shows it.
struct AlgorithmSummary {
  std::string name;
  std::string family;   ///< the family that registered it (raker, exact_kernel, graph_aided, ...)
  std::string summary;  ///< one line: what it is and where it comes from
};

/// Every registered algorithm, sorted by name.
std::vector<AlgorithmSummary> list_algorithms();

/// Registered algorithm names, sorted.
std::vector<std::string> algorithm_names();

/// One line per parameter of an algorithm ("name  default  meaning"), for --help.
std::string describe_algorithm(const std::string& name);

}  // namespace omkl
