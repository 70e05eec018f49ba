/// @file env_switch.h
/// @brief Path switches: environment variables, read when a backend is created, that pick one
/// of a few named code paths for comparisons and diagnostics (OMKL_CUDA_*; README lists them).
#pragma once

#include <cstdlib>
#include <exception>
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

/// One path switch: its name, its value when unset, and what it may be set to.
struct PathSwitch {
  enum class Kind { Choice, Count, Flag };
  const char* name;
  const char* fallback;        ///< the value when unset (Choice), or as documented
  const char* choices[6];      ///< Choice: the values besides the fallback (nullptr-terminated)
  Kind kind = Kind::Choice;    ///< Count: a whole number in [low, high]; Flag: 0 or 1
  unsigned low = 0, high = 0;
};

/// Every switch that picks a code path or changes how it is timed (README, "Command line"):
/// the CPU's SIMD level, the CUDA backend's paths, the host driver's lanes and the timing
/// report (which runs clocked copies of the resident walks). The one list of their values:
/// path_switch() reads a switch by it, and check_path_switches() refuses a bad value of any
/// switch, also one that this build never reads (a CUDA switch in a CPU-only build), so that a
/// study does not record a value that no path has.
inline const PathSwitch kPathSwitches[] = {
    {"OMKL_CPU_SIMD", "auto", {"avx2", "portable"}},
    {"OMKL_CUDA_BANDIT_DRAWS", "host", {"device"}},
    {"OMKL_CUDA_DRAWS", "device", {"host"}},
    {"OMKL_CUDA_PROJECTIONS", "auto", {"fused", "gemm"}},
    {"OMKL_CUDA_ROUND", "native", {"generic"}},
    {"OMKL_CUDA_STEP_SELECTED", "native", {"generic"}},
    {"OMKL_CUDA_TRAJECTORIES", "", {"per_slot", "per_kernel", "lean", "generic"}},
    {"OMKL_CUDA_WALK_PAIRS", "", {"warp", "auto"}},
    {"OMKL_CUDA_WALK_PLAN", "block", {"thread"}},
    {"OMKL_CUDA_WALK_THREADS", "", {"128", "256", "512", "auto"}},
    {"OMKL_HOST_WALK_LANES", "1", {}, PathSwitch::Kind::Count, 1, 128},
    {"OMKL_TIMING", "0", {}, PathSwitch::Kind::Flag},
    {"OMKL_WALK_STATE", "arena", {"local"}},
    {"OMKL_WALK_SUMS", "auto", {"ordered", "tree"}},
};

/// The entry of switch `name` (an Error for a name not in kPathSwitches: a typo in the library).
inline const PathSwitch& path_switch_entry(const std::string& name) {
  for (const PathSwitch& entry : kPathSwitches)
    if (name == entry.name) return entry;
  throw Error("no path switch named " + name);
}

/// The value of a Choice switch of kPathSwitches: its fallback when unset or empty, else one of its
/// values, or a ConfigError as env_switch() words it (the fallback listed first).
inline std::string path_switch(const char* name) {
  const PathSwitch& entry = path_switch_entry(name);
  const char* set = std::getenv(name);
  const std::string value = set != nullptr && *set != '\0' ? set : entry.fallback;  // empty: unset
  if (value == entry.fallback) return value;
  std::vector<std::string> listed;
  if (*entry.fallback != '\0') listed.emplace_back(entry.fallback);
  for (const char* choice : entry.choices) {
    if (choice == nullptr) break;
    if (value == choice) return value;
    listed.emplace_back(choice);
  }
  std::string text;
  for (std::size_t i = 0; i < listed.size(); ++i)
    text += (i == 0 ? "" : i + 1 == listed.size() ? " or " : ", ") + listed[i];
  throw ConfigError(std::string(name) + " must be " + text + ", not '" + value + "'");
}

/// The value of a Count switch: its fallback when unset or empty, else a whole number in [low, high].
inline unsigned path_switch_count(const char* name) {
  const PathSwitch& entry = path_switch_entry(name);
  const char* set = std::getenv(name);
  const std::string text = set != nullptr && *set != '\0' ? set : entry.fallback;
  std::size_t used = 0;
  unsigned long value = 0;
  const bool digits = !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
  if (digits) {
    try {
      value = std::stoul(text, &used);
    } catch (const std::exception&) {
      used = 0;  // too large: refused below
    }
  }
  if (!digits || used != text.size() || value < entry.low || value > entry.high)
    throw ConfigError(std::string(name) + " must be a whole number from " + std::to_string(entry.low) + " to " +
                      std::to_string(entry.high) + ", not '" + text + "'");
  return static_cast<unsigned>(value);
}

/// Refuses (ConfigError, naming the switch and its values) a path switch set to a value it
/// cannot take, whether or not this build reads it. Unset and empty switches pass.
inline void check_path_switches() {
  for (const PathSwitch& entry : kPathSwitches) {
    const char* set = std::getenv(entry.name);
    if (set == nullptr || *set == '\0') continue;
    if (entry.kind == PathSwitch::Kind::Count) {
      path_switch_count(entry.name);
    } else if (entry.kind == PathSwitch::Kind::Flag) {
      if (std::string(set) != "0" && std::string(set) != "1")
        throw ConfigError(std::string(entry.name) + " must be 0 or 1, not '" + set + "'");
    } else {
      path_switch(entry.name);
    }
  }
}

/// The path switches set (to a non-empty value) in this process's environment, in
/// kPathSwitches' order (each checked: check_path_switches()): what a study's summary and a benchmark's JSON record beside their
/// numbers, so that a number measured on an opt-in path says so.
inline std::vector<std::pair<std::string, std::string>> path_switches_set() {
  std::vector<std::pair<std::string, std::string>> set;
  check_path_switches();  // a value no path has is refused, not recorded
  for (const PathSwitch& entry : kPathSwitches) {
    const char* value = std::getenv(entry.name);
    if (value != nullptr && *value != '\0') set.emplace_back(entry.name, value);
  }
  return set;
}

}  // namespace omkl::detail
