/// @file frequency_recipe.h
/// @brief Where each entry of a counter-mode frequency matrix comes from, in closed form, so
/// that any row (or ORF block) can be drawn on its own: the CUDA backend draws every
/// (replicate, kernel, row) in parallel on the device (kernels/frequency_draws.cu) and gets the
/// matrices draw_frequencies() gives on the host, bit for bit (unit test: this recipe, run on
/// the host, equals draw_frequencies() for every law, construction and odd size).
///
/// The stream of matrix (replicate, kernel) is RandomStream(seed, replicate, Frequencies,
/// kernel), consumed from position 0 as draw_frequencies() consumes it:
///  - i.i.d. normal rows (RF, Gaussian kernel): entry e = i·d + j is the normal of Philox
///    block e (one block per normal);
///  - Cauchy rows (Laplacian kernel) and Laplace rows (Cauchy kernel): two entries per block,
///    entry e from block ⌊e/2⌋, words 0–1 for even e and 2–3 for odd e;
///  - multivariate Cauchy rows (isotropic Laplacian kernel): row i is g/(σ|h|) of d + 1 normals,
///    one block each: g_j from block i·(d + 1) + j, h from block i·(d + 1) + d;
///  - ORF (Gaussian kernel): ⌈D/d⌉ blocks of d×d normals, block b's (i, j) from Philox block
///    b·d² + i·d + j; then row r's length √χ² from the `dof` normals at blocks
///    ⌈D/d⌉·d² + r·dof … + dof − 1 (dof = d for ORF, 1 for the MATLAB construction);
///  - ORF of the isotropic Laplacian (rf=orf; spec/raker.md §1.4: its spectrum is radial too):
///    the same orthogonal directions, row r's length the radial law of g/(σ|h|), √χ²_d/(σ|h|),
///    from the d normals at ⌈D/d⌉·d² + r·(d + 1) … and h from the next one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "random/draw_transforms.h"
#include "random/householder.h"

