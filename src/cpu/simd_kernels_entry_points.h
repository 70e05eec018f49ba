/// @file simd_kernels_entry_points.h
/// @brief The entry points of one SIMD level (simd_kernels.h, SimdSlotKernels of slot_kernels.h),
/// defined on the templates of simd_kernels_impl.h and slot_kernels_simd.h. Included once, at the
/// end, by each per-level file (simd_kernels_avx2.cpp, simd_kernels_avx512.cpp), which first
/// defines OMKL_SIMD_NAMESPACE (avx2, avx512), OMKL_SIMD_VECTOR (V256, V512), OMKL_SIMD_FLOATS
/// (F256, F512), OMKL_SIMD_SINCOS
/// (SinCos256, SinCos512) and OMKL_SIMD_LEVEL (SimdLevel::Avx2Fma, SimdLevel::Avx512).
// No include guard: one inclusion per level file, by design.

#include "cpu/simd_kernels.h"
#include "cpu/simd_kernels_impl.h"
#include "cpu/slot_kernels_simd.h"

namespace omkl::detail::cpu::OMKL_SIMD_NAMESPACE {

void exp_array(const double* in, bool neg_div, double divisor, double* out, std::size_t n) {
  exp_array_simd<OMKL_SIMD_VECTOR>(in, neg_div, divisor, out, n);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows_simd<OMKL_SIMD_VECTOR>(rows, x, x_norm2, quantity, divisor, out);
}

void inner_products(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs) {
  inner_products_simd<OMKL_SIMD_VECTOR>(rows, xs, n_x, outs);
}

void gaussian_from_inner_products(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                  double divisor, double* out) {
  gaussian_from_dots_simd<OMKL_SIMD_VECTOR>(norms2, dots, n, x_norm2, divisor, out);
}

double sincos_array(const double* a, double* s, double* c, std::size_t n) {
  return cpu::sincos_array<OMKL_SIMD_VECTOR>(a, s, c, n);
}

void sincos_float_array(const float* a, float* s, float* c, std::size_t n) {
  cpu::sincos_float_array<OMKL_SIMD_FLOATS>(a, s, c, n);
}

}  // namespace omkl::detail::cpu::OMKL_SIMD_NAMESPACE

namespace omkl::detail::cpu {
namespace {
template <>
struct SinCosOf<OMKL_SIMD_LEVEL> {
  using type = OMKL_SIMD_SINCOS;
};
}  // namespace

OMKL_INSTANTIATE_SIMD_SLOT_KERNELS(OMKL_SIMD_LEVEL)

}  // namespace omkl::detail::cpu
