/// @file fast_sincos.h
/// @brief Vectorisable double-precision sin and cos of the same argument, for the CPU
/// random-feature backend (z = [sin(Vx), cos(Vx)]).
///
/// Method (both kernels):
///  1. k = nearest integer to a·2/π, by the "magic number" trick t = a·(2/π) + 1.5·2⁵²
///     (k = t − 1.5·2⁵², and the two low bits of t's mantissa are k mod 4);
///  2. Cody–Waite reduction r = a − k·π/2 with π/2 split into parts (below);
///  3. fdlibm's minimax polynomials on [−π/4, π/4] (|error| ≤ 2⁻⁵⁸ relative):
///     sin r = r + r³·S(r²), cos r = 1 − r²/2 + r⁴·C(r²), by Horner;
///  4. quadrant selection without branches: k odd swaps sin and cos, and the signs are the
///     bits 1 of k (sin) and of k + 1 (cos).
///
/// Reduction and range:
///  - FMA kernel (sincos_lanes() in simd_kernels_impl.h: 4 lanes at SimdLevel::Avx2Fma, 8 at
///    Avx512, the same bits): π/2 = C1 + C2 (C1 = π/2 rounded, C2 = the next 53 bits). r1 = a − k·C1
///    is exact in one FMA for every |a| < 2⁵⁰ (a and k·C1 are multiples of 2⁻⁵² when |a| ≥ 1,
///    and |r1| < 1), so r = fma(−k, C2, r1) carries one rounding plus a truncation below
///    |k|·2⁻¹⁰⁷: the error stays at one ulp of r however large a is. The fast range is capped
///    at 2⁴⁵ so that the rounding of a·(2/π) cannot push |r| noticeably past π/4. (Projections
///    of raw data are large: on airfoil.csv with the 76-kernel dictionary 4.5 % of the angles
///    exceed 1e5 and the largest is 4.4e8, so a 1e5 cut-off would send many to std::sin.)
///  - Portable kernel (no FMA assumed): π/2 = P1 + P2 + P3 with P1, P2 of at most 25 bits, so
///    k·P1 and k·P2 are exact for |k| < 2²⁷ and the first two subtractions are exact
///    (Sterbenz); fast range |a| ≤ 2²⁷. If the compiler contracts to FMA (e.g. AArch64) the
///    products stay exact and nothing changes.
///  - Beyond the fast range (and for ±∞) a second pass recomputes the affected elements with
///    std::sin / std::cos, so the main loop stays branch-free. NaN in gives NaN out; ±0 give
///    sin = ±0, cos = 1.
///
/// Accuracy, measured against long-double sinl/cosl on 10⁷ arguments (uniform at every
/// magnitude 1e-8 … 1e15, multiples of π/2 and ±π/4 around them up to |k| = 10⁵):
/// |error| ≤ 1.35e-16 (AVX2+FMA) and ≤ 1.61e-16 (portable), i.e. well under one ulp of 1
/// and independent of |a|; the C library's sin/cos are within 5.6e-17 of the same reference.
/// The unit tests assert 2.3e-16 against sinl/cosl and 2.5e-16 against std::sin/std::cos.
///
/// Determinism: the FMA kernel is written with intrinsics (every FMA explicit), the portable
/// one in plain C++; a given machine always takes the same kernel for every call, and each
/// element's result depends only on its own argument (not on its position or the length).
/// This header keeps the portable kernel, the float kernels and the array entry points.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/simd_level.h"
#include "features/sincos_fma.h"

// OMKL_CPU_NO_AVX2_KERNELS (a compile definition) leaves the AVX2 kernels out of the build.
#if !defined(OMKL_CPU_NO_AVX2_KERNELS) && defined(__x86_64__) && \
    (defined(__GNUC__) || defined(__clang__))
#define OMKL_CPU_HAVE_AVX2_KERNELS 1
#include <immintrin.h>
/// Compiles one function for AVX2+FMA; call it only when cpu_has_avx2_fma() is true.
#define OMKL_TARGET_AVX2 __attribute__((target("avx2,fma")))
/// Same, and always inlined into its (AVX2) callers: register-level helpers.
#define OMKL_INLINE_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline
#else
#define OMKL_CPU_HAVE_AVX2_KERNELS 0
#endif