namespace omkl::detail {

/// The law of a matrix's entries (the kernel's spectral law).
enum class SpectralLaw : std::uint32_t { Normal = 0, Cauchy = 1, Laplace = 2, MultivariateCauchy = 3 };

/// The multivariate Cauchy row's common factor 1/(σ|h|), as draw_frequencies() and the recipe
/// both form it (h: the row's last normal).
OMKL_HD double multivariate_cauchy_scale(double inv_sigma, double h) {
  return draw::div(inv_sigma, h < 0.0 ? -h : h);
}

/// One Philox-4x32 output block.
struct PhiloxWords {
  std::uint32_t x, y, z, w;
};

/// The normal of one block: Box–Muller of its two uniforms (words 0–1 and 2–3), as
/// RandomStream::normal() takes them.
OMKL_HD double block_normal(const PhiloxWords& w) {
  return draw::normal_from(draw::uniform_from(w.x, w.y), draw::uniform_from(w.z, w.w));
}

/// Everything needed to draw one (replicate, kernel) matrix.
struct MatrixRecipe {
  std::uint32_t key0 = 0, key1 = 0;  ///< Philox key of the stream
  std::uint64_t stream_hi = 0;       ///< upper 64 counter bits (purpose, index)
  SpectralLaw law = SpectralLaw::Normal;
  std::uint32_t orf = 0;             ///< 1: orthogonal blocks (radial laws only)
  std::uint32_t haar = 0;            ///< with orf: sign-fixed Q (ORF) or not (MATLAB)
  std::uint32_t dof = 0;             ///< with orf: χ² degrees of freedom of the row lengths
  double inv_sigma = 1.0;            ///< 1/σ, applied last as draw_frequencies() does
};

/// A matrix's stream as the recipe reads it: block b is `Philox`'s output for the counter
/// (b lo, b hi, stream_hi lo, stream_hi hi) under the key (key0, key1) — the host
/// RandomStream's block b. `Philox` is the block function: the host's philox4x32 (tests) or
/// cuRAND's on the device (kernels/frequency_draws.cu); the addressing is this one code.
template <typename Philox>
struct PhiloxBlocks {
  OMKL_HD explicit PhiloxBlocks(const MatrixRecipe& m) : key0(m.key0), key1(m.key1), stream_hi(m.stream_hi) {}
  OMKL_HD void seek(std::uint64_t block) { counter = block; }
  OMKL_HD PhiloxWords next() {
    const PhiloxWords w = Philox()(static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                                   static_cast<std::uint32_t>(stream_hi), static_cast<std::uint32_t>(stream_hi >> 32),
                                   key0, key1);
    ++counter;
    return w;
  }
  std::uint32_t key0, key1;
  std::uint64_t stream_hi;
  std::uint64_t counter = 0;
};

/// Work units of one matrix: its ORF blocks, or its rows.
OMKL_HD std::size_t recipe_units(const MatrixRecipe& m, std::size_t n_rff, std::size_t d) {
  return m.orf ? (n_rff + d - 1) / d : n_rff;
}

/// Row `row` (d entries, into out[j·stride]) of an i.i.d. matrix. `Blocks` has
/// seek(block counter) and next() → PhiloxWords (PhiloxBlocks).
template <typename Blocks>
OMKL_HD void draw_recipe_row(const MatrixRecipe& m, Blocks& blocks, std::size_t row, std::size_t d,
                             double* out, std::size_t stride) {
  using namespace draw;
  const std::size_t first = row * d;
  if (m.law == SpectralLaw::Normal) {
    blocks.seek(first);
    for (std::size_t j = 0; j < d; ++j) {
      const PhiloxWords w = blocks.next();
      out[j * stride] = mul(block_normal(w), m.inv_sigma);
    }
    return;
  }
  if (m.law == SpectralLaw::MultivariateCauchy) {
    blocks.seek(row * (d + 1));
    for (std::size_t j = 0; j < d; ++j) {
      const PhiloxWords w = blocks.next();
      out[j * stride] = block_normal(w);
    }
    const PhiloxWords w = blocks.next();
    const double h = block_normal(w);
    const double scale = multivariate_cauchy_scale(m.inv_sigma, h);
    for (std::size_t j = 0; j < d; ++j) out[j * stride] = mul(out[j * stride], scale);
    return;
  }
  blocks.seek(first / 2);
  PhiloxWords w{};
  for (std::size_t j = 0; j < d; ++j) {
    const std::size_t e = first + j;
    if (j == 0 || e % 2 == 0) w = blocks.next();
    const double u = e % 2 == 0 ? uniform_from(w.x, w.y) : uniform_from(w.z, w.w);
    const double value = m.law == SpectralLaw::Cauchy ? cauchy_from(u) : laplace_from(u);
    out[j * stride] = mul(value, m.inv_sigma);
  }
}

/// ORF block b: its rows b·d … min(D, (b+1)·d) − 1 of V (row-major, n_rff × d, at V). Scratch:
/// g (d², the factored block), tau (d) and row (d), each with the given stride.
template <typename Blocks>
OMKL_HD void draw_recipe_orf_block(const MatrixRecipe& m, Blocks& blocks, std::size_t b, std::size_t n_rff,
                                   std::size_t d, double* V, double* g, double* tau, double* row,
                                   std::size_t stride) {
  using namespace draw;
  const std::size_t d2 = d * d;
  blocks.seek(b * d2);
  for (std::size_t e = 0; e < d2; ++e) {
    const PhiloxWords w = blocks.next();
    g[e * stride] = block_normal(w);
  }
  householder_factor(g, d, stride, tau);
  const std::size_t n_blocks = (n_rff + d - 1) / d;
  for (std::size_t i = 0; i < d && b * d + i < n_rff; ++i) {
    const std::size_t r = b * d + i;
    householder_q_row(g, tau, d, stride, i, m.haar != 0, row);
    const bool cauchy = m.law == SpectralLaw::MultivariateCauchy;  // one more normal, h, per row
    blocks.seek(n_blocks * d2 + r * (m.dof + (cauchy ? 1 : 0)));
    double chi = 0.0;
    for (std::uint32_t k = 0; k < m.dof; ++k) {
      const PhiloxWords w = blocks.next();
      const double n = block_normal(w);
      chi = add(chi, mul(n, n));
    }
    double scale = m.inv_sigma;
    if (cauchy) {
      const PhiloxWords w = blocks.next();
      scale = multivariate_cauchy_scale(m.inv_sigma, block_normal(w));
    }
    const double length = mul(sqrt(chi), scale);
    for (std::size_t j = 0; j < d; ++j) V[r * d + j] = mul(row[j * stride], length);
  }
}

/// Doubles of scratch one thread of draw_recipe_unit() needs (an ORF block, τ, a Q row).
OMKL_HD std::size_t recipe_scratch_per_thread(std::size_t d) { return d * d + 2 * d; }

/// Unit u of a batch of n_matrices matrices whose units are numbered matrix after matrix:
/// matrix i owns units unit_offsets[i] … unit_offsets[i + 1] − 1 (prefix sums of
/// recipe_units(), so every unit is work: an ORF matrix has ⌈D/d⌉, not D). Matrix i lands at
/// V + i·D·d. `scratch` is this thread's scratch, its elements `stride` apart
/// (recipe_scratch_per_thread(d) of them); `Blocks(recipe)` opens the matrix's stream
/// (PhiloxBlocks). The CUDA kernel runs this over a grid; the unit tests over a simulated one.
template <typename Blocks>
OMKL_HD void draw_recipe_unit(const MatrixRecipe* recipes, const std::size_t* unit_offsets, std::size_t n_matrices,
                              std::size_t u, std::size_t n_rff, std::size_t d, double* V, double* scratch,
                              std::size_t stride) {
  // The matrix: the last i with unit_offsets[i] ≤ u (binary search).
  std::size_t lo = 0, hi = n_matrices;
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    if (unit_offsets[mid] <= u) lo = mid;
    else hi = mid;
  }
  const std::size_t i = lo, unit = u - unit_offsets[i];
  const MatrixRecipe m = recipes[i];
  Blocks blocks(m);
  double* matrix = V + i * n_rff * d;
  if (m.orf) {
    double* g = scratch;
    double* tau = g + d * d * stride;
    double* row = tau + d * stride;
    draw_recipe_orf_block(m, blocks, unit, n_rff, d, matrix, g, tau, row, stride);
  } else {
    draw_recipe_row(m, blocks, unit, d, matrix + unit * d, 1);
  }
}

}  // namespace omkl::detail
