/// @file simd_kernels_avx2.cpp
/// @brief The kernels of simd_kernels_impl.h at the avx2 width (V256). CMake compiles this file
/// alone with -mavx2 -mfma; nothing else of the library is compiled with them.
#include "cpu/simd_kernels.h"

#include "cpu/simd_kernels_impl.h"

#if !(defined(__AVX2__) && defined(__FMA__))
#error "simd_kernels_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

namespace omkl::detail::cpu::avx2 {

void exp_array(const double* in, bool neg_div, double divisor, double* out, std::size_t n) {
  if (neg_div)
    cpu::exp_array<V256, true>(in, divisor, out, n);
  else
    cpu::exp_array<V256, false>(in, divisor, out, n);
}

void kernel_rows(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                 double divisor, double* out) {
  kernel_rows_simd<V256>(rows, x, x_norm2, quantity, divisor, out);
}

}  // namespace omkl::detail::cpu::avx2
