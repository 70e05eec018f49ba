/// @file simd_kernels_impl.h
/// @brief The sincos, exp and kernel-row kernels written once over a vector type V
/// (simd_vector.h), included through simd_kernels_entry_points.h by one file per SIMD level
/// (simd_kernels_avx2.cpp, simd_kernels_avx512.cpp) whose compile flags enable the instructions.
/// Internal linkage throughout, as simd_vector.h.
///
/// No standard-library templates with code here: an inline function of the library compiled
/// with wider instructions could be picked by the linker for every caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>  // std::integral_constant only: no code of its own

#include "cpu/kernel_rows.h"
#include "cpu/simd_vector.h"
#include "cpu/fast_sincos.h"  // the float sincos constants (its inline functions are not used here)
#include "features/sincos_fma.h"  // the sincos constants

namespace omkl::detail::cpu {
namespace {

// ln 2 = kLn2Hi + kLn2Lo with kLn2Hi of 32 significant bits (fdlibm's split).
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kLn2Hi = 0x1.62e42feep-1;
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kExpRoundMagic = 0x1.8p52;
// 1/n! for n = 13 … 2.
constexpr double kInvFactorial[] = {
    1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
    1.0 / 40320.0,      1.0 / 5040.0,      1.0 / 720.0,      1.0 / 120.0,     1.0 / 24.0,
    1.0 / 6.0,          0.5};

/// e^x per lane (the method of fast_exp.h).
template <class V>
__attribute__((always_inline)) inline typename V::D exp_lanes(typename V::D x) {
  using D = typename V::D;
  using I = typename V::I;
  // max/min return their second operand when one is NaN: x second keeps NaN.
  x = V::max(V::set1(-746.0), x);
  x = V::min(V::set1(710.0), x);
  const D magic = V::set1(kExpRoundMagic);
  const D t = V::fmadd(x, V::set1(kLog2e), magic);
  const D k = V::sub(t, magic);
  D r = V::fnmadd(k, V::set1(kLn2Hi), x);
  r = V::fnmadd(k, V::set1(kLn2Lo), r);
  D p = V::set1(kInvFactorial[0]);
  for (int i = 1; i < 12; ++i) p = V::fmadd(p, r, V::set1(kInvFactorial[i]));
  p = V::fmadd(p, r, V::set1(1.0));
  p = V::fmadd(p, r, V::set1(1.0));
  // k as a 64-bit integer from the low mantissa bits of t (|k| ≤ 1077 < 2⁵¹), split in halves.
  const I ki = V::sub_i64(V::bits(t), V::bits(magic));
  // ⌊k/2⌋ by a 32-bit arithmetic shift: k fits in the low 32-bit word and the high word is its
  // sign extension (0 or −1), which the shift keeps (AVX2 has no 64-bit arithmetic shift).
  const I k1 = V::halve_i32(ki);
  const I k2 = V::sub_i64(ki, k1);
  const I bias = V::set1_i64(1023);
  const D s1 = V::from_bits(V::template shift_left_i64<52>(V::add_i64(k1, bias)));
  const D s2 = V::from_bits(V::template shift_left_i64<52>(V::add_i64(k2, bias)));
  return V::mul(V::mul(p, s1), s2);
}

/// sin and cos of N vectors of arguments (|a| ≤ kAvx2FastLimit; NaN → NaN, ±∞ → NaN), the
/// method of fast_sincos.h; the N vectors go through each stage together, so that independent
/// FMA chains side by side keep the FMA pipes busy (one vector alone is latency-bound).
template <class V, int N>
__attribute__((always_inline)) inline void sincos_lanes(const typename V::D* a, typename V::D* s_out, typename V::D* c_out) {
  using namespace omkl::detail::sincos_constants;
  using D = typename V::D;
  const D magic = V::set1(kRoundMagic);
  D t[N], r[N], z[N], ps[N], pc[N];
  for (int j = 0; j < N; ++j) t[j] = V::fmadd(a[j], V::set1(kTwoOverPi), magic);
  for (int j = 0; j < N; ++j) {
    const D k = V::sub(t[j], magic);
    r[j] = V::fnmadd(k, V::set1(kPio2Hi), a[j]);  // exact
    r[j] = V::fnmadd(k, V::set1(kPio2Lo), r[j]);
  }
  for (int j = 0; j < N; ++j) z[j] = V::mul(r[j], r[j]);
  for (int j = 0; j < N; ++j) {
    ps[j] = V::fmadd(V::set1(S6), z[j], V::set1(S5));
    pc[j] = V::fmadd(V::set1(C6), z[j], V::set1(C5));
  }
  // One loop per coefficient (not a loop over them): each stays a short loop the compiler
  // unrolls, and the vectors stay in registers.
  for (int j = 0; j < N; ++j) {
    ps[j] = V::fmadd(ps[j], z[j], V::set1(S4));
    pc[j] = V::fmadd(pc[j], z[j], V::set1(C4));
  }
  for (int j = 0; j < N; ++j) {
    ps[j] = V::fmadd(ps[j], z[j], V::set1(S3));
    pc[j] = V::fmadd(pc[j], z[j], V::set1(C3));
  }
  for (int j = 0; j < N; ++j) {
    ps[j] = V::fmadd(ps[j], z[j], V::set1(S2));
    pc[j] = V::fmadd(pc[j], z[j], V::set1(C2));
  }
  for (int j = 0; j < N; ++j) {
    ps[j] = V::fmadd(ps[j], z[j], V::set1(S1));
    pc[j] = V::fmadd(pc[j], z[j], V::set1(C1));
  }
  for (int j = 0; j < N; ++j) {
    // r + r·(z·S(z) + 0): the + 0 turns z·S = −0 into +0, so that sin(−0) = −0.
    ps[j] = V::fmadd(z[j], ps[j], V::zero());
    pc[j] = V::fmadd(pc[j], z[j], V::set1(-0.5));
  }
  for (int j = 0; j < N; ++j) {
    const D s = V::fmadd(r[j], ps[j], r[j]);
    const D c = V::fmadd(pc[j], z[j], V::set1(1.0));
    // Quadrant: bit 0 of k (moved to the sign bit) swaps, bit 1 of k negates sin, bit 1 of
    // k + 1 negates cos.
    const auto q = V::bits(t[j]);
    const D swap = V::from_bits(V::template shift_left_i64<63>(q));
    const D s_sign = V::bit_and(V::from_bits(V::template shift_left_i64<62>(q)), V::set1(-0.0));
    const D c_sign = V::bit_xor(s_sign, swap);  // bit 1 of k+1 = bit 1 ^ bit 0 of k
    s_out[j] = V::bit_xor(V::select_by_sign(swap, s, c), s_sign);
    c_out[j] = V::bit_xor(V::select_by_sign(swap, c, s), c_sign);
  }
}

/// Float sin and cos of N vectors of arguments (|a| ≤ kFloatFastLimit), the method of
/// sincos_float_portable() (fast_sincos.h) with every FMA explicit; N vectors side by side.
template <class F, int N>
__attribute__((always_inline)) inline void sincos_float_lanes(const typename F::F* a, typename F::F* s_out,
                                                              typename F::F* c_out) {
  using namespace omkl::detail::cpu::float_sincos;
  using Vf = typename F::F;
  Vf k[N], r[N], z[N], ps[N], pc[N];
  typename F::I q[N];
  for (int j = 0; j < N; ++j) {
    k[j] = F::round_to_nearest(F::mul(a[j], F::set1(kTwoOverPi)));
    q[j] = F::to_int(k[j]);
  }
  for (int j = 0; j < N; ++j) {
    r[j] = F::fnmadd(k[j], F::set1(kP1), a[j]);
    r[j] = F::fnmadd(k[j], F::set1(kP2), r[j]);
    r[j] = F::fnmadd(k[j], F::set1(kP3), r[j]);
    z[j] = F::mul(r[j], r[j]);
  }
  for (int j = 0; j < N; ++j) {
    ps[j] = F::fmadd(F::set1(kS3), z[j], F::set1(kS2));
    pc[j] = F::fmadd(F::set1(kC3), z[j], F::set1(kC2));
  }
  for (int j = 0; j < N; ++j) {
    ps[j] = F::fmadd(ps[j], z[j], F::set1(kS1));
    pc[j] = F::fmadd(pc[j], z[j], F::set1(kC1));
  }
  for (int j = 0; j < N; ++j) {
    const Vf rz = F::mul(r[j], z[j]);
    const Vf s = F::fmadd(rz, ps[j], r[j]);
    const Vf c = F::fmadd(F::mul(z[j], z[j]), pc[j], F::fnmadd(F::set1(0.5f), z[j], F::set1(1.0f)));
    // Quadrant: bit 0 of k to the sign bit swaps; bit 1 of k negates sin, bit 1 of k + 1 cos.
    const Vf swap = F::template int_shifted_left<31>(q[j]);
    const Vf s_sign = F::bit_and(F::template int_shifted_left<30>(q[j]), F::set1(-0.0f));
    const Vf c_sign = F::bit_xor(s_sign, swap);
    s_out[j] = F::bit_xor(F::select_by_sign(swap, s, c), s_sign);
    c_out[j] = F::bit_xor(F::select_by_sign(swap, c, s), c_sign);
  }
}

/// The float kernel over arrays (fast_sincos_float()); the tail through padded lanes.
template <class F>
inline void sincos_float_array(const float* a, float* s, float* c, std::size_t n) {
  constexpr std::size_t L = F::kLanes;
  for (std::size_t i = 0; i < n; i += L) {
    alignas(64) float pa[L] = {}, ps[L], pc[L];
    const std::size_t m = n - i < L ? n - i : L;
    for (std::size_t j = 0; j < m; ++j) pa[j] = a[i + j];
    typename F::F v, sv, cv;
    __builtin_memcpy(&v, pa, sizeof v);
    sincos_float_lanes<F, 1>(&v, &sv, &cv);
    __builtin_memcpy(ps, &sv, sizeof sv);
    __builtin_memcpy(pc, &cv, sizeof cv);
    for (std::size_t j = 0; j < m; ++j) {
      s[i + j] = ps[j];
      c[i + j] = pc[j];
    }
  }
}

/// s, c = sin, cos of a[0..n) (fast_sincos()); returns the largest |a[i]| (NaN ignored), so
/// that the caller can redo the arguments past the fast range. Each element's result depends
/// only on its value: the tail goes through the same lanes, padded.
template <class V>
inline double sincos_array(const double* a, double* s, double* c, std::size_t n) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  // maxpd returns its second operand when one is NaN: |a| second ignores NaN lanes.
  D range = V::zero();
  std::size_t i = 0;
  for (; i + 4 * L <= n; i += 4 * L) {
    D v[4], sv[4], cv[4];
    for (int j = 0; j < 4; ++j) v[j] = V::load(a + i + j * L);
    sincos_lanes<V, 4>(v, sv, cv);
    for (int j = 0; j < 4; ++j) {
      V::store(s + i + j * L, sv[j]);
      V::store(c + i + j * L, cv[j]);
      range = V::max(V::abs(v[j]), range);
    }
  }
  for (; i + L <= n; i += L) {
    D v = V::load(a + i), sv, cv;
    sincos_lanes<V, 1>(&v, &sv, &cv);
    V::store(s + i, sv);
    V::store(c + i, cv);
    range = V::max(V::abs(v), range);
  }
  if (i < n) {
    alignas(64) double pa[L] = {}, ps[L], pc[L];
    const std::size_t m = n - i < L ? n - i : L;
    for (std::size_t j = 0; j < m; ++j) pa[j] = a[i + j];
    D v = V::load(pa), sv, cv;
    sincos_lanes<V, 1>(&v, &sv, &cv);
    V::store(ps, sv);
    V::store(pc, cv);
    for (std::size_t j = 0; j < m; ++j) {
      s[i + j] = ps[j];
      c[i + j] = pc[j];
    }
    range = V::max(V::abs(v), range);
  }
  return V::max_lane(range);
}

/// How the exp argument is formed from a lane value v: v itself, −v / divisor, or −v·(1/divisor)
/// where the divisor is a power of two (kernel widths σ = 2^k give 2σ² = 2^(2k+1)): its
/// reciprocal is exact, so the product rounds the same real number as the quotient — the same
/// bits — at the cost of a multiplication instead of a division.
enum class Argument { Value, NegQuotient, NegProduct };

template <class V, Argument kForm>
__attribute__((always_inline)) inline typename V::D exp_argument(typename V::D v, typename V::D c) {
  if (kForm == Argument::Value) return v;
  if (kForm == Argument::NegQuotient) return V::div(V::negate(v), c);
  return V::mul(V::negate(v), c);
}

/// 1/divisor when the divisor is ± a power of two whose reciprocal is a normal double (then
/// exact), else 0.
inline double exact_reciprocal(double divisor) {
  std::uint64_t bits;
  __builtin_memcpy(&bits, &divisor, sizeof bits);
  const std::uint64_t exponent = (bits >> 52) & 0x7ff, mantissa = bits & ((std::uint64_t{1} << 52) - 1);
  if (mantissa != 0 || exponent < 1 || exponent > 2045) return 0.0;
  return 1.0 / divisor;
}

/// Calls f(Argument constant, c) with the form and constant that divide by `divisor`.
template <class F>
inline void with_quotient(double divisor, const F& f) {
  const double reciprocal = exact_reciprocal(divisor);
  if (reciprocal != 0.0)
    f(std::integral_constant<Argument, Argument::NegProduct>{}, reciprocal);
  else
    f(std::integral_constant<Argument, Argument::NegQuotient>{}, divisor);
}

/// out[i] = exp(argument of in[i]). Each element's result depends only on its value: the tail
/// goes through the same lanes, padded.
template <class V, Argument kForm>
inline void exp_array(const double* in, double c, double* out, std::size_t n) {
  constexpr std::size_t L = V::kLanes;
  const typename V::D cv = V::set1(c);
  std::size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {  // two independent chains per iteration
    const auto a = exp_lanes<V>(exp_argument<V, kForm>(V::load(in + i), cv));
    const auto b = exp_lanes<V>(exp_argument<V, kForm>(V::load(in + i + L), cv));
    V::store(out + i, a);
    V::store(out + i + L, b);
  }
  for (; i + L <= n; i += L) V::store(out + i, exp_lanes<V>(exp_argument<V, kForm>(V::load(in + i), cv)));
  if (i < n) {
    alignas(64) double pad[L] = {};
    for (std::size_t j = i; j < n; ++j) pad[j - i] = in[j];
    V::store(pad, exp_lanes<V>(exp_argument<V, kForm>(V::load(pad), cv)));
    for (std::size_t j = i; j < n; ++j) out[j] = pad[j - i];
  }
}

/// exp(in[i]), or exp(−in[i] / divisor) when neg_div (fast_exp.h).
template <class V>
inline void exp_array_simd(const double* in, bool neg_div, double divisor, double* out, std::size_t n) {
  if (!neg_div) return exp_array<V, Argument::Value>(in, 1.0, out, n);
  with_quotient(divisor, [&](auto form, double c) { exp_array<V, decltype(form)::value>(in, c, out, n); });
}

/// Inner products of kX samples with the kVectors consecutive L-row vectors that start at
/// absolute row row0 (a multiple of L): dot[q][j] for sample q and vector j. Each vector carries
/// four partial sums (columns k ≡ m mod 4) through the features, combined as row_dots does.
/// Several vectors or samples at once give the FMA chains independent neighbours, and several
/// samples share each load.
template <class V, std::size_t kVectors, std::size_t kX>
__attribute__((always_inline)) inline void inner_products(const BlockedRows& rows, std::size_t row0, const double* const* xs,
                           typename V::D (&dot)[kX][kVectors]) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  const std::size_t d = rows.n_features, full = d / 4 * 4, tail = d % 4;
  const double* vector_at[kVectors];  // feature 0 of each vector's rows
  for (std::size_t j = 0; j < kVectors; ++j) {
    const std::size_t r = row0 + j * L;
    vector_at[j] = rows.values + (r / kBlockRows) * kBlockRows * d + r % kBlockRows;
  }
  const auto at = [&](std::size_t j, std::size_t k) { return vector_at[j] + k * kBlockRows; };
  const D zero = V::zero();
  D s0[kX][kVectors], s1[kX][kVectors], s2[kX][kVectors], s3[kX][kVectors];
  for (std::size_t q = 0; q < kX; ++q)
    for (std::size_t j = 0; j < kVectors; ++j) s0[q][j] = s1[q][j] = s2[q][j] = s3[q][j] = zero;
  for (std::size_t k = 0; k < full; k += 4)
    for (std::size_t j = 0; j < kVectors; ++j) {
      const D a0 = V::load(at(j, k)), a1 = V::load(at(j, k + 1)), a2 = V::load(at(j, k + 2)),
              a3 = V::load(at(j, k + 3));
      for (std::size_t q = 0; q < kX; ++q) {
        const double* x = xs[q] + k;
        s0[q][j] = V::fmadd(a0, V::set1(x[0]), s0[q][j]);
        s1[q][j] = V::fmadd(a1, V::set1(x[1]), s1[q][j]);
        s2[q][j] = V::fmadd(a2, V::set1(x[2]), s2[q][j]);
        s3[q][j] = V::fmadd(a3, V::set1(x[3]), s3[q][j]);
      }
    }
  // row_dots' masked tail: the partial sums past d − full add 0·0.
  if (tail != 0)
    for (std::size_t j = 0; j < kVectors; ++j)
      for (std::size_t q = 0; q < kX; ++q) {
        const double* x = xs[q] + full;
        s0[q][j] = V::fmadd(V::load(at(j, full)), V::set1(x[0]), s0[q][j]);
        s1[q][j] = tail > 1 ? V::fmadd(V::load(at(j, full + 1)), V::set1(x[1]), s1[q][j]) : V::add(s1[q][j], zero);
        s2[q][j] = tail > 2 ? V::fmadd(V::load(at(j, full + 2)), V::set1(x[2]), s2[q][j]) : V::add(s2[q][j], zero);
        s3[q][j] = V::add(s3[q][j], zero);
      }
  for (std::size_t q = 0; q < kX; ++q)
    for (std::size_t j = 0; j < kVectors; ++j)
      dot[q][j] = V::add(V::add(s0[q][j], s2[q][j]), V::add(s1[q][j], s3[q][j]));
}

