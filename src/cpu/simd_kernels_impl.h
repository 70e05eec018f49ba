/// @file simd_kernels_impl.h
/// @brief The exp and kernel-row kernels written once over a vector type V (simd_vector.h),
/// included by one translation unit per width (simd_kernels_avx2.cpp, simd_kernels_avx512.cpp)
/// whose compile flags enable the instructions. Internal linkage throughout, as simd_vector.h.
///
/// No standard-library templates here: an inline function of the library compiled with wider
/// instructions could be picked by the linker for every caller.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/kernel_rows.h"
#include "cpu/simd_vector.h"

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
inline typename V::D exp_lanes(typename V::D x) {
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

/// The argument of lane vector v: v itself, or −v / divisor.
template <class V, bool kNegDiv>
inline typename V::D exp_argument(typename V::D v, typename V::D divisor) {
  if (!kNegDiv) return v;
  return V::div(V::negate(v), divisor);
}

/// out[i] = exp(in[i]) or exp(−in[i] / divisor). Each element's result depends only on its
/// value: the tail goes through the same lanes, padded.
template <class V, bool kNegDiv>
inline void exp_array(const double* in, double divisor, double* out, std::size_t n) {
  constexpr std::size_t L = V::kLanes;
  const typename V::D div = V::set1(divisor);
  std::size_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {  // two independent chains per iteration
    const auto a = exp_lanes<V>(exp_argument<V, kNegDiv>(V::load(in + i), div));
    const auto b = exp_lanes<V>(exp_argument<V, kNegDiv>(V::load(in + i + L), div));
    V::store(out + i, a);
    V::store(out + i + L, b);
  }
  for (; i + L <= n; i += L) V::store(out + i, exp_lanes<V>(exp_argument<V, kNegDiv>(V::load(in + i), div)));
  if (i < n) {
    alignas(64) double pad[L] = {};
    for (std::size_t j = i; j < n; ++j) pad[j - i] = in[j];
    V::store(pad, exp_lanes<V>(exp_argument<V, kNegDiv>(V::load(pad), div)));
    for (std::size_t j = i; j < n; ++j) out[j] = pad[j - i];
  }
}

/// The results of kBlocks consecutive blocks starting at absolute row row0, in
/// kBlocks·kBlockRows / L vectors: each vector carries four partial sums (columns k ≡ m mod 4)
/// through the features, then the quantity. Several blocks at once give the FMA and exp
/// chains independent neighbours.
template <class V, RowQuantity kQuantity, std::size_t kBlocks>
inline void block_values(const BlockedRows& rows, std::size_t row0, const double* x, double x_norm2,
                         double divisor, typename V::D* value) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  constexpr std::size_t kPerBlock = kBlockRows / L;
  constexpr std::size_t N = kBlocks * kPerBlock;
  const std::size_t d = rows.n_features, full = d / 4 * 4, tail = d % 4;
  const double* base = rows.values + row0 * d;  // the blocks are consecutive, kBlockRows·d apart
  const auto at = [&](std::size_t j, std::size_t k) {
    return base + (j / kPerBlock) * kBlockRows * d + k * kBlockRows + (j % kPerBlock) * L;
  };
  const D zero = V::zero();
  D s0[N], s1[N], s2[N], s3[N];
  for (std::size_t j = 0; j < N; ++j) s0[j] = s1[j] = s2[j] = s3[j] = zero;
  for (std::size_t k = 0; k < full; k += 4) {
    for (std::size_t c = 0; c < 4 * kBlocks; ++c) __builtin_prefetch(base + 4096 + (k * kBlocks + c) * kBlockRows);
    const D x0 = V::set1(x[k]), x1 = V::set1(x[k + 1]), x2 = V::set1(x[k + 2]), x3 = V::set1(x[k + 3]);
    for (std::size_t j = 0; j < N; ++j) {
      s0[j] = V::fmadd(V::load(at(j, k)), x0, s0[j]);
      s1[j] = V::fmadd(V::load(at(j, k + 1)), x1, s1[j]);
      s2[j] = V::fmadd(V::load(at(j, k + 2)), x2, s2[j]);
      s3[j] = V::fmadd(V::load(at(j, k + 3)), x3, s3[j]);
    }
  }
  // row_dots' masked tail: the partial sums past d − full add 0·0.
  if (tail != 0) {
    const D x0 = V::set1(x[full]);
    const D x1 = tail > 1 ? V::set1(x[full + 1]) : zero, x2 = tail > 2 ? V::set1(x[full + 2]) : zero;
    for (std::size_t j = 0; j < N; ++j) {
      s0[j] = V::fmadd(V::load(at(j, full)), x0, s0[j]);
      s1[j] = tail > 1 ? V::fmadd(V::load(at(j, full + 1)), x1, s1[j]) : V::add(s1[j], zero);
      s2[j] = tail > 2 ? V::fmadd(V::load(at(j, full + 2)), x2, s2[j]) : V::add(s2[j], zero);
      s3[j] = V::add(s3[j], zero);
    }
  }
  for (std::size_t j = 0; j < N; ++j) value[j] = V::add(V::add(s0[j], s2[j]), V::add(s1[j], s3[j]));
  if (kQuantity == RowQuantity::InnerProduct) return;
  // As Eigen's (n2 + ‖x‖² − 2·dot).max(0): maxpd(0, value) keeps a NaN value.
  const D two = V::set1(2.0), xn = V::set1(x_norm2);
  for (std::size_t j = 0; j < N; ++j)
    value[j] = V::max(zero, V::sub(V::add(V::load(rows.norms2 + row0 + j * L), xn), V::mul(two, value[j])));
  if (kQuantity != RowQuantity::Gaussian) return;
  const D div = V::set1(divisor);
  for (std::size_t j = 0; j < N; ++j) value[j] = exp_lanes<V>(exp_argument<V, true>(value[j], div));
}

