/// @file slot_kernels_simd.h
/// @brief The CPU random-feature backend's kernels at the FMA levels (Avx2Fma, Avx512), written
/// once: VectorSlotKernels<SinCos> is the feature map, the fused per-slot pass, the float map and
/// the θ updates, with the sincos of the feature map (double and float) taken from SinCos (4
/// doubles or 8 floats per vector at Avx2Fma, pairs of those vectors packed into 512-bit ones at
/// Avx512: the same arithmetic per lane, so the same bits). Every sum is formed over 4-lane
/// vectors in column order at both levels, which keeps θ·u and ‖θ‖² bit-identical too.
///
/// Included only by simd_kernels_avx2.cpp and simd_kernels_avx512.cpp (compiled with the
/// instruction sets on the command line); internal linkage, as simd_vector.h. The entry points
/// are SimdSlotKernels<level> (slot_kernels.h), defined at the end of this file for the level
/// whose SinCosOf<level> the including file provides.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>  // std::integral_constant only

#include "cpu/fast_sincos.h"  // the float sincos, kAvx2FastLimit
#include "cpu/simd_kernels_impl.h"
#include "cpu/slot_kernels.h"

// Register-level helpers are always inlined into the entry points (as in the AVX2 kernels
// before them: a call would pass the vectors through memory).
#define OMKL_ALWAYS_INLINE __attribute__((always_inline)) inline
// The per-d passes stay functions of their own (one per d), each small enough for the register
// allocator; inlined into their dispatcher they would make one large function that spills.
#define OMKL_NOINLINE __attribute__((noinline))
// A group's lambda is inlined too: called, its accumulators would live in memory and every FMA
// of the θ sums would wait on a store and a load.
#define OMKL_LAMBDA_INLINE __attribute__((always_inline))

namespace omkl::detail::cpu {
namespace {

/// The sincos of N vectors of 4 doubles (apply) or 8 floats (apply_float), on 256-bit vectors;
/// kGroup and kFloatGroup: vectors per group of the feature map.
struct SinCos256 {
  static constexpr std::size_t kGroup = 4;
  static constexpr std::size_t kFloatGroup = 2;  // 8-float vectors per group of the float map
  template <int N>
  OMKL_ALWAYS_INLINE static void apply(const __m256d* a, __m256d* s, __m256d* c) {
    sincos_lanes<V256, N>(a, s, c);
  }
  template <int N>
  OMKL_ALWAYS_INLINE static void apply_float(const __m256* a, __m256* s, __m256* c) {
    sincos_float_lanes<F256, N>(a, s, c);
  }
};

#if defined(__AVX512F__)
/// The same, two 4-lane vectors packed into each 8-lane one (two 8-float vectors into each
/// 16-float one).
struct SinCos512 {
  static constexpr std::size_t kGroup = 8;
  static constexpr std::size_t kFloatGroup = 4;
  template <int N>
  OMKL_ALWAYS_INLINE static void apply_float(const __m256* a, __m256* s, __m256* c) {
    constexpr int M = (N + 1) / 2;
    __m512 wide[M], ws[M], wc[M];
    // Through the double forms of insert and extract: the float ones need AVX-512DQ.
    for (int j = 0; j < M; ++j) {
      const __m512d low = _mm512_castpd256_pd512(_mm256_castps_pd(a[2 * j]));
      wide[j] = _mm512_castpd_ps(2 * j + 1 < N ? _mm512_insertf64x4(low, _mm256_castps_pd(a[2 * j + 1]), 1)
                                               : _mm512_zextpd256_pd512(_mm256_castps_pd(a[2 * j])));
    }
    sincos_float_lanes<F512, M>(wide, ws, wc);
    for (int j = 0; j < M; ++j) {
      s[2 * j] = _mm512_castps512_ps256(ws[j]);
      c[2 * j] = _mm512_castps512_ps256(wc[j]);
      if (2 * j + 1 < N) {
        s[2 * j + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(ws[j]), 1));
        c[2 * j + 1] = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(wc[j]), 1));
      }
    }
  }
  template <int N>
  OMKL_ALWAYS_INLINE static void apply(const __m256d* a, __m256d* s, __m256d* c) {
    constexpr int M = (N + 1) / 2;
    __m512d wide[M], ws[M], wc[M];
    for (int j = 0; j < M; ++j)
      wide[j] = 2 * j + 1 < N ? _mm512_insertf64x4(_mm512_castpd256_pd512(a[2 * j]), a[2 * j + 1], 1)
                              : _mm512_zextpd256_pd512(a[2 * j]);
    sincos_lanes<V512, M>(wide, ws, wc);
    for (int j = 0; j < M; ++j) {
      s[2 * j] = _mm512_castpd512_pd256(ws[j]);
      c[2 * j] = _mm512_castpd512_pd256(wc[j]);
      if (2 * j + 1 < N) {
        s[2 * j + 1] = _mm512_extractf64x4_pd(ws[j], 1);
        c[2 * j + 1] = _mm512_extractf64x4_pd(wc[j], 1);
      }
    }
  }
};
#endif

