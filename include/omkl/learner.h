/// @file learner.h
/// @brief The online learner: predict-then-update on a stream, checkpoints.
///
/// A Learner is created by make_learner() (algorithm.h). It is plain C++ (no Eigen, no CUDA
/// types) and owns its backend state through a private implementation pointer. It is movable,
/// not copyable (to_bytes() / from_bytes() copy a model); a learner moved from holds no model,
/// and every call that needs one throws Error saying so.
///
/// Errors: InputError for bad data — a sample of another width than n_features(), a feature or
/// target that is not finite, a classifier's label other than ±1, a damaged checkpoint;
/// DivergedError (an Error) for a model whose numbers overflowed; Error for a learner that failed
/// or was moved from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "omkl/dataset.h"
#include "omkl/types.h"

namespace omkl {

namespace detail {
class Algorithm;
}

struct LearnerContext;
struct AlgorithmSpec;

class Learner {
 public:
  ~Learner();
  Learner(Learner&&) noexcept;
  Learner& operator=(Learner&&) noexcept;
  Learner(const Learner&) = delete;
  Learner& operator=(const Learner&) = delete;

  /// The algorithm specification this learner was built from ("raker:D=50,...").
  std::string spec() const;
  std::size_t n_features() const;
  Task task() const;
  /// Number of samples consumed by partial_fit so far.
  std::int64_t n_seen() const;
  /// The federated clients the model's stream was dealt to (0: not a federated stream).
  std::size_t n_clients() const;
  /// The features' names it was trained on (LearnerContext::feature_names); empty when unknown.
  std::vector<std::string> feature_names() const;
  /// Whether an update threw and may have left the model half updated, or the model diverged
  /// (see partial_fit).
  /// What may help a model that diverged, as DivergedError's messages say it: a smaller step,
  /// named by the step parameters this algorithm reads ("eta, step_scale"; AdaRaker's "eta0,
  /// eta_cap, step_scale"), or data of a smaller scale. For front ends that word their own message.
  std::string divergence_advice() const;
  bool failed() const { return failed_; }
  /// The first failed update's message ("" while failed() is false).
  const std::string& failure() const { return failure_; }
  /// The normalisation of the training stream (LearnerContext::preprocessing), kept in the
  /// checkpoint: apply it to new rows before predict() or partial_fit().
  const Normalizer& preprocessing() const { return preprocessing_; }
  /// Replaces it (e.g. an online scaler's state after the rows learned so far), to be saved
  /// with the next save(). ConfigError for one of another width, or whose statistics are not
  /// one per feature (one for minmax-global and jmlr23, none for none and unit-rows).
  void set_preprocessing(Normalizer preprocessing);

  /// Every parameter of the algorithm with the value it uses — given in the spec, from a preset,
  /// or the default — in the order the algorithm reads them (e.g. {"D", "50"}, {"eta", "0.0141…"}).
  /// Given back as the spec's parameters they build the same learner; a parameter that does not
  /// apply to this configuration (the logistic rule's switch under another loss) is not listed.
  std::vector<std::pair<std::string, std::string>> parameters() const;
  /// The current kernel weights, normalised to sum 1, one per dictionary kernel, for algorithms
  /// that keep one weight per kernel: raker, rf-ogd (its one weight, 1), the graph-aided family (omkl-gf, omkl-sfg,
  /// omkl-sfg-r, sfg-mkl, sfg-mkl-r), omkl, omkl-b, m-forgetron, and the bandit family (its
  /// sampling distribution p). Empty for the others (adaraker keeps weights per instance, the
  /// federated family per client).
  std::vector<double> kernel_weights() const;

  /// Current real-valued prediction (score, for classification) for one sample; no update: the
  /// model is left as it was (so a const learner, e.g. one loaded to serve, can predict). The
  /// backend reuses scratch space, so one learner must not predict from two threads at once.
  /// It is the prediction partial_fit() would return for x, bit for bit, except on the resident
  /// path (step_path=resident, the GPU's default): there partial_fit predicts in the walk and
  /// predict() with the host path's arithmetic, equal within floating point.
  /// InputError for a feature that is not finite, and (the vector form) for a vector of another
  /// size than n_features(): "the sample to predict has 4 features, the model expects 5". The
  /// prediction is not finite only where the features overflow (values near the largest double)
  /// or the model diverged in its last update (which save() refuses and partial_fit() then reports).
  /// @param x host array of n_features() values
  double predict(const double* x) const;
  double predict(const std::vector<double>& x) const;

