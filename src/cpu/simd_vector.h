/// @file simd_vector.h
/// @brief Vectors of doubles as one interface over two widths, V256 (AVX2 + FMA, 4 lanes) and
/// V512 (AVX-512F, 8 lanes), and of floats likewise (F256, F512: the float feature map's sincos), so that a kernel is written once as a template and compiled for
/// each width (kernel_rows_impl.h).
///
/// Only for translation units compiled with the instruction set enabled on the command line
/// (-mavx2 -mfma, or -mavx512f as well): each type exists only where its instructions do. All
/// of it has internal linkage, so a width's code never leaves its own translation unit (two
/// units with different flags would otherwise emit the same inline function twice and the
/// linker could keep the wider one for a narrower caller).
///
/// Each operation is one IEEE operation per lane, the same at both widths: a kernel written on
/// this interface gives the same bits in every lane whichever width runs it.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace omkl::detail::cpu {
namespace {  // internal linkage: see above

#if defined(__AVX2__) && defined(__FMA__)
struct V256 {
  using D = __m256d;
  using I = __m256i;
  static constexpr int kLanes = 4;

  static D zero() { return _mm256_setzero_pd(); }
  static D set1(double v) { return _mm256_set1_pd(v); }
  static D load(const double* p) { return _mm256_loadu_pd(p); }
  static void store(double* p, D v) { _mm256_storeu_pd(p, v); }
  static D add(D a, D b) { return _mm256_add_pd(a, b); }
  static D sub(D a, D b) { return _mm256_sub_pd(a, b); }
  static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static D div(D a, D b) { return _mm256_div_pd(a, b); }
  static D fmadd(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }   // a·b + c
  static D fnmadd(D a, D b, D c) { return _mm256_fnmadd_pd(a, b, c); } // c − a·b
  /// maxpd/minpd: the second operand when either is NaN (or both are zeros).
  static D max(D a, D b) { return _mm256_max_pd(a, b); }
  static D min(D a, D b) { return _mm256_min_pd(a, b); }
  static D negate(D a) { return _mm256_xor_pd(a, _mm256_set1_pd(-0.0)); }
  static D bit_and(D a, D b) { return _mm256_and_pd(a, b); }
  static D bit_xor(D a, D b) { return _mm256_xor_pd(a, b); }
  static D abs(D a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
  /// Per lane: if_set where the sign bit of `mask` is set, else if_clear (blendv).
  static D select_by_sign(D mask, D if_clear, D if_set) { return _mm256_blendv_pd(if_clear, if_set, mask); }
  /// The largest lane.
  static double max_lane(D a) {
    const __m128d m = _mm_max_pd(_mm256_castpd256_pd128(a), _mm256_extractf128_pd(a, 1));
    return _mm_cvtsd_f64(_mm_max_sd(m, _mm_unpackhi_pd(m, m)));
  }
  static I bits(D a) { return _mm256_castpd_si256(a); }
  static D from_bits(I a) { return _mm256_castsi256_pd(a); }
  static I set1_i64(std::int64_t v) { return _mm256_set1_epi64x(v); }
  static I add_i64(I a, I b) { return _mm256_add_epi64(a, b); }
  static I sub_i64(I a, I b) { return _mm256_sub_epi64(a, b); }
  template <int kBits>
  static I shift_left_i64(I a) { return _mm256_slli_epi64(a, kBits); }
  /// Arithmetic shift right by one of each 32-bit half.
  static I halve_i32(I a) { return _mm256_srai_epi32(a, 1); }
};

/// 8 floats (precision=float's feature map).
struct F256 {
  using F = __m256;
  using I = __m256i;
  static constexpr int kLanes = 8;

