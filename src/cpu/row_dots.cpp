/// @file row_dots.cpp
/// @brief The AVX2 + FMA row-dot kernel and its dispatch (see row_dots.h).
#include "cpu/row_dots.h"

#include "cpu/fast_sincos.h"  // OMKL_CPU_HAVE_AVX2_KERNELS, default_simd_level()

namespace omkl::detail::cpu {

namespace {

#if OMKL_CPU_HAVE_AVX2_KERNELS
// Lanes of the masked load for the last d mod 4 columns: lane j is loaded iff j < tail.
OMKL_INLINE_AVX2 __m256i tail_mask(std::size_t tail) {
  const __m256i lanes = _mm256_set_epi64x(3, 2, 1, 0);
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(tail)), lanes);
}

// Rows r .. r + N − 1 (N ≤ 4) against x: per row one 4-lane accumulator over the full
// 4-column blocks, then the masked tail, then the horizontal sum.
template <int N>
OMKL_INLINE_AVX2 void dots_n(const double* rows, std::size_t d, const double* x, __m256i mask, double* out) {
  __m256d acc[N];
  for (int j = 0; j < N; ++j) acc[j] = _mm256_setzero_pd();
  const std::size_t full = d / 4 * 4;
  for (std::size_t k = 0; k < full; k += 4) {
    const __m256d xv = _mm256_loadu_pd(x + k);
    for (int j = 0; j < N; ++j) acc[j] = _mm256_fmadd_pd(_mm256_loadu_pd(rows + j * d + k), xv, acc[j]);
  }
  if (full < d) {
    const __m256d xv = _mm256_maskload_pd(x + full, mask);
    for (int j = 0; j < N; ++j)
      acc[j] = _mm256_fmadd_pd(_mm256_maskload_pd(rows + j * d + full, mask), xv, acc[j]);
  }
  for (int j = 0; j < N; ++j) {
    const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(acc[j]), _mm256_extractf128_pd(acc[j], 1));
    out[j] = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  }
}

OMKL_TARGET_AVX2 void row_dots_avx2(const double* rows, std::size_t n_rows, std::size_t d, const double* x,
                                    double* out) {
  const __m256i mask = tail_mask(d % 4);
  std::size_t i = 0;
  for (; i + 4 <= n_rows; i += 4) dots_n<4>(rows + i * d, d, x, mask, out + i);
  for (; i < n_rows; ++i) dots_n<1>(rows + i * d, d, x, mask, out + i);
}
#endif

}  // namespace

void row_dots(const double* rows, std::size_t n_rows, std::size_t d, const double* x, double* out) {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  if (uses_fma_kernels(default_simd_level())) return row_dots_avx2(rows, n_rows, d, x, out);
#endif
  for (std::size_t i = 0; i < n_rows; ++i) {
    double sum = 0.0;
    for (std::size_t k = 0; k < d; ++k) sum += rows[i * d + k] * x[k];
    out[i] = sum;
  }
}

}  // namespace omkl::detail::cpu