/// The slot kernels of the FMA levels (intrinsics: every FMA is explicit, nothing left to
/// contraction), with the sincos of the feature map from SinCos.
template <class SinCos>
struct VectorSlotKernels {
  static constexpr double kFastLimit = kAvx2FastLimit;

  OMKL_ALWAYS_INLINE static double hsum(__m256d v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  // Vectors (of 4 angles) per group in the feature map: independent FMA chains side by side
  // (measured on Zen 3 with AVX2: 1 → 2 → 4 vectors per group, about 10% faster end to end).
  static constexpr std::size_t kGroup = SinCos::kGroup;

  // f(std::integral_constant<int, n>) for a group of n = 1 … kGroup vectors.
  template <class F>
  OMKL_ALWAYS_INLINE static void with_group(std::size_t n, const F& f) {
    static_assert(kGroup <= 8, "group sizes up to 8");
    switch (n) {
      case 8: if constexpr (kGroup >= 8) return f(std::integral_constant<int, 8>{}); break;
      case 7: if constexpr (kGroup >= 7) return f(std::integral_constant<int, 7>{}); break;
      case 6: if constexpr (kGroup >= 6) return f(std::integral_constant<int, 6>{}); break;
      case 5: if constexpr (kGroup >= 5) return f(std::integral_constant<int, 5>{}); break;
      case 4: return f(std::integral_constant<int, 4>{});
      case 3: return f(std::integral_constant<int, 3>{});
      case 2: return f(std::integral_constant<int, 2>{});
      default: break;
    }
    f(std::integral_constant<int, 1>{});
  }

  // f(std::integral_constant<int, d>) with the projection fully unrolled for d ≤ 8, else
  // f(std::integral_constant<int, 0>) (d at run time).
  template <class F>
  OMKL_ALWAYS_INLINE static void with_features(std::size_t d, const F& f) {
    switch (d) {
      case 1: return f(std::integral_constant<int, 1>{});
      case 2: return f(std::integral_constant<int, 2>{});
      case 3: return f(std::integral_constant<int, 3>{});
      case 4: return f(std::integral_constant<int, 4>{});
      case 5: return f(std::integral_constant<int, 5>{});
      case 6: return f(std::integral_constant<int, 6>{});
      case 7: return f(std::integral_constant<int, 7>{});
      case 8: return f(std::integral_constant<int, 8>{});
      default: return f(std::integral_constant<int, 0>{});
    }
  }

  // Angles of a group of N vectors whose frequency blocks start at v. kD: the number of
  // features when known at compile time (0: d).
  template <int N, int kD>
  OMKL_ALWAYS_INLINE static void project(const double* v, const double* x, std::size_t d, __m256d* a) {
    const std::size_t dd = kD > 0 ? static_cast<std::size_t>(kD) : d;
    const __m256d x0 = _mm256_set1_pd(x[0]);
    for (int l = 0; l < N; ++l) a[l] = _mm256_mul_pd(x0, _mm256_load_pd(v + 4 * dd * l));
    for (std::size_t k = 1; k < dd; ++k) {
      const __m256d xk = _mm256_set1_pd(x[k]);
      for (int l = 0; l < N; ++l)
        a[l] = _mm256_fmadd_pd(xk, _mm256_load_pd(v + 4 * (dd * l + k)), a[l]);
    }
  }

  // Features of a group of N vectors (4N angles) starting at column j into u. kStore: keep
  // the angles.
  template <int N, int kD, bool kStore>
  OMKL_ALWAYS_INLINE static void features_group(const double* v, const double* x, std::size_t d,
                                              std::size_t padded, std::size_t j, double* angle,
                                              double* u) {
    __m256d a[N], s[N], c[N];
    project<N, kD>(v, x, d, a);
    if (kStore)
      for (int l = 0; l < N; ++l) _mm256_store_pd(angle + j + 4 * l, a[l]);
    SinCos::template apply<N>(a, s, c);
    for (int l = 0; l < N; ++l) {
      _mm256_store_pd(u + j + 4 * l, s[l]);
      _mm256_store_pd(u + padded + j + 4 * l, c[l]);
    }
  }

  // One slot against the features of a group: if `pending`, first θ ← sh·θ − g·u_prev (the
  // previous step's update, exactly as update() does it), then acc[0] += θ_sin·s + θ_cos·c
  // and acc[1] += θ_sin² + θ_cos², vector by vector in column order. (Two accumulators, not
  // four: fewer registers, and the chains still hide behind the sin/cos work.)
  template <int N>
  OMKL_ALWAYS_INLINE static void slot_group(double* theta, const double* u_prev, bool pending,
                                          __m256d sh, __m256d g, std::size_t padded,
                                          std::size_t j, const __m256d* s, const __m256d* c,
                                          __m256d* acc) {
    for (int l = 0; l < N; ++l) {
      double* ts_ptr = theta + j + 4 * l;
      double* tc_ptr = ts_ptr + padded;
      __m256d ts = _mm256_load_pd(ts_ptr), tc = _mm256_load_pd(tc_ptr);
      if (pending) {
        const double* us = u_prev + j + 4 * l;
        ts = _mm256_fnmadd_pd(g, _mm256_load_pd(us), _mm256_mul_pd(sh, ts));
        tc = _mm256_fnmadd_pd(g, _mm256_load_pd(us + padded), _mm256_mul_pd(sh, tc));
        _mm256_store_pd(ts_ptr, ts);
        _mm256_store_pd(tc_ptr, tc);
      }
      acc[0] = _mm256_fmadd_pd(tc, c[l], _mm256_fmadd_pd(ts, s[l], acc[0]));
      acc[1] = _mm256_fmadd_pd(tc, tc, _mm256_fmadd_pd(ts, ts, acc[1]));
    }
  }

  // features_group and slot_group in one go, the features never leaving the registers
  // (they are stored to u for the next step's update).
  template <int N, int kD>
  OMKL_ALWAYS_INLINE static void fused_group(const double* v, const double* x, std::size_t d,
                                           std::size_t padded, std::size_t j, double* u,
                                           double* theta, const double* u_prev, bool pending,
                                           __m256d sh, __m256d g, __m256d* acc) {
    __m256d a[N], s[N], c[N];
    project<N, kD>(v, x, d, a);
    SinCos::template apply<N>(a, s, c);
    for (int l = 0; l < N; ++l) {
      _mm256_store_pd(u + j + 4 * l, s[l]);
      _mm256_store_pd(u + padded + j + 4 * l, c[l]);
    }
    slot_group<N>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
  }

  // Group sizes: kGroup vectors, except that a remainder of one vector after full groups is
  // merged into the last group (4 + 1 → 3 + 2), since a lone vector is latency-bound.
  static std::size_t next_group(std::size_t left) {
    std::size_t g = left < kGroup ? left : kGroup;
    if (left == kGroup + 1 && kGroup >= 3) g = kGroup - 1;
    return g;
  }

  OMKL_ALWAYS_INLINE static void finish(const __m256d* acc, double& dot, double& norm2) {
    dot = hsum(acc[0]);
    norm2 = hsum(acc[1]);
  }

  template <int kD>
  OMKL_NOINLINE static void fused_pass_d(const double* v, const double* x, std::size_t d,
                                            std::size_t padded, double* u, double* theta,
                                            const double* u_prev, bool pending, double shrink,
                                            double gain, double& dot, double& norm2) {
    __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    for (std::size_t j = 0, left = padded / 4; left > 0;) {
      const std::size_t n = next_group(left);
      with_group(n, [&](auto group) OMKL_LAMBDA_INLINE {
        fused_group<decltype(group)::value, kD>(v, x, d, padded, j, u, theta, u_prev, pending, sh, g, acc);
      });
      j += 4 * n;
      v += 4 * d * n;
      left -= n;
    }
    finish(acc, dot, norm2);
  }

  /// For a kernel with a single slot, at one step: u = [sin | cos](V x) (angles within the
  /// fast range), with the slot's pending update θ ← shrink·θ − gain·u_prev applied on the
  /// way (if `pending`), and θ·u, ‖θ‖² of the updated θ. Gives the same bits as
  /// loaded_pass() on the same u.
  static void fused_pass(const double* v, const double* x, std::size_t d,
                                          std::size_t n_rff, std::size_t padded, double* u,
                                          double* theta, const double* u_prev, bool pending,
                                          double shrink, double gain, double& dot,
                                          double& norm2) {
    with_features(d, [&](auto features) {
      fused_pass_d<decltype(features)::value>(v, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2);
    });
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  /// The slot part of fused_pass() on features already in u (the checked path and predict).
  static void loaded_pass(const double* u, std::size_t padded, double* theta,
                                           const double* u_prev, bool pending, double shrink,
                                           double gain, double& dot, double& norm2) {
    __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    for (std::size_t j = 0; j < padded; j += 4) {
      const __m256d s = _mm256_load_pd(u + j), c = _mm256_load_pd(u + padded + j);
      slot_group<1>(theta, u_prev, pending, sh, g, padded, j, &s, &c, acc);
    }
    finish(acc, dot, norm2);
  }

  // precision=float: N vectors of 8 angles from the float V blocks, their float sin/cos
  // widened to double (2N vectors of 4 each) and stored into u; kHalf (N = 1): the block is the
  // last and only its first 4 rows are within the padding, so only they are stored.
  template <int N, int kD, bool kHalf = false>
  OMKL_ALWAYS_INLINE static void float_features_wide(const float* vf, const double* x, std::size_t d,
                                                   std::size_t padded, std::size_t j, double* u,
                                                   __m256d* s_wide, __m256d* c_wide) {
    const std::size_t dd = kD > 0 ? static_cast<std::size_t>(kD) : d;
    __m256 a[N], s[N], c[N];
    const __m256 x0 = _mm256_set1_ps(static_cast<float>(x[0]));
    for (int l = 0; l < N; ++l) a[l] = _mm256_mul_ps(x0, _mm256_load_ps(vf + 8 * dd * l));
    for (std::size_t k = 1; k < dd; ++k) {
      const __m256 xk = _mm256_set1_ps(static_cast<float>(x[k]));
      for (int l = 0; l < N; ++l) a[l] = _mm256_fmadd_ps(xk, _mm256_load_ps(vf + 8 * (dd * l + k)), a[l]);
    }
    SinCos::template apply_float<N>(a, s, c);
    for (int l = 0; l < N; ++l) {
      s_wide[2 * l] = _mm256_cvtps_pd(_mm256_castps256_ps128(s[l]));
      s_wide[2 * l + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(s[l], 1));
      c_wide[2 * l] = _mm256_cvtps_pd(_mm256_castps256_ps128(c[l]));
      c_wide[2 * l + 1] = _mm256_cvtps_pd(_mm256_extractf128_ps(c[l], 1));
      for (int h = 0; h < (kHalf ? 1 : 2); ++h) {
        _mm256_store_pd(u + j + 8 * l + 4 * h, s_wide[2 * l + h]);
        _mm256_store_pd(u + padded + j + 8 * l + 4 * h, c_wide[2 * l + h]);
      }
    }
  }

  template <int N, int kD, bool kHalf = false>
  OMKL_ALWAYS_INLINE static void features_float_group(const float* vf, const double* x, std::size_t d,
                                                    std::size_t padded, std::size_t j, double* u) {
    __m256d s[2 * N], c[2 * N];
    float_features_wide<N, kD, kHalf>(vf, x, d, padded, j, u, s, c);
  }

  // fused_pass_d for the float map: the widened features go straight into slot_group, in
  // column order, so the sums are those loaded_pass() makes from the stored u.
  template <int kD>
  OMKL_NOINLINE static void fused_float_pass_d(const float* vf, const double* x, std::size_t d,
                                                  std::size_t padded, double* u, double* theta,
                                                  const double* u_prev, bool pending, double shrink,
                                                  double gain, double& dot, double& norm2) {
    __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    constexpr std::size_t G = SinCos::kFloatGroup;  // blocks of 8 rows per group
    __m256d s[2 * G], c[2 * G];
    std::size_t j = 0, left = padded / 8;
    for (; left >= G; left -= G, j += 8 * G, vf += 8 * G * d) {
      float_features_wide<static_cast<int>(G), kD>(vf, x, d, padded, j, u, s, c);
      slot_group<static_cast<int>(2 * G)>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
    }
    for (; left > 0; --left, j += 8, vf += 8 * d) {
      float_features_wide<1, kD>(vf, x, d, padded, j, u, s, c);
      slot_group<2>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
    }
    if (j < padded) {  // padded = 8m + 4: half a block left
      float_features_wide<1, kD, true>(vf, x, d, padded, j, u, s, c);
      slot_group<1>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
    }
    finish(acc, dot, norm2);
  }

  /// fused_pass() with the float feature map (precision=float; angles within kFloatFastLimit).
  static void fused_float_pass(const float* vf, const double* x, std::size_t d,
                                                std::size_t n_rff, std::size_t padded, double* u,
                                                double* theta, const double* u_prev, bool pending,
                                                double shrink, double gain, double& dot, double& norm2) {
    with_features(d, [&](auto features) {
      fused_float_pass_d<decltype(features)::value>(vf, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot,
                                                    norm2);
    });
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  template <int kD>
  OMKL_NOINLINE static void features_float_d(const float* vf, const double* x, std::size_t d,
                                                std::size_t padded, double* u) {
    constexpr std::size_t G = SinCos::kFloatGroup;
    std::size_t j = 0, left = padded / 8;
    for (; left >= G; left -= G, j += 8 * G, vf += 8 * G * d)
      features_float_group<static_cast<int>(G), kD>(vf, x, d, padded, j, u);
    for (; left > 0; --left, j += 8, vf += 8 * d) features_float_group<1, kD>(vf, x, d, padded, j, u);
    if (j < padded) features_float_group<1, kD, true>(vf, x, d, padded, j, u);  // half a block
  }

  /// PortableKernels::features_float with 8- or 16-lane float arithmetic.
  static void features_float(const float* vf, const double* x, std::size_t d,
                                              std::size_t n_rff, std::size_t padded, double* u) {
    with_features(d, [&](auto features) { features_float_d<decltype(features)::value>(vf, x, d, padded, u); });
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  template <int kD, bool kChecked>
  OMKL_NOINLINE static void features_d(const double* v, const double* x, std::size_t d,
                                          std::size_t padded, double* angle, double* u) {
    std::size_t j = 0, left = padded / 4;
    while (left > 0) {
      const std::size_t g = next_group(left);
      with_group(g, [&](auto group) OMKL_LAMBDA_INLINE {
        features_group<decltype(group)::value, kD, kChecked>(v, x, d, padded, j, angle, u);
      });
      j += 4 * g;
      v += 4 * d * g;
      left -= g;
    }
  }

  /// angle = V x, u = [sin angle | cos angle]. kChecked: some |angle| may exceed kFastLimit
  /// (the caller's bound says so); those entries are redone with std::sin/std::cos.
  template <bool kChecked>
  static void features(const double* v, const double* x, std::size_t d,
                                        std::size_t n_rff, std::size_t padded, double* angle,
                                        double* u) {
    with_features(d, [&](auto features) {
      features_d<decltype(features)::value, kChecked>(v, x, d, padded, angle, u);
    });
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
    if (kChecked)
      for (std::size_t i = 0; i < n_rff; ++i)
        if (std::fabs(angle[i]) > kFastLimit) {
          u[i] = std::sin(angle[i]);
          u[padded + i] = std::cos(angle[i]);
        }
  }

  template <bool kNorm>
  OMKL_ALWAYS_INLINE static void dot_norm(const double* theta, const double* u, std::size_t n,
                                        double& dot, double& norm2) {
    __m256d sd[4], sn[4];
    for (int l = 0; l < 4; ++l) sd[l] = sn[l] = _mm256_setzero_pd();
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
      for (int l = 0; l < 4; ++l) {
        const __m256d t = _mm256_load_pd(theta + i + 4 * l);
        sd[l] = _mm256_fmadd_pd(t, _mm256_load_pd(u + i + 4 * l), sd[l]);
        if (kNorm) sn[l] = _mm256_fmadd_pd(t, t, sn[l]);
      }
    for (int l = 0; i < n; i += 4, ++l) {  // n is a multiple of 8: 0 or 2 vectors left
      const __m256d t = _mm256_load_pd(theta + i);
      sd[l] = _mm256_fmadd_pd(t, _mm256_load_pd(u + i), sd[l]);
      if (kNorm) sn[l] = _mm256_fmadd_pd(t, t, sn[l]);
    }
    dot = hsum(_mm256_add_pd(_mm256_add_pd(sd[0], sd[1]), _mm256_add_pd(sd[2], sd[3])));
    norm2 = kNorm ? hsum(_mm256_add_pd(_mm256_add_pd(sn[0], sn[1]), _mm256_add_pd(sn[2], sn[3])))
                  : 0.0;
  }

  template <bool kNorm>
  static void dot_norm_fn(const double* theta, const double* u, std::size_t n,
                                           double& dot, double& norm2) {
    dot_norm<kNorm>(theta, u, n, dot, norm2);
  }

  static void update(double* theta, const double* u, std::size_t n,
                                      double shrink, double gain) {
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    for (std::size_t i = 0; i < n; i += 4) {
      const __m256d t = _mm256_mul_pd(sh, _mm256_load_pd(theta + i));
      _mm256_store_pd(theta + i, _mm256_fnmadd_pd(g, _mm256_load_pd(u + i), t));
    }
  }

  // One vector of update_dot_norm: θ ← sh·θ − g·u_prev as update() computes it, then the sums
  // as dot_norm() accumulates them.
  template <bool kNorm>
  OMKL_ALWAYS_INLINE static void update_dot_vector(double* theta, const double* u_prev, const double* u,
                                                 __m256d sh, __m256d g, __m256d& sd, __m256d& sn) {
    const __m256d t = _mm256_fnmadd_pd(g, _mm256_load_pd(u_prev), _mm256_mul_pd(sh, _mm256_load_pd(theta)));
    _mm256_store_pd(theta, t);
    sd = _mm256_fmadd_pd(t, _mm256_load_pd(u), sd);
    if (kNorm) sn = _mm256_fmadd_pd(t, t, sn);
  }

  /// If `pending`, update(θ, u_prev, shrink, gain); then dot_norm(θ, u): one pass over θ, the
  /// same bits as the two calls.
  template <bool kNorm>
  static void update_dot_norm(double* theta, const double* u_prev, bool pending,
                                               double shrink, double gain, const double* u, std::size_t n,
                                               double& dot, double& norm2) {
    if (!pending) return dot_norm<kNorm>(theta, u, n, dot, norm2);
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    __m256d sd[4], sn[4];
    for (int l = 0; l < 4; ++l) sd[l] = sn[l] = _mm256_setzero_pd();
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16)
      for (int l = 0; l < 4; ++l) {
        const std::size_t j = i + 4 * l;
        update_dot_vector<kNorm>(theta + j, u_prev + j, u + j, sh, g, sd[l], sn[l]);
      }
    for (int l = 0; i < n; i += 4, ++l) update_dot_vector<kNorm>(theta + i, u_prev + i, u + i, sh, g, sd[l], sn[l]);
    dot = hsum(_mm256_add_pd(_mm256_add_pd(sd[0], sd[1]), _mm256_add_pd(sd[2], sd[3])));
    norm2 = kNorm ? hsum(_mm256_add_pd(_mm256_add_pd(sn[0], sn[1]), _mm256_add_pd(sn[2], sn[3])))
                  : 0.0;
  }
};

/// The sincos of each level (the including file specialises it for its own level).
template <SimdLevel kLevel>
struct SinCosOf;

}  // namespace

// ---- SimdSlotKernels<kLevel> (slot_kernels.h) on VectorSlotKernels<SinCosOf<kLevel>> --------------
#define OMKL_SLOT_IMPL VectorSlotKernels<typename SinCosOf<kLevel>::type>

template <SimdLevel kLevel>
template <bool kChecked>
void SimdSlotKernels<kLevel>::features(const double* v, const double* x, std::size_t d, std::size_t n_rff,
                                       std::size_t padded, double* angle, double* u) {
  OMKL_SLOT_IMPL::template features<kChecked>(v, x, d, n_rff, padded, angle, u);
}

template <SimdLevel kLevel>
void SimdSlotKernels<kLevel>::features_float(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                                             std::size_t padded, double* u) {
  OMKL_SLOT_IMPL::features_float(vf, x, d, n_rff, padded, u);
}

template <SimdLevel kLevel>
void SimdSlotKernels<kLevel>::fused_pass(const double* v, const double* x, std::size_t d, std::size_t n_rff,
                                         std::size_t padded, double* u, double* theta, const double* u_prev,
                                         bool pending, double shrink, double gain, double& dot, double& norm2) {
  OMKL_SLOT_IMPL::fused_pass(v, x, d, n_rff, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2);
}

template <SimdLevel kLevel>
void SimdSlotKernels<kLevel>::fused_float_pass(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                                               std::size_t padded, double* u, double* theta, const double* u_prev,
                                               bool pending, double shrink, double gain, double& dot,
                                               double& norm2) {
  OMKL_SLOT_IMPL::fused_float_pass(vf, x, d, n_rff, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2);
}

template <SimdLevel kLevel>
void SimdSlotKernels<kLevel>::loaded_pass(const double* u, std::size_t padded, double* theta, const double* u_prev,
                                          bool pending, double shrink, double gain, double& dot, double& norm2) {
  OMKL_SLOT_IMPL::loaded_pass(u, padded, theta, u_prev, pending, shrink, gain, dot, norm2);
}

template <SimdLevel kLevel>
template <bool kNorm>
void SimdSlotKernels<kLevel>::dot_norm_fn(const double* theta, const double* u, std::size_t n, double& dot,
                                          double& norm2) {
  OMKL_SLOT_IMPL::template dot_norm<kNorm>(theta, u, n, dot, norm2);
}

template <SimdLevel kLevel>
void SimdSlotKernels<kLevel>::update(double* theta, const double* u, std::size_t n, double shrink, double gain) {
  OMKL_SLOT_IMPL::update(theta, u, n, shrink, gain);
}

template <SimdLevel kLevel>
template <bool kNorm>
void SimdSlotKernels<kLevel>::update_dot_norm(double* theta, const double* u_prev, bool pending, double shrink,
                                              double gain, const double* u, std::size_t n, double& dot,
                                              double& norm2) {
  OMKL_SLOT_IMPL::template update_dot_norm<kNorm>(theta, u_prev, pending, shrink, gain, u, n, dot, norm2);
}

#undef OMKL_SLOT_IMPL
#undef OMKL_ALWAYS_INLINE
#undef OMKL_NOINLINE
#undef OMKL_LAMBDA_INLINE

/// Explicit instantiation of every entry point of one level (in its own translation unit).
#define OMKL_INSTANTIATE_SIMD_SLOT_KERNELS(LEVEL)                                                         \
  template struct SimdSlotKernels<LEVEL>;                                                                 \
  template void SimdSlotKernels<LEVEL>::features<false>(const double*, const double*, std::size_t,       \
                                                        std::size_t, std::size_t, double*, double*);     \
  template void SimdSlotKernels<LEVEL>::features<true>(const double*, const double*, std::size_t,        \
                                                       std::size_t, std::size_t, double*, double*);      \
  template void SimdSlotKernels<LEVEL>::dot_norm_fn<false>(const double*, const double*, std::size_t,    \
                                                           double&, double&);                            \
  template void SimdSlotKernels<LEVEL>::dot_norm_fn<true>(const double*, const double*, std::size_t,     \
                                                          double&, double&);                             \
  template void SimdSlotKernels<LEVEL>::update_dot_norm<false>(double*, const double*, bool, double,     \
                                                               double, const double*, std::size_t,      \
                                                               double&, double&);                        \
  template void SimdSlotKernels<LEVEL>::update_dot_norm<true>(double*, const double*, bool, double,      \
                                                              double, const double*, std::size_t,       \
                                                              double&, double&);

}  // namespace omkl::detail::cpu