/// The squared distance (as Eigen's (n2 + ‖x‖² − 2·dot).max(0): maxpd(0, value) keeps a NaN
/// value) and the Gaussian kernel value from an inner product.
template <class V>
__attribute__((always_inline)) inline typename V::D squared_distance(typename V::D dot, typename V::D norms2, typename V::D x_norm2) {
  return V::max(V::zero(), V::sub(V::add(norms2, x_norm2), V::mul(V::set1(2.0), dot)));
}
template <class V, Argument kForm>
__attribute__((always_inline)) inline typename V::D gaussian(typename V::D dot, typename V::D norms2, typename V::D x_norm2, typename V::D c) {
  return exp_lanes<V>(exp_argument<V, kForm>(squared_distance<V>(dot, norms2, x_norm2), c));
}

/// Walks the L-row vectors that cover rows [begin, end): `produce(row0, n, value)` fills
/// value[o][j] for output o < kOut and the n vectors from row0 (n = kVectors where they lie
/// inside the range, else 1), and the rows in range are stored to outs[o] (indexed from begin):
/// straight where the vectors lie inside the range, through a scratch copy where it cuts them.
template <class V, std::size_t kVectors, std::size_t kOut, class Produce>
inline void for_row_vectors(std::size_t begin, std::size_t end, double* const* outs, const Produce& produce) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  using Many = std::integral_constant<std::size_t, kVectors>;
  using One = std::integral_constant<std::size_t, 1>;
  const auto cut = [&](std::size_t row0) {
    D value[kOut][1];
    produce(row0, One{}, value);
    const std::size_t lo = row0 > begin ? row0 : begin;
    const std::size_t hi = row0 + L < end ? row0 + L : end;
    for (std::size_t o = 0; o < kOut; ++o) {
      alignas(64) double scratch[L];
      V::store(scratch, value[o][0]);
      for (std::size_t r = lo; r < hi; ++r) outs[o][r - begin] = scratch[r - row0];
    }
  };
  std::size_t row0 = begin / L * L;
  if (row0 < begin) {
    cut(row0);
    row0 += L;
  }
  for (; row0 + kVectors * L <= end; row0 += kVectors * L) {
    D value[kOut][kVectors];
    produce(row0, Many{}, value);
    for (std::size_t o = 0; o < kOut; ++o)
      for (std::size_t j = 0; j < kVectors; ++j) V::store(outs[o] + (row0 - begin) + j * L, value[o][j]);
  }
  for (; row0 + L <= end; row0 += L) {
    D value[kOut][1];
    produce(row0, One{}, value);
    for (std::size_t o = 0; o < kOut; ++o) V::store(outs[o] + (row0 - begin), value[o][0]);
  }
  if (row0 < end) cut(row0);
}

