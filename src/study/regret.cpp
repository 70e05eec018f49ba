#include "study/regret.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

#include "core/parallel.h"
#include "features/random_features.h"
#include "random/rng.h"
#include "omkl/error.h"
#include "study/study_io.h"

namespace omkl::detail {

namespace {

// In-sample squared residuals of kernel ridge regression, (K + λI)α = y with the Gram matrix
// K(i, j) = kernel(x_i, x_j) of the whole stream. Only the lower triangle of K + λI is held,
// factored in place: the fit's residual Kα − y is −λα, so m_t = λ²α_t² needs neither K nor a
// product with it (one T × T matrix, not three).
template <typename Kernel>
std::vector<double> ridge_residuals(const Dataset& data, double lambda, const Kernel& kernel) {
  const std::size_t T = data.n_samples;
  const auto n = static_cast<Eigen::Index>(T);
  Eigen::MatrixXd A(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double* xi = data.row(static_cast<std::size_t>(i));
    A(i, i) = kernel(xi, xi) + lambda;
    for (Eigen::Index j = 0; j < i; ++j) A(i, j) = kernel(xi, data.row(static_cast<std::size_t>(j)));
  }
  Eigen::LLT<Eigen::Ref<Eigen::MatrixXd>> factor(A);
  if (factor.info() != Eigen::Success)
    throw Error("regret: the comparator's system K + λI is not positive definite to working precision");
  const Eigen::Map<const Eigen::VectorXd> y(data.y.data(), n);
  const Eigen::VectorXd alpha = factor.solve(y);
  std::vector<double> m(T);
  for (Eigen::Index t = 0; t < n; ++t) m[static_cast<std::size_t>(t)] = (lambda * alpha[t]) * (lambda * alpha[t]);
  return m;
}

// Kernels fitted at once: every hardware thread, but no more T × T matrices than fit in
// kComparatorMemoryBytes (at least one).
std::size_t comparator_threads(std::size_t T) {
  const double matrix = 8.0 * static_cast<double>(T) * static_cast<double>(T);
  const double fit = static_cast<double>(kComparatorMemoryBytes) / matrix;
  const std::size_t hardware = std::max(1u, std::thread::hardware_concurrency());
  return fit < 1.0 ? 1 : std::min(hardware, static_cast<std::size_t>(fit));
}

// The notebook's scikit-learn kernels: rbf exp(−γ‖a − b‖²), laplacian exp(−γ‖a − b‖₁).
double sklearn_kernel(const KernelSpec& kernel, const double* a, const double* b, std::size_t d) {
  const bool gaussian = kernel.family == KernelFamily::Gaussian;
  const double gamma = gaussian ? kernel.sigma * kernel.sigma : kernel.sigma;
  double dist = 0.0;
  for (std::size_t i = 0; i < d; ++i) {
    const double diff = a[i] - b[i];
    dist += gaussian ? diff * diff : std::fabs(diff);
  }
  return std::exp(-gamma * dist);
}

// What every comparator needs of its stream: regression, rows, λ > 0, and for the exact ones
// at most `max_samples` rows (0: no limit).
void check_comparator_input(const Dataset& data, double lambda, std::size_t max_samples) {
  if (data.task != Task::Regression) throw ConfigError("regret curves are defined for regression streams");
  if (data.n_samples == 0) throw InputError(stream_name(data) + ": empty stream");
  if (max_samples > 0 && data.n_samples > max_samples)
    throw ConfigError("regret: the exact comparator solves a T × T system (O(T³)); T = " +
                      std::to_string(data.n_samples) + " exceeds the supported " + std::to_string(max_samples));
  if (!(lambda > 0)) throw ConfigError("regret: the comparator's ridge λ must be > 0");
}

// In-sample squared residuals of ridge regression on one kernel's random features.
std::vector<double> feature_ridge_residuals(const Dataset& data, const KernelSpec& kernel, std::size_t k, double lambda,
                                            std::size_t n_rff) {
  const std::size_t T = data.n_samples, d = data.n_features, F = 2 * n_rff;
  RandomStream rng(0, 0, RngPurpose::Misc, 0xc0a1u + k);  // fixed: the comparator is the study's, not a draw's
  const std::vector<double> V = draw_frequencies(kernel, n_rff, d, RfKind::Rf, rng);
  Eigen::MatrixXd Z(static_cast<Eigen::Index>(T), static_cast<Eigen::Index>(F));
  std::vector<double> z(F);
  const double scale = 1.0 / std::sqrt(static_cast<double>(n_rff));
  for (std::size_t t = 0; t < T; ++t) {
    feature_map(V.data(), n_rff, d, data.row(t), scale, z.data());
    for (std::size_t j = 0; j < F; ++j) Z(static_cast<Eigen::Index>(t), static_cast<Eigen::Index>(j)) = z[j];
  }
  const Eigen::Map<const Eigen::VectorXd> y(data.y.data(), static_cast<Eigen::Index>(T));
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(F), static_cast<Eigen::Index>(F));
  A.selfadjointView<Eigen::Lower>().rankUpdate(Z.transpose());
  A.diagonal().array() += lambda;
  const Eigen::VectorXd w = A.selfadjointView<Eigen::Lower>().llt().solve(Z.transpose() * y);
  const Eigen::VectorXd fitted = Z * w;
  std::vector<double> m(T);
  for (std::size_t t = 0; t < T; ++t) {
    const double e = fitted[static_cast<Eigen::Index>(t)] - y[static_cast<Eigen::Index>(t)];
    m[t] = e * e;
  }
  return m;
}

// The kernel with the smallest total of per-sample residuals (the first in dictionary order).
RegretBenchmark best_of(const Dictionary& dictionary, std::vector<std::vector<double>>& residuals) {
  std::size_t best = 0;
  double best_total = std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < dictionary.size(); ++k) {
    double total = 0.0;
    for (double v : residuals[k]) total += v;
    if (total < best_total) {
      best_total = total;
      best = k;
    }
  }
  return {dictionary[best].name(), std::move(residuals[best])};
}

}  // namespace

