/// @file simd_kernels.h
/// @brief Entry points of the x86 kernels, one table per SIMD level: SimdLevel::Avx2Fma
/// (simd_kernels_avx2.cpp, compiled with -mavx2 -mfma) and SimdLevel::Avx512
/// (simd_kernels_avx512.cpp, -mavx512f as well). Both are the same templates
/// (simd_kernels_impl.h) and give the same bits; simd_kernels(level) hands out a level's table
/// only where it can run (callers: fast_exp.cpp, fast_sincos.cpp, kernel_rows.cpp). The random-feature backend's entry points
/// are SimdSlotKernels (slot_kernels.h), defined in the same two files.
#pragma once

#include <cstddef>

#include "cpu/kernel_rows.h"
#include "cpu/simd_level.h"

// The widths this build has: CMake compiles the two files, and defines OMKL_CPU_SIMD_KERNELS,
// on x86-64 with GCC or Clang; the compile definition OMKL_CPU_NO_AVX2_KERNELS leaves them
// unused, as it leaves out the other AVX2 kernels (fast_sincos.h).
#if defined(OMKL_CPU_SIMD_KERNELS) && !defined(OMKL_CPU_NO_AVX2_KERNELS)
#define OMKL_CPU_HAVE_SIMD_KERNELS 1
#else
#define OMKL_CPU_HAVE_SIMD_KERNELS 0
#endif

namespace omkl::detail::cpu {

/// The array entry points of one FMA level.
struct SimdKernels {
  /// out[i] = exp(in[i]), or exp(−in[i] / divisor) when neg_div (fast_exp.h).
  void (*exp_array)(const double* in, bool neg_div, double divisor, double* out, std::size_t n);
  /// kernel_rows.h.
  void (*kernel_rows)(const BlockedRows& rows, const double* x, double x_norm2, RowQuantity quantity,
                      double divisor, double* out);
  void (*inner_products)(const BlockedRows& rows, const double* const* xs, std::size_t n_x, double* const* outs);
  void (*gaussian_from_inner_products)(const double* norms2, const double* dots, std::size_t n, double x_norm2,
                                       double divisor, double* out);
  /// s, c = sin, cos of a (fast_sincos.h); returns max |a[i]| for the caller's range check.
  double (*sincos_array)(const double* a, double* s, double* c, std::size_t n);
  /// The float sin and cos (fast_sincos_float()).
  void (*sincos_float_array)(const float* a, float* s, float* c, std::size_t n);
};

/// The entry points of `level` where it is an FMA level that can run here; null otherwise (the
/// portable level, a level the CPU lacks, or a build without these kernels).
const SimdKernels* simd_kernels(SimdLevel level);

#if OMKL_CPU_HAVE_SIMD_KERNELS
/// Each defined by its level's file (simd_kernels_entry_points.h).
extern const SimdKernels kAvx2Kernels;
extern const SimdKernels kAvx512Kernels;
#endif

}  // namespace omkl::detail::cpu
