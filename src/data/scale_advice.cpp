/// @file scale_advice.cpp
/// @brief scale_advice() (omkl/dataset.h): the note for a raw stream far from unit scale.
///
/// Why the limits: the widest kernel of the library's dictionaries has a bandwidth of 100
/// (jmlr23-76: σ² from 10⁻² to 10², Laplacian widths up to 10²), so a feature beyond ±100 spans
/// more than any of them resolves; and the models start from f = 0 with steps sized for targets in [0, 1]:
/// a target of order ten or more takes most of a short stream's steps to reach. Raker's MSE on raw
/// airfoil is ≈ 8 300, with --normalize minmax-all 0.025.
#include "omkl/dataset.h"

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace omkl {

namespace {

// A range as a user reads it: four significant digits ("103.4 to 141", "-2.5e+04 to 20000").
std::string range_text(double low, double high) {
  char text[64];
  std::snprintf(text, sizeof text, "%.4g to %.4g", low, high);
  return text;
}

}  // namespace

std::string scale_advice(const Dataset& data, const std::string& keep_values) {
  const std::size_t n = data.n_samples, d = data.n_features;
  if (n == 0) return {};
  // Per column: the smallest and largest entry; the column of the largest magnitude is named.
  std::vector<double> low(d, INFINITY), high(d, -INFINITY);
  for (std::size_t t = 0; t < n; ++t) {
    const double* x = data.row(t);
    for (std::size_t k = 0; k < d; ++k) {
      low[k] = x[k] < low[k] ? x[k] : low[k];
      high[k] = x[k] > high[k] ? x[k] : high[k];
    }
  }
  std::size_t widest = d;
  double widest_magnitude = kUnitScaleFeatureLimit;
  for (std::size_t k = 0; k < d; ++k) {
    const double magnitude = std::fmax(std::fabs(low[k]), std::fabs(high[k]));
    if (magnitude > widest_magnitude) {
      widest = k;
      widest_magnitude = magnitude;
    }
  }
  std::string causes;
  if (widest < d) {
    const std::string column = widest < data.feature_names.size() ? "'" + data.feature_names[widest] + "'"
                                                                  : std::to_string(widest + 1);
    causes = "feature " + column + " spans " + range_text(low[widest], high[widest]);
  }
  bool target = false;
  if (data.task == Task::Regression) {
    double y_low = INFINITY, y_high = -INFINITY;
    for (const double y : data.y) {
      y_low = y < y_low ? y : y_low;
      y_high = y > y_high ? y : y_high;
    }
    target = std::fmax(std::fabs(y_low), std::fabs(y_high)) > kUnitScaleTargetLimit;
    if (target) causes += (causes.empty() ? "the target spans " : ", the target ") + range_text(y_low, y_high);
  }
  if (causes.empty()) return {};
  return data.name + " is not normalised and far from unit scale (" + causes +
         "), which the kernels' bandwidths and default step sizes do not expect; " +
         (target ? "the normalisations minmax-all, symmetric and jmlr23 scale features and target (zscore and minmax "
                   "the features only)"
                 : "the normalisations zscore, minmax and symmetric scale the features") +
         "; " + keep_values + " keeps the values and silences this note";
}

}  // namespace omkl
