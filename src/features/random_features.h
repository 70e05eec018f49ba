/// @file random_features.h
/// @brief Random Fourier feature samplers and the feature map z(x) (spec/raker.md §1).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omkl/kernel_spec.h"
#include "features/frequency_recipe.h"
#include "random/rng.h"

namespace omkl::detail {

/// How frequency matrices are drawn.
enum class RfKind {
  Rf,         ///< i.i.d. rows from the kernel's spectral law
  Orf,        ///< orthogonal random features: Haar-orthogonal blocks, χ_d row lengths (§1.3)
  OrfMatlab,  ///< the authors' MATLAB construction: unsigned Q blocks, √χ²₁ row scales (Appendix A)
};

RfKind parse_rf_kind(const std::string& text);
std::string to_string(RfKind kind);

/// The feature part of every random-feature configuration (Raker, AdaRaker, the graph family,
/// RFOMKR): dictionary, D, frequency construction, scale and random-number source.
struct RfFeatures {
  Dictionary dictionary;
  std::string dictionary_text;
  std::size_t n_rff = 50;
  RfKind rf_kind = RfKind::Orf;
  double feature_scale = 1.0;
  /// Frequencies drawn as the graph-aided journal notebook draws them (rng = numpy_legacy,
  /// spec/graph-aided.md §1.9).
  bool numpy_legacy = false;
  /// Kernel k draws from the stream (seed, replicate, Frequencies, first_stream + k): an
  /// algorithm whose spec keys its matrices apart (OFSKL, spec/federated.md §4.4) moves them.
  std::uint64_t first_stream = 0;
  /// Every kernel draws from kernel 0's stream (`shared_omega`): one matrix of the common
  /// spectral law per replicate, scaled by each kernel's 1/σ, as the bandit paper's Raker script
  /// computes Ωx once and divides it by σ_i (spec/bandit.md §7.3, §10 A10). Each kernel's
  /// features keep their law; only their correlation across kernels changes.
  bool shared_omega = false;

  /// The stream index of kernel k's matrix (RngPurpose::Frequencies).
  std::uint64_t frequency_stream(std::size_t k) const { return first_stream + (shared_omega ? 0 : k); }
};

/// Draws the frequency matrix V (n_rff × n_features, row-major) of one kernel.
/// ORF applies only to the radial Gaussian kernel; Laplacian and Cauchy kernels are not radial
/// and always use plain RF (§1.4). Throws ConfigError for kernels without random features.
std::vector<double> draw_frequencies(const KernelSpec& kernel, std::size_t n_rff,
                                     std::size_t n_features, RfKind kind, RandomStream& rng);

/// The closed-form recipe (frequency_recipe.h) of the matrix draw_frequencies() draws from a
/// fresh `rng` (position 0): the CUDA backend draws the same matrix from it on the device.
MatrixRecipe matrix_recipe(const KernelSpec& kernel, std::size_t n_features, RfKind kind,
                           const RandomStream& rng);

/// Prefix sums of recipe_units() over `recipes` (size + 1 entries): the unit numbering of
/// draw_recipe_unit().
std::vector<std::size_t> recipe_unit_offsets(const std::vector<MatrixRecipe>& recipes, std::size_t n_rff,
                                             std::size_t n_features);

/// z = scale · [sin(Vx), cos(Vx)] (all sines first). V is n_rff × n_features row-major;
/// z has 2·n_rff entries.
void feature_map(const double* V, std::size_t n_rff, std::size_t n_features, const double* x,
                 double scale, double* z);

}  // namespace omkl::detail
