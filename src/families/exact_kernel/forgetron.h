/// @file forgetron.h
/// @brief M-Forgetron (spec/raker.md §5.6): P self-tuned Forgetrons with budget B combined by
/// kernel weights; classification only.
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "core/kernel_weights.h"
#include "families/exact_kernel/support_set.h"
#include "omkl/kernel_spec.h"
#include "omkl/types.h"

namespace omkl::detail {

/// How M-Forgetron's kernel weights see a learner's step.
enum class ForgetronWeightLoss { Mistake, Hinge };

struct ForgetronConfig {
  std::string name;
  Dictionary kernels;
  std::size_t budget = 50;
  WeightConfig weights;   ///< exp_eta / pow_beta (with weight_loss) or mistake
  ForgetronWeightLoss weight_loss = ForgetronWeightLoss::Mistake;
  bool first_error_is_one = false;  ///< count the error at t = 1 as 1 (spec/raker.md §7.3)
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
  std::vector<double> kernel_weights(std::size_t replicate) const override;

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

}  // namespace omkl::detail
