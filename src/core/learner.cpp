#include <algorithm>
#include <cctype>
#include <cmath>
#include <new>
#include <stdexcept>
#include <sstream>
#include <istream>
#include <ostream>
#include <string>

#include "core/algorithm_base.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"
#include "omkl/learner.h"

namespace omkl {

// ---- AlgorithmSpec ----------------------------------------------------------------------------

std::string AlgorithmSpec::to_string() const {
  std::string out = name;
  for (std::size_t i = 0; i < params.size(); ++i)
    out += (i == 0 ? ":" : ",") + params[i].first + "=" + params[i].second;
  return out;
}

void AlgorithmSpec::set(const std::string& key, const std::string& value) {
  for (auto& kv : params)
    if (kv.first == key) {
      kv.second = value;
      return;
    }
  params.emplace_back(key, value);
}

const std::string* AlgorithmSpec::find(const std::string& key) const {
  for (const auto& kv : params)
    if (kv.first == key) return &kv.second;
  return nullptr;
}

namespace {
bool is_key_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A ':' separates parameters only when "key=" follows it, so values such as "gauss:0.1" survive.
bool separator_at(const std::string& text, std::size_t i) {
  if (text[i] == ',') return true;
  if (text[i] != ':') return false;
  std::size_t j = i + 1;
  while (j < text.size() && is_key_char(text[j])) ++j;
  return j > i + 1 && j < text.size() && text[j] == '=';
}
}  // namespace

AlgorithmSpec parse_algorithm_spec(const std::string& text) {
  AlgorithmSpec spec;
  const std::size_t colon = text.find(':');
  spec.name = text.substr(0, colon);
  if (spec.name.empty()) throw ConfigError("empty algorithm name in '" + text + "'");
  if (colon == std::string::npos) return spec;
  std::size_t begin = colon + 1;
  for (std::size_t i = begin; i <= text.size(); ++i) {
    if (i < text.size() && !separator_at(text, i)) continue;
    const std::string item = text.substr(begin, i - begin);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("algorithm '" + spec.name + "': expected key=value, got '" + item + "'");
    const std::string key = item.substr(0, eq);
    if (spec.find(key))
      throw ConfigError("algorithm '" + spec.name + "': parameter '" + key + "' is given twice in '" + text + "'");
    spec.params.emplace_back(key, item.substr(eq + 1));
    begin = i + 1;
  }
  return spec;
}

std::vector<AlgorithmSpec> expand_algorithm_grid(const std::string& text) {
  const AlgorithmSpec written = parse_algorithm_spec(text);
  // Each parameter's alternatives, in the order written.
  std::vector<std::vector<std::string>> choices;
  std::size_t combinations = 1;
  for (const auto& [key, value] : written.params) {
    if (value.empty())
      throw ConfigError("algorithm '" + written.name + "': parameter '" + key + "' has an empty value in '" + text +
                        "'");
    std::vector<std::string> alternatives;
    for (std::size_t begin = 0;;) {
      const std::size_t bar = value.find('|', begin);
      const std::string alternative = value.substr(begin, bar == std::string::npos ? std::string::npos : bar - begin);
      if (alternative.empty())
        throw ConfigError("algorithm '" + written.name + "': parameter '" + key + "' has an empty alternative in '" +
                          value + "' (a grid joins values with '|')");
      if (std::find(alternatives.begin(), alternatives.end(), alternative) != alternatives.end())
        throw ConfigError("algorithm '" + written.name + "': parameter '" + key + "' lists '" + alternative +
                          "' twice in '" + value + "'");
      alternatives.push_back(alternative);
      if (bar == std::string::npos) break;
      begin = bar + 1;
    }
    combinations *= alternatives.size();
    if (combinations > kMaxGridConfigurations)
      throw ConfigError("algorithm '" + written.name + "': the grid '" + text + "' names more than " +
                        std::to_string(kMaxGridConfigurations) + " configurations");
    choices.push_back(std::move(alternatives));
  }
  if (combinations == 1) return {written};
  std::vector<AlgorithmSpec> out;
  out.reserve(combinations);
  // Mixed-radix counting, the last parameter fastest: nested loops in the order written.
  std::vector<std::size_t> at(choices.size(), 0);
  for (std::size_t n = 0; n < combinations; ++n) {
    AlgorithmSpec spec{written.name, {}, text};
    for (std::size_t k = 0; k < choices.size(); ++k) spec.params.emplace_back(written.params[k].first, choices[k][at[k]]);
    out.push_back(std::move(spec));
    for (std::size_t k = choices.size(); k-- > 0;) {
      if (++at[k] < choices[k].size()) break;
      at[k] = 0;
    }
  }
  return out;
}

// ---- factory ------------------------------------------------------------------------------------

namespace {

detail::AlgoContext to_algo_context(const LearnerContext& context) {
  detail::AlgoContext c;
  c.n_features = context.n_features;
  c.task = context.task;
  c.profile = context.profile;
  c.seed = context.seed;
  c.replicates = {context.replicate};
  c.horizon = context.horizon;
  c.backend = context.backend;
  c.n_clients = context.n_clients;
  return c;
}

std::string encode_context(const LearnerContext& context) {
  detail::StateWriter out;
  out.put_u64(context.n_features);
  out.put_u64(static_cast<std::uint64_t>(context.task));
  out.put_u64(static_cast<std::uint64_t>(context.profile));
  out.put_u64(context.seed);
  out.put_u64(context.replicate);
  out.put_u64(context.horizon);
  out.put_u64(static_cast<std::uint64_t>(context.backend));
  out.put_u64(context.defaults.size());
  for (const auto& kv : context.defaults) {
    out.put_string(kv.first);
    out.put_string(kv.second);
  }
  out.put_u64(context.n_clients);  // appended: contexts written before it end here
  const Normalizer& z = context.preprocessing;  // appended after n_clients
  out.put_u64(static_cast<std::uint64_t>(z.how));
  out.put_u64(z.n_features);
  out.put_f64s(z.offset);
  out.put_f64s(z.scale);
  out.put_f64(z.y_offset);
  out.put_f64(z.y_scale);
  out.put_u64(z.scale_y ? 1 : 0);
  out.put_u64(z.n_observed);  // appended after scale_y
  out.put_u64(context.feature_names.size());  // appended after n_observed
  for (const std::string& name : context.feature_names) out.put_string(name);
  return out.bytes();
}

// Why `z` cannot be the normalisation of a learner of `n_features` features, "" where it can:
// apply_row() reads one statistic per feature (one for minmax-global and jmlr23) and none for
// none and unit-rows, so other counts would be read out of bounds.
std::string preprocessing_mismatch(const Normalizer& z, std::size_t n_features) {
  const bool no_statistics = z.how == Normalization::None || z.how == Normalization::UnitRows;
  if (!no_statistics && z.n_features != n_features)
    return "a " + to_string(z.how) + " normalisation of " + std::to_string(z.n_features) + " features for a learner of " +
           std::to_string(n_features);
  const bool one_statistic = z.how == Normalization::MinMaxGlobal || z.how == Normalization::Jmlr23;
  const std::size_t expected = no_statistics ? 0 : one_statistic ? 1 : n_features;
  if (z.offset.size() != expected || z.scale.size() != expected)
    return "a " + to_string(z.how) + " normalisation with " + std::to_string(z.offset.size()) + " offsets and " +
           std::to_string(z.scale.size()) + " scales (it takes " + std::to_string(expected) + " of each)";
  return "";
}

// Why `names` cannot name a learner's `n_features` features, "" where they can (none: unknown).
std::string feature_names_mismatch(const std::vector<std::string>& names, std::size_t n_features) {
  if (names.empty() || names.size() == n_features) return "";
  return std::to_string(names.size()) + " feature names for " + std::to_string(n_features) + " features";
}

// An enumerator stored as its index, at most `last`'s.
template <typename Enum>
Enum stored_enum(detail::StateReader& in, Enum last, const std::string& path, const char* what) {
  const std::uint64_t v = in.get_u64();
  if (v > static_cast<std::uint64_t>(last))
    throw InputError(path + ": damaged learner context (" + what + " " + std::to_string(v) + ")");
  return static_cast<Enum>(v);
}

// Widths and client counts a checkpoint may declare. The model is allocated from them before its
// state is read, and sizes derived from a damaged count (n_rff · n_features · ...) wrap around
// size_t; 2^24 is far beyond any dense model (one RF kernel of D = 50 would take 6.7 GB).
constexpr std::uint64_t kMaxStoredCount = std::uint64_t{1} << 24;

LearnerContext decode_context(detail::StateReader& in, const std::string& path) {
  LearnerContext c;
  c.n_features = in.get_u64();
  if (c.n_features > kMaxStoredCount)
    throw InputError(path + ": damaged learner context (n_features " + std::to_string(c.n_features) + ")");
  c.task = stored_enum(in, Task::Classification, path, "task");
  c.profile = stored_enum(in, Profile::Reference, path, "profile");
  c.seed = in.get_u64();
  c.replicate = in.get_u64();
  c.horizon = in.get_u64();
  c.backend = stored_enum(in, BackendKind::Auto, path, "backend");
  const std::uint64_t n = in.get_u64();
  for (std::uint64_t i = 0; i < n; ++i) {
    std::string key = in.get_string();
    c.defaults.emplace_back(key, in.get_string());
  }
  if (!in.at_end()) c.n_clients = in.get_u64();
  if (c.n_clients > kMaxStoredCount)
    throw InputError(path + ": damaged learner context (n_clients " + std::to_string(c.n_clients) + ")");
  if (!in.at_end()) {
    Normalizer& z = c.preprocessing;
    z.how = stored_enum(in, Normalization::SymmetricKeepBinary, path, "normalisation");
    z.n_features = in.get_u64();
    z.offset = in.get_f64s();
    z.scale = in.get_f64s();
    z.y_offset = in.get_f64();
    z.y_scale = in.get_f64();
    z.scale_y = in.get_u64() != 0;
    if (!in.at_end()) z.n_observed = in.get_u64();
    const std::string mismatch = preprocessing_mismatch(z, c.n_features);
    if (!mismatch.empty()) throw InputError(path + ": damaged learner context (" + mismatch + ")");
  }
  if (!in.at_end()) {
    const std::uint64_t n_names = in.get_u64();
    if (n_names != 0 && n_names != c.n_features)
      throw InputError(path + ": damaged learner context (" + std::to_string(n_names) + " feature names for " +
                       std::to_string(c.n_features) + " features)");
    for (std::uint64_t i = 0; i < n_names; ++i) c.feature_names.push_back(in.get_string());
  }
  return c;
}

}  // namespace

Learner make_learner(const AlgorithmSpec& spec, const LearnerContext& context) {
  // What save() writes must load: the checks load() makes of the context, as ConfigErrors.
  if (const std::string mismatch = preprocessing_mismatch(context.preprocessing, context.n_features); !mismatch.empty())
    throw ConfigError("make_learner: LearnerContext::preprocessing: " + mismatch);
  if (const std::string mismatch = feature_names_mismatch(context.feature_names, context.n_features); !mismatch.empty())
    throw ConfigError("make_learner: LearnerContext::feature_names: " + mismatch);
  auto algorithm = detail::make_algorithm(spec.name, spec.params, context.defaults,
                                          to_algo_context(context));
  return Learner(std::move(algorithm), spec.to_string(), context.n_features, context.task,
                 encode_context(context), context.preprocessing);
}

// ---- Learner ------------------------------------------------------------------------------------

Learner::Learner(std::unique_ptr<detail::Algorithm> algorithm, std::string spec,
                 std::size_t n_features, Task task, std::string context_blob, Normalizer preprocessing)
    : algorithm_(std::move(algorithm)),
      spec_(std::move(spec)),
      n_features_(n_features),
      task_(task),
      context_blob_(std::move(context_blob)),
      preprocessing_(std::move(preprocessing)) {}

void Learner::set_preprocessing(Normalizer preprocessing) {
  check_usable("set_preprocessing");
  if (const std::string mismatch = preprocessing_mismatch(preprocessing, n_features_); !mismatch.empty())
    throw ConfigError("set_preprocessing: " + mismatch);
  detail::StateReader in(context_blob_, "learner context");
  LearnerContext context = decode_context(in, "learner context");
  context.preprocessing = preprocessing;
  context_blob_ = encode_context(context);
  preprocessing_ = std::move(preprocessing);
}

Learner::~Learner() = default;

std::size_t Learner::n_clients() const {
  check_not_moved("n_clients");
  detail::StateReader in(context_blob_, "learner context");
  return decode_context(in, "learner context").n_clients;
}

std::vector<std::string> Learner::feature_names() const {
  check_not_moved("feature_names");
  detail::StateReader in(context_blob_, "learner context");
  return decode_context(in, "learner context").feature_names;
}
Learner::Learner(Learner&&) noexcept = default;
Learner& Learner::operator=(Learner&&) noexcept = default;

std::string Learner::spec() const { return spec_; }
std::size_t Learner::n_features() const { return n_features_; }
Task Learner::task() const { return task_; }
std::int64_t Learner::n_seen() const { return n_seen_; }

void Learner::check_not_moved(const char* what) const {
  if (!algorithm_) throw Error(std::string(what) + ": the learner was moved from (it holds no model)");
}

void Learner::check_usable(const char* what) const {
  check_not_moved(what);
  if (failed_)
    throw Error(std::string(what) + ": the learner failed in an earlier update and may be half updated (" +
                (failure_.empty() ? std::string("an update threw") : failure_) + "); restore a checkpoint to continue");
}

template <typename Update>
void Learner::update_or_fail(Update&& update) {
  try {
    update();
  } catch (const std::exception& e) {
    failed_ = true;  // first, and without allocating: the failure may be memory
    try {
      failure_ = e.what();
    } catch (...) {  // check_usable() says "an update threw"
    }
    throw;
  } catch (...) {
    failed_ = true;
    throw;
  }
}

// What a diverged model's message suggests: a smaller step, named by the parameters this
// algorithm reads (eta for most; AdaRaker's eta0 / eta_cap, PerFedAvg's alpha, ...).
std::string Learner::divergence_advice() const {
  static const char* const kStepParameters[] = {"eta", "eta0", "eta_cap", "eta_scale", "alpha", "step_scale"};
  std::string names;
  for (const char* step : kStepParameters)
    for (const auto& [name, value] : algorithm_->resolved_params())
      if (name == step) names += (names.empty() ? "" : ", ") + name;
  const std::string algo = spec_.substr(0, spec_.find(':'));
  return "a smaller step size (" + (names.empty() ? "omkl describe " + algo + " lists them" : names) +
         "), or features and targets of a smaller scale, may help";
}

void Learner::fail_diverged(std::int64_t sample, double prediction) {
  failed_ = true;  // first, as in update_or_fail()
  const char* shown = std::isnan(prediction) ? "nan" : prediction > 0 ? "inf" : "-inf";  // never finite here
  failure_ = spec_ + " diverged at sample " + std::to_string(sample) + " (prediction " + shown +
             "): an update overflowed the model's numbers; " + divergence_advice();
  throw DivergedError(failure_, sample, prediction);
}


namespace {
// Inputs are checked before anything changes: a refused sample leaves the learner as it was.
void check_sample(const double* x, std::size_t n_features, const std::string& where) {
  for (std::size_t j = 0; j < n_features; ++j)
    if (!std::isfinite(x[j]))
      throw InputError(where + ": feature " + std::to_string(j + 1) + " is " + std::to_string(x[j]) +
                       " (features must be finite)");
}

void check_target(double y, Task task, std::size_t index) {
  if (!std::isfinite(y))
    throw InputError("sample " + std::to_string(index) + ": target " + std::to_string(y) + " is not finite");
  if (task == Task::Classification && y != 1.0 && y != -1.0)
    throw InputError("sample " + std::to_string(index) + ": label " + std::to_string(y) +
                     " of a classifier must be −1 or +1");
}

// `which`: "sample N" (partial_fit) or "the sample to predict".
void check_size(const std::vector<double>& x, std::size_t n_features, const std::string& which) {
  if (x.size() != n_features)
    throw InputError(which + " has " + std::to_string(x.size()) + " features, the model expects " +
                     std::to_string(n_features));
}
}  // namespace

double Learner::mistake(double score, double y) const {
  check_usable("mistake");
  return detail::classification_mistake(score, y, algorithm_->metric_convention());
}

double Learner::predict(const double* x) const {
  check_usable("predict");
  check_sample(x, n_features_, "the sample to predict");
  double prediction = 0.0;
  algorithm_->predict(x, &prediction);
  return prediction;
}

double Learner::predict(const std::vector<double>& x) const {
  check_usable("predict");
  check_size(x, n_features_, "the sample to predict");
  return predict(x.data());
}

double Learner::partial_fit(const double* x, double y) {
  check_usable("partial_fit");
  check_sample(x, n_features_, "sample " + std::to_string(n_seen_ + 1));
  check_target(y, task_, static_cast<std::size_t>(n_seen_) + 1);
  double prediction = 0.0;
  update_or_fail([&] { algorithm_->step(x, y, &prediction); });
  ++n_seen_;
  // The input is finite: a prediction that is not comes from numbers that overflowed, in an
  // earlier update or in this one's features, and this update has learned from it.
  if (!std::isfinite(prediction)) fail_diverged(n_seen_, prediction);
  return prediction;
}

double Learner::partial_fit(const std::vector<double>& x, double y) {
  check_usable("partial_fit");
  check_size(x, n_features_, "sample " + std::to_string(n_seen_ + 1));
  return partial_fit(x.data(), y);
}

void Learner::partial_fit_block(const double* x, const double* y, std::size_t n,
                                double* predictions) {
  check_usable("partial_fit_block");
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t index = static_cast<std::size_t>(n_seen_) + i + 1;
    check_sample(x + i * n_features_, n_features_, "sample " + std::to_string(index));
    check_target(y[i], task_, index);
  }
  update_or_fail([&] { algorithm_->step_block(x, y, n, n_features_, predictions); });
  const std::int64_t first = n_seen_;
  n_seen_ += static_cast<std::int64_t>(n);
  for (std::size_t i = 0; i < n; ++i)  // as partial_fit(), the first such sample of the block
    if (!std::isfinite(predictions[i])) fail_diverged(first + static_cast<std::int64_t>(i) + 1, predictions[i]);
}

