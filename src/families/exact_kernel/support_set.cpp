/// @file support_set.cpp
/// @brief SupportSet and KernelBank (support_set.h).
#include "families/exact_kernel/support_set.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "cpu/fast_exp.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

// (base)^degree by repeated multiplication, the same order as KernelSpec::evaluate.
double int_power(double base, int degree) {
  double p = 1.0;
  for (int k = 0; k < degree; ++k) p *= base;
  return p;
}

double kernel_diagonal(const KernelSpec& kernel, double x_norm2) {
  switch (kernel.family) {
    case KernelFamily::Gaussian:
    case KernelFamily::Laplacian:
    case KernelFamily::IsotropicLaplacian:
    case KernelFamily::Cauchy: return 1.0;
    case KernelFamily::Linear: return x_norm2;
    case KernelFamily::Polynomial: return int_power(x_norm2 + kernel.offset, kernel.degree);
  }
  return 0.0;
}

}  // namespace

void shape_kernel_values(Eigen::MatrixXd& values, std::size_t n, Eigen::Index outputs) {
  if (static_cast<std::size_t>(values.rows()) < n || values.cols() != outputs)
    values.resize(static_cast<Eigen::Index>(round8(std::max<std::size_t>(n, 2 * values.rows()))), outputs);
}

bool scale_out_of_range(double s) {
  const double a = std::fabs(s);
  return !(a >= 1e-200 && a <= 1e200);  // also true for NaN
}

void check_state_owner(const std::string& stored, const std::string& expected) {
  if (stored != expected)
    throw InputError("exact-kernel state was written by '" + stored + "', cannot load into '" +
                     expected + "'");
}

void load_kernel_weights(StateReader& in, KernelWeights& weights, bool used) {
  std::vector<double> raw = in.get_f64s();
  if (!used) return;
  if (raw.size() != weights.size())
    throw InputError("exact-kernel state: " + std::to_string(raw.size()) +
                     " kernel weights, expected " + std::to_string(weights.size()));
  weights.raw() = std::move(raw);
  weights.check_stored("exact-kernel weights");
}

// ---------------------------------------------------------------------------------------------
// SupportSet

SupportSet::SupportSet(std::size_t n_features, std::size_t n_columns, std::size_t budget,
                       std::size_t capacity_hint)
    : n_features_(n_features), n_columns_(n_columns), budget_(budget) {
  // A budgeted set holds at most B + 1 rows between push_back and pop_front; twice that lets
  // it slide for B steps between two moves back to row 0.
  const std::size_t capacity =
      budget > 0 ? round8(2 * (budget + 1)) : round8(std::max<std::size_t>(capacity_hint, 8));
  reserve_rows(capacity);
}

void SupportSet::reserve_rows(std::size_t capacity) {
  const auto old_capacity = norms2_.size();
  buffer_.conservativeResize(static_cast<Eigen::Index>(capacity),
                             static_cast<Eigen::Index>(n_features_));
  norms2_.conservativeResize(static_cast<Eigen::Index>(capacity));
  // The kernels read whole blocks: rows not yet stored hold 0, not uninitialised memory.
  norms2_.tail(static_cast<Eigen::Index>(capacity) - old_capacity).setZero();
  coef_.conservativeResize(static_cast<Eigen::Index>(capacity),
                           static_cast<Eigen::Index>(n_columns_));
  // The blocked layout indexes absolute rows, so growing appends whole blocks.
  blocked_.resize(capacity * n_features_, 0.0);
}

void SupportSet::write_blocked(std::size_t absolute_row) {
  const double* source = buffer_.data() + absolute_row * n_features_;
  for (std::size_t k = 0; k < n_features_; ++k)
    blocked_[cpu::blocked_offset(absolute_row, k, n_features_)] = source[k];
}

void SupportSet::push_back(const Eigen::VectorXd& x, double x_norm2) {
  const std::size_t capacity = static_cast<std::size_t>(buffer_.rows());
  if (head_ + count_ == capacity) {
    if (head_ > 0 && head_ >= count_) {
      // Slide back to row 0; source and destination do not overlap because head_ >= count_.
      const auto n = static_cast<Eigen::Index>(count_);
      const auto h = static_cast<Eigen::Index>(head_);
      buffer_.topRows(n) = buffer_.middleRows(h, n);
      norms2_.head(n) = norms2_.segment(h, n);
      coef_.topRows(n) = coef_.middleRows(h, n);
      head_ = 0;
      for (std::size_t r = 0; r < count_; ++r) write_blocked(r);
    } else {
      reserve_rows(round8(2 * capacity));
    }
  }
  const auto i = static_cast<Eigen::Index>(head_ + count_);
  buffer_.row(i) = x.transpose();
  write_blocked(static_cast<std::size_t>(i));
  norms2_[i] = x_norm2;
  // A set without coefficient columns (AdaMKL's shared history) has no coefficient storage: a
  // row of it would offset a null pointer (UBSan, pointer-overflow).
  if (n_columns_ > 0) coef_.row(i).setZero();
  ++count_;
}

