/// @file kernel_rows.h
/// @brief Kernel values between one sample and every stored row of a support set, from the
/// rows in a blocked layout: the inner loop of the exact-kernel learners (the baselines, and
/// OKS / OKS++ / IOKS, whose run time is almost all Σ_τ α_τ·exp(−‖x − x_τ‖²/2σ²)).
///
/// Layout. Rows are grouped in blocks of kBlockRows = 8; inside a block the values are stored
/// feature by feature, so feature k of the block's 8 rows is one contiguous vector:
///   value(row r, feature k) = blocked[(r / 8)·8d + 8k + r mod 8].
/// One vector FMA then advances 4 or 8 rows at once, with no horizontal sum per row.
///
/// Bits. A row's inner product is formed exactly as row_dots() forms it on the same machine
/// (row_dots.h): with AVX2 + FMA, four partial sums over the columns k ≡ 0, 1, 2, 3 (mod 4),
/// each an FMA chain in column order (the masked tail adds 0·0 to the partial sums it does not
/// reach), combined as (s₀ + s₂) + (s₁ + s₃); portable, one sum in column order. The squared
/// distance is max((‖x_τ‖² + ‖x‖²) − 2·x_τᵀx, 0) and the Gaussian value exp(−dist/divisor)
/// through fast_exp_neg_div()'s kernel. So every result equals, bit for bit, row_dots() and
/// fast_exp_neg_div() applied to the row-major rows: changing the layout changed no learner's
/// numbers. At SimdLevel::Avx512 the kernels do the same operations eight lanes at a time and
/// give the same bits as at Avx2Fma (tested).
#pragma once

#include <cstddef>

#include "cpu/simd_level.h"

namespace omkl::detail::cpu {

/// Rows per block of the blocked layout.
constexpr std::size_t kBlockRows = 8;

/// Offset of (row, feature) in a blocked array of rows with d features.
inline std::size_t blocked_offset(std::size_t row, std::size_t feature, std::size_t d) {
  return (row / kBlockRows) * kBlockRows * d + feature * kBlockRows + row % kBlockRows;
}

/// A view of rows first .. first + count − 1 of a blocked array. `values` and `norms2` (‖row‖²
/// by absolute row) must be readable for every row of the blocks those rows touch; only the
/// requested rows' results are written.
struct BlockedRows {
  const double* values = nullptr;
  const double* norms2 = nullptr;
  std::size_t n_features = 0;
  std::size_t first = 0;
  std::size_t count = 0;
};

/// What kernel_rows() computes per row.
enum class RowQuantity {
  InnerProduct,     ///< x_τᵀx
  SquaredDistance,  ///< max((‖x_τ‖² + ‖x‖²) − 2·x_τᵀx, 0)
  Gaussian,         ///< exp(−(squared distance) / divisor)
};

/// out[i] = the quantity for row rows.first + i, i < rows.count.
void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out);
/// Same at an explicit level (which must be available: tests compare the levels).
void kernel_rows(SimdLevel level, const BlockedRows& rows, const double* x, double x_norm2,
                 RowQuantity quantity, double divisor, double* out);

/// Most samples inner_products() takes in one pass.
constexpr std::size_t kMaxInnerProducts = 4;

/// outs[q][i] = the inner product of xs[q] with row rows.first + i, for n_x ≤ kMaxInnerProducts
/// samples in one pass over the rows (each load serves every sample): for a support set too
/// large for the cache, the inner products of the next rounds' samples cost little more than
/// this round's. Each result has the bits of kernel_rows(…, InnerProduct, …) for its sample.
void inner_products(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs);
void inner_products(SimdLevel level, const BlockedRows& rows, const double* const* xs, std::size_t n_x,
                    double* const* outs);

/// out[i] = exp(−max((norms2[i] + ‖x‖²) − 2·dots[i], 0) / divisor): the Gaussian values of
/// kernel_rows() from inner products computed before (same bits).
void gaussian_from_inner_products(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                  double divisor, double* out);
void gaussian_from_inner_products(SimdLevel level, const double* norms2, const double* dots, std::size_t n,
                                  double x_norm2, double divisor, double* out);

}  // namespace omkl::detail::cpu