std::string Learner::to_bytes() const {
  check_usable("save");
  detail::StateWriter out;
  out.put_tag("omkl-learner");
  out.put_string(spec_);
  out.put_string(context_blob_);
  out.put_i64(n_seen_);
  algorithm_->save_state(out);
  // An update that overflowed shows in the next prediction only (the last one's in none yet), and
  // a federated model predicts with one client's numbers: the state itself is checked, by the
  // rule load() applies, so that nothing is written that would not load.
  if (out.non_finite() > 0)
    throw DivergedError("save: " + spec_ + " diverged: " + std::to_string(out.non_finite()) +
                        " numbers or weight vectors of its state are NaN, infinite or all zero (an update "
                        "overflowed them); nothing written; " +
                        divergence_advice());
  return detail::seal_checkpoint(out.bytes());
}

void Learner::save(const std::string& path) const { detail::write_file_atomic(path, to_bytes()); }

void Learner::save(std::ostream& out) const {
  const std::string bytes = to_bytes();
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw InputError("Learner::save: the output stream failed");
}

Learner Learner::load(std::istream& in, const std::string& name) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return from_bytes(buffer.str(), name);
}

Learner Learner::load(const std::string& path) { return from_payload(detail::read_checkpoint_file(path), path); }

Learner Learner::from_bytes(const std::string& bytes, const std::string& name) {
  return from_payload(detail::open_checkpoint(bytes, name), name);
}