void SupportSet::pop_front() {
  if (count_ == 0) return;
  ++head_;
  --count_;
  if (count_ == 0) head_ = 0;
}

void SupportSet::save(StateWriter& out) const {
  out.put_u64(n_features_);
  out.put_u64(n_columns_);
  out.put_u64(budget_);
  out.put_u64(static_cast<std::uint64_t>(buffer_.rows()));
  out.put_u64(head_);
  out.put_u64(count_);
  out.put_f64s(count_ ? row(0) : nullptr, count_ * n_features_);
  out.put_f64s(norms2_.data() + head_, count_);
  for (std::size_t j = 0; j < n_columns_; ++j)
    out.put_f64s(coef_.col(static_cast<Eigen::Index>(j)).data() + head_, count_);
}

void SupportSet::load(StateReader& in) {
  const std::uint64_t d = in.get_u64(), columns = in.get_u64(), budget = in.get_u64();
  if (d != n_features_ || columns != n_columns_ || budget != budget_)
    throw InputError("exact-kernel state: support set has d = " + std::to_string(d) + ", " +
                     std::to_string(columns) + " learners, budget " + std::to_string(budget) +
                     "; this learner has d = " + std::to_string(n_features_) + ", " +
                     std::to_string(n_columns_) + " learners, budget " + std::to_string(budget_));
  const std::uint64_t capacity = in.get_u64(), head = in.get_u64(), count = in.get_u64();
  // A saved capacity is the one this learner was built with, or a doubling of it past the rows
  // in use (push_back); anything far larger is damage, and is refused before it is allocated.
  // Only unbudgeted sets grow, and they never pop_front (head stays 0), so a grown capacity is
  // bounded by the stored rows alone: head is not backed by data and must not let it grow.
  const auto built = static_cast<std::uint64_t>(buffer_.rows());
  if (capacity == 0 || capacity % 8 != 0 || head > capacity || count > capacity - head ||
      (capacity > built && capacity / 4 > count + 16))
    throw InputError("exact-kernel state: inconsistent support-set layout");
  // The rows (x, ‖x‖², one coefficient per column, with their length words) must be there too.
  in.require_values(count, sizeof(double) * (n_features_ + 1 + n_columns_));
  buffer_.resize(static_cast<Eigen::Index>(capacity), static_cast<Eigen::Index>(n_features_));
  norms2_.setZero(static_cast<Eigen::Index>(capacity));
  coef_.resize(static_cast<Eigen::Index>(capacity), static_cast<Eigen::Index>(n_columns_));
  blocked_.assign(capacity * n_features_, 0.0);
  head_ = head;
  count_ = count;
  in.get_f64s(buffer_.data() + head_ * n_features_, count_ * n_features_);
  for (std::size_t r = head_; r < head_ + count_; ++r) write_blocked(r);
  in.get_f64s(norms2_.data() + head_, count_);
  for (std::size_t j = 0; j < n_columns_; ++j)
    in.get_f64s(coef_.col(static_cast<Eigen::Index>(j)).data() + head_, count_);
}

// ---------------------------------------------------------------------------------------------
// KernelBank

KernelBank::KernelBank(Dictionary kernels, bool averaged)
    : kernels_(std::move(kernels)), averaged_(averaged) {
  for (const auto& k : kernels_) {
    if (k.family == KernelFamily::Linear || k.family == KernelFamily::Polynomial) any_dot_ = true;
    if (k.family == KernelFamily::Gaussian || k.family == KernelFamily::IsotropicLaplacian) any_dist_ = true;
    if (k.family == KernelFamily::Laplacian) any_l1_ = true;
  }
}

void KernelBank::fill(const KernelSpec& kernel, const SupportSet& support,
                      const Eigen::VectorXd& x, Eigen::Ref<Eigen::VectorXd> out) const {
  const auto n = static_cast<Eigen::Index>(support.size());
  switch (kernel.family) {
    case KernelFamily::Gaussian:
      // Most of a baseline's time: exp(−d²/(2σ²)) in one vectorised pass.
      cpu::fast_exp_neg_div(dist2_.data(), 2.0 * kernel.sigma * kernel.sigma, out.data(), static_cast<std::size_t>(n));
      break;
    case KernelFamily::Linear: out = dot_.head(n); break;
    case KernelFamily::Polynomial: {
      const auto base = dot_.head(n).array() + kernel.offset;
      out.array() = base;
      for (int k = 1; k < kernel.degree; ++k) out.array() *= base;
      break;
    }
    case KernelFamily::Laplacian:
      // ‖x_τ − x‖₁ is computed once per call in evaluate() and shared by every Laplacian.
      cpu::fast_exp_neg_div(l1_.data(), kernel.sigma, out.data(), static_cast<std::size_t>(n));
      break;
    case KernelFamily::IsotropicLaplacian:
      // exp(−‖x_τ − x‖₂/σ) from the squared distances the Gaussians share.
      out = dist2_.head(n).cwiseSqrt();
      cpu::fast_exp_neg_div(out.data(), kernel.sigma, out.data(), static_cast<std::size_t>(n));
      break;
    case KernelFamily::Cauchy:
      out = ((((support.rows().rowwise() - x.transpose()).array() / kernel.sigma).square() + 1.0)
                 .inverse())
                .rowwise()
                .prod()
                .matrix();
      break;
  }
}