/// kernel_rows() (kernel_rows.h) for one quantity: whole blocks two at a time straight into
/// `out`, a block cut by the range's ends through a scratch block.
template <class V, RowQuantity kQuantity>
inline void kernel_rows_blocks(const BlockedRows& rows, const double* x, double x_norm2, double divisor,
                               double* out) {
  using D = typename V::D;
  constexpr std::size_t L = V::kLanes;
  constexpr std::size_t kPerBlock = kBlockRows / L;
  const std::size_t begin = rows.first, end = rows.first + rows.count;
  D value[2 * kPerBlock];
  const auto cut_block = [&](std::size_t row0) {
    alignas(64) double scratch[kBlockRows];
    block_values<V, kQuantity, 1>(rows, row0, x, x_norm2, divisor, value);
    for (std::size_t j = 0; j < kPerBlock; ++j) V::store(scratch + j * L, value[j]);
    const std::size_t lo = row0 > begin ? row0 : begin;
    const std::size_t hi = row0 + kBlockRows < end ? row0 + kBlockRows : end;
    for (std::size_t r = lo; r < hi; ++r) out[r - begin] = scratch[r - row0];
  };
  std::size_t row0 = begin / kBlockRows * kBlockRows;
  if (row0 < begin) {
    cut_block(row0);
    row0 += kBlockRows;
  }
  for (; row0 + 2 * kBlockRows <= end; row0 += 2 * kBlockRows) {
    block_values<V, kQuantity, 2>(rows, row0, x, x_norm2, divisor, value);
    for (std::size_t j = 0; j < 2 * kPerBlock; ++j) V::store(out + (row0 - begin) + j * L, value[j]);
  }
  if (row0 + kBlockRows <= end) {
    block_values<V, kQuantity, 1>(rows, row0, x, x_norm2, divisor, value);
    for (std::size_t j = 0; j < kPerBlock; ++j) V::store(out + (row0 - begin) + j * L, value[j]);
    row0 += kBlockRows;
  }
  if (row0 < end) cut_block(row0);
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
      return kernel_rows_blocks<V, RowQuantity::Gaussian>(rows, x, x_norm2, divisor, out);
  }
}

}  // namespace
}  // namespace omkl::detail::cpu
