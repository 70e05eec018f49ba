/// @file kernel_spec.h
/// @brief Kernel functions and named kernel dictionaries.
///
/// Conventions ([Raker], [GA-J]; docs/papers.md):
///  - Gaussian:  exp(-||δ||² / (2 σ²)); spectral law N(0, σ⁻² I).
///  - Laplacian: exp(-||δ||₁ / σ) (product / ℓ1 form); spectral law: Cauchy(0, 1/σ) per coordinate.
///  - Cauchy:    Π_k 1 / (1 + δ_k² / σ²); spectral law: Laplace(0, 1/σ) per coordinate.
///  - Isotropic Laplacian: exp(-||δ||₂ / σ); spectral law: the multivariate Cauchy (Student t,
///    one degree of freedom) of scale 1/σ, v = g/(σ|h|) ([Raker]; docs/features.md, "Kernels").
///  - Linear:    xᵀx'            (exact-kernel baselines only, no random features).
///  - Polynomial: (xᵀx' + offset)^degree (offset 0 = homogeneous, the reproduction setting).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace omkl {

enum class KernelFamily { Gaussian, Laplacian, Cauchy, Linear, Polynomial, IsotropicLaplacian };

struct KernelSpec {
  KernelFamily family = KernelFamily::Gaussian;
  double sigma = 1.0;   ///< bandwidth σ (Gaussian, Laplacian, Cauchy, isotropic Laplacian)
  int degree = 2;       ///< polynomial degree
  double offset = 0.0;  ///< polynomial offset

  static KernelSpec gaussian(double sigma);
  static KernelSpec gaussian_sigma2(double sigma2);  ///< bandwidth given as σ²
  static KernelSpec laplacian(double sigma);
  static KernelSpec cauchy(double sigma);
  static KernelSpec isotropic_laplacian(double sigma);  ///< exp(−‖δ‖₂/σ)
  static KernelSpec linear();
  static KernelSpec polynomial(int degree, double offset = 0.0);

  /// True for the kernels that have random Fourier features.
  bool shift_invariant() const;
  /// Exact kernel value κ(a, b) for two host vectors of length n_features.
  double evaluate(const double* a, const double* b, std::size_t n_features) const;
  /// Short human-readable name, e.g. "gauss(sigma=0.1)"; parse_kernel() accepts it back.
  std::string name() const;
};

using Dictionary = std::vector<KernelSpec>;

/// Parses one kernel: "gauss:SIGMA", "gauss2:SIGMA2" (bandwidth given as σ²), "lap:SIGMA" (ℓ1),
/// "lap_l2:SIGMA" (isotropic, ℓ2), "cauchy:SIGMA", "linear", "poly:DEGREE[:OFFSET]". Throws
/// ConfigError on anything else.
KernelSpec parse_kernel(const std::string& text);

/// A named dictionary preset, or a "+"-separated list of kernels for parse_kernel()
/// (e.g. "gauss:0.1+gauss:1+lap:10"; "+" because "," separates algorithm parameters).
/// Presets:
///  - "jmlr19-rf":    Gaussians σ ∈ {0.1, 1, 10} (Raker/AdaRaker, [Raker]'s experiments)
///  - "jmlr19-exact": those three Gaussians + LINEAR + POLY2 (exact MKL baselines)
///  - "jmlr23-76":    51 Gaussians γ = 10^(0.08k−2) and 25 Laplacians γ = 10^(l/6−2) ([GA-J])
///  - "conf-41":      41 Gaussians γ = 10^((k−20)/10) (graph-aided conference)
///  - "fed-51":       51 Gaussians of variance σ_i = 10^((2i−52)/25) ([POF], the authors'
///                    convention ρ ~ N(0, σ⁻¹I)); "fed-51-textbook": the same σ_i as bandwidths
///  - "oks-6":        6 Gaussians σ ∈ {0.25, 0.5, 1, 2, 4, 8} ([OKS])
Dictionary parse_dictionary(const std::string& text);

/// Names of the built-in dictionary presets.
std::vector<std::string> dictionary_preset_names();

}  // namespace omkl
