/// @file fast_exp.cpp
/// @brief The AVX2 + FMA exp kernel and its dispatch (see fast_exp.h).
#include "cpu/fast_exp.h"

#include <cmath>

#include "cpu/fast_sincos.h"  // OMKL_CPU_HAVE_AVX2_KERNELS, default_simd_level()

namespace omkl::detail::cpu {

namespace {

#if OMKL_CPU_HAVE_AVX2_KERNELS
// ln 2 = kLn2Hi + kLn2Lo with kLn2Hi of 32 significant bits (fdlibm's split).
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42feep-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kRoundMagic = 0x1.8p52;
// 1/n! for n = 13 … 2.
constexpr double kInvFactorial[] = {
    1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
    1.0 / 40320.0,      1.0 / 5040.0,      1.0 / 720.0,      1.0 / 120.0,     1.0 / 24.0,
    1.0 / 6.0,          0.5};

OMKL_INLINE_AVX2 __m256d exp4_avx2(__m256d x) {
  // max/min return their second operand when one is NaN: x second keeps NaN.
  x = _mm256_max_pd(_mm256_set1_pd(-746.0), x);
  x = _mm256_min_pd(_mm256_set1_pd(710.0), x);
  const __m256d magic = _mm256_set1_pd(kRoundMagic);
  const __m256d t = _mm256_fmadd_pd(x, _mm256_set1_pd(kLog2e), magic);
  const __m256d k = _mm256_sub_pd(t, magic);
  __m256d r = _mm256_fnmadd_pd(k, _mm256_set1_pd(kLn2Hi), x);
  r = _mm256_fnmadd_pd(k, _mm256_set1_pd(kLn2Lo), r);
  __m256d p = _mm256_set1_pd(kInvFactorial[0]);
  for (int i = 1; i < 12; ++i) p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kInvFactorial[i]));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(1.0));
  // k as a 64-bit integer from the low mantissa bits of t (|k| ≤ 1077 < 2⁵¹), split in halves.
  const __m256i ki = _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_castpd_si256(magic));
  // ⌊k/2⌋ without a 64-bit arithmetic shift (AVX-512 only): k fits in the low 32-bit word and
  // the high word is its sign extension (0 or −1), which a 32-bit arithmetic shift keeps.
  const __m256i k1_64 = _mm256_srai_epi32(ki, 1);
  const __m256i k2_64 = _mm256_sub_epi64(ki, k1_64);
  const __m256i bias = _mm256_set1_epi64x(1023);
  const __m256d s1 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k1_64, bias), 52));
  const __m256d s2 = _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(k2_64, bias), 52));
  return _mm256_mul_pd(_mm256_mul_pd(p, s1), s2);
}

// The argument of lane vector v: v itself, or −v / divisor.
template <bool kNegDiv>
OMKL_INLINE_AVX2 __m256d exp_argument(__m256d v, __m256d divisor) {
  if (!kNegDiv) return v;
  return _mm256_div_pd(_mm256_xor_pd(v, _mm256_set1_pd(-0.0)), divisor);
}

template <bool kNegDiv>
OMKL_TARGET_AVX2 void exp_avx2(const double* in, double divisor, double* out, std::size_t n) {
  const __m256d div = _mm256_set1_pd(divisor);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256d a = exp4_avx2(exp_argument<kNegDiv>(_mm256_loadu_pd(in + i), div));
    const __m256d b = exp4_avx2(exp_argument<kNegDiv>(_mm256_loadu_pd(in + i + 4), div));
    _mm256_storeu_pd(out + i, a);
    _mm256_storeu_pd(out + i + 4, b);
  }
  for (; i + 4 <= n; i += 4)
    _mm256_storeu_pd(out + i, exp4_avx2(exp_argument<kNegDiv>(_mm256_loadu_pd(in + i), div)));
  if (i < n) {  // the tail through a padded vector: every element takes the same path
    alignas(32) double pad[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t j = i; j < n; ++j) pad[j - i] = in[j];
    _mm256_store_pd(pad, exp4_avx2(exp_argument<kNegDiv>(_mm256_load_pd(pad), div)));
    for (std::size_t j = i; j < n; ++j) out[j] = pad[j - i];
  }
}
#endif

}  // namespace

void fast_exp(const double* in, double* out, std::size_t n) {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  if (default_simd_level() == SimdLevel::Avx2Fma) return exp_avx2<false>(in, 1.0, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}

void fast_exp_neg_div(const double* in, double divisor, double* out, std::size_t n) {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  if (default_simd_level() == SimdLevel::Avx2Fma) return exp_avx2<true>(in, divisor, out, n);
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(-in[i] / divisor);
}

}  // namespace omkl::detail::cpu
