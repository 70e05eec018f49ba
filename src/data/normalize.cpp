/// @file normalize.cpp
/// @brief The normalisations the papers apply to a whole stream before learning.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <tuple>
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
    {"running-minmax", Normalization::RunningMinMax},
    {"running-zscore", Normalization::RunningZScore},
    {"symmetric-keep-binary", Normalization::SymmetricKeepBinary},
};

}  // namespace

Normalization parse_normalization(const std::string& text) {
  for (const auto& [name, value] : kNames) {
    if (text == name) return value;
  }
  std::string valid;
  for (const auto& entry : kNames) valid += (valid.empty() ? "" : ", ") + std::string(entry.first);
  throw ConfigError("unknown normalization '" + text + "' (valid: " + valid + ")");
}

std::string to_string(Normalization how) {
  for (const auto& [name, value] : kNames)
    if (value == how) return name;
  return "?";
}

namespace {
// (lo, range) of n values spaced by `stride`, as min_max() computes them.
std::pair<double, double> min_range(const double* v, std::size_t n, std::size_t stride) {
  if (n == 0) return {0.0, 0.0};
  double lo = v[0], hi = v[0];
  for (std::size_t i = 1; i < n; ++i) {
    lo = std::min(lo, v[i * stride]);
    hi = std::max(hi, v[i * stride]);
  }
  return {lo, hi - lo};
}
}  // namespace

Normalizer fit_normalizer(const Dataset& data, Normalization how) {
  const std::size_t n = data.n_samples;
  const std::size_t d = data.n_features;
  if (data.x.size() != n * d || data.y.size() != n) {
    throw InputError("dataset '" + data.name + "': x has " + std::to_string(data.x.size()) +
                     " values and y " + std::to_string(data.y.size()) + ", expected " +
                     std::to_string(n) + " x " + std::to_string(d) + " and " + std::to_string(n));
  }
  Normalizer z;
  z.how = how;
  z.n_features = d;
  const auto per_feature = [&] {
    z.offset.resize(d);
    z.scale.resize(d);
    for (std::size_t j = 0; j < d; ++j) std::tie(z.offset[j], z.scale[j]) = min_range(data.x.data() + j, n, d);
  };
  const auto target = [&] { std::tie(z.y_offset, z.y_scale) = min_range(data.y.data(), n, 1); };
  switch (how) {
    case Normalization::None:
    case Normalization::UnitRows:
      break;
    case Normalization::RunningMinMax:
    case Normalization::RunningZScore:
      z.offset.assign(d, 0.0);
      z.scale.assign(d, 0.0);
      break;
    case Normalization::MinMaxFeatures:
      per_feature();
      break;
    case Normalization::MinMaxGlobal: {
      const auto [lo, range] = min_range(data.x.data(), data.x.size(), 1);
      z.offset.assign(1, lo);
      z.scale.assign(1, range);
      break;
    }
    case Normalization::MinMaxAll:
      per_feature();
      // A classification stream's labels stay ±1 (every normalisation keeps them): mapped to
      // {0, 1} they would no longer be labels, and every error rate would read 0.
      if (data.task == Task::Regression) {
        target();
        z.scale_y = true;
      }
      break;
    case Normalization::ZScore:
      z.offset.resize(d);
      z.scale.resize(d);
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
        // Constancy is tested on the values themselves: the rounded mean of a constant column
        // (e.g. all 0.1) can differ from the value and leave a tiny non-zero sd. Such a column
        // keeps sd 0, which apply() maps to 0.
        bool constant = true;
        for (std::size_t t = 1; t < n && constant; ++t) constant = data.x[t * d + j] == data.x[j];
        z.offset[j] = mean;
        z.scale[j] = constant ? 0.0 : std::sqrt(squares / static_cast<double>(n));  // population std
      }
      break;
    case Normalization::Jmlr23: {
      if (data.task == Task::Regression) {  // labels stay ±1, as above
        target();
        z.scale_y = true;
      }
      // Inputs: one common divisor, the largest ℓ2 row norm.
      double largest = 0.0;
      for (std::size_t t = 0; t < n; ++t) {
        const double* row = data.x.data() + t * d;
        double squares = 0.0;
        for (std::size_t j = 0; j < d; ++j) squares += row[j] * row[j];
        largest = std::max(largest, std::sqrt(squares));
      }
      z.offset.assign(1, 0.0);
      z.scale.assign(1, largest);
      break;
    }
    case Normalization::Symmetric:
    case Normalization::SymmetricKeepBinary:
      per_feature();
      // A {0, 1} column keeps its values: offset −1 and range 2 make 2·(x − offset)/range − 1 = x,
      // exactly for 0 and 1, so the checkpointed scaler needs nothing new to apply it.
      if (how == Normalization::SymmetricKeepBinary)
        for (std::size_t j = 0; j < d; ++j) {
          if (z.offset[j] != 0.0 || z.scale[j] != 1.0) continue;
          bool binary = true;
          for (std::size_t t = 0; t < n && binary; ++t) binary = data.x[t * d + j] == 0.0 || data.x[t * d + j] == 1.0;
          if (binary) {
            z.offset[j] = -1.0;
            z.scale[j] = 2.0;
          }
        }
      if (data.task == Task::Regression) {
        target();
        z.scale_y = true;
      }
      break;
  }
  // Values near the largest double can span more than a double holds (1e308 and −1e308): the
  // range, standard deviation or row norm is then infinite and the scaled values NaN or 0.
  const auto overflow = [&](const std::string& what) {
    return InputError(data.name + ": the " + to_string(how) + " normalisation overflows on " + what +
                      " (its values span more than a double holds); scale it down first");
  };
  for (std::size_t j = 0; j < z.offset.size(); ++j)
    if (!std::isfinite(z.offset[j]) || !std::isfinite(z.scale[j]))
      throw overflow(z.offset.size() == d ? "feature column " + std::to_string(j + 1) : "the inputs");
  if (!std::isfinite(z.y_offset) || !std::isfinite(z.y_scale)) throw overflow("the target");
  return z;
}

