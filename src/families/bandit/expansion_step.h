/// @file expansion_step.h
/// @brief The ball step of a kernel expansion with a lazy scale (spec/bandit.md §2.1), as host/
/// device code: KernelHypotheses::update() runs it on the host path, the resident walk
/// (resident_support.h) on its pool, so the two project and fold at the same rounds.
#pragma once

#include <cmath>

#include "core/host_device.h"

namespace omkl::detail {

/// The lazy scale is folded into the coefficients before it underflows (§2.1: "≈ 1e−100").
constexpr double kMinExpansionScale = 1e-100;

/// After f ← f + a·κ(x, ·) (a = step, F = f(x) before it, κ(x, x) = 1): the norm recursion
/// ‖f + a·κ(x,·)‖² = ‖f‖² + 2a·F + a², the projection onto ‖f‖ ≤ U by the lazy scale, and, when
/// the scale nears underflow, the fold: returns true with the factor to multiply every stored
/// coefficient by in `fold` (the scale is then 1).
OMKL_HD bool expansion_ball_step(double& scale, double& norm, double step, double F, double U, double& fold) {
  double n2 = norm * norm + 2.0 * step * F + step * step;
  if (n2 < 0) n2 = 0;
  const double n = std::sqrt(n2);
  if (n > U) {
    scale *= U / n;
    norm = U;
  } else {
    norm = n;
  }
  if (!(std::fabs(scale) < kMinExpansionScale)) return false;
  fold = scale;
  scale = 1.0;
  return true;
}

}  // namespace omkl::detail