/// kernel_rows() (kernel_rows.h) for one quantity, two vectors at a time (eight partial sums:
/// more would not stay in AVX2's sixteen registers). c: the divisor's form (with_quotient).
template <class V, RowQuantity kQuantity, Argument kForm = Argument::NegQuotient>
inline void kernel_rows_blocks(const BlockedRows& rows, const double* x, double x_norm2, double c, double* out) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  const D xn = V::set1(x_norm2), cv = V::set1(c);
  const double* const xs[1] = {x};
  double* const outs[1] = {out};
  for_row_vectors<V, 2, 1>(
      rows.first, rows.first + rows.count, outs, [&](std::size_t row0, auto n_vectors, auto& value) {
        constexpr std::size_t N = decltype(n_vectors)::value;
        inner_products<V, N, 1>(rows, row0, xs, value);
        if (kQuantity == RowQuantity::InnerProduct) return;
        for (std::size_t j = 0; j < N; ++j) {
          const D n2 = V::load(rows.norms2 + row0 + j * L);
          value[0][j] = kQuantity == RowQuantity::Gaussian ? gaussian<V, kForm>(value[0][j], n2, xn, cv)
                                                           : squared_distance<V>(value[0][j], n2, xn);
        }
      });
}

/// inner_products() (kernel_rows.h) of kX samples, sharing each load of the rows.
template <class V, std::size_t kX>
inline void inner_products_of(const BlockedRows& rows, const double* const* xs, double* const* outs) {
  for_row_vectors<V, 1, kX>(rows.first, rows.first + rows.count, outs,
                            [&](std::size_t row0, auto, auto& value) { inner_products<V, 1, kX>(rows, row0, xs, value); });
}

