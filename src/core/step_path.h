/// @file step_path.h
/// @brief The `step_path` parameter every per-step-feedback family reads: `host` (the host
/// decides each step, the reference path) or `resident` (blocks of steps as one device-resident
/// program, core/resident_walk.h; on the GPU with --backend cuda, on the CPU its host driver).
#pragma once

#include <string>

#include "core/params.h"

namespace omkl::detail {

/// The default of every family's step_path: `host` until the resident walks have passed their
/// parity tests on a GPU (tests/unit/cuda/test_cuda_backend.cpp, CudaTest.Resident…).
inline constexpr const char* kDefaultStepPath = "host";

/// True for step_path=resident. `steps`: what one step of the family is, plural ("rounds",
/// "client samples"), for the parameter's one-line meaning.
inline bool read_step_path(ParamReader& params, const std::string& steps) {
  return params.get_choice("step_path", kDefaultStepPath, {"host", "resident"},
                           "host: the host decides each of the " + steps + "; resident: blocks of " + steps +
                               " as one device-resident program (on the GPU with --backend cuda)") == "resident";
}

}  // namespace omkl::detail