Learner Learner::from_payload(const std::string& payload, const std::string& path) {
  detail::StateReader in(payload, path);
  in.expect_tag("omkl-learner");
  const AlgorithmSpec spec = parse_algorithm_spec(in.get_string());
  const std::string blob = in.get_string();
  detail::StateReader context_in(blob, path);
  const LearnerContext context = decode_context(context_in, path);
  // The model is allocated from the stored context and spec before its state is read (and its
  // shapes checked): a size that cannot be allocated is the checkpoint's error, an InputError,
  // not a std::length_error / std::bad_alloc escaping from the constructors.
  Learner learner = [&] {
    try {
      return make_learner(spec, context);
    } catch (const std::length_error& e) {
      throw InputError(path + ": the model this checkpoint describes cannot be allocated (" + e.what() + ")");
    } catch (const std::bad_alloc&) {
      throw InputError(path + ": the model this checkpoint describes cannot be allocated (out of memory)");
    }
  }();
  learner.n_seen_ = in.get_i64();
  learner.algorithm_->load_state(in);
  if (!in.at_end()) throw InputError(path + ": trailing data after the learner state");
  // save() writes no such state: a model that diverged (saved otherwise) or damage.
  if (in.non_finite() > 0)
    throw InputError(path + ": the model's state holds " + std::to_string(in.non_finite()) +
                     " numbers that are NaN or infinite (a model that diverged, or a damaged checkpoint); not loaded");
  return learner;
}

std::vector<double> Learner::kernel_weights() const {
  check_usable("kernel_weights");
  return algorithm_->kernel_weights(0);
}

std::vector<std::pair<std::string, std::string>> Learner::parameters() const {
  check_not_moved("parameters");
  return algorithm_->resolved_params();
}

}  // namespace omkl
