/// @file simd_kernels_avx512.cpp
/// @brief The kernels of simd_kernels_impl.h at the avx512 width (V512). CMake compiles this file
/// alone with -mavx512f -mavx2 -mfma; nothing else of the library is compiled with them.
// GCC 12 warns inside its own AVX-512 intrinsics (the deliberately undefined pass-through
// operand of the masked forms, `__m512d __Y = __Y;`): a false positive, silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include "cpu/simd_kernels.h"

#include "cpu/simd_kernels_impl.h"

#if !(defined(__AVX512F__))
#error "simd_kernels_avx512.cpp must be compiled with -mavx512f -mavx2 -mfma"
#endif

namespace omkl::detail::cpu::avx512 {

void exp_array(const double* in, bool neg_div, double divisor, double* out, std::size_t n) {
  if (neg_div)
    cpu::exp_array<V512, true>(in, divisor, out, n);
  else
    cpu::exp_array<V512, false>(in, divisor, out, n);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows_simd<V512>(rows, x, x_norm2, quantity, divisor, out);
}

}  // namespace omkl::detail::cpu::avx512
