/// @file simd_kernels_avx2.cpp
/// @brief The CPU kernels at SimdLevel::Avx2Fma (4-lane vectors, V256). CMake compiles this file
/// alone with -mavx2 -mfma; nothing else of the library is compiled with them.
#include "cpu/simd_kernels.h"

#if OMKL_CPU_HAVE_SIMD_KERNELS

#if !(defined(__AVX2__) && defined(__FMA__))
#error "simd_kernels_avx2.cpp must be compiled with -mavx2 -mfma"
#endif

#define OMKL_SIMD_TABLE kAvx2Kernels
#define OMKL_SIMD_VECTOR V256
#define OMKL_SIMD_FLOATS F256
#define OMKL_SIMD_SINCOS SinCos256
#define OMKL_SIMD_LEVEL SimdLevel::Avx2Fma
#include "cpu/simd_kernels_entry_points.h"

#endif  // OMKL_CPU_HAVE_SIMD_KERNELS
