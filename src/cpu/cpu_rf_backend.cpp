/// @file cpu_rf_backend.cpp
/// @brief The CPU (Eigen) implementation of RfBackend.
///
/// Determinism: every number depends only on the replicate's own data and on a fixed
/// evaluation order, never on the block length, so stepping one sample at a time and advancing
/// a block give bit-identical results. The projections are accumulated feature by feature
/// (a += x_k · V[:, k], vectorised across the P·D rows), which is the same order for a block
/// and for one sample.
#include <Eigen/Dense>
#include <cmath>
#include <cstring>

#include "core/rf_backend.h"
#include "omkl/error.h"

namespace omkl::detail::cpu {

namespace {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Vector = Eigen::VectorXd;

class CpuRfBackend final : public RfBackend {
 public:
  explicit CpuRfBackend(const RfProblem& problem) : RfBackend(problem) {
    const auto& p = problem_;
    const std::size_t rows = p.n_kernels * p.n_rff;
    frequencies_t_.assign(p.n_replicates, RowMatrix::Zero(p.n_features, rows));
    theta_.assign(p.n_replicates, RowMatrix::Zero(p.n_slots(), p.theta_size()));
    projection_.resize(rows);
    features_.resize(p.n_kernels, p.theta_size());
  }

  void set_frequencies(std::size_t r, std::size_t kernel, const double* V) override {
    const auto& p = problem_;
    check_replicate(r);
    for (std::size_t i = 0; i < p.n_rff; ++i)
      for (std::size_t k = 0; k < p.n_features; ++k)
        frequencies_t_[r](k, kernel * p.n_rff + i) = V[i * p.n_features + k];
  }

  void get_frequencies(std::size_t r, std::size_t kernel, double* V) const override {
    const auto& p = problem_;
    check_replicate(r);
    for (std::size_t i = 0; i < p.n_rff; ++i)
      for (std::size_t k = 0; k < p.n_features; ++k)
        V[i * p.n_features + k] = frequencies_t_[r](k, kernel * p.n_rff + i);
  }

  void advance(const double* x, const double* y, std::size_t n_steps, std::int64_t t0,
               const std::vector<SlotSchedule>& schedules, double* f, double* norm2) override {
    const auto& p = problem_;
    const std::size_t R = p.n_replicates, S = p.n_slots();
    for (std::size_t step = 0; step < n_steps; ++step) {
      const std::int64_t t = t0 + static_cast<std::int64_t>(step);
      for (std::size_t r = 0; r < R; ++r) {
        compute_features(r, x + step * p.n_features);
        double* f_row = f + (step * R + r) * S;
        double* n_row = norm2 ? norm2 + (step * R + r) * S : nullptr;
        for (std::size_t s = 0; s < S; ++s) {
          const SlotSchedule& sc = schedules[s];
          auto theta = theta_[r].row(s);
          if (t < sc.active_from) {
            f_row[s] = 0.0;
            if (n_row) n_row[s] = 0.0;
            continue;
          }
          if (schedule_resets(sc, t)) theta.setZero();
          const auto z = features_.row(p.slot_kernel[s]);
          const double fs = theta.dot(z);
          f_row[s] = fs;
          if (n_row) n_row[s] = theta.squaredNorm();
          const double eta = sc.inv_sqrt_t ? sc.eta / std::sqrt(static_cast<double>(t)) : sc.eta;
          const double shrink = 1.0 - sc.shrink_scale * eta * sc.lambda;
          const double gain = sc.step_scale * eta * loss_derivative(p.loss, fs, y[step]);
          theta = shrink * theta - gain * z;
        }
      }
    }
  }

  void predict(const double* x, std::int64_t t, const std::vector<SlotSchedule>& schedules,
               double* f) override {
    const auto& p = problem_;
    const std::size_t S = p.n_slots();
    for (std::size_t r = 0; r < p.n_replicates; ++r) {
      compute_features(r, x);
      for (std::size_t s = 0; s < S; ++s) {
        const SlotSchedule& sc = schedules[s];
        const bool fresh = t < sc.active_from || schedule_resets(sc, t);
        f[r * S + s] = fresh ? 0.0 : theta_[r].row(s).dot(features_.row(p.slot_kernel[s]));
      }
    }
  }

  void get_theta(std::size_t r, std::size_t slot, double* out) const override {
    check_replicate(r);
    Eigen::Map<Eigen::RowVectorXd>(out, problem_.theta_size()) = theta_[r].row(slot);
  }

  void set_theta(std::size_t r, std::size_t slot, const double* in) override {
    check_replicate(r);
    theta_[r].row(slot) = Eigen::Map<const Eigen::RowVectorXd>(in, problem_.theta_size());
  }

 private:
  void check_replicate(std::size_t r) const {
    if (r >= problem_.n_replicates) throw Error("CPU backend: replicate index out of range");
  }

  // z for every kernel of replicate r at sample x, into features_ (P × 2D).
  void compute_features(std::size_t r, const double* x) {
    const auto& p = problem_;
    const RowMatrix& vt = frequencies_t_[r];
    projection_.setZero();
    for (std::size_t k = 0; k < p.n_features; ++k) projection_ += x[k] * vt.row(k).transpose();
    const std::size_t D = p.n_rff;
    for (std::size_t kernel = 0; kernel < p.n_kernels; ++kernel) {
      const auto a = projection_.segment(kernel * D, D).array();
      features_.row(kernel).head(D) = p.feature_scale * a.sin();
      features_.row(kernel).tail(D) = p.feature_scale * a.cos();
    }
  }

  std::vector<RowMatrix> frequencies_t_;  // per replicate: d × (P·D), Vᵀ of all kernels side by side
  std::vector<RowMatrix> theta_;          // per replicate: S × 2D
  Vector projection_;                     // scratch: V x for all kernels (P·D)
  RowMatrix features_;                    // scratch: z per kernel (P × 2D)
};

}  // namespace

std::unique_ptr<RfBackend> make_cpu_rf_backend(const RfProblem& problem) {
  if (problem.single_precision)
    throw ConfigError("precision=float is only available on the CUDA backend (the CPU computes in double)");
  return std::make_unique<CpuRfBackend>(problem);
}

}  // namespace omkl::detail::cpu
