/// @file slot_kernels.h
/// @brief The CPU backend's inner loops, one set per instruction-set level: the feature map
/// (angles V x, then [sin | cos]), the per-slot dot products and norms, and the θ update,
/// as PortableKernels (plain loops) and Avx2Kernels (AVX2 + FMA intrinsics, built where the
/// compiler supports them and chosen at run time). CpuRfBackend (cpu_rf_backend.cpp) is
/// written once over either set; the layouts they assume (D padded to a multiple of 4, V in
/// blocks of 4 rows × d, 64-byte aligned rows) are described there. Internal to that file.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "core/loss.h"
#include "cpu/fast_sincos.h"
#include "features/rf_backend.h"

namespace omkl::detail::cpu {

/// A 64-byte aligned, zero-initialised array of T (double, or float for precision=float).
template <class T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t n) {
    const std::size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (bytes == 0) return;
    void* p = std::aligned_alloc(64, bytes);
    if (!p) throw std::bad_alloc();
    std::memset(p, 0, bytes);
    data_.reset(static_cast<T*>(p));
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T[], Free> data_;
};
using AlignedArray = AlignedBuffer<double>;
using AlignedFloats = AlignedBuffer<float>;

/// The scalars of one slot's step at time t: shrink and gain·scale of
/// θ ← shrink·θ − (gain·scale)·u, from the prediction f = scale·(θ·u).
inline void step_scalars(const SlotSchedule& sc, std::int64_t t, LossKind loss, double f, double y,
                         double scale, double& shrink, double& gain) {
  const double eta = sc.inv_sqrt_t ? sc.eta / std::sqrt(static_cast<double>(t)) : sc.eta;
  shrink = 1.0 - sc.shrink_scale * eta * sc.lambda;
  gain = sc.step_scale * eta * loss_derivative(loss, f, y) * scale;
}

/// Portable kernels: plain loops (the compiler may vectorise them for the baseline ISA).
struct PortableKernels {
  static constexpr double kFastLimit = kPortableFastLimit;
  static constexpr bool kFusedSingleSlot = false;

  /// angle = V x (V in the block layout, see CpuRfBackend), u = [sin angle | cos angle]
  /// (2·padded entries).
  template <bool kChecked>
  static void features(const double* v, const double* x, std::size_t d, std::size_t n_rff,
                       std::size_t padded, double* angle, double* u) {
    for (std::size_t j = 0; j < padded; j += 4, v += 4 * d) {
      for (std::size_t l = 0; l < 4; ++l) angle[j + l] = x[0] * v[l];
      for (std::size_t k = 1; k < d; ++k)
        for (std::size_t l = 0; l < 4; ++l) angle[j + l] += x[k] * v[4 * k + l];
    }
    if (kChecked) {
      sincos_portable(angle, u, u + padded, padded);
    } else {
      for (std::size_t j = 0; j < padded; ++j) sincos_portable_fast(angle[j], u[j], u[padded + j]);
    }
    for (std::size_t j = n_rff; j < padded; ++j) u[padded + j] = 0.0;
  }

  /// precision=float: u = [sin | cos](V x) with V (vf, in blocks of 8 rows × d, float, zero
  /// rows up to a multiple of 8), x and the angles in float, |angles| ≤ kFloatFastLimit (the
  /// caller's bound); u stored as double (padded a multiple of 4: a last block of 8 rows
  /// stores its first 4 only).
  static void features_float(const float* vf, const double* x, std::size_t d, std::size_t n_rff,
                             std::size_t padded, double* u) {
    for (std::size_t j = 0; j < padded; j += 8, vf += 8 * d) {
      float angle[8];
      for (std::size_t l = 0; l < 8; ++l) angle[l] = static_cast<float>(x[0]) * vf[l];
      for (std::size_t k = 1; k < d; ++k)
        for (std::size_t l = 0; l < 8; ++l) angle[l] += static_cast<float>(x[k]) * vf[8 * k + l];
      const std::size_t lanes = std::min<std::size_t>(8, padded - j);
      for (std::size_t l = 0; l < lanes; ++l) {
        float s, c;
        sincos_float_portable(angle[l], s, c);
        u[j + l] = s;
        u[padded + j + l] = c;
      }
    }
    for (std::size_t j = n_rff; j < padded; ++j) u[padded + j] = 0.0;
  }

