/// @file fast_sincos.cpp
/// @brief Array entry points and run-time dispatch of the fast sin/cos kernels.
#include "cpu/fast_sincos.h"

#include <cstdlib>
#include <cstring>

namespace omkl::detail::cpu {

bool cpu_has_avx2_fma() {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  // libgcc's / compiler-rt's CPU model also checks that the OS saves the YMM state.
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return supported;
#else
  return false;
#endif
}

SimdLevel default_simd_level() {
  static const SimdLevel level = [] {
    const char* forced = std::getenv("OMKL_CPU_SIMD");
    if (forced && std::strcmp(forced, "portable") == 0) return SimdLevel::Portable;
    return cpu_has_avx2_fma() ? SimdLevel::Avx2Fma : SimdLevel::Portable;
  }();
  return level;
}

const char* to_string(SimdLevel level) {
  return level == SimdLevel::Avx2Fma ? "avx2+fma" : "portable";
}

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

OMKL_TARGET_AVX2 void sincos_avx2(const double* a, double* s, double* c, std::size_t n) {
  __m256d range = _mm256_setzero_pd();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256d v[4], sv[4], cv[4];
    for (int j = 0; j < 4; ++j) v[j] = _mm256_loadu_pd(a + i + 4 * j);
    sincos_avx2_n<4>(v, sv, cv);
    for (int j = 0; j < 4; ++j) {
      _mm256_storeu_pd(s + i + 4 * j, sv[j]);
      _mm256_storeu_pd(c + i + 4 * j, cv[j]);
      range = sincos_avx2_track_range(range, v[j]);
    }
  }
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_loadu_pd(a + i);
    __m256d sv, cv;
    sincos4_avx2(v, sv, cv);
    _mm256_storeu_pd(s + i, sv);
    _mm256_storeu_pd(c + i, cv);
    range = sincos_avx2_track_range(range, v);
  }
  if (i < n) {  // the tail through a padded vector, so that every element takes the same path
    alignas(32) double pa[4] = {0.0, 0.0, 0.0, 0.0}, ps[4], pc[4];
    for (std::size_t j = i; j < n; ++j) pa[j - i] = a[j];
    const __m256d v = _mm256_load_pd(pa);
    __m256d sv, cv;
    sincos4_avx2(v, sv, cv);
    _mm256_store_pd(ps, sv);
    _mm256_store_pd(pc, cv);
    for (std::size_t j = i; j < n; ++j) {
      s[j] = ps[j - i];
      c[j] = pc[j - i];
    }
    range = sincos_avx2_track_range(range, v);
  }
  if (sincos_avx2_max_lane(range) > kAvx2FastLimit)
    for (std::size_t j = 0; j < n; ++j)
      if (std::fabs(a[j]) > kAvx2FastLimit) {
        s[j] = std::sin(a[j]);
        c[j] = std::cos(a[j]);
      }
}
#endif

void fast_sincos(SimdLevel level, const double* a, double* s, double* c, std::size_t n) {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  if (level == SimdLevel::Avx2Fma && cpu_has_avx2_fma()) {
    sincos_avx2(a, s, c, n);
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
