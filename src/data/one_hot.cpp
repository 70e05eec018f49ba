/// @file one_hot.cpp
/// @brief one_hot_encode: categorical feature columns as 0/1 indicator columns, one per value;
/// OneHotColumns: a stream as written, read through a model's indicator columns.
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace {

// The columns `spec` names: every one for "all", else the comma-separated header names.
std::vector<bool> chosen_columns(const Dataset& data, const std::string& spec) {
  std::vector<bool> chosen(data.n_features, spec == "all");
  if (spec == "all") return chosen;
  if (data.feature_names.empty())
    throw ConfigError("one-hot '" + spec + "': " + data.name + " has no column names (only a CSV header names "
                      "columns); give all");
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = std::min(spec.find(',', start), spec.size());
    const std::string name = spec.substr(start, comma - start);
    const auto at = std::find(data.feature_names.begin(), data.feature_names.end(), name);
    if (name.empty() || at == data.feature_names.end())
      throw ConfigError("one-hot '" + spec + "': " + data.name + " has no feature column '" + name + "'");
    chosen[static_cast<std::size_t>(at - data.feature_names.begin())] = true;
    start = comma + 1;
  }
  return chosen;
}

}  // namespace

void one_hot_encode(Dataset& data, const std::string& columns) {
  if (columns.empty()) throw ConfigError("one-hot: name the columns (all, or header names joined by ',')");
  if (data.n_samples == 0) throw ConfigError("one-hot: " + data.name + " has no rows to take the values from");
  const std::vector<bool> chosen = chosen_columns(data, columns);
  const std::size_t n = data.n_samples, d = data.n_features;
  // Each chosen column's distinct values, ascending: its indicator columns in that order.
  std::vector<std::vector<double>> values(d);
  std::size_t width = 0;
  for (std::size_t j = 0; j < d; ++j) {
    if (!chosen[j]) {
      ++width;
      continue;
    }
    std::vector<double>& v = values[j];
    for (std::size_t t = 0; t < n; ++t) {
      const double value = data.x[t * d + j];
      const auto at = std::lower_bound(v.begin(), v.end(), value);
      if (at != v.end() && *at == value) continue;
      if (v.size() == kMaxOneHotValues) {
        const std::string name = data.feature_names.empty() ? "column " + std::to_string(j + 1)
                                                            : "column '" + data.feature_names[j] + "'";
        throw ConfigError("one-hot: " + data.name + "'s " + name + " takes more than " +
                          std::to_string(kMaxOneHotValues) + " values: it is not a categorical column to encode");
      }
      v.insert(at, value);
    }
    width += v.size();
  }
  std::vector<double> x(n * width, 0.0);
  std::vector<std::string> names;
  names.reserve(width);
  for (std::size_t j = 0; j < d; ++j) {
    const std::string base = data.feature_names.empty() ? "x" + std::to_string(j + 1) : data.feature_names[j];
    if (!chosen[j]) {
      names.push_back(base);
      continue;
    }
    for (const double value : values[j]) {
      names.push_back(base + "=" + detail::shortest_decimal(value));
      // A model reads a name the header has as that column (OneHotColumns): an indicator named
      // like another column would be read as that column.
      if (std::find(data.feature_names.begin(), data.feature_names.end(), names.back()) != data.feature_names.end())
        throw ConfigError("one-hot: " + data.name + "'s column '" + base + "' would have an indicator named '" +
                          names.back() + "', the name of another column: rename one of them");
    }
  }
  for (std::size_t t = 0; t < n; ++t) {
    double* out = x.data() + t * width;
    for (std::size_t j = 0; j < d; ++j) {
      const double value = data.x[t * d + j];
      if (!chosen[j]) {
        *out++ = value;
        continue;
      }
      const std::vector<double>& v = values[j];
      out[std::lower_bound(v.begin(), v.end(), value) - v.begin()] = 1.0;
      out += v.size();
    }
  }
  data.x = std::move(x);
  data.n_features = width;
  data.feature_names = std::move(names);
}


OneHotColumns::OneHotColumns(const std::vector<std::string>& header, std::size_t width,
                             const std::vector<std::string>& model_names) {
  if (model_names.empty() || header == model_names) return;
  const auto column = [&](const std::string& name) -> std::ptrdiff_t {
    const auto at = std::find(header.begin(), header.end(), name);
    if (at != header.end()) return at - header.begin();
    // A stream without a header: the "xJ" one_hot_encode() names its columns by.
    if (!header.empty() || name.size() < 2 || name[0] != 'x') return -1;
    char* end = nullptr;
    const unsigned long j = std::strtoul(name.c_str() + 1, &end, 10);
    return *end == '\0' && j >= 1 && j <= width ? static_cast<std::ptrdiff_t>(j - 1) : -1;
  };
  std::vector<Source> sources;
  bool any_indicator = false;
  for (const std::string& name : model_names) {
    const std::ptrdiff_t plain = column(name);
    if (plain >= 0) {
      sources.push_back({static_cast<std::size_t>(plain), false, 0.0});
      continue;
    }
    const std::size_t eq = name.rfind('=');
    if (eq == std::string::npos) return;
    const std::ptrdiff_t base = column(name.substr(0, eq));
    const std::string text = name.substr(eq + 1);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (base < 0 || text.empty() || *end != '\0') return;
    sources.push_back({static_cast<std::size_t>(base), true, value});
    any_indicator = true;
  }
  if (any_indicator) sources_ = std::move(sources);
}

void OneHotColumns::encode(const double* row, double* out) const {
  for (const Source& s : sources_) *out++ = s.indicator ? (row[s.column] == s.value ? 1.0 : 0.0) : row[s.column];
}

bool one_hot_encode_like(Dataset& data, const std::vector<std::string>& model_names) {
  const OneHotColumns columns(data.feature_names, data.n_features, model_names);
  if (!columns.active()) return false;
  const std::size_t n = data.n_samples, d = data.n_features, width = columns.width();
  std::vector<double> x(n * width);
  for (std::size_t t = 0; t < n; ++t) columns.encode(data.x.data() + t * d, x.data() + t * width);
  data.x = std::move(x);
  data.n_features = width;
  data.feature_names = model_names;
  return true;
}

}  // namespace omkl
