/// @file scale_advice.h
/// @brief A note for a stream read without normalisation whose values are far from unit scale.
///
/// Why: every kernel dictionary's bandwidths (σ of order 0.1–10) and every default step size
/// assume features, and regression targets, of order one, as the papers' preprocessing leaves
/// them. A raw file such as airfoil (a feature up to 20 000 Hz, targets 103–141 dB) then learns
/// next to nothing: Raker's MSE on it is ≈ 8 300 raw and 0.025 with `--normalize minmax-all`,
/// and nothing in the output says why. The command line prints this note when no normalisation
/// was asked for (neither --normalize nor a preset), so that the cause is one line away.
#pragma once

#include <string>

#include "omkl/dataset.h"

namespace omkl::detail {

/// A feature entry larger than this in magnitude is "far from unit scale" (the largest σ of the
/// library's dictionaries is 100: jmlr19-rf's Gaussians go up to σ = 10, Cauchy 100).
constexpr double kFeatureScaleLimit = 100.0;
/// A regression target larger than this in magnitude is: the models start from f = 0, and a
/// target of order ten or more takes most of a short stream's steps to reach.
constexpr double kTargetScaleLimit = 10.0;

/// Empty when `data` is within the limits above; otherwise one sentence naming the feature
/// column with the largest magnitude (by its name where the stream has names, else its 1-based
/// index) and its range, and for a regression stream the target's range, then the
/// normalisations that would fix it. Classification labels (±1) are never the cause.
std::string scale_advice(const Dataset& data);

}  // namespace omkl::detail
