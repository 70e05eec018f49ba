/// @file notebook_stream.h
/// @brief The one shared NumPy stream of the graph-aided journal notebooks (spec/graph-aided.md
/// §1.9), so that `rng = numpy_legacy` runs see exactly the numbers the published tables saw.
///
/// The notebooks call np.random.seed(seed) once and then, for r = 0..R−1: draw the features of
/// repetition r, run RFOMKR and Raker (no draws), OMKL-GF with M = 5, 10, 1, 15, 20, OMKL-SFG
/// with the same M order, then OMKL-SFG-R likewise, all from the same stream. Every run's
/// consumption is data-independent (Appendix A item 5), so the stream position where one
/// (repetition, run) starts is found by replaying the feature draws and skipping the uniforms
/// of the runs before it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "random/numpy_legacy.h"
#include "omkl/kernel_spec.h"

namespace omkl::detail {

/// A run of the notebook. FeaturesOnly: an algorithm that draws nothing per step (Raker,
/// RFOMKR) and starts right after its repetition's features.
enum class NotebookRun { FeaturesOnly, Gf, Sfg, SfgR };

/// The shape of the notebook the stream is replayed for. The notebook's own settings (J = 2,
/// switch step 300, GF regenerations up to step 302) are fixed: they define the positions of
/// the runs around the one being reproduced.
struct NotebookShape {
  Dictionary dictionary;       ///< Gaussian and Laplacian kernels only
  std::size_t n_rff = 50;      ///< D
  std::size_t n_features = 0;  ///< d
  std::size_t horizon = 0;     ///< T, the stream length
};

/// The M values of each graph family, in notebook order.
const std::vector<std::size_t>& notebook_m_order();

/// Uniforms a notebook run consumes over `horizon` steps (§1.9 table): GF min(T, 302)·(2M + 1) +
/// max(T − 302, 0); SFG min(T, 300); SFG-R 2·min(T, 300) + max(T − 300, 0); FeaturesOnly 0.
std::uint64_t notebook_run_uniforms(NotebookRun run, std::size_t M, std::size_t horizon);

/// Draws one repetition's frequency matrices as the notebook does (§1.4): the Gaussian kernels
/// in dictionary order, each Ψ (d × D) filled row-major from normals scaled by 1/σ, then the
/// Laplacian kernels from Cauchy draws scaled by 1/σ. Returned per kernel in this library's
/// layout, V = Ψᵀ (D × d row-major). Throws ConfigError for other kernel families.
std::vector<std::vector<double>> draw_notebook_features(NumpyLegacyRandom& stream, const Dictionary& dictionary,
                                                        std::size_t n_rff, std::size_t n_features);

/// Where one replicate of a run starts: its features and the stream positioned at its first draw.
struct NotebookStart {
  std::vector<std::vector<double>> frequencies;  ///< per kernel, D × d row-major
  NumpyLegacyRandom stream;
};

/// The starts of `run` (with out-degree / draws M) for each of `replicates` (notebook repetition
/// indices), from np.random.seed(seed). One replay pass covers all of them. Throws ConfigError
/// when M is not one the notebook runs, or the horizon is unknown.
std::vector<NotebookStart> notebook_starts(std::uint32_t seed, const std::vector<std::uint64_t>& replicates,
                                           NotebookRun run, std::size_t M, const NotebookShape& shape);

}  // namespace omkl::detail
