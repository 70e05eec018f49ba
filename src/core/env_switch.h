/// @file env_switch.h
/// @brief Path switches: environment variables, read when a backend is created, that pick one
/// of a few named code paths for comparisons and diagnostics (OMKL_CUDA_*; README lists them).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "omkl/error.h"

namespace omkl::detail {

/// The value of switch `name`: `fallback` when it is unset, else its value, which must be
/// `fallback` or one of `choices`; anything else is a ConfigError that names the switch and
/// the choices ("NAME must be a, b or c, not 'x'").
inline std::string env_switch(const char* name, const std::string& fallback,
                              std::initializer_list<const char*> choices) {
  const char* set = std::getenv(name);
  const std::string value = set != nullptr ? set : fallback;
  if (value == fallback) return value;
  std::string listed;
  std::size_t i = 0;
  for (const char* choice : choices) {
    if (value == choice) return value;
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choice);
    ++i;
  }
  throw ConfigError(std::string(name) + " must be " + listed + ", not '" + value + "'");
}

/// Every switch that picks a code path or changes how it is timed (README, "Command line"):
/// the CPU's SIMD level, the CUDA backend's paths, the host driver's lanes and the timing
/// report (which runs clocked copies of the resident walks).
inline constexpr const char* kPathSwitches[] = {
    "OMKL_CPU_SIMD",           "OMKL_CUDA_DRAWS",        "OMKL_CUDA_PROJECTIONS", "OMKL_CUDA_ROUND",
    "OMKL_CUDA_STEP_SELECTED", "OMKL_CUDA_TRAJECTORIES", "OMKL_CUDA_WALK_PAIRS",  "OMKL_CUDA_WALK_PLAN",
    "OMKL_CUDA_WALK_THREADS",  "OMKL_HOST_WALK_LANES",   "OMKL_TIMING",           "OMKL_WALK_STATE",
    "OMKL_WALK_SUMS"};

/// The path switches set (to a non-empty value) in this process's environment, in
/// kPathSwitches' order: what a study's summary and a benchmark's JSON record beside their
/// numbers, so that a number measured on an opt-in path says so.
inline std::vector<std::pair<std::string, std::string>> path_switches_set() {
  std::vector<std::pair<std::string, std::string>> set;
  for (const char* name : kPathSwitches) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') set.emplace_back(name, value);
  }
  return set;
}

}  // namespace omkl::detail
