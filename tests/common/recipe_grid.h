/// @file recipe_grid.h
/// @brief The frequency-draw recipe run as the CUDA kernel runs it, over a simulated grid, with
/// the block function as a parameter (the host's Philox, or cuRAND's compiled for the host), and
/// the batches of matrices it is checked on.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "features/frequency_recipe.h"
#include "features/random_features.h"
#include "random/rng.h"
#include "omkl/kernel_spec.h"

namespace omkl::test {

/// The host's Philox block function (rng.h), for PhiloxBlocks.
struct HostPhilox {
  detail::PhiloxWords operator()(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                                 std::uint32_t k0, std::uint32_t k1) const {
    const auto w = detail::philox4x32({c0, c1, c2, c3}, {k0, k1});
    return {w[0], w[1], w[2], w[3]};
  }
};
using HostBlocks = detail::PhiloxBlocks<HostPhilox>;

/// Every matrix of `recipes` as kernels/frequency_draws.cu draws them: draw_recipe_unit() over a
/// simulated grid of `n_threads` threads striding over the units, their scratch interleaved,
/// the threads taken last first (units are self-contained, so the order must not matter).
template <typename Blocks>
std::vector<double> draw_by_recipe(const std::vector<detail::MatrixRecipe>& recipes, std::size_t n_rff,
                                   std::size_t d, std::size_t n_threads) {
  std::vector<double> V(recipes.size() * n_rff * d, std::nan(""));
  std::vector<double> scratch(detail::recipe_scratch_per_thread(d) * n_threads, std::nan(""));
  const std::vector<std::size_t> offsets = detail::recipe_unit_offsets(recipes, n_rff, d);
  const std::size_t total = offsets.back();
  for (std::size_t t = n_threads; t-- > 0;)
    for (std::size_t u = t; u < total; u += n_threads)
      detail::draw_recipe_unit<Blocks>(recipes.data(), offsets.data(), recipes.size(), u, n_rff, d, V.data(),
                                       scratch.data() + t, n_threads);
  return V;
}

/// One batch of matrices: the recipes of two replicates × four kernels (every law, both
/// ORF-capable and not), and the host's draw_frequencies() of each, concatenated.
struct RecipeBatch {
  std::string label;
  detail::RfKind kind = detail::RfKind::Rf;
  std::size_t n_rff = 0, d = 0;
  std::vector<detail::MatrixRecipe> recipes;
  std::vector<KernelFamily> families;  ///< of each matrix's kernel
  std::vector<double> host;
};

/// Every construction (rf, orf, orf_matlab) at sizes with odd D·d, D < d, D not a multiple of
/// d, and d = 1.
inline std::vector<RecipeBatch> recipe_batches() {
  const std::vector<KernelSpec> kernels = {KernelSpec::gaussian(0.7), KernelSpec::laplacian(2.0),
                                           KernelSpec::cauchy(1.5), KernelSpec::gaussian(4.0),
                                           KernelSpec::isotropic_laplacian(0.9)};
  std::vector<RecipeBatch> batches;
  for (detail::RfKind kind : {detail::RfKind::Rf, detail::RfKind::Orf, detail::RfKind::OrfMatlab}) {
    for (auto [n_rff, d] : std::vector<std::pair<std::size_t, std::size_t>>{
             {1, 1}, {5, 3}, {7, 3}, {2, 5}, {50, 17}, {9, 1}, {33, 40}}) {
      RecipeBatch batch;
      batch.label = detail::to_string(kind) + " D=" + std::to_string(n_rff) + " d=" + std::to_string(d);
      batch.kind = kind;
      batch.n_rff = n_rff;
      batch.d = d;
      for (std::uint64_t replicate : {4u, 0u}) {
        for (std::size_t k = 0; k < kernels.size(); ++k) {
          detail::RandomStream rng(11, replicate, detail::RngPurpose::Frequencies, k);
          batch.recipes.push_back(detail::matrix_recipe(kernels[k], d, kind, rng));
          batch.families.push_back(kernels[k].family);
          const std::vector<double> V = detail::draw_frequencies(kernels[k], n_rff, d, kind, rng);
          batch.host.insert(batch.host.end(), V.begin(), V.end());
        }
      }
      batches.push_back(std::move(batch));
    }
  }
  return batches;
}

}  // namespace omkl::test
