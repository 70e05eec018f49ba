/// @file kernel_rows.cpp
/// @brief Dispatch of the kernel-row functions (kernel_rows.h) and their portable path.
#include "cpu/kernel_rows.h"

#include <cmath>

#include "cpu/simd_kernels.h"
#include "omkl/error.h"

namespace omkl::detail::cpu {

namespace {

// The portable level's arithmetic: row_dots()' plain column-order sum, Eigen's distance
// expression, and std::exp (fast_exp_neg_div() at that level).
double portable_distance(double norm2, double x_norm2, double dot) {
  const double value = (norm2 + x_norm2) - 2.0 * dot;
  return value < 0.0 ? 0.0 : value;  // std::max(value, 0.0): NaN stays
}

void kernel_rows_portable(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                          double divisor, double* out) {
  const std::size_t d = rows.n_features;
  for (std::size_t i = 0; i < rows.count; ++i) {
    const std::size_t r = rows.first + i;
    const double* row = rows.values + blocked_offset(r, 0, d);
    double value = 0.0;
    for (std::size_t k = 0; k < d; ++k) value += row[k * kBlockRows] * x[k];
    if (quantity != RowQuantity::InnerProduct) {
      value = portable_distance(rows.norms2[r], x_norm2, value);
      if (quantity == RowQuantity::Gaussian) value = std::exp(-value / divisor);
    }
    out[i] = value;
  }
}

}  // namespace

void kernel_rows(SimdLevel level, const BlockedRows& rows, const double* x, double x_norm2,
                 RowQuantity quantity, double divisor, double* out) {
  if (rows.count == 0) return;
  require_simd_level(level, "kernel rows");
  if (const SimdKernels* kernels = simd_kernels(level))
    return kernels->kernel_rows(rows, x, x_norm2, quantity, divisor, out);
  kernel_rows_portable(rows, x, x_norm2, quantity, divisor, out);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows(default_simd_level(), rows, x, x_norm2, quantity, divisor, out);
}

void inner_products(SimdLevel level, const BlockedRows& rows, const double* const* xs, std::size_t n_x,
                    double* const* outs) {
  if (n_x == 0 || n_x > kMaxInnerProducts) throw Error("inner_products: 1 to 4 samples per pass");
  if (rows.count == 0) return;
  require_simd_level(level, "kernel rows");
  if (const SimdKernels* kernels = simd_kernels(level)) return kernels->inner_products(rows, xs, n_x, outs);
  for (std::size_t q = 0; q < n_x; ++q) kernel_rows_portable(rows, xs[q], 0.0, RowQuantity::InnerProduct, 1.0, outs[q]);
}

void inner_products(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs) {
  inner_products(default_simd_level(), rows, xs, n_x, outs);
}

void gaussian_from_inner_products(SimdLevel level, const double* norms2, const double* dots, std::size_t n,
                                  double x_norm2, double divisor, double* out) {
  require_simd_level(level, "kernel rows");
  if (const SimdKernels* kernels = simd_kernels(level))
    return kernels->gaussian_from_inner_products(norms2, dots, n, x_norm2, divisor, out);
  for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(-portable_distance(norms2[i], x_norm2, dots[i]) / divisor);
}

void gaussian_from_inner_products(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                  double divisor, double* out) {
  gaussian_from_inner_products(default_simd_level(), norms2, dots, n, x_norm2, divisor, out);
}

}  // namespace omkl::detail::cpu
