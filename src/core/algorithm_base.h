/// @file algorithm_base.h
/// @brief The seam every algorithm family implements (Algorithm), and the registry that makes
/// a family known to the whole library.
///
/// An Algorithm advances R replicates of one configuration through the stream in lockstep:
/// every call takes one sample (or a block) and returns one prediction per replicate. The
/// public Learner is the R = 1 case; the study runner and the CUDA backend use larger R so
/// that each step is one batched call over replicates × kernels.
///
/// ## Adding a family
///
/// A family is one folder, src/families/<family>/, and one line in the registry table
/// (registry.cpp, kFamilies). With that line `omkl list` and `omkl describe` show its
/// algorithms, `omkl run` / `omkl study` / make_learner() build them by name, checkpoints
/// restore them (a checkpoint stores the spec and rebuilds through the registry), and studies
/// run them over seeds on every backend that the family reaches. Nothing outside the folder
/// changes. The worked example is the smallest family, src/families/raker/raker.cpp (Raker and
/// the single-kernel RF learner); what each piece of it does:
///
/// 1. **Construction** — `Raker(ParamReader& params, const AlgoContext& context, ...)`.
///    Every parameter is read from `params` (get_double, get_int, get_choice, get_bool), each
///    with its default and a one-line meaning: that is what `omkl describe` prints, so an
///    algorithm documents itself by reading its parameters. Profile defaults come from
///    `context.profile` (paper vs the authors' reference code: each difference a named
///    parameter, never a second loop). Invalid values fail with `params.fail(name, why)`
///    (a ConfigError naming the algorithm and the parameter). Unknown parameters are refused
///    after construction by make_algorithm() (ParamReader::finish).
/// 2. **Randomness** — nothing global: every draw comes from a counter-based stream keyed by
///    (context.seed, context.replicates[r], purpose, index) (random/rng.h), so replicate r's
///    numbers do not depend on R, the thread count or the backend. Random-feature families get
///    their frequency matrices through features/rf_ensemble.h (the same matrices for every
///    family of a study: common random numbers), per-step choices from RngPurpose::Selection
///    with an index of their own (random/selection_stream.h).
/// 3. **The backend** — arithmetic over (replicate, kernel) slots goes through RfBackend
///    (features/rf_backend.h), made by make_rf_ensemble_backend() for `context.backend`: CPU or
///    CUDA, chosen at run time. Algorithms whose θ updates do not depend on the weights call
///    advance() over a window of samples (Raker); per-step-feedback algorithms name the pairs
///    they update each step through step_selected() (the graph-aided family). A family with its
///    own arithmetic (the exact-kernel baselines) may keep it on the host.
/// 4. **Per step** — `step(x, y, predictions)`: predict x for every replicate
///    (predictions[r]), then learn from (x, y). `step_block()` may batch n steps; it must give
///    bit-identical results to n step() calls (tests/integration/test_learner_api.cpp checks
///    this for every registered algorithm). `predict()` must not change state and must equal
///    the prediction the next step() returns.
/// 5. **Checkpoints** — `save_state()` writes everything the next step reads (θ through
///    save_backend_state(), weights, step count, RNG counters) after a tag of its own;
///    `load_state()` reads it back, checks every size and index against the configuration (a
///    damaged file, even one with a valid checksum, is refused with an InputError, never
///    dereferenced), and continues bit-identically.
/// 6. **Registration** — one function `add_<family>_algorithms(registry)` that pushes an
///    AlgorithmInfo {name, summary, factory} per algorithm (raker.cpp's last lines), and its
///    line in registry.cpp's kFamilies.
///
/// Optional hooks: metric_convention() (the reference code's first-error convention),
/// kernel_updates() (a benchmark counter), regret_regularizer() (the graph journal's regret),
/// randomized() = false for deterministic algorithms (a study then runs one replicate).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "omkl/communicator.h"
#include "omkl/device_contexts.h"
#include "omkl/types.h"
#include "core/params.h"
#include "core/state_io.h"

namespace omkl::detail {

/// How the per-step metric is computed from the predictions (spec/raker.md §2.4, §7.3).
struct MetricConvention {
  /// Reference code of Raker/AdaRaker replaces the error at t = 1 by 1.
  bool first_error_is_one = false;
  /// Classification: a score of exactly 0 predicts +1 (the bandit protocol, spec/bandit.md
  /// §2.3: "ties go to +1"), so it is a mistake on y = −1. Otherwise (spec/raker.md §2.4) a
  /// sample is a mistake iff y·score < 0, and a score of 0 is never one.
  bool zero_score_is_positive = false;
};

/// The 0/1 mistake of a classifier's real-valued score on label y = ±1, under `convention`.
inline double classification_mistake(double score, double y, const MetricConvention& convention) {
  if (convention.zero_score_is_positive) return (score >= 0.0 ? 1.0 : -1.0) != y ? 1.0 : 0.0;
  return y * score < 0.0 ? 1.0 : 0.0;
}

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
  /// Federated stream: K clients in rounds (row t·K + k is client k's t-th sample); 0 otherwise.
  std::size_t n_clients = 0;
  /// Federated algorithms: keep the regret's regulariser terms (a study's regret.include_reg,
  /// spec/federated.md §4.7): regret_regularizer() gives λ‖θ̄_{k,t}‖² of the last prediction and
  /// client_kernel_losses() add λ‖θ_{i,t}‖² to each kernel's squared error. They then take the
  /// host path (the terms are read after every client sample).
  bool track_regret_regularizer = false;
  /// Where CUDA backends take their streams and cuBLAS handles (a study's, reused by all its
  /// algorithms); null: each backend makes its own.
  std::shared_ptr<DeviceContexts> device_contexts;

