/// @file simd_kernels_avx512.cpp
/// @brief The CPU kernels at SimdLevel::Avx512 (8-lane vectors, V512, where a kernel has an
/// 8-lane form). CMake compiles this file alone with -mavx512f -mavx2 -mfma; nothing else of the
/// library is compiled with them.

// GCC 12 warns inside its own AVX-512 intrinsics (the deliberately undefined pass-through
// operand of the masked forms, `__m512d __Y = __Y;`): a false positive, silenced for this file.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include "cpu/simd_kernels.h"

#if OMKL_CPU_HAVE_SIMD_KERNELS

#if !defined(__AVX512F__)
#error "simd_kernels_avx512.cpp must be compiled with -mavx512f -mavx2 -mfma"
#endif

#define OMKL_SIMD_TABLE kAvx512Kernels
#define OMKL_SIMD_VECTOR V512
#define OMKL_SIMD_FLOATS F512
#define OMKL_SIMD_SINCOS SinCos512
#define OMKL_SIMD_LEVEL SimdLevel::Avx512
#include "cpu/simd_kernels_entry_points.h"

#endif  // OMKL_CPU_HAVE_SIMD_KERNELS
