/// @file simd_level.cpp
/// @brief Run-time detection of the CPU kernels' instruction-set level (simd_level.h).
#include "cpu/simd_level.h"

#include <cstdlib>
#include <string>

#include "core/env_switch.h"
#include "cpu/fast_sincos.h"  // OMKL_CPU_HAVE_AVX2_KERNELS
#include "cpu/simd_kernels.h"
#include "omkl/error.h"

namespace omkl::detail::cpu {

bool cpu_has_avx2_fma() {
#if OMKL_CPU_HAVE_AVX2_KERNELS
  // libgcc's / compiler-rt's CPU model also checks that the OS saves the YMM state.
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return supported;
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if OMKL_CPU_HAVE_SIMD_KERNELS
  // Also checks that the OS saves the ZMM state.
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && cpu_has_avx2_fma();
  }();
  return supported;
#else
  return false;
#endif
}

bool simd_level_available(SimdLevel level) {
  switch (level) {
    case SimdLevel::Portable: return true;
    case SimdLevel::Avx2Fma: return OMKL_CPU_HAVE_SIMD_KERNELS && cpu_has_avx2_fma();
    case SimdLevel::Avx512: return cpu_has_avx512();
  }
  return false;
}

void require_simd_level(SimdLevel level, const char* who) {
  if (!simd_level_available(level))
    throw Error(std::string(who) + ": this CPU lacks the " + to_string(level) + " kernels");
}

SimdLevel default_simd_level() {
  // Read once: every kernel of a process runs at one level (the study records it as its device).
  // A value other than the three is refused by name, not taken for `auto` (if the first call
  // throws, the next reads the variable again).
  static const SimdLevel level = [] {
    const std::string forced = path_switch("OMKL_CPU_SIMD");
    if (forced == "portable") return SimdLevel::Portable;
    if (simd_level_available(SimdLevel::Avx512) && forced != "avx2") return SimdLevel::Avx512;
    return simd_level_available(SimdLevel::Avx2Fma) ? SimdLevel::Avx2Fma : SimdLevel::Portable;
  }();
  return level;
}

const SimdKernels* simd_kernels(SimdLevel level) {
#if OMKL_CPU_HAVE_SIMD_KERNELS
  if (!simd_level_available(level)) return nullptr;
  if (level == SimdLevel::Avx512) return &kAvx512Kernels;
  if (level == SimdLevel::Avx2Fma) return &kAvx2Kernels;
#else
  (void)level;
#endif
  return nullptr;
}

const char* to_string(SimdLevel level) {
  switch (level) {
    case SimdLevel::Portable: return "portable";
    case SimdLevel::Avx2Fma: return "avx2+fma";
    case SimdLevel::Avx512: return "avx512";
  }
  return "?";
}

}  // namespace omkl::detail::cpu