namespace omkl::detail::cpu {

/// s[i] = sin(a[i]), c[i] = cos(a[i]) for i < n, with the kernel of `level` (portable where the
/// level is not available here). The arrays must not overlap.
void fast_sincos(SimdLevel level, const double* a, double* s, double* c, std::size_t n);
/// Same, with default_simd_level().
void fast_sincos(const double* a, double* s, double* c, std::size_t n);

// The constants are shared with sincos_fma() (features/sincos_fma.h), the scalar host/device
// form of the AVX2 kernel below.
namespace sincos_detail = omkl::detail::sincos_constants;

/// Largest |a| served by the polynomial path of each kernel; beyond it std::sin/std::cos.
constexpr double kPortableFastLimit = 0x1p27;  // |k| ≤ 2²⁷·2/π < 2²⁷ ⇒ exact k·P1, k·P2
constexpr double kAvx2FastLimit = 0x1p45;

/// Portable sin and cos of one argument on the fast range (|a| ≤ kPortableFastLimit; other
/// arguments give unspecified values, except NaN → NaN). Plain C++: loops over it vectorise.
inline void sincos_portable_fast(double a, double& s_out, double& c_out) {
  using namespace sincos_detail;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
  // Excess precision (x87) defeats the rounding constant: round explicitly.
  const double k = std::nearbyint(a * kTwoOverPi);
  const std::uint64_t q = static_cast<std::uint64_t>(static_cast<std::int64_t>(k));
#else
  const double t = a * kTwoOverPi + kRoundMagic;
  const double k = t - kRoundMagic;
  std::uint64_t q;  // the low bits of t's mantissa are k mod 2⁵¹
  std::memcpy(&q, &t, sizeof q);
#endif
  const double r = ((a - k * kPio2P1) - k * kPio2P2) - k * kPio2P3;
  const double z = r * r;
  const double ps = S1 + z * (S2 + z * (S3 + z * (S4 + z * (S5 + z * S6))));
  const double s = r + r * (z * ps + 0.0);  // + 0.0: sin(−0) = −0
  const double pc = -0.5 + z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))));
  const double c = 1.0 + z * pc;
  // Quadrant in integer bit operations only (no compares: vectorises with SSE2 too).
  std::uint64_t sb, cb;
  std::memcpy(&sb, &s, sizeof sb);
  std::memcpy(&cb, &c, sizeof cb);
  const std::uint64_t swap = std::uint64_t{0} - (q & 1u);  // all ones when k is odd
  const std::uint64_t diff = (sb ^ cb) & swap;
  const std::uint64_t s_sign = (q & 2u) << 62;
  const std::uint64_t c_sign = s_sign ^ ((q & 1u) << 63);
  sb ^= diff ^ s_sign;
  cb ^= diff ^ c_sign;
  std::memcpy(&s_out, &sb, sizeof sb);
  std::memcpy(&c_out, &cb, sizeof cb);
}

// ---- single precision (the CPU backend's precision=float feature map) -----------------------
//
// sin and cos of a float argument with |a| ≤ kFloatFastLimit: k = nearest integer to a·2/π,
// r = a − k·π/2 with π/2 in three parts (Cephes' DP1..DP3 for π/4, doubled: P1 has 8
// significant bits and P2 11, so k·P1 and k·P2 are exact for |k| < 2¹³, far above the
// |k| ≤ 163 of this range), then Cephes' minimax polynomials of sinf and cosf on [−π/4, π/4]
// and the quadrant as in the double kernels. Error ≤ 2 ulp of 1 in float (≈ 2.4e-7) against
// the exact sin/cos of the float argument (the unit tests measure it). The limit is low on
// purpose: the backend computes the angles in float too, and an angle of magnitude A carries
// a rounding error of about A·2⁻²⁴ per term, ≈ 1.5e-5 at 256, which is the accuracy the
// float mode offers; larger angles take the double path.

/// Largest bound on |a| for which the CPU backend uses the float feature map.
constexpr double kFloatFastLimit = 256.0;

namespace float_sincos {
constexpr float kTwoOverPi = 0.636619772367581343f;
constexpr float kP1 = 1.5703125f;
constexpr float kP2 = 4.837512969970703125e-4f;
constexpr float kP3 = 7.54978995489188216e-8f;
constexpr float kS1 = -1.6666654611e-1f, kS2 = 8.3321608736e-3f, kS3 = -1.9515295891e-4f;
constexpr float kC1 = 4.166664568298827e-2f, kC2 = -1.388731625493765e-3f, kC3 = 2.443315711809948e-5f;
}  // namespace float_sincos

/// Portable float sin and cos of one argument (|a| ≤ kFloatFastLimit).
inline void sincos_float_portable(float a, float& s_out, float& c_out) {
  using namespace float_sincos;
  const float k = std::nearbyint(a * kTwoOverPi);
  const auto q = static_cast<std::uint32_t>(static_cast<std::int32_t>(k));
  const float r = ((a - k * kP1) - k * kP2) - k * kP3;
  const float z = r * r;
  const float s = r + r * z * (kS1 + z * (kS2 + z * kS3));
  const float c = (1.0f - 0.5f * z) + z * z * (kC1 + z * (kC2 + z * kC3));
  const bool swap = (q & 1u) != 0;
  const float s_q = swap ? c : s, c_q = swap ? s : c;
  s_out = (q & 2u) ? -s_q : s_q;
  c_out = ((q + 1u) & 2u) ? -c_q : c_q;
}

/// Portable kernel over arrays, including the out-of-range pass.
inline void sincos_portable(const double* a, double* s, double* c, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) sincos_portable_fast(a[i], s[i], c[i]);
  std::uint64_t out_of_range = 0;  // a count: an OR over compares would not vectorise
  for (std::size_t i = 0; i < n; ++i) out_of_range += std::fabs(a[i]) > kPortableFastLimit;
  if (out_of_range != 0)
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(a[i]) > kPortableFastLimit) {
        s[i] = std::sin(a[i]);
        c[i] = std::cos(a[i]);
      }
}

/// Float sin and cos of a[0..n) (|a| ≤ kFloatFastLimit: no out-of-range pass, the backend
/// never calls it beyond) with the kernel of `level`: sincos_float_portable() or, at the FMA
/// levels, the same method with every FMA explicit on 8 or 16 lanes (sincos_float_lanes() in
/// simd_kernels_impl.h; the same bits at both). Tests and benchmarks; the backend calls the
/// vector kernel directly.
void fast_sincos_float(SimdLevel level, const float* a, float* s, float* c, std::size_t n);

}  // namespace omkl::detail::cpu
