/// @file kernel_rows.cpp
/// @brief Dispatch of kernel_rows() (kernel_rows.h) and its portable path.
#include "cpu/kernel_rows.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "cpu/fast_sincos.h"  // default_simd_level()
#include "cpu/simd_kernels.h"
#include "omkl/error.h"

namespace omkl::detail::cpu {

namespace {

// The portable level's arithmetic: row_dots()' plain column-order sum, Eigen's distance
// expression, and std::exp (fast_exp_neg_div() at that level).
void kernel_rows_portable(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                          double divisor, double* out) {
  const std::size_t d = rows.n_features;
  for (std::size_t i = 0; i < rows.count; ++i) {
    const std::size_t r = rows.first + i;
    const double* row = rows.values + blocked_offset(r, 0, d);
    double value = 0.0;
    for (std::size_t k = 0; k < d; ++k) value += row[k * kBlockRows] * x[k];
    if (quantity != RowQuantity::InnerProduct) {
      value = (rows.norms2[r] + x_norm2) - 2.0 * value;
      value = value < 0.0 ? 0.0 : value;  // std::max(value, 0.0): NaN stays
      if (quantity == RowQuantity::Gaussian) value = std::exp(-value / divisor);
    }
    out[i] = value;
  }
}

}  // namespace

bool cpu_has_avx512() {
#if OMKL_CPU_HAVE_SIMD_KERNELS
  // libgcc's / compiler-rt's CPU model also checks that the OS saves the ZMM state.
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && cpu_has_avx2_fma();
  }();
  return supported;
#else
  return false;
#endif
}

VectorWidth default_vector_width() {
  static const VectorWidth width = [] {
    if (!OMKL_CPU_HAVE_SIMD_KERNELS || default_simd_level() == SimdLevel::Portable) return VectorWidth::Portable;
    const char* forced = std::getenv("OMKL_CPU_SIMD");
    if (forced && std::strcmp(forced, "avx2") == 0) return VectorWidth::Narrow;
    return cpu_has_avx512() ? VectorWidth::Wide : VectorWidth::Narrow;
  }();
  return width;
}

bool vector_width_available(VectorWidth width) {
  switch (width) {
    case VectorWidth::Portable: return true;
    case VectorWidth::Narrow: return OMKL_CPU_HAVE_SIMD_KERNELS && cpu_has_avx2_fma();
    case VectorWidth::Wide: return cpu_has_avx512();
  }
  return false;
}

void kernel_rows(VectorWidth width, const BlockedRows& rows, const double* x, double x_norm2,
                 RowQuantity quantity, double divisor, double* out) {
  if (rows.count == 0) return;
  if (!vector_width_available(width)) throw Error("kernel_rows: this CPU lacks the requested vector width");
#if OMKL_CPU_HAVE_SIMD_KERNELS
  if (width == VectorWidth::Wide) return avx512::kernel_rows(rows, x, x_norm2, quantity, divisor, out);
  if (width == VectorWidth::Narrow) return avx2::kernel_rows(rows, x, x_norm2, quantity, divisor, out);
#endif
  kernel_rows_portable(rows, x, x_norm2, quantity, divisor, out);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows(default_vector_width(), rows, x, x_norm2, quantity, divisor, out);
}

}  // namespace omkl::detail::cpu
