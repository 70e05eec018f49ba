#include "core/params.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "core/closest_name.h"
#include "core/decimal.h"
#include "omkl/error.h"

namespace omkl::detail {

ParamReader::ParamReader(std::string algorithm,
                         std::vector<std::pair<std::string, std::string>> explicit_params,
                         std::vector<std::pair<std::string, std::string>> soft_defaults)
    : algorithm_(std::move(algorithm)),
      explicit_(std::move(explicit_params)),
      soft_(std::move(soft_defaults)),
      used_(explicit_.size(), false) {}

const std::string* ParamReader::lookup(const std::string& key) {
  // The last occurrence wins, so "--algo raker:D=20,D=30" means D = 30.
  const std::string* found = nullptr;
  for (std::size_t i = 0; i < explicit_.size(); ++i) {
    if (explicit_[i].first == key) {
      used_[i] = true;
      found = &explicit_[i].second;
    }
  }
  if (found) return found;
  for (const auto& kv : soft_)
    if (kv.first == key) found = &kv.second;
  return found;
}

void ParamReader::alias(const std::string& other, const std::string& key) {
  const auto renamed = [&](std::vector<std::pair<std::string, std::string>>& params) {
    bool has_other = false, has_key = false;
    for (const auto& kv : params) {
      has_other = has_other || kv.first == other;
      has_key = has_key || kv.first == key;
    }
    if (has_other && has_key)
      throw ConfigError("algorithm '" + algorithm_ + "': parameters '" + other + "' and '" + key +
                        "' name the same parameter; give one");
    for (auto& kv : params)
      if (kv.first == other) kv.first = key;
  };
  renamed(explicit_);
  renamed(soft_);
}

bool ParamReader::given(const std::string& key) const {
  for (const auto& kv : explicit_)
    if (kv.first == key) return true;
  return false;
}

bool ParamReader::has(const std::string& key) const {
  for (const auto& kv : explicit_)
    if (kv.first == key) return true;
  for (const auto& kv : soft_)
    if (kv.first == key) return true;
  return false;
}

std::string ParamRange::text() const {
  // Whole numbers as written in a spec (1000000, not 1e+06), up to where doubles stay exact.
  const auto bound = [](double v) {
    return v == std::trunc(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<long long>(v))
                                                     : shortest_decimal(v);
  };
  return (low_open ? "(" : "[") + bound(low) + ", " + bound(high) + (high_open ? ")" : "]");
}

void ParamReader::record(const std::string& key, const std::string& fallback, const std::string& meaning,
                         ParamDoc::Kind kind, const ParamRange& range) {
  for (const auto& d : docs_)
    if (d.key == key) return;
  docs_.push_back({key, fallback, meaning, kind, range});
}

void ParamReader::check_range(const std::string& key, const std::string& text, double value,
                              const ParamRange& range) const {
  if (!range.contains(value)) fail(key, "must be in " + range.text() + ", got " + text);
}

void ParamReader::resolve(const std::string& key, const std::string& value) {
  for (const auto& kv : resolved_)
    if (kv.first == key) return;
  resolved_.emplace_back(key, value);
}

void ParamReader::inapplicable(const std::string& key) {
  resolved_.erase(std::remove_if(resolved_.begin(), resolved_.end(), [&](const auto& kv) { return kv.first == key; }),
                  resolved_.end());
}

void ParamReader::fail(const std::string& key, const std::string& message) const {
  throw ConfigError("algorithm '" + algorithm_ + "': parameter '" + key + "' " + message);
}

double ParamReader::get_double(const std::string& key, double fallback, const std::string& meaning,
                               const ParamRange& range) {
  std::ostringstream text;
  text << fallback;
  record(key, text.str(), meaning, ParamDoc::Kind::Real, range);
  const std::string* value = lookup(key);
  if (!value) {
    resolve(key, shortest_decimal(fallback));
    return fallback;
  }
  char* end = nullptr;
  errno = 0;
  const double parsed = strtod_decimal(value->c_str(), &end);
  if (!value->empty() && *end == '\0' && errno == ERANGE && std::fabs(parsed) < 1.0)
    fail(key, "expects a number in " + range.text() + ", got '" + *value +
                  "', too close to 0 for a double's full precision (below 2.2e-308)");
  if (value->empty() || *end != '\0' || errno == ERANGE || !std::isfinite(parsed))
    fail(key, "expects a finite number in " + range.text() + ", got '" + *value + "'");
  check_range(key, *value, parsed, range);
  resolve(key, shortest_decimal(parsed));  // the number, not its spelling: "1e-2" and "0.01" are one value
  return parsed;
}

std::int64_t ParamReader::get_int(const std::string& key, std::int64_t fallback, const std::string& meaning,
                                  const ParamRange& range) {
  record(key, std::to_string(fallback), meaning, ParamDoc::Kind::Integer, range);
  const std::string* value = lookup(key);
  if (!value) {
    resolve(key, std::to_string(fallback));
    return fallback;
  }
  char* end = nullptr;
  errno = 0;
  const long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (value->empty() || *end != '\0' || errno == ERANGE)
    fail(key, "expects an integer in " + range.text() + ", got '" + *value + "'");
  check_range(key, *value, static_cast<double>(parsed), range);
  resolve(key, std::to_string(parsed));  // "08" and "8" are one value
  return parsed;
}

bool ParamReader::get_bool(const std::string& key, bool fallback, const std::string& meaning) {
  record(key, fallback ? "true" : "false", meaning, ParamDoc::Kind::Flag);
  const std::string* value = lookup(key);
  bool result = fallback;
  if (!value) result = fallback;
  else if (*value == "true" || *value == "1" || *value == "on" || *value == "yes") result = true;
  else if (*value == "false" || *value == "0" || *value == "off" || *value == "no") result = false;
  else fail(key, "expects true or false, got '" + *value + "'");
  resolve(key, result ? "true" : "false");
  return result;
}

std::string ParamReader::get_string(const std::string& key, const std::string& fallback,
                                    const std::string& meaning) {
  record(key, fallback, meaning);
  const std::string* value = lookup(key);
  resolve(key, value ? *value : fallback);
  return value ? *value : fallback;
}

std::string ParamReader::get_choice(const std::string& key, const std::string& fallback,
                                    const std::vector<std::string>& choices,
                                    const std::string& meaning) {
  std::string options;
  for (const auto& c : choices) options += (options.empty() ? "" : "|") + c;
  const std::string chosen = get_string(key, fallback.empty() ? choices.front() : fallback,
                                        meaning + " (" + options + ")");
  for (const auto& c : choices)
    if (c == chosen) return chosen;
  fail(key, "must be one of " + options + ", got '" + chosen + "'");
}

void ParamReader::finish() const {
  for (std::size_t i = 0; i < explicit_.size(); ++i) {
    if (used_[i]) continue;
    std::vector<std::string> keys;
    std::string known;
    for (const auto& d : docs_) {
      keys.push_back(d.key);
      known += (known.empty() ? "" : ", ") + d.key;
    }
    throw ConfigError("algorithm '" + algorithm_ + "': unknown parameter '" + explicit_[i].first + "'" +
                      did_you_mean(explicit_[i].first, keys) + " (known: " + known + ")");
  }
}

std::string ParamReader::describe(const std::vector<std::string>& stream_defaults) const {
  std::ostringstream out;
  for (const auto& d : docs_) {
    const bool numeric = d.kind == ParamDoc::Kind::Real || d.kind == ParamDoc::Kind::Integer;
    const bool from_stream =
        std::find(stream_defaults.begin(), stream_defaults.end(), d.key) != stream_defaults.end();
    out << "  " << d.key << " (";
    // A numeric fallback outside the parameter's range is no value it takes: a marker of "not
    // given", whose meaning the description says (beta's "default: the rank rule").
    char* end = nullptr;
    const double fallback = numeric ? std::strtod(d.fallback.c_str(), &end) : 0.0;
    const bool marker = numeric && end != d.fallback.c_str() && !d.range.contains(fallback);
    if (from_stream) out << "default from the stream, as below";
    else if (marker) out << "not set by default";
    else out << "default " << (d.fallback.empty() ? "\"\"" : d.fallback);
    if (numeric) out << "; in " << d.range.text();
    out << "): " << d.meaning << "\n";
  }
  return out.str();
}

}  // namespace omkl::detail
