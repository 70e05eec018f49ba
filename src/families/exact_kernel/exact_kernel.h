/// @file exact_kernel.h
/// @brief Exact-kernel baselines of spec/raker.md §5: single-kernel KOGD (RBF, POLY, LINEAR),
/// AvgMKL, OMKL, OMKL-B and M-Forgetron; and the baselines of the graph-aided journal tables as
/// its reference code defines them (spec/graph-aided.md §4.1–4.3): OMKR, RBF-1, POLY-2, and the
/// random-feature RFOMKR (kept here beside OMKR, whose rules it shares).
///
/// All of them keep f(x) = Σ_{τ∈S} α_τ κ(x, x_τ) over a support set S of past samples. The
/// samples live in one contiguous row-major buffer (SupportSet); one step evaluates κ(x_t, ·)
/// against the whole buffer with one GEMV plus element-wise maps (KernelBank), shared by every
/// kernel of a dictionary, so a step costs O(|S| d + |S| P).
///
/// These baselines draw no random numbers, so every replicate of a run is the same trajectory:
/// the algorithms compute it once and copy the prediction to all n_replicates() outputs.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "core/kernel_weights.h"
#include "core/loss.h"
#include "features/random_features.h"
#include "omkl/kernel_spec.h"
#include "omkl/types.h"

namespace omkl::detail {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// η_t as a function of the 1-based step t.
enum class StepSchedule { Constant, InvSqrtT };

/// The coefficient rule of exact-kernel online gradient descent (spec §5.1). After y_t:
/// shrink every α by c_t = 1 − shrink_scale·η_t·λ, then add α_t = −step_scale·η_t·∂C/∂f(f_t, y_t).
/// Profile P: shrink_scale = 2, step_scale = 1; Profile R regression: 1/10 and 1/10; Profile R
/// classification: 1 and 1 (spec Appendix D; parameters shrink_scale and step_scale).
struct KogdRule {
  LossKind loss = LossKind::Squared;
  double eta = 0.1;
  StepSchedule schedule = StepSchedule::Constant;
  double lambda = 0.0;
  double shrink_scale = 2.0;
  double step_scale = 1.0;

  double eta_at(std::uint64_t t) const;
};

/// FIFO of stored samples with one coefficient column per learner. Rows are kept in a
/// row-major buffer whose capacity is a multiple of 8 rows; a budgeted set slides through a
/// buffer of about twice the budget and is moved back to row 0 when it reaches the end, so
/// every operation is amortised O(d). Coefficients are stored divided by the learner's global
/// scale (see KogdEnsemble), and the caller owns that convention.
class SupportSet {
 public:
  SupportSet() = default;
  /// @param budget 0 = unbounded (the caller never pops), else the most rows kept after a step
  /// @param capacity_hint initial number of rows to reserve for an unbounded set
  SupportSet(std::size_t n_features, std::size_t n_columns, std::size_t budget,
             std::size_t capacity_hint);

  std::size_t size() const { return count_; }
  std::size_t n_features() const { return n_features_; }
  std::size_t n_columns() const { return n_columns_; }
  std::size_t budget() const { return budget_; }

  /// The stored samples, oldest first (size() × n_features()).
  auto rows() const { return buffer_.middleRows(index(head_), index(count_)); }
  /// ‖x_τ‖² of the stored samples, oldest first.
  auto norms2() const { return norms2_.segment(index(head_), index(count_)); }
  /// Stored coefficients of column j, oldest first.
  auto column(std::size_t j) { return coef_.col(index(j)).segment(index(head_), index(count_)); }
  auto column(std::size_t j) const {
    return coef_.col(index(j)).segment(index(head_), index(count_));
  }

  const double* row(std::size_t i) const { return buffer_.data() + (head_ + i) * n_features_; }
  double norm2(std::size_t i) const { return norms2_[index(head_ + i)]; }
  double& coefficient(std::size_t j, std::size_t i) { return coef_(index(head_ + i), index(j)); }
  double coefficient(std::size_t j, std::size_t i) const {
    return coef_(index(head_ + i), index(j));
  }

  /// Appends x as the newest row with all coefficients 0.
  void push_back(const Eigen::VectorXd& x, double x_norm2);
  /// Drops the oldest row.
  void pop_front();