  std::size_t n_replicates() const { return replicates.size(); }
};

/// Floats a federated algorithm has sent so far, summed over its replicates (spec/federated.md
/// §2: only the float payload counts; indices and headers do not).
struct CommunicationCount {
  double uplink_floats = 0.0;    ///< clients → server
  double downlink_floats = 0.0;  ///< server → clients
  double max_uplink = 0.0;       ///< largest upload of one client in one step
  double client_steps = 0.0;     ///< (replicate, client, step) triples counted
};

/// Every replicate's own stream as rows of one stream (a shuffled study: each repetition its
/// own permutation of the data): replicate r's sample at step t of the block is row
/// rows[t·R + r] of x (n_rows × n_features, row-major), with target y[that row]. The stream is
/// passed whole, and only the indices change from block to block, so that a device walk keeps
/// the stream in device memory and uploads 4 bytes a (step, replicate) instead of a gathered
/// copy of every sample (n_features doubles).
struct StreamRows {
  const double* x = nullptr;
  const double* y = nullptr;
  std::size_t n_rows = 0;
  std::size_t n_features = 0;
  const std::uint32_t* rows = nullptr;  ///< n_steps × R row indices, each < n_rows
  std::size_t n_steps = 0;
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
  /// Whether the algorithm computes its replicates together on its backend (on the GPU, one
  /// launch for all of them). A GPU study runs such an algorithm's replicates in lockstep, in one
  /// object; the others (host-only algorithms: kernel expansions, the bandit host path,
  /// Per-FedAvg's network) one replicate per task on the study's threads, as on the CPU.
  virtual bool batches_replicates() const { return false; }
  /// Whether its steps run as device-resident walks with no host work between launches
  /// (step_path = resident): a GPU study may then run several such cells at once, each on a
  /// stream of its own, where it runs other lockstep cells one after another (their per-step host
  /// work takes every host thread).
  virtual bool walks_on_device() const { return false; }
  /// Whether step_block_replicated() runs: every replicate learning from its own stream in one
  /// call. A study whose repetitions each see their own permutation of the data can then run
  /// them in lockstep on the GPU, as it runs replicates that share the stream.
  virtual bool replicated_streams() const { return false; }
  /// block.n_steps steps in which replicate r's sample is a row of the one stream that every
  /// replicate draws from (StreamRows); predictions n_steps × R as step_block()'s. Each
  /// replicate's numbers are those of a one-replicate run on its own stream. Throws where
  /// replicated_streams() is false.
  virtual void step_block_replicated(const StreamRows& block, double* predictions);
  /// Current predictions for x without learning.
  virtual void predict(const double* x, double* predictions) = 0;

  virtual void save_state(StateWriter& out) const = 0;
  virtual void load_state(StateReader& in) = 0;

  virtual MetricConvention metric_convention() const { return {}; }

  /// θ updates (one kernel's 2D-vector update) applied since this object was built or restored,
  /// summed over replicates; 0 for algorithms that do not count them. A diagnostic for the
  /// benchmark (kernel updates per second), not part of the learner state.
  virtual std::uint64_t kernel_updates() const { return 0; }

  /// Seconds spent at construction on work the papers time as part of the run: the graph
  /// family's similarity graph, dominating set and divergences (spec/graph-aided.md §1.7: the
  /// timed region includes them and excludes drawing the random features). A study adds it to
  /// the loop's time; 0 for the others.
  virtual double offline_seconds() const { return 0.0; }

  /// Federated algorithms on their host path: seconds spent on the server's side (its
  /// aggregation and weight step), so that the rest of the loop is the clients' (spec/federated.md
  /// §4.6 reports client-side time ÷ K). NaN where the two sides cannot be told apart — a walk
  /// that runs both in one program, processes — and for the other algorithms.
  virtual double server_seconds() const;

  /// λ‖Σ_k w_k θ_k‖² of replicate r after the last step, with the unnormalised kernel weights:
  /// the regulariser term of the graph journal's regret (spec/graph-aided.md §4.5). Federated
  /// algorithms built with AlgoContext::track_regret_regularizer: λ‖θ̄_{k,t}‖² of the last
  /// client sample's prediction, θ̄ the parameter it predicted with (spec/federated.md §4.7).
  /// NaN for algorithms that do not define it.
  virtual double regret_regularizer(std::size_t replicate) const;

