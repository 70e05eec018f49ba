/// @file sincos_fma.h
/// @brief sin and cos of one double by exactly the arithmetic of the CPU backend's AVX2+FMA
/// kernel (cpu/fast_sincos.h), written once for the host and the device.
///
/// Every rounding step is a single IEEE operation or a fused multiply-add, and fused
/// multiply-adds are exactly rounded wherever they run, so a CUDA kernel calling sincos_fma()
/// gets, bit for bit, the features the CPU's AVX2 kernel gives for the same angle (the unit
/// tests compare the two). On the device it is also straight-line code: no branch inside, so
/// the compiler can interleave several calls with each other and with independent work, which
/// the CUDA library's sincos (a slow-path branch inside) does not allow. On a host without
/// hardware FMA, std::fma is a library call: use it there only for checks.
///
/// Method and accuracy: see cpu/fast_sincos.h (Cody–Waite reduction with π/2 = C1 + C2, exact
/// in one FMA for |a| < 2⁵⁰; fdlibm's minimax polynomials; branch-free quadrant selection;
/// |error| ≤ 1.35e-16 on the fast range |a| ≤ kFmaFastLimit). Beyond the fast range the result
/// is unspecified: callers test the range and fall back to the library's sin/cos.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/host_device.h"

namespace omkl::detail::sincos_constants {

// 2/π and the rounding constant 1.5·2⁵² (rounds to nearest for |x| < 2⁵¹).
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;
constexpr double kRoundMagic = 0x1.8p52;
// π/2 = C1 + C2 (+ 2⁻¹⁰⁷-level remainder): for the FMA reduction.
constexpr double kPio2Hi = 0x1.921fb54442d18p+0;
constexpr double kPio2Lo = 0x1.1a62633145c07p-54;
// π/2 = P1 + P2 + P3 with P1 (25 bits), P2 (24 bits) exact-product parts: for the reduction
// without FMA (cpu/fast_sincos.h's portable kernel).
constexpr double kPio2P1 = 0x1.921fb5p+0;
constexpr double kPio2P2 = 0x1.110b46p-26;
constexpr double kPio2P3 = 0x1.1a62633145c07p-54;
// fdlibm __kernel_sin / __kernel_cos coefficients.
constexpr double S1 = -1.66666666666666324348e-01;
constexpr double S2 = 8.33333333332248946124e-03;
constexpr double S3 = -1.98412698298579493134e-04;
constexpr double S4 = 2.75573137070700676789e-06;
constexpr double S5 = -2.50507602534068634195e-08;
constexpr double S6 = 1.58969099521155010221e-10;
constexpr double C1 = 4.16666666666666019037e-02;
constexpr double C2 = -1.38888888888741095749e-03;
constexpr double C3 = 2.48015872894767294178e-05;
constexpr double C4 = -2.75573143513906633035e-07;
constexpr double C5 = 2.08757232129817482790e-09;
constexpr double C6 = -1.13596475577881948265e-11;

}  // namespace omkl::detail::sincos_constants

namespace omkl::detail {

/// Largest |a| served by sincos_fma() (the AVX2 kernel's kAvx2FastLimit).
constexpr double kFmaFastLimit = 0x1p45;

namespace sincos_fma_detail {

OMKL_HD double fused(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return ::fma(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

OMKL_HD std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

OMKL_HD double double_of(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

}  // namespace sincos_fma_detail

/// sin a and cos a for |a| ≤ kFmaFastLimit (NaN gives NaN), in the AVX2 kernel's order of
/// operations (see the file comment).
OMKL_HD void sincos_fma(double a, double& s_out, double& c_out) {
  using namespace sincos_constants;
  using sincos_fma_detail::fused;
  const double t = fused(a, kTwoOverPi, kRoundMagic);
  const double k = t - kRoundMagic;
  double r = fused(-k, kPio2Hi, a);  // exact
  r = fused(-k, kPio2Lo, r);
  const double z = r * r;
  double ps = fused(S6, z, S5), pc = fused(C6, z, C5);
  ps = fused(ps, z, S4);
  pc = fused(pc, z, C4);
  ps = fused(ps, z, S3);
  pc = fused(pc, z, C3);
  ps = fused(ps, z, S2);
  pc = fused(pc, z, C2);
  ps = fused(ps, z, S1);
  pc = fused(pc, z, C1);
  ps = fused(z, ps, 0.0);  // + 0: z·S = −0 becomes +0, so that sin(−0) = −0
  pc = fused(pc, z, -0.5);
  const double s = fused(r, ps, r);
  const double c = fused(pc, z, 1.0);
  // Quadrant from the low bits of t (= k mod 4): bit 0 swaps sin and cos, bit 1 negates sin,
  // bit 1 of k + 1 negates cos.
  const std::uint64_t q = sincos_fma_detail::bits_of(t);
  const std::uint64_t swap = std::uint64_t{0} - (q & 1u);
  const std::uint64_t sb = sincos_fma_detail::bits_of(s), cb = sincos_fma_detail::bits_of(c);
  const std::uint64_t diff = (sb ^ cb) & swap;
  const std::uint64_t s_sign = (q & 2u) << 62;
  const std::uint64_t c_sign = s_sign ^ ((q & 1u) << 63);
  s_out = sincos_fma_detail::double_of(sb ^ diff ^ s_sign);
  c_out = sincos_fma_detail::double_of(cb ^ diff ^ c_sign);
}

}  // namespace omkl::detail
