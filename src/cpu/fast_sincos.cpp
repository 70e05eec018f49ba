/// @file fast_sincos.cpp
/// @brief Array entry points and run-time dispatch of the fast sin/cos kernels.
#include "cpu/fast_sincos.h"

#include "cpu/simd_kernels.h"


namespace omkl::detail::cpu {

#if OMKL_CPU_HAVE_AVX2_KERNELS
OMKL_TARGET_AVX2 void sincos_float_avx2(const float* a, float* s, float* c, std::size_t n) {
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(a + i);
    __m256 sv, cv;
    sincos_float_avx2_n<1>(&v, &sv, &cv);
    _mm256_storeu_ps(s + i, sv);
    _mm256_storeu_ps(c + i, cv);
  }
}

#endif

void fast_sincos(SimdLevel level, const double* a, double* s, double* c, std::size_t n) {
#if OMKL_CPU_HAVE_SIMD_KERNELS
  if (uses_fma_kernels(level) && simd_level_available(level)) {
    const double range = level == SimdLevel::Avx512 ? avx512::sincos_array(a, s, c, n) : avx2::sincos_array(a, s, c, n);
    if (range > kAvx2FastLimit)
      for (std::size_t j = 0; j < n; ++j)
        if (std::fabs(a[j]) > kAvx2FastLimit) {
          s[j] = std::sin(a[j]);
          c[j] = std::cos(a[j]);
        }
    return;
  }
#else
  (void)level;
#endif
  sincos_portable(a, s, c, n);
}

void fast_sincos(const double* a, double* s, double* c, std::size_t n) {
  fast_sincos(default_simd_level(), a, s, c, n);
}

}  // namespace omkl::detail::cpu