/// gaussian_from_inner_products() (kernel_rows.h).
template <class V, Argument kForm>
inline void gaussian_from_dots(const double* norms2, const double* dots, std::size_t n, double x_norm2, double c,
                               double* out) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  const D xn = V::set1(x_norm2), cv = V::set1(c);
  std::size_t i = 0;
  for (; i + L <= n; i += L)
    V::store(out + i, gaussian<V, kForm>(V::load(dots + i), V::load(norms2 + i), xn, cv));
  if (i < n) {
    alignas(64) double pad_dots[L] = {}, pad_norms[L] = {}, result[L];
    for (std::size_t j = i; j < n; ++j) {
      pad_dots[j - i] = dots[j];
      pad_norms[j - i] = norms2[j];
    }
    V::store(result, gaussian<V, kForm>(V::load(pad_dots), V::load(pad_norms), xn, cv));
    for (std::size_t j = i; j < n; ++j) out[j] = result[j - i];
  }
}

template <class V>
inline void gaussian_from_dots_simd(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                    double divisor, double* out) {
  with_quotient(divisor, [&](auto form, double c) {
    gaussian_from_dots<V, decltype(form)::value>(norms2, dots, n, x_norm2, c, out);
  });
}

template <class V>
inline void inner_products_simd(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs) {
  if (V::kLanes == 4 && n_x > 2) {
    // Four partial sums per sample: more than two samples would spill AVX2's sixteen registers.
    inner_products_of<V, 2>(rows, xs, outs);
    return inner_products_simd<V>(rows, xs + 2, n_x - 2, outs + 2);
  }
  switch (n_x) {
    case 1: return inner_products_of<V, 1>(rows, xs, outs);
    case 2: return inner_products_of<V, 2>(rows, xs, outs);
    case 3: return inner_products_of<V, 3>(rows, xs, outs);
    default: return inner_products_of<V, 4>(rows, xs, outs);  // n_x = kMaxInnerProducts
  }
}

template <class V>
inline void kernel_rows_simd(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                             double divisor, double* out) {
  switch (quantity) {
    case RowQuantity::InnerProduct:
      return kernel_rows_blocks<V, RowQuantity::InnerProduct>(rows, x, x_norm2, divisor, out);
    case RowQuantity::SquaredDistance:
      return kernel_rows_blocks<V, RowQuantity::SquaredDistance>(rows, x, x_norm2, divisor, out);
    case RowQuantity::Gaussian:
      return with_quotient(divisor, [&](auto form, double c) {
        kernel_rows_blocks<V, RowQuantity::Gaussian, decltype(form)::value>(rows, x, x_norm2, c, out);
      });
  }
}

}  // namespace
}  // namespace omkl::detail::cpu
