/// @file intervals.h
/// @brief Geometric covering intervals of AdaRaker (spec/raker.md §4.1, §4.9).
///
/// Level j tiles time by intervals of length 2^j. Two placements:
///  - Daniely (1-based, the paper): level j is active from t = 2^j; intervals start when 2^j | t.
///  - Matlab (the authors' code, 0-based): level j is active from t = 2^j + 1 (level 0 from
///    t = 1); intervals start when 2^j | t − 1.
#pragma once

#include <cstdint>

namespace omkl::detail {

/// ⌊log2 v⌋ for v ≥ 1, with integer arithmetic.
inline int floor_log2(std::uint64_t v) {
  int k = -1;
  while (v) {
    v >>= 1;
    ++k;
  }
  return k;
}

enum class Placement { Daniely, Matlab };

inline std::int64_t level_active_from(Placement placement, int level) {
  if (placement == Placement::Daniely) return std::int64_t{1} << level;
  return level == 0 ? 1 : (std::int64_t{1} << level) + 1;
}

inline bool level_active(Placement placement, int level, std::int64_t t) {
  return t >= level_active_from(placement, level);
}

/// True when a new interval of `level` starts at t (the level is then active).
inline bool level_starts(Placement placement, int level, std::int64_t t) {
  const std::int64_t period = std::int64_t{1} << level;
  return level_active(placement, level, t) &&
         (placement == Placement::Daniely ? t % period == 0 : (t - 1) % period == 0);
}

}  // namespace omkl::detail