  /// Federated algorithms: what the clients and the server have sent (client_steps = 0 for the
  /// others, which send nothing).
  virtual CommunicationCount communication() const { return {}; }

  /// Federated algorithms: Σ_t (f_{ik,t} − y_{k,t})² of every client k and kernel i (K × N,
  /// client-major) of replicate r, with the algorithm's own per-kernel predictors — the comparator
  /// of the client regret, spec/federated.md eq. (11), §3.5. Empty where it is not defined.
  virtual std::vector<double> client_kernel_losses(std::size_t replicate) const {
    (void)replicate;
    return {};
  }

  /// Named per-kernel logs of replicate r at the end of a run, written to a study's logs.json
  /// (the bandit family's §8.6: selection counts, the final sampling distribution, the loss
  /// suffered per kernel); empty for most algorithms.
  virtual std::vector<std::pair<std::string, std::vector<double>>> final_logs(std::size_t replicate) const {
    (void)replicate;
    return {};
  }

  /// Federated algorithms whose server and clients can run in separate processes: rank 0 the
  /// server, the other ranks the clients (client k on rank 1 + k mod (P − 1)), exchanging only
  /// the messages of spec/federated.md §6.4.
  virtual bool distributable() const { return false; }
  /// Runs the whole stream that way (from the first sample); every rank calls it with the same
  /// configuration and data. Afterwards rank 0's `predictions` (n × R), communication() (the
  /// protocol's figures, as the one-process ledger counts them, not this transport's bytes),
  /// kernel_updates() and client_kernel_losses() equal those of step_block() in one process, bit
  /// for bit; nothing else is defined — the clients' state stays on their ranks, so predict(),
  /// further steps and checkpoints of any rank are not the one-process model's. Throws Error
  /// naming the client and round of an update that did not come within `timeout_s`.
  virtual void run_distributed(const double* x, const double* y, std::size_t n, std::size_t n_features,
                               double* predictions, Communicator& comm, double timeout_s);

  /// The kernel weights of `replicate`, normalised to sum 1 (one per dictionary kernel), for
  /// algorithms that keep one weight per kernel: Raker and RF-OGD, the graph-aided family,
  /// OMKL/OMKL-B and M-Forgetron, and the bandit family (its sampling distribution p). Empty for
  /// the others: AdaRaker's weights are per instance, the federated family's per client and
  /// private to it, the single-kernel and fixed-combination baselines have none.
  virtual std::vector<double> kernel_weights(std::size_t /*replicate*/) const { return {}; }

  /// Parameters the algorithm resolved itself and that identify its configuration in a study's
  /// results beside the user's (the federated D chosen from M and the upload budget); empty for
  /// most.
  virtual std::vector<std::pair<std::string, std::string>> reported_params() const { return {}; }

  /// False for algorithms without any randomness (exact-kernel baselines): every replicate is
  /// identical, so a study runs one and reuses it for all seeds.
  virtual bool randomized() const { return true; }

  /// Every parameter the factory read, with the value used (given, preset or default), in the
  /// order read; set by make_algorithm(), not by the families.
  const std::vector<std::pair<std::string, std::string>>& resolved_params() const { return resolved_params_; }
  void set_resolved_params(std::vector<std::pair<std::string, std::string>> params) {
    resolved_params_ = std::move(params);
  }

 private:
  std::vector<std::pair<std::string, std::string>> resolved_params_;
};

using AlgorithmFactory =
    std::function<std::unique_ptr<Algorithm>(ParamReader& params, const AlgoContext& context)>;

struct AlgorithmInfo {
  AlgorithmInfo(std::string name_, std::string summary_, AlgorithmFactory make_)
      : name(std::move(name_)), summary(std::move(summary_)), make(std::move(make_)) {}

  std::string name;
  std::string summary;
  AlgorithmFactory make;
  std::string family;  ///< set by the registry: the family (folder) that registered it
};

/// One family's entry in the registry: its name (the folder under src/families/) and the
/// function that adds its algorithms.
struct FamilyRegistration {
  const char* name;
  void (*add)(std::vector<AlgorithmInfo>& registry);
};

/// Every family, in registration order (registry.cpp).
const std::vector<FamilyRegistration>& algorithm_families();

/// The table of every algorithm, built once from each family's add_*_algorithms().
const std::vector<AlgorithmInfo>& algorithm_registry();
const AlgorithmInfo& find_algorithm(const std::string& name);

/// Builds an algorithm for R replicates. Throws ConfigError for unknown names / parameters.
std::unique_ptr<Algorithm> make_algorithm(const std::string& name,
                                          const std::vector<std::pair<std::string, std::string>>& params,
                                          const std::vector<std::pair<std::string, std::string>>& defaults,
                                          const AlgoContext& context);

}  // namespace omkl::detail
