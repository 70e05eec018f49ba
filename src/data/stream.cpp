/// @file stream.cpp
/// @brief load_stream: one string names a file or a synthetic generator; map_labels_to_pm1.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace {

constexpr const char* kSyntheticPrefix = "synthetic:";

bool ends_with_ci(const std::string& text, const std::string& suffix) {
  if (text.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[text.size() - suffix.size() + i]);
    if (std::tolower(c) != suffix[i]) return false;
  }
  return true;
}

Dataset load_synthetic(const std::string& spec, std::uint64_t seed) {
  const std::string rest = spec.substr(std::string(kSyntheticPrefix).size());
  const std::size_t colon = rest.find(':');
  const std::string kind_name = rest.substr(0, colon);
  SyntheticOptions options;
  options.seed = seed;
  if (kind_name == "dataset1") {
    options.kind = SyntheticKind::Dataset1;
  } else if (kind_name == "dataset2") {
    options.kind = SyntheticKind::Dataset2;
  } else {
    throw ConfigError("unknown synthetic stream '" + spec +
                      "' (valid: synthetic:dataset1[:T], synthetic:dataset2[:T])");
  }
  if (colon != std::string::npos) {
    const std::string length = rest.substr(colon + 1);
    // Digits only: std::stoul would accept "+5", " 5", "5x" and wrap "-1".
    std::size_t value = 0;
    bool ok = !length.empty();
    for (const char c : length) {
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      const auto digit = static_cast<std::size_t>(c - '0');
      if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) {
        ok = false;
        break;
      }
      value = value * 10 + digit;
    }
    if (!ok || value == 0) {
      throw ConfigError("synthetic stream '" + spec + "': length '" + length +
                        "' is not a positive integer");
    }
    options.n_samples = value;
  }
  return make_synthetic(options);
}

}  // namespace

Dataset load_stream(const std::string& spec, std::uint64_t seed, const CsvOptions& csv, const std::string& format) {
  const bool libsvm = reads_libsvm(spec, format);  // checks the format first
  if (spec.rfind(kSyntheticPrefix, 0) == 0) {
    if (!format.empty()) throw ConfigError("--format " + format + ": " + spec + " is a built-in stream, not a file");
    return load_synthetic(spec, seed);
  }
  return libsvm ? load_libsvm(spec) : load_csv(spec, csv);
}

void map_labels_to_pm1(Dataset& data) {
  // The distinct values, in the order first met (at most three are kept: a third is the error).
  std::vector<double> seen;
  for (const double v : data.y) {
    if (std::find(seen.begin(), seen.end(), v) != seen.end()) continue;
    seen.push_back(v);
    if (seen.size() > 2) break;
  }
  const auto listed = [&] {
    std::string text;
    for (std::size_t i = 0; i < seen.size(); ++i) text += (i ? ", " : "") + detail::shortest_decimal(seen[i]);
    return text;
  };
  if (seen.size() > 2)
    throw ConfigError("labels pm1: " + data.name + "'s target takes more than two values (" + listed() +
                      ", …): it is not a two-class label to map to −1/+1");
  if (seen.size() < 2)
    throw ConfigError("labels pm1: " + data.name + "'s target takes " +
                      (seen.empty() ? std::string("no value") : "the one value " + listed()) +
                      ": two classes are needed to map them to −1/+1");
  const double low = std::min(seen[0], seen[1]);
  for (double& v : data.y) v = v == low ? -1.0 : 1.0;
  data.task = Task::Classification;
}

bool is_libsvm_path(const std::string& path) {
  return ends_with_ci(path, ".svm") || ends_with_ci(path, ".libsvm") || ends_with_ci(path, ".txt");
}

bool reads_libsvm(const std::string& path, const std::string& format) {
  if (format == "csv") return false;
  if (format == "libsvm") return true;
  if (!format.empty()) throw ConfigError("--format " + format + ": expected csv or libsvm");
  return is_libsvm_path(path);
}

}  // namespace omkl
