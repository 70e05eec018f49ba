#include "features/random_features.h"

#include <algorithm>
#include <cmath>

#include "random/draw_transforms.h"
#include "random/householder.h"
#include "omkl/error.h"

namespace omkl::detail {

RfKind parse_rf_kind(const std::string& text) {
  if (text == "rf") return RfKind::Rf;
  if (text == "orf") return RfKind::Orf;
  if (text == "orf_matlab") return RfKind::OrfMatlab;
  throw ConfigError("unknown random-feature kind '" + text + "' (expected rf, orf, orf_matlab)");
}

std::string to_string(RfKind kind) {
  switch (kind) {
    case RfKind::Rf: return "rf";
    case RfKind::Orf: return "orf";
    case RfKind::OrfMatlab: return "orf_matlab";
  }
  return "?";
}

namespace {

// Rows 0 … n_rows − 1 of the Q factor of a d×d standard Gaussian matrix, into q (row-major,
// d wide); `haar` applies the sign fix that makes Q Haar-distributed (the paper omits it; the
// MATLAB code does without). householder.h, which the CUDA device runs too.
void orthogonal_block(std::size_t d, std::size_t n_rows, bool haar, RandomStream& rng, double* q) {
  std::vector<double> g(d * d), tau(d);
  rng.normals(g.data(), g.size());  // row-major, as g(i, j) = normal() in i-then-j order
  householder_factor(g.data(), d, 1, tau.data());
  for (std::size_t i = 0; i < n_rows; ++i) householder_q_row(g.data(), tau.data(), d, 1, i, haar, q + i * d);
}

}  // namespace

std::vector<double> draw_frequencies(const KernelSpec& kernel, std::size_t n_rff,
                                     std::size_t n_features, RfKind kind, RandomStream& rng) {
  // The recipe decides the law, the construction and the scale, for these host draws and for
  // the device's (it also rejects a kernel without random features).
  const MatrixRecipe m = matrix_recipe(kernel, n_features, kind, rng);
  const std::size_t d = n_features;
  std::vector<double> v(n_rff * d);
  if (!m.orf) {
    // Rows one after the other: the whole matrix is one sequence of draws from the kernel's
    // spectral law (spec/raker.md §1.4 table; entry by entry as frequency_recipe.h lays it out).
    switch (m.law) {
      case SpectralLaw::MultivariateCauchy:
        // Row by row: d normals g, then h; the row is g/(σ|h|), its scale already holding 1/σ.
        for (std::size_t i = 0; i < n_rff; ++i) {
          double* row = v.data() + i * d;
          rng.normals(row, d);
          double h = 0.0;
          rng.normals(&h, 1);
          const double scale = multivariate_cauchy_scale(m.inv_sigma, h);
          for (std::size_t k = 0; k < d; ++k) row[k] = draw::mul(row[k], scale);
        }
        return v;
      case SpectralLaw::Normal: rng.normals(v.data(), v.size()); break;
      case SpectralLaw::Cauchy: rng.cauchys(v.data(), v.size()); break;
      case SpectralLaw::Laplace:
        for (double& e : v) e = draw::laplace_from(rng.uniform());
        break;
    }
    for (double& e : v) e *= m.inv_sigma;
    return v;
  }
  // ORF: ⌈D/d⌉ orthogonal blocks stacked, keep the first D rows (§1.3 steps 1–3).
  const std::size_t n_blocks = (n_rff + d - 1) / d;
  for (std::size_t b = 0; b < n_blocks; ++b)
    orthogonal_block(d, std::min(d, n_rff - b * d), m.haar != 0, rng, v.data() + b * d * d);
  // Row lengths: χ_d (the law of a Gaussian vector's norm) for ORF; the MATLAB code scales each
  // row by √χ²₁ instead (m.dof = 1), which changes the kernel (Appendix A) but reproduces the
  // tables. The same operations as frequency_recipe.h's.
  // The isotropic Laplacian's lengths are √χ²_d/(σ|h|), h the row's next normal.
  for (std::size_t i = 0; i < n_rff; ++i) {
    const double chi = rng.chi_square(static_cast<int>(m.dof));
    double scale = m.inv_sigma;
    if (m.law == SpectralLaw::MultivariateCauchy) {
      double h = 0.0;
      rng.normals(&h, 1);
      scale = multivariate_cauchy_scale(m.inv_sigma, h);
    }
    const double length = std::sqrt(chi) * scale;
    for (std::size_t k = 0; k < d; ++k) v[i * d + k] *= length;
  }
  return v;
}

MatrixRecipe matrix_recipe(const KernelSpec& kernel, std::size_t n_features, RfKind kind,
                           const RandomStream& rng) {
  if (!kernel.shift_invariant())
    throw ConfigError("kernel " + kernel.name() + " has no random Fourier features");
  MatrixRecipe m;
  m.key0 = rng.key()[0];
  m.key1 = rng.key()[1];
  m.stream_hi = rng.stream_hi();
  m.law = kernel.family == KernelFamily::Gaussian             ? SpectralLaw::Normal
          : kernel.family == KernelFamily::Laplacian          ? SpectralLaw::Cauchy
          : kernel.family == KernelFamily::IsotropicLaplacian ? SpectralLaw::MultivariateCauchy
                                                              : SpectralLaw::Laplace;
  // Orthogonal rows need a radial spectrum: the Gaussian's (both constructions) and the isotropic
  // Laplacian's (rf=orf; the MATLAB construction's √χ²₁ lengths are the Gaussian code's own).
  m.orf = (kind != RfKind::Rf && m.law == SpectralLaw::Normal) ||
          (kind == RfKind::Orf && m.law == SpectralLaw::MultivariateCauchy);
  m.haar = kind == RfKind::Orf;
  m.dof = m.orf ? (kind == RfKind::Orf ? static_cast<std::uint32_t>(n_features) : 1u) : 0u;
  m.inv_sigma = 1.0 / kernel.sigma;
  return m;
}

std::vector<std::size_t> recipe_unit_offsets(const std::vector<MatrixRecipe>& recipes, std::size_t n_rff,
                                             std::size_t n_features) {
  std::vector<std::size_t> offsets(recipes.size() + 1, 0);
  for (std::size_t i = 0; i < recipes.size(); ++i)
    offsets[i + 1] = offsets[i] + recipe_units(recipes[i], n_rff, n_features);
  return offsets;
}

void feature_map(const double* V, std::size_t n_rff, std::size_t n_features, const double* x,
                 double scale, double* z) {
  for (std::size_t i = 0; i < n_rff; ++i) {
    double a = 0.0;
    for (std::size_t k = 0; k < n_features; ++k) a += V[i * n_features + k] * x[k];
    z[i] = scale * std::sin(a);
    z[n_rff + i] = scale * std::cos(a);
  }
}

}  // namespace omkl::detail
