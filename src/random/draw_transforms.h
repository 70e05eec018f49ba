/// @file draw_transforms.h
/// @brief The transforms from uniform random numbers to the random-feature laws (normal,
/// Cauchy, Laplace), written once for the host and the CUDA device so that both give the same
/// bits (the CUDA backend draws the frequency matrices itself, kernels/frequency_draws.cu).
///
/// Why not std::log / std::cos / std::tan: the C library's and CUDA's versions are both
/// accurate to about an ulp but not identical, so a device draw would differ from the host's
/// in the last bit now and then. Here every rounding step is one IEEE operation (+, −, ×, ÷,
/// √), which both sides round identically, provided the compiler fuses nothing:
///  - on the device every operation goes through the _rn intrinsics (never contracted into
///    FMAs, unlike plain expressions under nvcc's default --fmad=true);
///  - on the host the library and the tests are compiled with -ffp-contract=off (CMake), so
///    a build for an FMA-capable target (-march=native) does not fuse them either; a unit test
///    checks that the test binary did not.
///
/// Method and accuracy, against long double on 3·10⁵ arguments (the unit test's bounds): log
/// ≤ 0.81 ulp, cos 2πu ≤ 2.34 ulp where |cos| > 10⁻³ (≤ 1.9·10⁻¹⁶ absolute), tan πw ≤ 3.9
/// ulp, the Laplace transform ≤ 0.83 ulp:
///  - log x: x = 2^e·m with m ∈ (√½, √2], f = m − 1 (exact), s = f/(2 + f);
///    log(1+f) = f − (f²/2 − s·(f²/2 + R(s²))) with R the atanh series 2z/3 + 2z²/5 + … to
///    z¹⁰ (|s| ≤ 0.172, truncation < 10⁻¹⁸), plus e·ln 2 in two parts (e·ln2_hi exact).
///  - sin and cos of θ ∈ [0, π/4]: fdlibm's minimax polynomials (the constants shared with
///    sincos_fma.h), Horner without FMA.
///  - cos 2πu and tan πw: exact reductions to θ = (π/2)·g, g ∈ [0, ½] (4u, its integer and
///    fractional parts and 1 − f are exact), so there is no argument rounding beyond g·π/2.
/// Everything is branch-free (selects), so that the host's bulk loops vectorise (rng.cpp) and
/// device threads do not diverge; a vector lane does exactly the scalar operations.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "features/sincos_fma.h"

