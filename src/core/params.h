/// @file params.h
/// @brief Typed, validated reading of algorithm parameters ("key=value" pairs).
///
/// An algorithm asks for each of its parameters once, with a default and a one-line meaning.
/// finish() then rejects any parameter the algorithm never asked for, so a typo is an error
/// that names the parameter and lists the valid ones.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace omkl::detail {

class ParamReader {
 public:
  /// @param algorithm name used in error messages
  /// @param explicit_params the user's parameters (must all be used)
  /// @param soft_defaults preset defaults (used when present, ignored when unused)
  ParamReader(std::string algorithm, std::vector<std::pair<std::string, std::string>> explicit_params,
              std::vector<std::pair<std::string, std::string>> soft_defaults = {});

  double get_double(const std::string& key, double fallback, const std::string& meaning);
  std::int64_t get_int(const std::string& key, std::int64_t fallback, const std::string& meaning);
  bool get_bool(const std::string& key, bool fallback, const std::string& meaning);
  std::string get_string(const std::string& key, const std::string& fallback,
                         const std::string& meaning);
  /// A string restricted to `choices` (the first is the fallback when `fallback` is empty).
  std::string get_choice(const std::string& key, const std::string& fallback,
                         const std::vector<std::string>& choices, const std::string& meaning);
  /// Takes `other` (another name of the same parameter, e.g. a spec's longer name) as `key`:
  /// call before reading `key`. Giving both names is a ConfigError naming them.
  void alias(const std::string& other, const std::string& key);
  /// True when the user or a preset gave `key`.
  bool has(const std::string& key) const;
  /// True when the user gave `key` (not a preset's soft default).
  bool given(const std::string& key) const;

  /// Leaves `key` out of resolved(): read, and so known, but its value does not apply to this
  /// configuration (the logistic loss's rule under another loss, a default dictionary's
  /// convention beside a given one). resolved() lists the parameters that, given back
  /// explicitly, build the same learner; such a key would be refused or ignored there.
  void inapplicable(const std::string& key);

  /// Throws ConfigError for any explicit parameter that was never read.
  void finish() const;

  /// Lines "key (default: v): meaning" for every parameter read so far.
  std::string describe() const;

  /// Errors about a value the algorithm rejects: "algorithm 'x': parameter 'k' ...".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const std::string& algorithm() const { return algorithm_; }

  /// Every parameter read so far with the value used, given or default, in the order read
  /// (a key read twice keeps its first entry).
  const std::vector<std::pair<std::string, std::string>>& resolved() const { return resolved_; }

 private:
  const std::string* lookup(const std::string& key);
  void record(const std::string& key, const std::string& fallback, const std::string& meaning);
  void resolve(const std::string& key, const std::string& value);

  std::string algorithm_;
  std::vector<std::pair<std::string, std::string>> explicit_;
  std::vector<std::pair<std::string, std::string>> soft_;
  std::vector<bool> used_;
  struct Doc {
    std::string key, fallback, meaning;
  };
  std::vector<Doc> docs_;
  std::vector<std::pair<std::string, std::string>> resolved_;
};

}  // namespace omkl::detail
