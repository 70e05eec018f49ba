/// @file fast_sincos.cpp
/// @brief Array entry points and run-time dispatch of the fast sin/cos kernels.
#include "cpu/fast_sincos.h"

#include "cpu/simd_kernels.h"

namespace omkl::detail::cpu {

void fast_sincos(SimdLevel level, const double* a, double* s, double* c, std::size_t n) {
  if (const SimdKernels* kernels = simd_kernels(level)) {
    if (kernels->sincos_array(a, s, c, n) > kAvx2FastLimit)
      for (std::size_t j = 0; j < n; ++j)
        if (std::fabs(a[j]) > kAvx2FastLimit) {
          s[j] = std::sin(a[j]);
          c[j] = std::cos(a[j]);
        }
    return;
  }
  sincos_portable(a, s, c, n);
}

void fast_sincos(const double* a, double* s, double* c, std::size_t n) {
  fast_sincos(default_simd_level(), a, s, c, n);
}

void fast_sincos_float(SimdLevel level, const float* a, float* s, float* c, std::size_t n) {
  if (const SimdKernels* kernels = simd_kernels(level)) return kernels->sincos_float_array(a, s, c, n);
  for (std::size_t i = 0; i < n; ++i) sincos_float_portable(a[i], s[i], c[i]);
}

}  // namespace omkl::detail::cpu
