/// @file regret.h
/// @brief The batch comparator of the graph journal's regret curves (spec/graph-aided.md §4.5,
/// [J] Fig. 6): kernel ridge regression fitted once on the whole stream per dictionary kernel.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omkl/dataset.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

/// Largest stream the graph journal's O(T³) comparator accepts.
constexpr std::size_t kRegretMaxSamples = 6000;
/// Largest pooled stream the federated regret's `auto` comparator fits exactly: Naval's 11 500
/// rows (46 s per kernel on one core of the development machine, a 1 GB matrix; the 51
/// Gaussians ≈ 20 min on 2 cores), as §4.7 asks ("exact KRR where it fits in memory").
constexpr std::size_t kAutoExactMaxSamples = 12000;
/// Largest pooled stream the federated exact comparator takes when asked for it (UJI's 21 000
/// rows: a T × T matrix of 3.5 GB per kernel being fitted, hours on a few cores).
constexpr std::size_t kExactComparatorMaxSamples = 25000;
/// Memory the exact comparators' matrices may take at once: kernels are fitted side by side
/// only as far as their T × T matrices fit in it.
constexpr std::size_t kComparatorMemoryBytes = std::size_t{8} << 30;

struct RegretBenchmark {
  std::string kernel;              ///< the kernel with the smallest in-sample squared error
  std::vector<double> residual2;   ///< m_t: its per-sample squared residuals
};

/// For every kernel of `dictionary`, the in-sample fit of (K + λI)α = y on the whole stream,
/// with scikit-learn's parameterisation as the notebook used it: rbf exp(−γ‖x − x'‖²) and
/// laplacian exp(−γ‖x − x'‖₁), where γ is the dictionary's γ (σ² of a Gaussian entry, σ of a
/// Laplacian one) read as an inverse scale. Keeps the kernel with the smallest Σ_t m_t.
/// ConfigError for other kernel families, a classification stream or T > kRegretMaxSamples.
RegretBenchmark batch_kernel_ridge(const Dataset& data, const Dictionary& dictionary, double lambda);

/// The comparator of the POF-MKL paper's batch regret (spec/federated.md §4.7 `regret_batch`):
/// for every kernel of `dictionary`, ridge regression min ‖y − Zw‖² + λ‖w‖² fitted once on the
/// whole pooled stream, in random-feature form (`n_rff` features per kernel, z = [sin, cos]/√D,
/// frequencies from a fixed stream that does not depend on the study's seed: what §4.7 takes
/// where exact KRR does not fit); keeps the kernel with the smallest Σ_t m_t.
/// ConfigError for a classification stream or kernels without random features.
RegretBenchmark federated_ridge_comparator(const Dataset& data, const Dictionary& dictionary, double lambda,
                                           std::size_t n_rff);

/// The same comparator as exact kernel ridge regression (§4.7's choice where it fits): per
/// kernel, (K + λI)α = y on the pooled stream (the minimiser of ‖y − Kα‖² + λαᵀKα) with
/// K(i, j) = κ(x_i, x_j), the kernel whose random features the algorithms draw
/// (KernelSpec::evaluate); keeps the kernel with the smallest Σ_t m_t, the in-sample squared
/// residuals. ConfigError as federated_ridge_comparator(), and for T > kExactComparatorMaxSamples.
RegretBenchmark federated_kernel_ridge(const Dataset& data, const Dictionary& dictionary, double lambda);

}  // namespace omkl::detail