  /// Layout (capacity, head) is part of the state so that a restored run does the very same
  /// floating-point operations as the original one.
  void save(StateWriter& out) const;
  void load(StateReader& in);

 private:
  static Eigen::Index index(std::size_t i) { return static_cast<Eigen::Index>(i); }
  void reserve_rows(std::size_t capacity);

  std::size_t n_features_ = 0;
  std::size_t n_columns_ = 0;
  std::size_t budget_ = 0;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  RowMatrixXd buffer_;       // capacity × d
  Eigen::VectorXd norms2_;   // capacity
  Eigen::MatrixXd coef_;     // capacity × n_columns, column-major: one learner is contiguous
};

/// Evaluates the kernels of a dictionary between one point and every row of a SupportSet.
/// Inner products x_τᵀx (one GEMV) and squared distances ‖x_τ‖² + ‖x‖² − 2x_τᵀx (clamped at 0)
/// are computed once per call and shared by every linear, polynomial and Gaussian kernel; the
/// Laplacian and Cauchy kernels use coordinate differences. Double precision throughout, and
/// the evaluation order depends only on the buffer layout, so reruns are bit-identical.
class KernelBank {
 public:
  KernelBank() = default;
  /// @param averaged one output, the mean kernel (1/P)Σκ_p (AvgMKL reading (a)); otherwise one
  /// output per dictionary kernel
  KernelBank(Dictionary kernels, bool averaged);

  std::size_t n_kernels() const { return kernels_.size(); }
  std::size_t n_outputs() const { return averaged_ ? 1 : kernels_.size(); }
  const Dictionary& kernels() const { return kernels_; }
  bool averaged() const { return averaged_; }

  /// out(i, j) = κ_j(x, x_i) for every row i of `support` and output j (all outputs, or only
  /// output `only` when only >= 0). `out` is resized (rows rounded up to a multiple of 8) when
  /// it is too small; rows past support.size() are left as they are.
  void evaluate(const SupportSet& support, const Eigen::VectorXd& x, double x_norm2,
                Eigen::MatrixXd& out, int only = -1);
  /// κ_j(x, x) for every output j (every kernel here depends on x only through ‖x‖²).
  void diagonal(double x_norm2, double* out) const;
  /// κ_j(a, b) through KernelSpec::evaluate (coordinate form; tests compare against it).
  double value(std::size_t output, const double* a, const double* b, std::size_t n_features) const;

 private:
  void fill(const KernelSpec& kernel, const SupportSet& support, const Eigen::VectorXd& x,
            Eigen::Ref<Eigen::VectorXd> out) const;

  Dictionary kernels_;
  bool averaged_ = false;
  bool any_dot_ = false;   // some kernel uses x_τᵀx
  bool any_dist_ = false;  // some kernel uses ‖x_τ − x‖²
  bool any_l1_ = false;    // some kernel uses ‖x_τ − x‖₁
  Eigen::VectorXd dot_, dist2_, l1_;
  Eigen::MatrixXd per_kernel_;  // averaged mode: the P kernels before averaging
};

/// How the per-learner predictions are combined.
enum class Combination {
  Single,   ///< one learner (RBF, POLY, LINEAR, kogd, AvgMKL reading (a))
  Uniform,  ///< fixed weights 1/P (AvgMKL reading (b))
  Learned   ///< KernelWeights (OMKL, OMKL-B)
};

struct KogdEnsembleConfig {
  std::string name;                 ///< algorithm name, written into checkpoints
  KogdRule rule;
  Dictionary kernels;
  bool averaged_kernel = false;     ///< one learner on (1/P)Σκ_p (AvgMKL reading (a))
  Combination combination = Combination::Single;
  WeightConfig weights;             ///< used by Combination::Learned
  std::size_t budget = 0;           ///< 0 = full history; else keep the B most recent (§5.5)
  bool track_norms = false;         ///< keep ‖f_p‖²_H (needed by the regularised weight loss)
  Profile profile = Profile::Paper;
  /// Under Profile::Reference, count the error at t = 1 as 1 (the JMLR 2019 reference code);
  /// false for the graph-aided baselines, whose reference scores the first prediction (0).
  bool reference_first_error_is_one = true;
  std::size_t capacity_hint = 1024;
};

/// OMKL's configuration (dictionary, coefficient rule, kernel weights) from parameters; with
/// read_step = false the step (eta, eta_schedule) is left to the caller (AdaMKL).
KogdEnsembleConfig read_omkl_config(ParamReader& params, const AlgoContext& context,
                                    std::size_t budget, bool read_step);

/// P KOGD learners over one shared history (spec §5.1–5.5), combined by Combination.
/// Learner p holds f_p = s_p Σ_τ a_{p,τ} κ_p(·, x_τ): the shrink multiplies the scalar s_p
/// (O(1) per step); the stored a are rescaled into s_p when |s_p| leaves [1e−200, 1e200].
class KogdEnsemble final : public Algorithm {
 public:
  KogdEnsemble(KogdEnsembleConfig config, std::size_t n_features, std::size_t n_replicates);
  // KernelWeights points into config_, so the object stays where it was built.
  KogdEnsemble(const KogdEnsemble&) = delete;
  KogdEnsemble& operator=(const KogdEnsemble&) = delete;

