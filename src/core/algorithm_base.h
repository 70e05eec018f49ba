/// @file algorithm_base.h
/// @brief The internal interface every algorithm family implements, and its registry.
///
/// An Algorithm advances R replicates of one configuration through the stream in lockstep:
/// every call takes one sample (or a block) and returns one prediction per replicate. The
/// public Learner is the R = 1 case; the study runner and the CUDA backend use larger R so
/// that each step is one batched call over replicates × kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "omkl/types.h"
#include "core/params.h"
#include "core/state_io.h"

namespace omkl::detail {

/// How the per-step metric is computed from the predictions (spec/raker.md §2.4, §7.3).
struct MetricConvention {
  /// Reference code of Raker/AdaRaker replaces the error at t = 1 by 1.
  bool first_error_is_one = false;
};

/// Everything an algorithm needs to be constructed.
struct AlgoContext {
  std::size_t n_features = 0;
  Task task = Task::Regression;
  Profile profile = Profile::Paper;
  std::uint64_t seed = 0;
  std::vector<std::uint64_t> replicates{0};  ///< replicate indices run in lockstep
  std::size_t horizon = 0;                   ///< stream length T if known, else 0
  BackendKind backend = BackendKind::Cpu;
  /// Host threads an algorithm may use inside one step for its lockstep replicates (the study
  /// sets it for GPU runs, where one algorithm holds every seed); 1 = the calling thread only.
  std::size_t host_threads = 1;

  std::size_t n_replicates() const { return replicates.size(); }
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;

  virtual std::size_t n_replicates() const = 0;
  /// Predict x for every replicate (predictions[r]), then learn from (x, y).
  virtual void step(const double* x, double y, double* predictions) = 0;
  /// n steps; predictions is n × R, row t holds the R predictions of step t. The default calls
  /// step() n times; families whose θ updates do not depend on the weights override it.
  virtual void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                          double* predictions);
  /// Current predictions for x without learning.
  virtual void predict(const double* x, double* predictions) = 0;

  virtual void save_state(StateWriter& out) const = 0;
  virtual void load_state(StateReader& in) = 0;

  virtual MetricConvention metric_convention() const { return {}; }

  /// θ updates (one kernel's 2D-vector update) applied since this object was built or restored,
  /// summed over replicates; 0 for algorithms that do not count them. A diagnostic for the
  /// benchmark (kernel updates per second), not part of the learner state.
  virtual std::uint64_t kernel_updates() const { return 0; }

  /// λ‖Σ_k w_k θ_k‖² of replicate r after the last step, with the unnormalised kernel weights:
  /// the regulariser term of the graph journal's regret (spec/graph-aided.md §4.5). NaN for
  /// algorithms that do not define it (only the graph-aided family does).
  virtual double regret_regularizer(std::size_t replicate) const;

  /// False for algorithms without any randomness (exact-kernel baselines): every replicate is
  /// identical, so a study runs one and reuses it for all seeds.
  virtual bool randomized() const { return true; }
};

using AlgorithmFactory =
    std::function<std::unique_ptr<Algorithm>(ParamReader& params, const AlgoContext& context)>;

struct AlgorithmInfo {
  std::string name;
  std::string summary;
  AlgorithmFactory make;
};

/// The table of every algorithm, built once from each family's add_*_algorithms().
const std::vector<AlgorithmInfo>& algorithm_registry();
const AlgorithmInfo& find_algorithm(const std::string& name);

/// Builds an algorithm for R replicates. Throws ConfigError for unknown names / parameters.
std::unique_ptr<Algorithm> make_algorithm(const std::string& name,
                                          const std::vector<std::pair<std::string, std::string>>& params,
                                          const std::vector<std::pair<std::string, std::string>>& defaults,
                                          const AlgoContext& context);

// Families register here (one function per family; see registry.cpp).
void add_raker_algorithms(std::vector<AlgorithmInfo>& registry);
void add_exact_kernel_algorithms(std::vector<AlgorithmInfo>& registry);
void add_ada_raker_algorithms(std::vector<AlgorithmInfo>& registry);  // called by add_raker_algorithms
void add_ada_mkl_algorithms(std::vector<AlgorithmInfo>& registry);
void add_graph_aided_algorithms(std::vector<AlgorithmInfo>& registry);

}  // namespace omkl::detail
