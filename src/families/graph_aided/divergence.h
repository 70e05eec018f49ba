/// @file divergence.h
/// @brief Kernel divergence Δ(κ_i, κ_j) between dictionary kernels (spec/graph-aided.md §2.2).
///
/// Parameterisation (§1.3): γ is the Gaussian variance (γ = σ², κ = exp(−‖ρ‖²/(2γ))) and the
/// Laplacian scale (γ = σ, κ = exp(−‖ρ‖₁/γ)); KernelSpec stores σ, so γ is derived from it.
/// The exact forms extend §2.2.2 to the other shift-invariant kernels: the Cauchy kernel
/// Π 1/(1 + ρ_k²/σ²) against every product kernel (its Laplacian pair by quadrature), and the
/// isotropic Laplacian exp(−‖ρ‖₂/σ) against itself and the Gaussian (radially) and against a
/// Laplacian or a Cauchy kernel (as a Gaussian scale mixture: one quadrature over the scale).
/// The reference code's forms know the Gaussian and the Laplacian only. Anything else is a
/// ConfigError.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omkl/kernel_spec.h"

namespace omkl::detail {

/// Which Δ to compute (§3 R1, flag `divergence`).
enum class DivergenceForm {
  /// Δ_S = ∫_{R^d} |κ_i − κ_j|² dρ in closed form (§2.2.2). Symmetric, zero diagonal, ≥ 0.
  Exact,
  /// The published kernel_distance.py returns nothing, so every entry is NaN (§2.2.3). Values are
  /// quiet NaNs; the graph code treats NaN like NumPy's argmax/argmin (first NaN wins), which
  /// reproduces the index-order graph (§2.3.3) and d_i = min D'_t (§2.6.b).
  ReferenceNan,
  /// The formulas of kernel_distance.py with the value returned (§2.2.3): dimension-free,
  /// non-zero diagonal, some negative entries. Diagnostics only (§2.3.4).
  ReferenceFormula,
  /// [REF-2021], Gaussian-only: √π (γ_i + γ_j − 2√2 γ_i γ_j / sqrt(γ_i² + γ_j²)) (§2.2.3).
  Reference2021,
  /// Not from the papers (§7 A-3): 2 − 2 I_ij / sqrt(I_ii I_jj), the squared L2 distance of the
  /// L2-normalised kernels; bounded in [0, 4], so wide kernels do not dominate.
  NormalizedExact,
};

/// γ of a Gaussian or Laplacian kernel in the §1.3 convention (the reference code's forms);
/// ConfigError for other families.
double kernel_gamma(const KernelSpec& kernel);

/// ConfigError unless the kernel is shift-invariant (the kernels a divergence can compare).
void check_divergence_kernel(const KernelSpec& kernel);

/// log I_ab = log ∫_{R^dim} κ_a(ρ) κ_b(ρ) dρ (§2.2.2), evaluated in log space because the
/// magnitudes reach 1e40 for d = 20, γ = 100.
double log_overlap_integral(const KernelSpec& a, const KernelSpec& b, std::size_t dim);

/// Δ(κ_a, κ_b) in the given form. `dim` is the integration dimension (option
/// `divergence_dim` = d or 1); it matters only for Exact and NormalizedExact. Exact values that
/// exceed the double range come back as +inf; use divergence_matrix() for a scaled matrix.
double kernel_divergence(const KernelSpec& a, const KernelSpec& b, DivergenceForm form,
                         std::size_t dim);

/// The N×N matrix of Δ over a dictionary, row-major: Δ(i, j) = values[i·n + j] · exp(log_scale).
/// log_scale is 0 unless some Exact entry would overflow a double; a common positive factor does
/// not change any argmax/argmin the graph code takes.
struct DivergenceMatrix {
  std::size_t n = 0;
  std::vector<double> values;
  double log_scale = 0.0;

  double operator()(std::size_t i, std::size_t j) const { return values[i * n + j]; }
};

/// Δ for every pair of `dictionary` (ConfigError if it is empty or has a kernel without Δ).
DivergenceMatrix divergence_matrix(const Dictionary& dictionary, DivergenceForm form,
                                   std::size_t dim);

/// A user-supplied Δ (spec/graph-aided.md §7 A-15: the interface open to any divergence): an
/// n × n table of finite numbers, row i on a line of its own, in number_table.h's format. Used
/// as given (any sign, any diagonal): the graph rules only compare its entries. An InputError
/// names the file, and the line and column of a cell that is no finite number, or the line of a
/// row of another length, or the count of rows where it is not n.
DivergenceMatrix read_divergence_table(const std::string& path, std::size_t n);

/// erfcx(x) = exp(x²)·erfc(x) for x ≥ 0, accurate where exp(x²) and erfc(x) alone over/underflow.
double erfcx(double x);

}  // namespace omkl::detail
