/// @file simd_kernels_entry_points.h
/// @brief The entry points of one SIMD level (simd_kernels.h, SimdSlotKernels of slot_kernels.h),
/// defined on the templates of simd_kernels_impl.h and slot_kernels_simd.h. Included once, at the
/// end, by each per-level file (simd_kernels_avx2.cpp, simd_kernels_avx512.cpp), which first
/// defines OMKL_SIMD_TABLE (kAvx2Kernels, kAvx512Kernels), OMKL_SIMD_VECTOR (V256, V512),
/// OMKL_SIMD_FLOATS (F256, F512), OMKL_SIMD_SINCOS (SinCos256, SinCos512) and OMKL_SIMD_LEVEL
/// (SimdLevel::Avx2Fma, SimdLevel::Avx512).
// No include guard: one inclusion per level file, by design.

#include "cpu/simd_kernels.h"
#include "cpu/simd_kernels_impl.h"
#include "cpu/slot_kernels_simd.h"

namespace omkl::detail::cpu {

extern const SimdKernels OMKL_SIMD_TABLE;
const SimdKernels OMKL_SIMD_TABLE = {
    &exp_array_simd<OMKL_SIMD_VECTOR>,
    &kernel_rows_simd<OMKL_SIMD_VECTOR>,
    &inner_products_simd<OMKL_SIMD_VECTOR>,
    &gaussian_from_dots_simd<OMKL_SIMD_VECTOR>,
    &sincos_array<OMKL_SIMD_VECTOR>,
    &sincos_float_array<OMKL_SIMD_FLOATS>,
};

}  // namespace omkl::detail::cpu

namespace omkl::detail::cpu {
namespace {
template <>
struct SinCosOf<OMKL_SIMD_LEVEL> {
  using type = OMKL_SIMD_SINCOS;
};
}  // namespace

OMKL_INSTANTIATE_SIMD_SLOT_KERNELS(OMKL_SIMD_LEVEL)

}  // namespace omkl::detail::cpu
