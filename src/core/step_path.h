/// @file step_path.h
/// @brief The `step_path` parameter every per-step-feedback family reads: `host` (the host
/// decides each step, the reference path), `resident` (blocks of steps as one device-resident
/// program, core/resident_walk.h; on the GPU with --backend cuda, on the CPU its host driver) or
/// `auto` (resident where the walk would run on a GPU and the configuration allows it, host
/// otherwise: one command line for both machines).
#pragma once

#include <string>

#include "core/params.h"

namespace omkl::detail {

/// The default of every family's step_path: `auto`, since the resident walks passed their parity
/// tests on a GPU (tests/unit/cuda/test_cuda_backend.cpp, CudaTest.Resident…, an H200 on
/// 2026-11-26); the CPU stays on the host path.
inline constexpr const char* kDefaultStepPath = "auto";

/// Reads step_path and decides it: true for a resident walk. `steps`: what one step of the
/// family is, plural ("rounds", "client samples"), for the parameter's meaning; `on_gpu`: the
/// algorithm's walks would run on a GPU (backend_on_gpu()); `why_not`: why this configuration
/// cannot walk resident, empty where it can. `resident` with a reason is a configuration error
/// that gives it; `auto` is resident only on a GPU with no reason.
inline bool read_step_path(ParamReader& params, const std::string& steps, bool on_gpu, const std::string& why_not) {
  const std::string path = params.get_choice(
      "step_path", kDefaultStepPath, {"host", "resident", "auto"},
      "host: the host decides each of the " + steps + "; resident: blocks of " + steps +
          " as one device-resident program (on the GPU with --backend cuda); auto: resident on a GPU where the "
          "configuration allows, else host");
  if (path == "resident" && !why_not.empty()) params.fail("step_path", "cannot be resident here: " + why_not);
  return path == "resident" || (path == "auto" && on_gpu && why_not.empty());
}

/// Why a configuration in float cannot walk resident on the CPU, or "" where it can: the
/// walk's host driver computes in double (it is the GPU walk's reference), so precision=float
/// would be ignored there, and the samples a block leaves to the host path would not be.
inline std::string float_walk_on_cpu(bool single_precision, bool on_gpu) {
  if (!single_precision || on_gpu) return "";
  return "precision=float on the CPU backend (the resident walk's host driver computes in double; use "
         "step_path=host)";
}

}  // namespace omkl::detail
