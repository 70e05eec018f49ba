/// @file cpu_rf_backend.h
/// @brief CPU backend entry points beyond make_cpu_rf_backend (features/rf_backend.h): choosing
/// the instruction-set level explicitly, for tests and benchmarks.
#pragma once

#include <memory>

#include "features/rf_backend.h"
#include "cpu/fast_sincos.h"

namespace omkl::detail::cpu {

/// A CPU backend using the kernels of `level` (a level the CPU lacks falls back to the next
/// lower one: Avx512 to Avx2Fma, Avx2Fma to Portable). make_cpu_rf_backend(problem) uses default_simd_level().
std::unique_ptr<RfBackend> make_cpu_rf_backend(const RfProblem& problem, SimdLevel level);

/// The level a backend made by this file actually runs (null or foreign backends: Portable).
SimdLevel cpu_backend_simd_level(const RfBackend& backend);

}  // namespace omkl::detail::cpu
