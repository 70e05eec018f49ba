/// @file fast_exp.cpp
/// @brief Dispatch of the exp kernels (see fast_exp.h; the vector kernels are in
/// simd_kernels_impl.h, at the width kernel_rows.h's default_simd_level() picks).
#include "cpu/fast_exp.h"

#include <cmath>

#include "cpu/simd_kernels.h"

namespace omkl::detail::cpu {

namespace {

void exp_dispatch(SimdLevel level, const double* in, bool neg_div, double divisor, double* out,
                  std::size_t n) {
  require_simd_level(level, "fast_exp");
  if (const SimdKernels* kernels = simd_kernels(level)) return kernels->exp_array(in, neg_div, divisor, out, n);
  if (neg_div)
    for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(-in[i] / divisor);
  else
    for (std::size_t i = 0; i < n; ++i) out[i] = std::exp(in[i]);
}

}  // namespace

void fast_exp(const double* in, double* out, std::size_t n) {
  exp_dispatch(default_simd_level(), in, false, 1.0, out, n);
}

void fast_exp_neg_div(const double* in, double divisor, double* out, std::size_t n) {
  exp_dispatch(default_simd_level(), in, true, divisor, out, n);
}

void fast_exp(SimdLevel level, const double* in, double* out, std::size_t n) {
  exp_dispatch(level, in, false, 1.0, out, n);
}

void fast_exp_neg_div(SimdLevel level, const double* in, double divisor, double* out, std::size_t n) {
  exp_dispatch(level, in, true, divisor, out, n);
}

}  // namespace omkl::detail::cpu