void Normalizer::apply(Dataset& data) const {
  const std::size_t n = data.n_samples;
  const std::size_t d = data.n_features;
  if (data.x.size() != n * d || data.y.size() != n)
    throw InputError("dataset '" + data.name + "': x and y do not match its " + std::to_string(n) + " × " +
                     std::to_string(d) + " shape");
  if (how != Normalization::None && how != Normalization::UnitRows && d != n_features)
    throw InputError(data.name + ": " + std::to_string(d) + " features, the " + to_string(how) +
                     " normalisation was fitted on " + std::to_string(n_features));
  if (how == Normalization::None) return;
  if (online()) {
    Normalizer running = *this;
    for (std::size_t t = 0; t < n; ++t) {
      running.observe_row(data.x.data() + t * d, d);
      running.apply_row(data.x.data() + t * d, d, &data.y[t]);
    }
    return;
  }
  for (std::size_t t = 0; t < n; ++t) apply_row(data.x.data() + t * d, d, &data.y[t]);
}

void Normalizer::observe_row(const double* x, std::size_t d) {
  if (!online()) return;
  if (d != n_features || offset.size() != d || scale.size() != d)
    throw InputError("a row of " + std::to_string(d) + " features: the " + to_string(how) + " scaler has " +
                     std::to_string(n_features));
  ++n_observed;
  if (how == Normalization::RunningMinMax) {
    for (std::size_t j = 0; j < d; ++j) {
      offset[j] = n_observed == 1 ? x[j] : std::min(offset[j], x[j]);  // minimum so far
      scale[j] = n_observed == 1 ? x[j] : std::max(scale[j], x[j]);    // maximum so far
    }
    return;
  }
  // Welford: the mean and the sum of squared deviations, stable for any offset.
  const double count = static_cast<double>(n_observed);
  for (std::size_t j = 0; j < d; ++j) {
    const double delta = x[j] - offset[j];
    offset[j] += delta / count;
    scale[j] += delta * (x[j] - offset[j]);
  }
}

void Normalizer::apply_row(double* x, std::size_t d, double* y) const {
  if (how != Normalization::None && how != Normalization::UnitRows && d != n_features)
    throw InputError("a row of " + std::to_string(d) + " features: the " + to_string(how) +
                     " normalisation was fitted on " + std::to_string(n_features));
  // (v − lo)/range: exactly 0 at the minimum and 1 at the maximum; a constant column maps to 0
  // (no information, and 0/0 would put NaN into the stream).
  const auto unit = [](double v, double lo, double range) { return range > 0.0 ? (v - lo) / range : 0.0; };
  switch (how) {
    case Normalization::None:
      return;
    case Normalization::MinMaxFeatures:
    case Normalization::MinMaxAll:
      for (std::size_t j = 0; j < d; ++j) x[j] = unit(x[j], offset[j], scale[j]);
      break;
    case Normalization::MinMaxGlobal:
      for (std::size_t j = 0; j < d; ++j) x[j] = unit(x[j], offset[0], scale[0]);
      break;
    case Normalization::ZScore:
      for (std::size_t j = 0; j < d; ++j) x[j] = scale[j] > 0.0 ? (x[j] - offset[j]) / scale[j] : 0.0;
      break;
    case Normalization::UnitRows: {
      double squares = 0.0;
      for (std::size_t j = 0; j < d; ++j) squares += x[j] * x[j];
      const double norm = std::sqrt(squares);
      if (norm != 0.0)  // an all-zero row stays zero
        for (std::size_t j = 0; j < d; ++j) x[j] /= norm;
      break;
    }
    case Normalization::Jmlr23:
      // Targets as the notebooks compute them, y/(max − min) − min/(max − min) (it equals
      // (y − min)/(max − min) up to rounding), so that the stream matches the reference bit for bit.
      if (y && scale_y) *y = y_scale > 0.0 ? *y / y_scale - y_offset / y_scale : 0.0;
      if (scale[0] > 0.0)
        for (std::size_t j = 0; j < d; ++j) x[j] /= scale[0];
      return;
    case Normalization::Symmetric:
    case Normalization::SymmetricKeepBinary:
      // Every feature to [−1, 1] (2·minmax − 1; a constant column to 0, as minmax maps it to 0
      // and then to −1 would carry a spurious value).
      for (std::size_t j = 0; j < d; ++j) x[j] = scale[j] > 0.0 ? 2.0 * ((x[j] - offset[j]) / scale[j]) - 1.0 : 0.0;
      break;
    case Normalization::RunningMinMax:  // offset: minimum so far, scale: maximum so far
      for (std::size_t j = 0; j < d; ++j) x[j] = unit(x[j], offset[j], scale[j] - offset[j]);
      break;
    case Normalization::RunningZScore: {  // offset: mean so far, scale: sum of squared deviations
      const double count = static_cast<double>(n_observed);
      for (std::size_t j = 0; j < d; ++j) {
        const double sd = n_observed > 0 ? std::sqrt(scale[j] / count) : 0.0;
        x[j] = sd > 0.0 ? (x[j] - offset[j]) / sd : 0.0;
      }
      break;
    }
  }
  if (scale_y && y) *y = unit(*y, y_offset, y_scale);
}

void normalize(Dataset& data, Normalization how) { fit_normalizer(data, how).apply(data); }

}  // namespace omkl