  /// For a classifier: 1 if `score` (a prediction) is a mistake on label y = ±1, else 0, by the
  /// algorithm's rule: y·score < 0, or, for the bandit family ([OKS]'s protocol, docs/papers.md), the label
  /// +1 for every score ≥ 0, so that a score of 0 is a mistake on −1. What `omkl run` and
  /// `omkl study` count in error_rate.
  double mistake(double score, double y) const;

  /// Predicts x, then learns from (x, y). Returns the prediction made before the update.
  /// Throws InputError, and changes nothing, for a non-finite feature or target, a label other
  /// than −1 or +1 for a classifier, or (the vector form) a vector of another size than
  /// n_features() — the 1-based sample count names the sample: "sample 7 has 4 features, the
  /// model expects 5". A prediction that is not finite, on this finite input, means the model
  /// diverged (an update overflowed its numbers: mostly a step size eta too large for the data's
  /// scale): the sample is learned, the learner is failed, and DivergedError names the sample
  /// and says what may help. Any error from
  /// the update itself (a numerical failure such as IOKS's bisection, a device error, memory)
  /// can leave it half done: the learner is then failed (failed(), failure()), and every later predict,
  /// partial_fit, kernel_weights or save throws Error naming that first failure, so that a
  /// half-updated model is never used or saved. Restore a checkpoint to continue.
  double partial_fit(const double* x, double y);
  double partial_fit(const std::vector<double>& x, double y);

  /// Same as calling partial_fit on each row in order (bit-identical results), but lets the
  /// backend batch the work. (On the resident path a federated learner's whole rounds walk while
  /// a lone sample of a round takes the host path: equal within floating point.) Every row is
  /// checked first: a bad one refuses the whole block (and changes nothing); an error during the
  /// update fails the learner, as in partial_fit, and so does a prediction that is not finite:
  /// the whole block is learned and `predictions` filled, then DivergedError names the first
  /// such sample. @param x n × n_features row-major; @param predictions n values out.
  void partial_fit_block(const double* x, const double* y, std::size_t n, double* predictions);

  /// Writes the full state (parameters, random features, θ, weights, RNG counters) to `path`
  /// atomically, in a versioned format with a checksum. Refused (Error, nothing written) for a
  /// failed learner, and (DivergedError) for a model whose state holds numbers that are NaN or
  /// infinite — an update that diverged, the last one's included, which no prediction showed yet.
  void save(const std::string& path) const;
  /// Restores a learner written by save(); it continues exactly as if never interrupted.
  /// InputError naming `path` for a file that is no checkpoint, is damaged, or holds a model
  /// whose numbers are NaN or infinite.
  static Learner load(const std::string& path);
  /// The same checkpoint through a stream (binary mode) or a buffer, e.g. to keep models in a
  /// database or send them over a network. Errors name `name`.
  void save(std::ostream& out) const;
  static Learner load(std::istream& in, const std::string& name = "<stream>");
  std::string to_bytes() const;
  static Learner from_bytes(const std::string& bytes, const std::string& name = "<buffer>");

  /// Internal: wraps an algorithm with one replicate.
  Learner(std::unique_ptr<detail::Algorithm> algorithm, std::string spec, std::size_t n_features,
          Task task, std::string context_blob, Normalizer preprocessing = {});

 private:
  // A verified checkpoint payload (load, from_bytes); errors name `path`.
  static Learner from_payload(const std::string& payload, const std::string& path);

  std::unique_ptr<detail::Algorithm> algorithm_;
  std::string spec_;
  std::size_t n_features_ = 0;
  Task task_ = Task::Regression;
  std::int64_t n_seen_ = 0;
  std::string context_blob_;  // serialised LearnerContext, to rebuild on load()
  Normalizer preprocessing_;
  bool failed_ = false;   // an update threw: the model may be half updated
  std::string failure_;  // its message
  // Throws Error naming failure_ where it is set, or saying the learner was moved from
  // (`what`: the call refused).
  void check_usable(const char* what) const;
  // Throws Error where the learner was moved from (algorithm_ null).
  void check_not_moved(const char* what) const;
  // Fails the learner: `sample`'s prediction is not finite on finite input. Throws DivergedError.
  [[noreturn]] void fail_diverged(std::int64_t sample, double prediction);
  // Runs an update of the model, failing the learner if it throws.
  template <typename Update>
  void update_or_fail(Update&& update);
};

}  // namespace omkl