  static F set1(float v) { return _mm256_set1_ps(v); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm256_fnmadd_ps(a, b, c); }
  static F round_to_nearest(F a) { return _mm256_round_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static I to_int(F a) { return _mm256_cvtps_epi32(a); }
  template <int kBits>
  static F int_shifted_left(I a) { return _mm256_castsi256_ps(_mm256_slli_epi32(a, kBits)); }
  static F bit_and(F a, F b) { return _mm256_and_ps(a, b); }
  static F bit_xor(F a, F b) { return _mm256_xor_ps(a, b); }
  static F select_by_sign(F mask, F if_clear, F if_set) { return _mm256_blendv_ps(if_clear, if_set, mask); }
};
#endif

#if defined(__AVX512F__)
struct V512 {
  using D = __m512d;
  using I = __m512i;
  static constexpr int kLanes = 8;

  static D zero() { return _mm512_setzero_pd(); }
  static D set1(double v) { return _mm512_set1_pd(v); }
  static D load(const double* p) { return _mm512_loadu_pd(p); }
  static void store(double* p, D v) { _mm512_storeu_pd(p, v); }
  static D add(D a, D b) { return _mm512_add_pd(a, b); }
  static D sub(D a, D b) { return _mm512_sub_pd(a, b); }
  static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  static D div(D a, D b) { return _mm512_div_pd(a, b); }
  static D fmadd(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static D fnmadd(D a, D b, D c) { return _mm512_fnmadd_pd(a, b, c); }
  static D max(D a, D b) { return _mm512_max_pd(a, b); }
  static D min(D a, D b) { return _mm512_min_pd(a, b); }
  // Through the integer xor: the double one needs AVX-512DQ.
  static D negate(D a) { return from_bits(_mm512_xor_si512(bits(a), _mm512_set1_epi64(INT64_MIN))); }
  static D bit_and(D a, D b) { return from_bits(_mm512_and_si512(bits(a), bits(b))); }
  static D bit_xor(D a, D b) { return from_bits(_mm512_xor_si512(bits(a), bits(b))); }
  static D abs(D a) { return from_bits(_mm512_andnot_si512(_mm512_set1_epi64(INT64_MIN), bits(a))); }
  static D select_by_sign(D mask, D if_clear, D if_set) {
    return _mm512_mask_blend_pd(_mm512_test_epi64_mask(bits(mask), _mm512_set1_epi64(INT64_MIN)), if_clear, if_set);
  }
  static double max_lane(D a) { return _mm512_reduce_max_pd(a); }
  static I bits(D a) { return _mm512_castpd_si512(a); }
  static D from_bits(I a) { return _mm512_castsi512_pd(a); }
  static I set1_i64(std::int64_t v) { return _mm512_set1_epi64(v); }
  static I add_i64(I a, I b) { return _mm512_add_epi64(a, b); }
  static I sub_i64(I a, I b) { return _mm512_sub_epi64(a, b); }
  template <int kBits>
  static I shift_left_i64(I a) { return _mm512_slli_epi64(a, kBits); }
  static I halve_i32(I a) { return _mm512_srai_epi32(a, 1); }
};

/// 16 floats.
struct F512 {
  using F = __m512;
  using I = __m512i;
  static constexpr int kLanes = 16;

  static F set1(float v) { return _mm512_set1_ps(v); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static F fmadd(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static F fnmadd(F a, F b, F c) { return _mm512_fnmadd_ps(a, b, c); }
  static F round_to_nearest(F a) { return _mm512_roundscale_ps(a, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); }
  static I to_int(F a) { return _mm512_cvtps_epi32(a); }
  template <int kBits>
  static F int_shifted_left(I a) { return _mm512_castsi512_ps(_mm512_slli_epi32(a, kBits)); }
  // Through the integer forms: the float ones need AVX-512DQ.
  static F bit_and(F a, F b) { return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static F bit_xor(F a, F b) { return _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static F select_by_sign(F mask, F if_clear, F if_set) {
    return _mm512_mask_blend_ps(_mm512_test_epi32_mask(_mm512_castps_si512(mask), _mm512_set1_epi32(INT32_MIN)),
                                if_clear, if_set);
  }
};
#endif

}  // namespace
}  // namespace omkl::detail::cpu
