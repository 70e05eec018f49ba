/// @file simd_level.h
/// @brief The instruction-set level of the CPU kernels, chosen once per process at run time.
///
/// Portable: plain C++ (other bits than the x86 levels). Avx2Fma: AVX2 + FMA intrinsics, every
/// FMA explicit. Avx512: the same arithmetic on 512-bit registers where a kernel has a 512-bit
/// form (the exact-kernel rows and exp, the random-feature sincos), the AVX2 kernels elsewhere —
/// the same bits as Avx2Fma, lane for lane (tested), so results do not depend on which of the
/// two a machine has. A given machine always takes the same level.
#pragma once

namespace omkl::detail::cpu {

enum class SimdLevel { Portable, Avx2Fma, Avx512 };

/// True when this build has the AVX2 kernels and the running CPU (and OS) support AVX2 + FMA.
bool cpu_has_avx2_fma();
/// True when this build has the 512-bit kernels and the CPU (and OS) support AVX-512F and AVX2.
bool cpu_has_avx512();
/// True when `level` can run here.
bool simd_level_available(SimdLevel level);
/// Throws omkl::Error naming `who` and the level when `level` cannot run here (the functions
/// that take an explicit level: tests compare levels, and a level the CPU lacks is a mistake).
void require_simd_level(SimdLevel level, const char* who);
/// True for the levels that compute with the AVX2 + FMA arithmetic (Avx2Fma, Avx512).
inline bool uses_fma_kernels(SimdLevel level) { return level != SimdLevel::Portable; }

/// The level used by default: the highest available, or the one the environment variable
/// OMKL_CPU_SIMD asks for (portable, avx2; an unavailable one is ignored).
SimdLevel default_simd_level();
const char* to_string(SimdLevel level);

}  // namespace omkl::detail::cpu