RegretBenchmark federated_ridge_comparator(const Dataset& data, const Dictionary& dictionary, double lambda,
                                           std::size_t n_rff) {
  check_comparator_input(data, lambda, 0);
  for (const KernelSpec& k : dictionary)
    if (!k.shift_invariant()) throw ConfigError("regret: the comparator needs random features, not " + k.name());
  std::vector<std::vector<double>> residuals(dictionary.size());
  parallel_for(dictionary.size(), 0, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      residuals[k] = feature_ridge_residuals(data, dictionary[k], k, lambda, n_rff);
  });
  return best_of(dictionary, residuals);
}

RegretBenchmark federated_kernel_ridge(const Dataset& data, const Dictionary& dictionary, double lambda) {
  check_comparator_input(data, lambda, kExactComparatorMaxSamples);
  for (const KernelSpec& k : dictionary)
    if (!k.shift_invariant()) throw ConfigError("regret: the comparator takes the random features' kernels, not " + k.name());
  const std::size_t d = data.n_features;
  std::vector<std::vector<double>> residuals(dictionary.size());
  parallel_for(dictionary.size(), comparator_threads(data.n_samples), [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      residuals[k] = ridge_residuals(data, lambda, [&](const double* a, const double* b) {
        return dictionary[k].evaluate(a, b, d);
      });
  });
  return best_of(dictionary, residuals);
}

RegretBenchmark batch_kernel_ridge(const Dataset& data, const Dictionary& dictionary, double lambda) {
  check_comparator_input(data, lambda, kRegretMaxSamples);
  for (const KernelSpec& k : dictionary)
    if (k.family != KernelFamily::Gaussian && k.family != KernelFamily::Laplacian)
      throw ConfigError("regret: the comparator takes Gaussian and Laplacian kernels, not " + k.name());
  std::vector<std::vector<double>> residuals(dictionary.size());
  // One T × T matrix per thread at a time; each kernel is independent.
  parallel_for(dictionary.size(), comparator_threads(data.n_samples), [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k)
      residuals[k] = ridge_residuals(data, lambda, [&](const double* a, const double* b) {
        return sklearn_kernel(dictionary[k], a, b, data.n_features);
      });
  });
  return best_of(dictionary, residuals);
}

}  // namespace omkl::detail
