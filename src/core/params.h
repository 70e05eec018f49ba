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

/// The largest magnitude a numeric parameter may take where its meaning sets no bound (a step
/// size, a bandwidth, a multiplier): an algorithm multiplies a few parameters together (step ×
/// scale × ridge weight), and below this their products stay within a double, so a value that
/// large is refused when it is read instead of overflowing inside the algorithm. Steps that are
/// large but allowed still diverge on most streams; that is a run's outcome (a NaN prediction,
/// reported as a divergence), not a configuration error.
constexpr double kLargestParameter = 1e100;

/// A kernel's bandwidth σ, given as a parameter or in a dictionary (kernel_spec.cpp): random
/// features draw frequencies of scale 1/σ and exact kernels divide by σ², both finite within
/// these bounds.
constexpr double kSmallestBandwidth = 1.0 / kLargestParameter;
constexpr double kLargestBandwidth = kLargestParameter;
/// The highest degree q of a polynomial kernel (xᵀx' + c)^q, as a parameter or in a dictionary.
constexpr std::int64_t kMaxPolynomialDegree = 16;

/// The values a numeric parameter accepts: an interval [low, high] of which either end may be
/// open. Every numeric parameter declares one where it is read (ParamReader::get_double /
/// get_int), so a value outside it is a ConfigError naming the algorithm, the parameter, the
/// value and the interval, and `omkl describe` prints it.
struct ParamRange {
  double low = -kLargestParameter, high = kLargestParameter;
  bool low_open = false, high_open = false;

  static ParamRange closed(double low, double high) { return {low, high, false, false}; }
  static ParamRange open_closed(double low, double high) { return {low, high, true, false}; }
  static ParamRange closed_open(double low, double high) { return {low, high, false, true}; }
  /// [low, kLargestParameter]: e.g. a ridge weight (0 allowed) or a multiplier that may be 0.
  static ParamRange at_least(double low) { return closed(low, kLargestParameter); }
  /// (low, kLargestParameter]: e.g. a step size or a bandwidth.
  static ParamRange above(double low) { return open_closed(low, kLargestParameter); }
  /// [low, 1e18]: a step number or count with no bound of its own, kept where adding to it
  /// (switch_step + 2) cannot overflow a 64-bit integer.
  static ParamRange count_from(double low) { return closed(low, 1e18); }

  bool contains(double v) const {
    return (low_open ? v > low : v >= low) && (high_open ? v < high : v <= high);
  }
  /// "(0, 1]", "[1, 1000000]", "[0, 1e+100]".
  std::string text() const;
};

/// What describe() and the parameter-range tests know of one parameter.
struct ParamDoc {
  enum class Kind { Real, Integer, Flag, Text };
  std::string key, fallback, meaning;
  Kind kind = Kind::Text;
  ParamRange range;  ///< Real and Integer only
};

class ParamReader {
 public:
  /// @param algorithm name used in error messages
  /// @param explicit_params the user's parameters (must all be used)
  /// @param soft_defaults preset defaults (used when present, ignored when unused)
  ParamReader(std::string algorithm, std::vector<std::pair<std::string, std::string>> explicit_params,
              std::vector<std::pair<std::string, std::string>> soft_defaults = {});

  /// A finite number in `range` (ConfigError otherwise, naming the value and the range). The
  /// range applies to given values (the user's or a preset's); `fallback` is the algorithm's own
  /// and may be a sentinel the caller resolves (-1 for "no stream length to derive it from").
  double get_double(const std::string& key, double fallback, const std::string& meaning,
                    const ParamRange& range = {});
  /// An integer in `range`, as get_double.
  std::int64_t get_int(const std::string& key, std::int64_t fallback, const std::string& meaning,
                       const ParamRange& range = {});
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

  /// Lines "key (default v, in RANGE): meaning" for every parameter read so far; the keys in
  /// `stream_defaults` have a default that follows from the stream (its length T, its clients),
  /// which their meaning states as a rule: their line shows no number (the one at hand would be
  /// a probe stream's).
  std::string describe(const std::vector<std::string>& stream_defaults = {}) const;

  /// Every parameter read so far, in the order read.
  const std::vector<ParamDoc>& documented() const { return docs_; }

  /// Errors about a value the algorithm rejects: "algorithm 'x': parameter 'k' ...".
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;

  const std::string& algorithm() const { return algorithm_; }

  /// Every parameter read so far with the value used, given or default, in the order read
  /// (a key read twice keeps its first entry).
  const std::vector<std::pair<std::string, std::string>>& resolved() const { return resolved_; }

 private:
  const std::string* lookup(const std::string& key);
  void record(const std::string& key, const std::string& fallback, const std::string& meaning,
              ParamDoc::Kind kind = ParamDoc::Kind::Text, const ParamRange& range = {});
  /// Refuses a value outside `range` (given values only; see get_double).
  void check_range(const std::string& key, const std::string& text, double value, const ParamRange& range) const;
  void resolve(const std::string& key, const std::string& value);

  std::string algorithm_;
  std::vector<std::pair<std::string, std::string>> explicit_;
  std::vector<std::pair<std::string, std::string>> soft_;
  std::vector<bool> used_;
  std::vector<ParamDoc> docs_;
  std::vector<std::pair<std::string, std::string>> resolved_;
};

}  // namespace omkl::detail
