/// @file fast_exp.h
/// @brief Vectorised double-precision exp for the exact-kernel baselines, whose run time is
/// almost all exp(−‖x − x_τ‖²/2σ²) and exp(−‖x − x_τ‖₁/σ) over the support set.
///
/// Method (AVX2 + FMA four lanes at a time, or AVX-512F eight with the same bits): k = round(x·log₂e) by the rounding constant 1.5·2⁵²;
/// r = x − k·ln2 in two FMAs (|r| ≤ ln2/2); e^r by its Taylor polynomial to degree 13 in
/// Horner form (truncation below 4e-18 relative); e^x = (e^r·2^⌊k/2⌋)·2^(k−⌊k/2⌋), two exact
/// power-of-two scalings so that results in the subnormal range round once and overflow and
/// underflow come out as ∞ and 0. Arguments are clamped to [−746, 710] first (beyond, the
/// results are 0 and ∞ anyway); NaN stays NaN. Relative error ≤ 2 ulp on normal results (unit
/// test against long double); exp(0) = 1 exactly.
///
/// Without AVX2 + FMA (or with OMKL_CPU_SIMD=portable), std::exp. The width follows
/// default_simd_level(). Each element's result
/// depends only on its value: the tail of an array goes through the same vector kernel.
#pragma once

#include <cstddef>

#include "cpu/simd_level.h"

namespace omkl::detail::cpu {

/// out[i] = exp(in[i]) for i < n; `in` and `out` may be the same array.
void fast_exp(const double* in, double* out, std::size_t n);

/// out[i] = exp(−in[i] / divisor), the argument rounded exactly as that expression rounds it
/// (one pass instead of two: a kernel value exp(−d/(2σ²)) or exp(−d/σ) straight from d).
void fast_exp_neg_div(const double* in, double divisor, double* out, std::size_t n);

/// Same at an explicit level (available: simd_level_available()); tests compare levels.
void fast_exp(SimdLevel level, const double* in, double* out, std::size_t n);
void fast_exp_neg_div(SimdLevel level, const double* in, double divisor, double* out, std::size_t n);

}  // namespace omkl::detail::cpu