  std::size_t n_replicates() const override { return n_replicates_; }
  void step(const double* x, double y, double* predictions) override;
  void predict(const double* x, double* predictions) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  MetricConvention metric_convention() const override;
  /// No random numbers: a study runs one replicate and reuses it for every seed.
  bool randomized() const override { return false; }

  // Inspection (tests, diagnostics).
  const KogdEnsembleConfig& config() const { return config_; }
  const KernelBank& bank() const { return bank_; }
  std::size_t n_learners() const { return scale_.size(); }
  const SupportSet& support() const { return support_; }
  /// Effective coefficient α_{p,i} of support row i.
  double coefficient(std::size_t learner, std::size_t i) const;
  /// ‖f_p‖²_H kept by the reproducing-property recursion (only when track_norms).
  double rkhs_norm2(std::size_t learner) const { return norm2_[learner]; }
  /// Per-learner predictions f_p(x_t) of the last step() or predict().
  const std::vector<double>& learner_predictions() const { return f_; }
  std::uint64_t steps() const { return t_; }

  /// Kernel rows lent for the next step() or predict() only: `rows` holds κ_j(x, x_τ) (one
  /// column per kernel, as KernelBank::evaluate writes them) for the newest `available` samples
  /// of a history whose newest support().size() samples are this learner's support; the learner
  /// copies its rows from there instead of evaluating its kernels. AdaMKL's levels all store the
  /// recent samples, so their kernel rows are evaluated once per step, not once per level.
  void lend_kernel_rows(const Eigen::MatrixXd* rows, std::size_t available) {
    lent_rows_ = rows;
    lent_available_ = available;
  }

 private:
  double predict_learners(const double* x);  // fills f_, returns the combined prediction
  void renormalize(std::size_t learner);

  KogdEnsembleConfig config_;
  KernelBank bank_;
  std::size_t n_features_;
  std::size_t n_replicates_;
  SupportSet support_;
  std::vector<double> scale_;   // s_p
  std::vector<double> norm2_;   // ‖f_p‖²_H
  KernelWeights weights_;
  std::uint64_t t_ = 0;         // steps learned so far
  // scratch
  Eigen::VectorXd x_, xr_;
  double x_norm2_ = 0.0;
  Eigen::MatrixXd k_;
  std::vector<double> f_, kdiag_;
  const Eigen::MatrixXd* lent_rows_ = nullptr;  // see lend_kernel_rows()
  std::size_t lent_available_ = 0;
};

/// How M-Forgetron's kernel weights see a learner's step.
enum class ForgetronWeightLoss { Mistake, Hinge };

struct ForgetronConfig {
  std::string name;
  Dictionary kernels;
  std::size_t budget = 50;
  WeightConfig weights;   ///< exp_eta / pow_beta (with weight_loss) or mistake
  ForgetronWeightLoss weight_loss = ForgetronWeightLoss::Mistake;
  Profile profile = Profile::Paper;
};

/// M-Forgetron (spec §5.6): P self-tuned Forgetrons with budget B, each with its own FIFO
/// support set, combined by kernel weights. Classification only (labels ±1); the prediction is
/// the real-valued score Σ_p w̄_p f_p.
class MForgetron final : public Algorithm {
 public:
  MForgetron(ForgetronConfig config, std::size_t n_features, std::size_t n_replicates);
  MForgetron(const MForgetron&) = delete;
  MForgetron& operator=(const MForgetron&) = delete;

