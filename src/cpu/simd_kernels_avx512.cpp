/// @file simd_kernels_avx512.cpp
/// @brief The kernels of simd_kernels_impl.h at the avx512 width (V512). CMake compiles this file
/// alone with -mavx512f -mavx2 -mfma; nothing else of the library is compiled with them.

// GCC 12 warns inside its own AVX-512 intrinsics (the deliberately undefined pass-through
// operand of the masked forms, `__m512d __Y = __Y;`): a false positive, silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "cpu/simd_kernels.h"

#if OMKL_CPU_HAVE_SIMD_KERNELS
#include "cpu/simd_kernels_impl.h"
#include "cpu/slot_kernels_simd.h"

#if !(defined(__AVX512F__))
#error "simd_kernels_avx512.cpp must be compiled with -mavx512f -mavx2 -mfma"
#endif

namespace omkl::detail::cpu::avx512 {

void exp_array(const double* in, bool neg_div, double divisor, double* out, std::size_t n) {
  exp_array_simd<V512>(in, neg_div, divisor, out, n);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows_simd<V512>(rows, x, x_norm2, quantity, divisor, out);
}

void inner_products(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs) {
  inner_products_simd<V512>(rows, xs, n_x, outs);
}

void gaussian_from_inner_products(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                  double divisor, double* out) {
  gaussian_from_dots_simd<V512>(norms2, dots, n, x_norm2, divisor, out);
}

double sincos_array(const double* a, double* s, double* c, std::size_t n) {
  return cpu::sincos_array<V512>(a, s, c, n);
}

}  // namespace omkl::detail::cpu::avx512

namespace omkl::detail::cpu {
namespace {
template <>
struct SinCosOf<SimdLevel::Avx512> {
  using type = SinCos512;
};
}  // namespace

OMKL_INSTANTIATE_SIMD_SLOT_KERNELS(SimdLevel::Avx512)

}  // namespace omkl::detail::cpu

#endif  // OMKL_CPU_HAVE_SIMD_KERNELS
