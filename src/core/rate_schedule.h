/// @file rate_schedule.h
/// @brief A step size on its schedule: `rate`, or `rate`/√t. One expression for every host path
/// and device kernel that schedules a rate (the random-feature slots' η, the graph family's η_t,
/// ξ_t and η_{e,t}, RF-OMKR's and KOGD's η), so that a backend's step takes the host's bits.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/host_device.h"

namespace omkl::detail {

/// rate/√t when `over_sqrt_t`, else rate (t ≥ 1, the step's 1-based time).
OMKL_HD double scheduled_rate(double rate, bool over_sqrt_t, std::int64_t t) {
  return over_sqrt_t ? rate / std::sqrt(static_cast<double>(t)) : rate;
}

}  // namespace omkl::detail