  std::size_t n_replicates() const override { return n_replicates_; }
  void step(const double* x, double y, double* predictions) override;
  void predict(const double* x, double* predictions) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;
  MetricConvention metric_convention() const override;
  // Exact kernels have no randomness: a study runs one replicate and reuses it for every seed.
  bool randomized() const override { return false; }

  // Inspection (tests).
  std::size_t n_learners() const { return learners_.size(); }
  std::size_t support_size(std::size_t p) const { return learners_[p].support.size(); }
  double q(std::size_t p) const { return learners_[p].q; }
  double mistakes(std::size_t p) const { return learners_[p].mistakes; }
  /// φ of the learner's latest removal (1 before any removal).
  double last_phi(std::size_t p) const { return learners_[p].last_phi; }
  std::uint64_t removals(std::size_t p) const { return learners_[p].removals; }

 private:
  struct Learner {
    SupportSet support;    // one coefficient column: β_i / scale
    double scale = 1.0;
    double q = 0.0;        // Q: accumulated damage of the removals
    double mistakes = 0.0; // M
    double last_phi = 1.0;
    std::uint64_t removals = 0;
  };
  double predict_learners(const double* x);
  double evaluate(std::size_t p, const Eigen::VectorXd& x, double x_norm2);
  void rescale(Learner& learner);

  ForgetronConfig config_;
  KernelBank bank_;
  std::size_t n_features_;
  std::size_t n_replicates_;
  std::vector<Learner> learners_;
  KernelWeights weights_;
  std::uint64_t t_ = 0;
  // scratch
  Eigen::VectorXd x_, xr_;
  double x_norm2_ = 0.0;
  Eigen::MatrixXd k_;
  std::vector<double> f_, f_weights_, zeros_;
};

struct RfomkrConfig : RfFeatures {
  std::string name;
  double eta = 0.1;
  bool inv_sqrt_t = true;         ///< η_t = eta/√t
  double beta = 0.5;              ///< Hedge discount
  bool normalize = false;         ///< ŷ = Σ w f / Σ w (paper) instead of Σ w f (reference, §3 R20)
};

/// RFOMKR (spec/graph-aided.md §4.3): N random-feature learners, θ_k ← θ_k − η_t·2(f_k − y)z_k
/// (no ridge), w_k ← w_k·β^{(f_k − y)²} from w_k = 1/N, prediction Σ_k w_k f_k (reference: never
/// renormalised) or Σ w f / Σ w. Frequencies come from the same streams as the other
/// random-feature algorithms (RandomStream(seed, replicate, Frequencies, k)), so a study's
/// repetition r shares its Ψ_k with Raker and the graph-aided methods (§4). CPU, double.
class Rfomkr final : public Algorithm {
 public:
  Rfomkr(RfomkrConfig config, const AlgoContext& context);

  std::size_t n_replicates() const override { return replicates_.size(); }
  void step(const double* x, double y, double* predictions) override;
  void predict(const double* x, double* predictions) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  const RfomkrConfig& config() const { return config_; }
  /// w_k of replicate r (starts at 1/N).
  double weight(std::size_t r, std::size_t k) const;
  /// Frequency matrix of (r, k), n_rff × n_features row-major.
  const std::vector<double>& frequencies(std::size_t r, std::size_t k) const;
  std::uint64_t steps() const { return t_; }

 private:
  double evaluate(std::size_t r, const double* x);  // fills f_ and z_ for replicate r

  struct Replicate {
    std::vector<std::vector<double>> V;  // per kernel
    std::vector<double> theta;           // N × 2D
    std::vector<double> log_w;           // ln w_k
  };
  RfomkrConfig config_;
  std::size_t n_features_;
  std::vector<std::uint64_t> replicates_;
  std::vector<Replicate> reps_;
  std::uint64_t t_ = 0;
  std::vector<double> z_, f_;  // scratch: N × 2D features, N predictions
};

}  // namespace omkl::detail