  /// θ·u and (if kNorm) ‖θ‖² over n entries (n a multiple of 8), in four interleaved sums.
  template <bool kNorm>
  static void dot_norm(const double* theta, const double* u, std::size_t n, double& dot,
                       double& norm2) {
    double sd[4] = {0.0, 0.0, 0.0, 0.0}, sn[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n; i += 4)
      for (std::size_t l = 0; l < 4; ++l) {
        sd[l] += theta[i + l] * u[i + l];
        if (kNorm) sn[l] += theta[i + l] * theta[i + l];
      }
    dot = (sd[0] + sd[1]) + (sd[2] + sd[3]);
    norm2 = kNorm ? (sn[0] + sn[1]) + (sn[2] + sn[3]) : 0.0;
  }

  template <bool kNorm>
  static void dot_norm_fn(const double* theta, const double* u, std::size_t n, double& dot,
                          double& norm2) {
    dot_norm<kNorm>(theta, u, n, dot, norm2);
  }

  /// θ ← shrink·θ − gain·u.
  static void update(double* theta, const double* u, std::size_t n, double shrink, double gain) {
    for (std::size_t i = 0; i < n; ++i) theta[i] = shrink * theta[i] - gain * u[i];
  }

  /// If `pending`, update(θ, u_prev, shrink, gain); then dot_norm(θ, u): one pass over θ, the
  /// same bits as the two calls.
  template <bool kNorm>
  static void update_dot_norm(double* theta, const double* u_prev, bool pending, double shrink, double gain,
                              const double* u, std::size_t n, double& dot, double& norm2) {
    if (!pending) return dot_norm<kNorm>(theta, u, n, dot, norm2);
    double sd[4] = {0.0, 0.0, 0.0, 0.0}, sn[4] = {0.0, 0.0, 0.0, 0.0};
    for (std::size_t i = 0; i < n; i += 4)
      for (std::size_t l = 0; l < 4; ++l) {
        const double t = shrink * theta[i + l] - gain * u_prev[i + l];
        theta[i + l] = t;
        sd[l] += t * u[i + l];
        if (kNorm) sn[l] += t * t;
      }
    dot = (sd[0] + sd[1]) + (sd[2] + sd[3]);
    norm2 = kNorm ? (sn[0] + sn[1]) + (sn[2] + sn[3]) : 0.0;
  }
};

#if OMKL_CPU_HAVE_AVX2_KERNELS
/// AVX2 + FMA kernels (intrinsics: every FMA is explicit, nothing left to contraction).
struct Avx2Kernels {
  static constexpr double kFastLimit = kAvx2FastLimit;
  static constexpr bool kFusedSingleSlot = true;

