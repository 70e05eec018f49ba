/// @file env_switch.h
/// @brief Path switches: environment variables, read when a backend is created, that pick one
/// of a few named code paths for comparisons and diagnostics (OMKL_CUDA_*; README lists them).
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <string>

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

}  // namespace omkl::detail
