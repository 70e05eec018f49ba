/// @file timing.h
/// @brief OMKL_TIMING=1: diagnostic timings printed on stderr (construction, and on the CUDA
/// backend where the online loop's time goes), so that a GPU session measures instead of guessing.
#pragma once

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace omkl::detail {

/// Whether OMKL_TIMING=1 is set (read on each call: no cached global).
inline bool timing_enabled() {
  const char* value = std::getenv("OMKL_TIMING");
  return value != nullptr && std::strcmp(value, "1") == 0;
}

/// Milliseconds between two steady-clock points.
inline double elapsed_ms(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace omkl::detail