  OMKL_INLINE_AVX2 static double hsum(__m256d v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  // Vectors per group in the feature map: 4 independent FMA chains side by side (measured on
  // Zen 3: 1 → 2 → 4 vectors per group, about 10% faster end to end).
  static constexpr std::size_t kGroup = 4;

  // Angles of a group of N vectors whose frequency blocks start at v. kD: the number of
  // features when known at compile time (0: d).
  template <int N, int kD>
  OMKL_INLINE_AVX2 static void project(const double* v, const double* x, std::size_t d, __m256d* a) {
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
  OMKL_INLINE_AVX2 static void features_group(const double* v, const double* x, std::size_t d,
                                              std::size_t padded, std::size_t j, double* angle,
                                              double* u) {
    __m256d a[N], s[N], c[N];
    project<N, kD>(v, x, d, a);
    if (kStore)
      for (int l = 0; l < N; ++l) _mm256_store_pd(angle + j + 4 * l, a[l]);
    sincos_avx2_n<N>(a, s, c);
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
  OMKL_INLINE_AVX2 static void slot_group(double* theta, const double* u_prev, bool pending,
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
  OMKL_INLINE_AVX2 static void fused_group(const double* v, const double* x, std::size_t d,
                                           std::size_t padded, std::size_t j, double* u,
                                           double* theta, const double* u_prev, bool pending,
                                           __m256d sh, __m256d g, __m256d* acc) {
    __m256d a[N], s[N], c[N];
    project<N, kD>(v, x, d, a);
    sincos_avx2_n<N>(a, s, c);
    for (int l = 0; l < N; ++l) {
      _mm256_store_pd(u + j + 4 * l, s[l]);
      _mm256_store_pd(u + padded + j + 4 * l, c[l]);
    }
    slot_group<N>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
  }

  // Group sizes: kGroup vectors, except that a remainder of one vector after full groups is
  // merged into the last group (4 + 1 → 3 + 2), since a lone vector is latency-bound.
  static std::size_t next_group(std::size_t left) {
    std::size_t g = std::min<std::size_t>(left, kGroup);
    if (left == kGroup + 1 && kGroup >= 3) g = kGroup - 1;
    return g;
  }

  OMKL_INLINE_AVX2 static void finish(const __m256d* acc, double& dot, double& norm2) {
    dot = hsum(acc[0]);
    norm2 = hsum(acc[1]);
  }

  template <int kD>
  OMKL_TARGET_AVX2 static void fused_pass_d(const double* v, const double* x, std::size_t d,
                                            std::size_t padded, double* u, double* theta,
                                            const double* u_prev, bool pending, double shrink,
                                            double gain, double& dot, double& norm2) {
    __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    for (std::size_t j = 0, left = padded / 4; left > 0;) {
      const std::size_t n = next_group(left);
      switch (n) {
        case 4: fused_group<4, kD>(v, x, d, padded, j, u, theta, u_prev, pending, sh, g, acc); break;
        case 3: fused_group<3, kD>(v, x, d, padded, j, u, theta, u_prev, pending, sh, g, acc); break;
        case 2: fused_group<2, kD>(v, x, d, padded, j, u, theta, u_prev, pending, sh, g, acc); break;
        default: fused_group<1, kD>(v, x, d, padded, j, u, theta, u_prev, pending, sh, g, acc); break;
      }
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
  OMKL_TARGET_AVX2 static void fused_pass(const double* v, const double* x, std::size_t d,
                                          std::size_t n_rff, std::size_t padded, double* u,
                                          double* theta, const double* u_prev, bool pending,
                                          double shrink, double gain, double& dot,
                                          double& norm2) {
    switch (d) {
#define OMKL_FUSED_CASE(D_)                                                                    \
  case D_:                                                                                     \
    fused_pass_d<D_>(v, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2); \
    break;
      OMKL_FUSED_CASE(1) OMKL_FUSED_CASE(2) OMKL_FUSED_CASE(3) OMKL_FUSED_CASE(4)
      OMKL_FUSED_CASE(5) OMKL_FUSED_CASE(6) OMKL_FUSED_CASE(7) OMKL_FUSED_CASE(8)
#undef OMKL_FUSED_CASE
      default: fused_pass_d<0>(v, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2); break;
    }
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  /// The slot part of fused_pass() on features already in u (the checked path and predict).
  OMKL_TARGET_AVX2 static void loaded_pass(const double* u, std::size_t padded, double* theta,
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
  OMKL_INLINE_AVX2 static void float_features_wide(const float* vf, const double* x, std::size_t d,
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
    sincos_float_avx2_n<N>(a, s, c);
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
  OMKL_INLINE_AVX2 static void features_float_group(const float* vf, const double* x, std::size_t d,
                                                    std::size_t padded, std::size_t j, double* u) {
    __m256d s[2 * N], c[2 * N];
    float_features_wide<N, kD, kHalf>(vf, x, d, padded, j, u, s, c);
  }

  // fused_pass_d for the float map: the widened features go straight into slot_group, in
  // column order, so the sums are those loaded_pass() makes from the stored u.
  template <int kD>
  OMKL_TARGET_AVX2 static void fused_float_pass_d(const float* vf, const double* x, std::size_t d,
                                                  std::size_t padded, double* u, double* theta,
                                                  const double* u_prev, bool pending, double shrink,
                                                  double gain, double& dot, double& norm2) {
    __m256d acc[2] = {_mm256_setzero_pd(), _mm256_setzero_pd()};
    const __m256d sh = _mm256_set1_pd(shrink), g = _mm256_set1_pd(gain);
    __m256d s[4], c[4];
    std::size_t j = 0, left = padded / 8;
    for (; left >= 2; left -= 2, j += 16, vf += 16 * d) {
      float_features_wide<2, kD>(vf, x, d, padded, j, u, s, c);
      slot_group<4>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
    }
    if (left) {
      float_features_wide<1, kD>(vf, x, d, padded, j, u, s, c);
      slot_group<2>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
      j += 8;
      vf += 8 * d;
    }
    if (j < padded) {  // padded = 8m + 4: half a block left
      float_features_wide<1, kD, true>(vf, x, d, padded, j, u, s, c);
      slot_group<1>(theta, u_prev, pending, sh, g, padded, j, s, c, acc);
    }
    finish(acc, dot, norm2);
  }

  /// fused_pass() with the float feature map (precision=float; angles within kFloatFastLimit).
  OMKL_TARGET_AVX2 static void fused_float_pass(const float* vf, const double* x, std::size_t d,
                                                std::size_t n_rff, std::size_t padded, double* u,
                                                double* theta, const double* u_prev, bool pending,
                                                double shrink, double gain, double& dot, double& norm2) {
    switch (d) {
#define OMKL_FUSED_FLOAT_CASE(D_)                                                                  \
  case D_:                                                                                         \
    fused_float_pass_d<D_>(vf, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2); \
    break;
      OMKL_FUSED_FLOAT_CASE(1) OMKL_FUSED_FLOAT_CASE(2) OMKL_FUSED_FLOAT_CASE(3) OMKL_FUSED_FLOAT_CASE(4)
      OMKL_FUSED_FLOAT_CASE(5) OMKL_FUSED_FLOAT_CASE(6) OMKL_FUSED_FLOAT_CASE(7) OMKL_FUSED_FLOAT_CASE(8)
#undef OMKL_FUSED_FLOAT_CASE
      default: fused_float_pass_d<0>(vf, x, d, padded, u, theta, u_prev, pending, shrink, gain, dot, norm2); break;
    }
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  template <int kD>
  OMKL_TARGET_AVX2 static void features_float_d(const float* vf, const double* x, std::size_t d,
                                                std::size_t padded, double* u) {
    std::size_t j = 0, left = padded / 8;
    for (; left >= 2; left -= 2, j += 16, vf += 16 * d) features_float_group<2, kD>(vf, x, d, padded, j, u);
    if (left) {
      features_float_group<1, kD>(vf, x, d, padded, j, u);
      j += 8;
      vf += 8 * d;
    }
    if (j < padded) features_float_group<1, kD, true>(vf, x, d, padded, j, u);  // half a block
  }

  /// PortableKernels::features_float with 8-lane float arithmetic.
  OMKL_TARGET_AVX2 static void features_float(const float* vf, const double* x, std::size_t d,
                                              std::size_t n_rff, std::size_t padded, double* u) {
    switch (d) {
      case 1: features_float_d<1>(vf, x, d, padded, u); break;
      case 2: features_float_d<2>(vf, x, d, padded, u); break;
      case 3: features_float_d<3>(vf, x, d, padded, u); break;
      case 4: features_float_d<4>(vf, x, d, padded, u); break;
      case 5: features_float_d<5>(vf, x, d, padded, u); break;
      case 6: features_float_d<6>(vf, x, d, padded, u); break;
      case 7: features_float_d<7>(vf, x, d, padded, u); break;
      case 8: features_float_d<8>(vf, x, d, padded, u); break;
      default: features_float_d<0>(vf, x, d, padded, u); break;
    }
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
  }

  template <int kD, bool kChecked>
  OMKL_TARGET_AVX2 static void features_d(const double* v, const double* x, std::size_t d,
                                          std::size_t padded, double* angle, double* u) {
    std::size_t j = 0, left = padded / 4;
    while (left > 0) {
      const std::size_t g = next_group(left);
      switch (g) {
        case 4: features_group<4, kD, kChecked>(v, x, d, padded, j, angle, u); break;
        case 3: features_group<3, kD, kChecked>(v, x, d, padded, j, angle, u); break;
        case 2: features_group<2, kD, kChecked>(v, x, d, padded, j, angle, u); break;
        default: features_group<1, kD, kChecked>(v, x, d, padded, j, angle, u); break;
      }
      j += 4 * g;
      v += 4 * d * g;
      left -= g;
    }
  }

  /// angle = V x, u = [sin angle | cos angle]. kChecked: some |angle| may exceed kFastLimit
  /// (the caller's bound says so); those entries are redone with std::sin/std::cos.
  template <bool kChecked>
  OMKL_TARGET_AVX2 static void features(const double* v, const double* x, std::size_t d,
                                        std::size_t n_rff, std::size_t padded, double* angle,
                                        double* u) {
    switch (d) {  // the projection fully unrolled for the common small d
      case 1: features_d<1, kChecked>(v, x, d, padded, angle, u); break;
      case 2: features_d<2, kChecked>(v, x, d, padded, angle, u); break;
      case 3: features_d<3, kChecked>(v, x, d, padded, angle, u); break;
      case 4: features_d<4, kChecked>(v, x, d, padded, angle, u); break;
      case 5: features_d<5, kChecked>(v, x, d, padded, angle, u); break;
      case 6: features_d<6, kChecked>(v, x, d, padded, angle, u); break;
      case 7: features_d<7, kChecked>(v, x, d, padded, angle, u); break;
      case 8: features_d<8, kChecked>(v, x, d, padded, angle, u); break;
      default: features_d<0, kChecked>(v, x, d, padded, angle, u); break;
    }
    for (std::size_t i = n_rff; i < padded; ++i) u[padded + i] = 0.0;
    if (kChecked)
      for (std::size_t i = 0; i < n_rff; ++i)
        if (std::fabs(angle[i]) > kFastLimit) {
          u[i] = std::sin(angle[i]);
          u[padded + i] = std::cos(angle[i]);
        }
  }

  template <bool kNorm>
  OMKL_INLINE_AVX2 static void dot_norm(const double* theta, const double* u, std::size_t n,
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
  OMKL_TARGET_AVX2 static void dot_norm_fn(const double* theta, const double* u, std::size_t n,
                                           double& dot, double& norm2) {
    dot_norm<kNorm>(theta, u, n, dot, norm2);
  }

  OMKL_TARGET_AVX2 static void update(double* theta, const double* u, std::size_t n,
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
  OMKL_INLINE_AVX2 static void update_dot_vector(double* theta, const double* u_prev, const double* u,
                                                 __m256d sh, __m256d g, __m256d& sd, __m256d& sn) {
    const __m256d t = _mm256_fnmadd_pd(g, _mm256_load_pd(u_prev), _mm256_mul_pd(sh, _mm256_load_pd(theta)));
    _mm256_store_pd(theta, t);
    sd = _mm256_fmadd_pd(t, _mm256_load_pd(u), sd);
    if (kNorm) sn = _mm256_fmadd_pd(t, t, sn);
  }

  /// If `pending`, update(θ, u_prev, shrink, gain); then dot_norm(θ, u): one pass over θ, the
  /// same bits as the two calls.
  template <bool kNorm>
  OMKL_TARGET_AVX2 static void update_dot_norm(double* theta, const double* u_prev, bool pending,
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
#endif

}  // namespace omkl::detail::cpu
