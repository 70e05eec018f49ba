/// @file stream.cpp
/// @brief load_stream: one string names a file or a synthetic generator.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

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
