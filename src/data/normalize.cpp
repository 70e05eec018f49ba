/// @file normalize.cpp
/// @brief The normalisations the papers apply to a whole stream before learning.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>

#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace {

constexpr std::pair<const char*, Normalization> kNames[] = {
    {"none", Normalization::None},
    {"minmax", Normalization::MinMaxFeatures},
    {"minmax-global", Normalization::MinMaxGlobal},
    {"minmax-all", Normalization::MinMaxAll},
    {"zscore", Normalization::ZScore},
    {"unit-rows", Normalization::UnitRows},
    {"jmlr23", Normalization::Jmlr23},
    {"symmetric", Normalization::Symmetric},
};

// Maps n values spaced by `stride` to [0, 1]; a constant column maps to 0 (no information,
// and 0/0 would put NaN into the stream).
void min_max(double* v, std::size_t n, std::size_t stride) {
  if (n == 0) return;
  double lo = v[0];
  double hi = v[0];
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, v[i * stride]);
    hi = std::max(hi, v[i * stride]);
  }
  const double range = hi - lo;
  for (std::size_t i = 0; i < n; ++i) {
    // (v − lo)/(hi − lo): exactly 0 at the minimum and exactly 1 at the maximum.
    v[i * stride] = range > 0.0 ? (v[i * stride] - lo) / range : 0.0;
  }
}

void min_max_features(Dataset& data) {
  for (std::size_t j = 0; j < data.n_features; ++j) {
    min_max(data.x.data() + j, data.n_samples, data.n_features);
  }
}

}  // namespace

Normalization parse_normalization(const std::string& text) {
  for (const auto& [name, value] : kNames) {
    if (text == name) return value;
  }
  std::string valid;
  for (const auto& entry : kNames) valid += (valid.empty() ? "" : ", ") + std::string(entry.first);
  throw ConfigError("unknown normalization '" + text + "' (valid: " + valid + ")");
}

void normalize(Dataset& data, Normalization how) {
  const std::size_t n = data.n_samples;
  const std::size_t d = data.n_features;
  if (data.x.size() != n * d || data.y.size() != n) {
    throw InputError("dataset '" + data.name + "': x has " + std::to_string(data.x.size()) +
                     " values and y " + std::to_string(data.y.size()) + ", expected " +
                     std::to_string(n) + " x " + std::to_string(d) + " and " + std::to_string(n));
  }
  switch (how) {
    case Normalization::None:
      return;
    case Normalization::MinMaxFeatures:
      min_max_features(data);
      return;
    case Normalization::MinMaxGlobal:
      min_max(data.x.data(), data.x.size(), 1);
      return;
    case Normalization::MinMaxAll:
      // The task is left unchanged: rescaling ±1 labels to {0, 1} is the caller's choice.
      min_max_features(data);
      min_max(data.y.data(), n, 1);
      return;
    case Normalization::ZScore:
      for (std::size_t j = 0; j < d; ++j) {
        if (n == 0) break;
        // Two passes (mean, then squared deviations): no cancellation for columns with a
        // large offset, unlike E[x²] − E[x]².
        double mean = 0.0;
        for (std::size_t t = 0; t < n; ++t) mean += data.x[t * d + j];
        mean /= static_cast<double>(n);
        double squares = 0.0;
        for (std::size_t t = 0; t < n; ++t) {
          const double diff = data.x[t * d + j] - mean;
          squares += diff * diff;
        }
        const double sd = std::sqrt(squares / static_cast<double>(n));  // population std
        // Constancy is tested on the values themselves: the rounded mean of a constant column
        // (e.g. all 0.1) can differ from the value and leave a tiny non-zero sd.
        bool constant = true;
        for (std::size_t t = 1; t < n && constant; ++t) constant = data.x[t * d + j] == data.x[j];
        for (std::size_t t = 0; t < n; ++t) {
          data.x[t * d + j] = constant || !(sd > 0.0) ? 0.0 : (data.x[t * d + j] - mean) / sd;
        }
      }
      return;
    case Normalization::UnitRows:
      for (std::size_t t = 0; t < n; ++t) {
        double* row = data.x.data() + t * d;
        double squares = 0.0;
        for (std::size_t j = 0; j < d; ++j) squares += row[j] * row[j];
        const double norm = std::sqrt(squares);
        if (norm == 0.0) continue;  // an all-zero row stays zero
        for (std::size_t j = 0; j < d; ++j) row[j] /= norm;
      }
      return;
    case Normalization::Symmetric:
      // Every feature to [−1, 1] (2·minmax − 1; a constant column to 0, as minmax maps it to 0
      // and then to −1 would carry a spurious value); regression targets to [0, 1].
      for (std::size_t j = 0; j < d; ++j) {
        double lo = n ? data.x[j] : 0.0, hi = lo;
        for (std::size_t t = 1; t < n; ++t) {
          lo = std::min(lo, data.x[t * d + j]);
          hi = std::max(hi, data.x[t * d + j]);
        }
        const double range = hi - lo;
        for (std::size_t t = 0; t < n; ++t) {
          double& v = data.x[t * d + j];
          v = range > 0.0 ? 2.0 * ((v - lo) / range) - 1.0 : 0.0;
        }
      }
      if (data.task == Task::Regression) min_max(data.y.data(), n, 1);
      return;
    case Normalization::Jmlr23: {
      // Targets: the notebooks compute y/(max − min) − min/(max − min); the same expression is
      // kept here (it equals (y − min)/(max − min) up to rounding) so that the stream matches
      // the reference bit for bit where possible.
      if (n > 0) {
        const auto [lo_it, hi_it] = std::minmax_element(data.y.begin(), data.y.end());
        const double lo = *lo_it;
        const double range = *hi_it - lo;
        for (double& v : data.y) v = range > 0.0 ? v / range - lo / range : 0.0;
      }
      // Inputs: one common divisor, the largest ℓ2 row norm.
      double largest = 0.0;
      for (std::size_t t = 0; t < n; ++t) {
        const double* row = data.x.data() + t * d;
        double squares = 0.0;
        for (std::size_t j = 0; j < d; ++j) squares += row[j] * row[j];
        largest = std::max(largest, std::sqrt(squares));
      }
      if (largest > 0.0) {
        for (double& v : data.x) v /= largest;
      }
      return;
    }
  }
}

}  // namespace omkl
