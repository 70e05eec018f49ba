/// @file curand_philox.cuh
/// @brief cuRAND's Philox-4x32-10 block function as the block source of frequency_recipe.h's
/// PhiloxBlocks, callable on the device (kernels/frequency_draws.cu) and on the host, so that a
/// build without a GPU still checks that this adapter reads the host RandomStream's blocks
/// (tests/unit/cuda/test_curand_philox.cpp; the device run is CudaTest.DeviceDrawsEqualTheHostDraws).
///
/// cuRAND declares its Philox functions `__device__` unless QUALIFIERS is defined first (the
/// header's own switch); the macro is set for this include only. A translation unit that has
/// already included curand_kernel.h gets cuRAND's device-only version, and a host call then
/// fails to compile rather than silently differ.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#pragma push_macro("QUALIFIERS")
#undef QUALIFIERS
#define QUALIFIERS static __forceinline__ __host__ __device__
// cuRAND's Philox alone: curand_kernel.h would add ~1 MB of other generators' device tables.
#include <curand_philox4x32_x.h>
#pragma pop_macro("QUALIFIERS")

#include "features/frequency_recipe.h"

namespace omkl::cuda {

/// The block for the counter (c0, c1, c2, c3) under the key (k0, k1), word for word the host's
/// philox4x32(): with PhiloxBlocks' counter (block lo, block hi, stream_hi lo, stream_hi hi) and
/// key (key0, key1) it is RandomStream's block (and what curand_init(seed = key, subsequence =
/// stream_hi, offset = 4·block) would start from).
struct CurandPhilox {
  OMKL_HD detail::PhiloxWords operator()(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                                         std::uint32_t k0, std::uint32_t k1) const {
    const uint4 w = curand_Philox4x32_10(make_uint4(c0, c1, c2, c3), make_uint2(k0, k1));
    return {w.x, w.y, w.z, w.w};
  }
};

/// A matrix's stream from cuRAND's block function.
using CurandBlocks = detail::PhiloxBlocks<CurandPhilox>;

}  // namespace omkl::cuda