void KernelBank::evaluate(const SupportSet& support, const Eigen::VectorXd& x, double x_norm2,
                          Eigen::MatrixXd& out, int only) {
  const std::size_t n = support.size();
  const auto outputs = static_cast<Eigen::Index>(n_outputs());
  shape_kernel_values(out, n, outputs);
  if (n == 0) return;
  const auto m = static_cast<Eigen::Index>(n);

  // Which kernels are needed decides which shared quantities are computed.
  bool need_dot = any_dot_, need_dist = any_dist_, need_l1 = any_l1_;
  if (only >= 0 && !averaged_) {
    const KernelFamily f = kernels_[static_cast<std::size_t>(only)].family;
    need_dot = f == KernelFamily::Linear || f == KernelFamily::Polynomial;
    need_dist = f == KernelFamily::Gaussian || f == KernelFamily::IsotropicLaplacian;
    need_l1 = f == KernelFamily::Laplacian;
  }
  if (need_l1) {
    if (l1_.size() < m) l1_.resize(out.rows());
    l1_.head(m) = (support.rows().rowwise() - x.transpose()).cwiseAbs().rowwise().sum();
  }
  const cpu::BlockedRows rows = support.blocked();
  const auto j = static_cast<Eigen::Index>(only >= 0 ? only : 0);  // the kernel, where one is alone
  if (need_dist && !need_dot && !averaged_ && (only >= 0 || kernels_.size() == 1) &&
      kernels_[static_cast<std::size_t>(j)].family == KernelFamily::Gaussian) {
    // One Gaussian alone: distances and exp in the same pass over the rows.
    const KernelSpec& kernel = kernels_[static_cast<std::size_t>(j)];
    cpu::kernel_rows(rows, x.data(), x_norm2, cpu::RowQuantity::Gaussian, 2.0 * kernel.sigma * kernel.sigma,
                     out.col(j).data());
    return;
  }
  if (need_dot) {
    if (dot_.size() < m) dot_.resize(out.rows());
    // x_τᵀx for every stored row (the GEMV that dominates at large d), vectorised.
    cpu::kernel_rows(rows, x.data(), x_norm2, cpu::RowQuantity::InnerProduct, 1.0, dot_.data());
  }
  if (need_dist) {
    if (dist2_.size() < m) dist2_.resize(out.rows());
    // Clamped at 0: rounding can make the distance of a repeated sample slightly negative.
    if (need_dot)
      dist2_.head(m).array() =
          (support.norms2().array() + x_norm2 - 2.0 * dot_.head(m).array()).max(0.0);
    else
      cpu::kernel_rows(rows, x.data(), x_norm2, cpu::RowQuantity::SquaredDistance, 1.0, dist2_.data());
  }

  if (averaged_) {
    const auto p_count = static_cast<Eigen::Index>(kernels_.size());
    if (per_kernel_.rows() < out.rows() || per_kernel_.cols() != p_count)
      per_kernel_.resize(out.rows(), p_count);
    for (Eigen::Index p = 0; p < p_count; ++p)
      fill(kernels_[static_cast<std::size_t>(p)], support, x, per_kernel_.col(p).head(m));
    // Fixed summation order p = 0..P−1.
    out.col(0).head(m) = per_kernel_.col(0).head(m);
    for (Eigen::Index p = 1; p < p_count; ++p) out.col(0).head(m) += per_kernel_.col(p).head(m);
    out.col(0).head(m) /= static_cast<double>(p_count);
    return;
  }
  for (Eigen::Index j = 0; j < outputs; ++j) {
    if (only >= 0 && j != only) continue;
    fill(kernels_[static_cast<std::size_t>(j)], support, x, out.col(j).head(m));
  }
}

void KernelBank::diagonal(double x_norm2, double* out) const {
  if (averaged_) {
    double sum = 0.0;
    for (const auto& k : kernels_) sum += kernel_diagonal(k, x_norm2);
    out[0] = sum / static_cast<double>(kernels_.size());
    return;
  }
  for (std::size_t j = 0; j < kernels_.size(); ++j) out[j] = kernel_diagonal(kernels_[j], x_norm2);
}

double KernelBank::value(std::size_t output, const double* a, const double* b,
                         std::size_t n_features) const {
  if (averaged_) {
    double sum = 0.0;
    for (const auto& k : kernels_) sum += k.evaluate(a, b, n_features);
    return sum / static_cast<double>(kernels_.size());
  }
  return kernels_[output].evaluate(a, b, n_features);
}

}  // namespace omkl::detail
