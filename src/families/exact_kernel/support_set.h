/// @file support_set.h
/// @brief The stored-sample side of the exact-kernel baselines: SupportSet (a FIFO of past
/// samples, budgeted or not, with one coefficient column per learner) and KernelBank (every
/// kernel of a dictionary between one point and the whole set, from one GEMV); plus the
/// conventions the learners built on them share (coefficient scale range, checkpoint checks).
#pragma once

#include <Eigen/Dense>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernel_weights.h"
#include "core/state_io.h"
#include "cpu/aligned_allocator.h"
#include "cpu/kernel_rows.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

using RowMatrixXd = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Rows are allocated in multiples of 8 so that every column of a column-major scratch or
/// coefficient matrix starts on a 64-byte boundary, whatever its length.
inline std::size_t round8(std::size_t n) { return (n + 7) / 8 * 8; }

/// Shapes a matrix of kernel values (rows: stored samples, columns: outputs) as
/// KernelBank::evaluate() does: `outputs` columns and at least n rows, grown to a multiple of 8
/// and at least doubled when it is too small, kept otherwise. Every writer of such a matrix
/// uses it, so that they all leave the same shape.
void shape_kernel_values(Eigen::MatrixXd& values, std::size_t n, Eigen::Index outputs);

/// The global scale of a kernel expansion is folded back into the coefficients when it leaves
/// [1e−200, 1e200] (spec §5.1: "rescale when the product underflows below 1e−200"); the upper
/// bound catches |c| > 1, which a large η·λ can produce. Also true for NaN.
bool scale_out_of_range(double s);

/// Checkpoints of the exact-kernel learners: the state names the algorithm that wrote it.
void check_state_owner(const std::string& stored, const std::string& expected);
/// Reads stored kernel weights into `weights` when the learner uses them (`used`), checking
/// their count; skips them otherwise.
void load_kernel_weights(StateReader& in, KernelWeights& weights, bool used);

/// The largest budget B (support vectors kept) a budgeted learner takes: a set reserves room for
/// about 2B rows when it is made, so a budget given by mistake (1e9) is refused before that.
/// The protocols use hundreds.
constexpr std::int64_t kMaxSupportBudget = 1000000;

/// FIFO of stored samples with one coefficient column per learner. Rows are kept in a
/// row-major buffer whose capacity is a multiple of 8 rows, and again in the blocked layout of
/// kernel_rows.h (same absolute row index), which the kernel evaluations read; a budgeted set
/// slides through a buffer of about twice the budget and is moved back to row 0 when it
/// reaches the end, so every operation is amortised O(d). Coefficients are stored divided by
/// the learner's global scale (see KogdEnsemble), and the caller owns that convention.
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
  /// The stored samples in the blocked layout, oldest first (kernel_rows()).
  cpu::BlockedRows blocked() const {
    return {blocked_.data(), norms2_.data(), n_features_, head_, count_};
  }
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
  void write_blocked(std::size_t absolute_row);  // copies buffer_'s row into blocked_

  std::size_t n_features_ = 0;
  std::size_t n_columns_ = 0;
  std::size_t budget_ = 0;
  std::size_t head_ = 0;
  std::size_t count_ = 0;
  RowMatrixXd buffer_;       // capacity × d
  std::vector<double, cpu::AlignedAllocator<double>> blocked_;  // the same rows, blocked
  Eigen::VectorXd norms2_;   // capacity
  Eigen::MatrixXd coef_;     // capacity × n_columns, column-major: one learner is contiguous
};

/// Evaluates the kernels of a dictionary between one point and every row of a SupportSet.
/// Inner products x_τᵀx and squared distances ‖x_τ‖² + ‖x‖² − 2x_τᵀx (clamped at 0) are
/// computed once per call over the blocked rows (kernel_rows.h) and shared by every linear,
/// polynomial and Gaussian kernel; a lone Gaussian is computed in the same pass. The Laplacian
/// and Cauchy kernels use coordinate differences. Double precision throughout, and the
/// evaluation order depends only on the buffer layout, so reruns are bit-identical.
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

}  // namespace omkl::detail