namespace omkl::detail::draw {

// ---- single IEEE operations, never fused --------------------------------------------------
OMKL_HD double mul(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
OMKL_HD double add(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  return a + b;
#endif
}
OMKL_HD double sub(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  return a - b;
#endif
}
OMKL_HD double div(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __ddiv_rn(a, b);
#else
  return a / b;
#endif
}
OMKL_HD double sqrt(double a) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(a);
#else
  return std::sqrt(a);
#endif
}

// ---- exact conversions --------------------------------------------------------------------
/// n as a double, exactly, for n < 2⁵²: by the 2⁵² bit pattern rather than an int64 → double
/// conversion, which x86 vector units lack (so the bulk loops vectorise).
OMKL_HD double small_uint_to_double(std::uint64_t n) {
  return sub(sincos_fma_detail::double_of(0x4330000000000000ull | n), 0x1p52);
}

// ---- uniforms -----------------------------------------------------------------------------
/// 53 random bits of the 64-bit word hi·2³² + lo, shifted by half a unit so that 0 and 1 never
/// occur: ((hi·2³² + lo) >> 11) = hi·2²¹ + (lo >> 11) exactly (both parts and the sum are exact
/// doubles), then one rounding for + ½ and an exact scaling.
OMKL_HD double uniform_from(std::uint32_t hi, std::uint32_t lo) {
  const double v = add(mul(small_uint_to_double(hi), 0x1p21), small_uint_to_double(lo >> 11));
  return mul(add(v, 0.5), 1.0 / 9007199254740992.0);
}

// ---- elementary functions -----------------------------------------------------------------
// Branch-free (selects, not jumps): the same code vectorises on the host and does not diverge
// on the device.

/// Natural logarithm of a positive normal finite x.
OMKL_HD double log(double x) {
  using sincos_fma_detail::bits_of;
  using sincos_fma_detail::double_of;
  constexpr double kLn2Hi = 0x1.62e42feep-1;   // 32 significant bits: e·kLn2Hi is exact
  constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
  constexpr double kSqrt2 = 0x1.6a09e667f3bcdp+0;
  const std::uint64_t b = bits_of(x);
  const double m1 = double_of((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);  // [1, 2)
  const double e1 = sub(small_uint_to_double((b >> 52) & 0x7ff), 1023.0);           // exact
  // Both sides computed, then selected (the compiler may not speculate a trapping operation).
  const double m1_half = mul(m1, 0.5), e1_next = add(e1, 1.0);
  const bool high = m1 > kSqrt2;
  const double m = high ? m1_half : m1;  // exact; m ∈ (√½, √2]
  const double de = high ? e1_next : e1;
  const double f = sub(m, 1.0);  // exact (Sterbenz)
  const double s = div(f, add(2.0, f));
  const double z = mul(s, s);
  // R(z) = Σ_{k=1..10} 2 z^k / (2k + 1), Horner from the top.
  double r = 2.0 / 21.0;
  r = add(mul(r, z), 2.0 / 19.0);
  r = add(mul(r, z), 2.0 / 17.0);
  r = add(mul(r, z), 2.0 / 15.0);
  r = add(mul(r, z), 2.0 / 13.0);
  r = add(mul(r, z), 2.0 / 11.0);
  r = add(mul(r, z), 2.0 / 9.0);
  r = add(mul(r, z), 2.0 / 7.0);
  r = add(mul(r, z), 2.0 / 5.0);
  r = add(mul(r, z), 2.0 / 3.0);
  r = mul(r, z);
  const double hfsq = mul(mul(f, f), 0.5);
  const double tail = sub(hfsq, add(mul(s, add(hfsq, r)), mul(de, kLn2Lo)));
  return add(mul(de, kLn2Hi), sub(f, tail));
}

/// sin θ and cos θ for θ ∈ [0, π/4].
OMKL_HD void sincos_reduced(double theta, double& s, double& c) {
  using namespace sincos_constants;
  const double z = mul(theta, theta);
  double ps = add(mul(S6, z), S5), pc = add(mul(C6, z), C5);
  ps = add(mul(ps, z), S4);
  pc = add(mul(pc, z), C4);
  ps = add(mul(ps, z), S3);
  pc = add(mul(pc, z), C3);
  ps = add(mul(ps, z), S2);
  pc = add(mul(pc, z), C2);
  ps = add(mul(ps, z), S1);
  pc = add(mul(pc, z), C1);
  s = add(theta, mul(mul(theta, z), ps));                            // θ + θ³·S(z)
  c = add(sub(1.0, mul(z, 0.5)), mul(mul(z, z), pc));                // 1 − z/2 + z²·C(z)
}

/// sin and cos of (π/2)·g for g ∈ [0, 1] (folded to an angle ≤ π/4 exactly).
OMKL_HD void sincos_half_pi(double g, double& s, double& c) {
  constexpr double kHalfPi = 0x1.921fb54442d18p+0;
  const bool low = g <= 0.5;
  const double complement = sub(1.0, g);  // exact for g ≥ ½
  double s0, c0;
  sincos_reduced(mul(low ? g : complement, kHalfPi), s0, c0);  // cos(π/2·g) = sin(π/2·(1 − g))
  s = low ? s0 : c0;
  c = low ? c0 : s0;
}

/// cos 2πu for u ∈ [0, 1].
OMKL_HD double cos_two_pi(double u) {
  const double a = mul(u, 4.0);  // exact; a ∈ [0, 4]
  // Quadrant q = ⌊a⌋, except a = 4 (u rounds up to 1 with probability 2⁻⁵³): q = 3, f = 1.
  const double q = (a >= 1.0 ? 1.0 : 0.0) + (a >= 2.0 ? 1.0 : 0.0) + (a >= 3.0 ? 1.0 : 0.0);
  const double f = sub(a, q);  // exact
  double s, c;
  sincos_half_pi(f, s, c);  // of (π/2)·f; cos 2πu is c, −s, −c, s in quadrants 0–3
  const double v = ((q == 1.0) | (q == 3.0)) ? s : c;
  return ((q == 1.0) | (q == 2.0)) ? -v : v;
}

/// tan πw for w ∈ (−½, ½).
OMKL_HD double tan_pi(double w) {
  const double g = mul(w < 0 ? -w : w, 2.0);  // exact; tan πw = ±tan((π/2)·g)
  double s, c;
  sincos_half_pi(g, s, c);
  const double t = div(s, c);
  return w < 0 ? -t : t;
}

// ---- the laws -----------------------------------------------------------------------------
/// Standard normal by Box–Muller (cosine output) from two uniforms in (0, 1).
OMKL_HD double normal_from(double u1, double u2) {
  return mul(sqrt(mul(-2.0, log(u1))), cos_two_pi(u2));
}
/// Standard Cauchy, tan(π(u − ½)), from a uniform in (0, 1).
OMKL_HD double cauchy_from(double u) { return tan_pi(sub(u, 0.5)); }
/// Standard Laplace (the spectral law of the Cauchy kernel), −sign(w)·log(1 − 2|w|) with
/// w = u − ½, from a uniform in (0, 1).
OMKL_HD double laplace_from(double u) {
  const double w = sub(u, 0.5);
  const double magnitude = log(sub(1.0, mul(2.0, w < 0 ? -w : w)));
  return w < 0 ? magnitude : -magnitude;
}

}  // namespace omkl::detail::draw
