/// @file main.cpp
/// @brief The `omkl` command-line tool: run, study, gen, bench, list, describe.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fmt/core.h>
#include <fmt/format.h>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <thread>
#include <chrono>

#include "cli/commands.h"
#include "core/closest_name.h"
#include "core/decimal.h"
#include "core/env_switch.h"
#include "features/rf_backend.h"
#include "core/state_io.h"
#include "data/libsvm_rows.h"
#include "data/parse_number.h"
#include "study/scoring.h"
#include "study/study_io.h"
#include "omkl/algorithm.h"
#include "omkl/communicator.h"
#include "omkl/config.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "omkl/study.h"

namespace omkl::cli {

namespace {
// An error message as printed: control bytes (from a file's cell, an argument, a path) escaped as
// \xNN, so that none can move the terminal's cursor; the message's own line breaks stay.
std::string shown(const std::string& message) {
  std::string out;
  std::size_t begin = 0;
  for (std::size_t end; (end = message.find('\n', begin)) != std::string::npos; begin = end + 1)
    out += detail::printable(message.substr(begin, end - begin)) + "\n";
  return out + detail::printable(message.substr(begin));
}

// CLI11 reads "-1" into an unsigned option as 2⁶⁴ − 1 and saturates past it: a count is checked
// as text first, digits only and within 64 bits.
std::string count_error(const std::string& text, const char* expected = "a non-negative integer") {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::string("expected ") + expected + ", not '" + text + "'";
  unsigned long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return "'" + text + "' is too large";
  return {};
}

// The whole text as one finite decimal number ("nan" and "inf" parse as numbers, and are not).
bool finite_number(const std::string& text, double& value) {
  char* end = nullptr;
  value = detail::strtod_decimal(text.c_str(), &end);
  return !text.empty() && *end == '\0' && std::isfinite(value);
}
// What an option's value must be, in words, from its CLI11 type name ("UINT:COUNT", "FLOAT").
std::string expected_value(const CLI::App& command, const std::string& name) {
  const CLI::Option* option = command.get_option_no_throw(name);
  const std::string type = option ? option->get_type_name() : std::string();
  const std::string base = type.substr(0, type.find(':'));
  if (base == "INT") return "an integer";
  if (base == "UINT") return type.find(":POSITIVE") != std::string::npos ? "a positive integer" : "a non-negative integer";
  if (base == "FLOAT") return "a number";
  return "a value";
}

// CLI11's messages about an option's values, in the words of the tool's own option errors
// ("--seeds: expected a non-negative integer, not 'abc'"); empty for any other message. CLI11
// 2.x words them "Could not convert: NAME = VALUE", "NAME: 1 required TYPE missing" and
// "NAME: At Most 1 required but received 2".
std::string option_value_error(const CLI::App& command, const std::string& message) {
  static const std::string kConvert = "Could not convert: ";
  if (message.rfind(kConvert, 0) == 0) {
    const std::size_t equals = message.find(" = ", kConvert.size());
    if (equals == std::string::npos) return {};
    const std::string name = message.substr(kConvert.size(), equals - kConvert.size());
    return name + ": expected " + expected_value(command, name) + ", not '" + message.substr(equals + 3) + "'";
  }
  const std::size_t colon = message.find(": ");
  if (colon == std::string::npos || message.rfind("--", 0) != 0) return {};
  const std::string name = message.substr(0, colon), rest = message.substr(colon + 2);
  const bool missing = rest.size() > 8 && rest.compare(rest.size() - 8, 8, " missing") == 0;
  if (missing && rest.find(" required ") != std::string::npos) {
    const std::string expected = expected_value(command, name);
    return name + ": a value is missing" + (expected == "a value" ? "" : " (expected " + expected + ")");
  }
  static const std::string kAtMost = "At Most 1 required but received ";
  if (rest.rfind(kAtMost, 0) == 0)
    return name + " is given " + rest.substr(kAtMost.size()) + " times: it takes one value, give it once";
  return {};
}

// A malformed command line as the tool's other errors read ("omkl: error: …"): an unknown command
// or option is named, with the nearest known one, and an option's value says what it expects.
// CLI11's own wording for everything else.
std::string usage_error(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App& command = parsed.empty() ? app : *parsed.front();
  if (const std::string reworded = option_value_error(command, e.what()); !reworded.empty()) return reworded;
  if (dynamic_cast<const CLI::ExtrasError*>(&e) == nullptr) return e.what();
  const std::vector<std::string> extras = app.remaining(true);
  if (extras.empty()) return e.what();
  const std::string& first = extras.front();
  const std::string where = parsed.empty() ? "" : " of 'omkl " + command.get_name() + "'";
  if (first.size() > 1 && first[0] == '-') {
    const std::string name = first.substr(0, first.find('='));
    std::vector<std::string> options;
    for (const CLI::Option* option : command.get_options())
      for (const std::string& long_name : option->get_lnames()) options.push_back("--" + long_name);
    return "unknown option '" + name + "'" + where + detail::did_you_mean(name, options);
  }
  if (parsed.empty()) {
    std::vector<std::string> commands;
    std::string known;
    for (const CLI::App* sub : app.get_subcommands({})) {
      commands.push_back(sub->get_name());
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    return "unknown command '" + first + "'" + detail::did_you_mean(first, commands) + " (commands: " + known + ")";
  }
  return "unexpected argument '" + first + "'" + where + " (options start with --)";
}
}  // namespace

const CLI::Validator kCount([](std::string& text) { return count_error(text); }, "COUNT", "count");
const CLI::Validator kPositiveCount(
    [](std::string& text) {
      const std::string error = count_error(text, "a positive integer");
      if (!error.empty()) return error;
      return text.find_first_not_of('0') == std::string::npos ? std::string("must be at least 1, not " + text)
                                                              : std::string();
    },
    "POSITIVE", "positive count");
// A positive, finite number of seconds.
const CLI::Validator kPositiveSeconds(
    [](std::string& text) {
      double value = 0.0;
      if (!finite_number(text, value) || !(value > 0))
        return "expected a positive, finite number of seconds, not '" + text + "'";
      return std::string();
    },
    "SECONDS", "seconds");
// A finite number ≥ 0.
const CLI::Validator kNonNegativeNumber(
    [](std::string& text) {
      double value = 0.0;
      if (!finite_number(text, value) || value < 0) return "expected a finite number ≥ 0, not '" + text + "'";
      return std::string();
    },
    "NUMBER ≥ 0", "non-negative");

void add_format_option(CLI::App& app, std::string& format) {
  app.add_option("--format", format,
                 "csv or libsvm (default: by the file's extension, .svm/.libsvm/.txt for LIBSVM; standard input: csv)")
      ->check(CLI::IsMember({"csv", "libsvm"}));
}

void add_labels_option(CLI::App& app, std::string& labels) {
  app.add_option("--labels", labels,
                 "the target as written (as_written, the default) or pm1: a two-class target such as 0/1 mapped "
                 "to −1 (the smaller value) and +1, a classification stream (spec/bandit.md §8.2)")
      ->check(CLI::IsMember({"as_written", "pm1"}));
}

void add_common_options(CLI::App& app, CommonOptions& o, bool with_seeds) {
  app.add_option("--algo", o.algos,
                 "algorithm with optional parameters, repeatable: raker, adaraker:eta0=10, "
                 "raker:D=20,dict=gauss:1+gauss:10 (see `omkl list` and `omkl describe NAME`); in study and "
                 "bench, values joined by '|' are a grid of every combination, 'oks:c_lambda=1|5|10|25'");
  app.add_option("--data", o.data,
                 "stream: a CSV file (header row, last column = target), a LIBSVM file "
                 "(.svm/.libsvm/.txt), or synthetic:dataset1[:T] / synthetic:dataset2[:T]; for run also - "
                 "(CSV rows on standard input, read live) or a named pipe")
      ->capture_default_str();
  app.add_option("--target", o.target, "CSV target column name (default: the last column)");
  add_format_option(app, o.format);
  app.add_option("--group-column", o.group_column,
                 "CSV column holding each row's group, not a feature: federated clients are then "
                 "dealt by group (non-i.i.d. split)");
  add_labels_option(app, o.labels);
  app.add_option("--one-hot", o.one_hot,
                 "categorical feature columns as 0/1 indicator columns, one per distinct value: all, or CSV header "
                 "names joined by ',' (LIBSVM's binarised sets, e.g. phishing's 68 columns from the UCI file's 30); "
                 "a model learned so encodes predict's and --resume's rows by its own columns");
  app.add_option("--clients", o.clients,
                 "federated clients K (default with a federated preset: as many as the data allow)")
      ->check(kPositiveCount);
  app.add_option("--rounds", o.rounds, "federated rounds T, samples per client (default: the preset's)")
      ->check(kPositiveCount);
  app.add_option("--within-site-order", o.within_site_order,
                 "with --group-column: each group's rows as the deal takes them, chronological (file order, "
                 "the default) or shuffled with --seed first; spec/federated.md §4.3, noniid.within_site_order")
      ->check(CLI::IsMember({"chronological", "shuffled"}));
  app.add_option("--client-order", o.client_order,
                 "with --group-column: each client's time order, shuffled with --seed (the authors' code, §4.3; "
                 "the default) or listed (own group's block, then the others', each in the group's order)")
      ->check(CLI::IsMember({"shuffled", "listed"}));
  app.add_option("--normalize", o.normalize,
                 "preprocessing: none, minmax, minmax-global, minmax-all, zscore, unit-rows, jmlr23, symmetric, "
                 "symmetric-keep-binary (the bandit spec's no_rescale_binary), or "
                 "the online scalers running-minmax, running-zscore (default: the preset's, else none)");
  if (with_seeds)
    app.add_option("--seeds", o.seeds,
                   "number of Monte Carlo replicates R (default: the preset's repetitions, e.g. 10 for bandit-oks, "
                   "20 for jmlr23-graph and fed-pofmkl, 50 for conf-sfg; else 5)")
        ->check(kPositiveCount);
  app.add_option("--seed", o.seed, "base seed; replicate r draws from (seed, r)")->capture_default_str()->check(kCount);
  app.add_option("--profile", o.profile,
                 "paper (corrected equations) or reference (authors' code, reproduces tables)")
      ->capture_default_str();
  app.add_option("--preset", o.preset,
                 "published protocol: jmlr19-regression, jmlr19-classification, jmlr23-graph, conf-sfg, "
                 "fed-pofmkl, bandit-oks");
  app.add_option("--loss", o.loss,
                 "logistic, square or absolute: every algorithm's loss (a soft default, under each --algo's "
                 "own) and the metric (error rate, MSE, MAE)")
      ->check(CLI::IsMember({"logistic", "square", "absolute"}));
  app.add_option("--backend", o.backend, "cpu, cuda or auto")->capture_default_str();
  app.add_option("--threads", o.threads, "worker threads (0 = all cores)")->capture_default_str()->check(kCount);
  app.add_option("--progress", o.progress,
                 "a progress line on stderr (rate, ETA; run: the running metric) every N rows (run) or "
                 "finished replicates (study), to a terminal or a log alike")
      ->check(kCount);
}

namespace {
StudySource study_source(const CommonOptions& o) {
  StudySource source;
  source.path = o.data;
  source.target_column = o.target;
  source.format = o.format;
  source.group_column = o.group_column;
  source.labels = o.labels;
  source.one_hot = o.one_hot;
  source.preset = o.preset;
  source.loss = o.loss;
  source.normalize = o.normalize;
  source.clients = o.clients;
  source.rounds = o.rounds;
  source.seed = o.seed;
  source.within_site_order = o.within_site_order;
  source.client_order = o.client_order;
  return source;
}
}  // namespace

std::size_t study_seeds(const CommonOptions& o) { return o.seeds > 0 ? o.seeds : default_seeds(o.preset); }

// The stream as read (and dealt to federated clients), before any normalisation.
Dataset load_raw_data(const CommonOptions& o) { return load_study_stream(study_source(o)); }

// The preset's normalisation, overridden by --normalize.
Normalization requested_normalization(const CommonOptions& o) { return study_normalization(study_source(o)); }

void check_output_path(const std::string& option, const std::string& path, bool directory) {
  detail::check_output_path(option, path, directory);  // the library's, which run_study() makes too
}

void check_distinct_paths(const std::vector<std::pair<std::string, std::string>>& inputs,
                          const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  const auto same_file = [](const std::string& a, const std::string& b) {
    std::error_code error;
    if (fs::exists(a, error) && fs::exists(b, error)) return fs::equivalent(a, b, error);
    // Absolute first: weakly_canonical() keeps a path relative when none of it exists yet, so
    // "q.out" and "./q.out" would differ.
    const fs::path ca = fs::weakly_canonical(fs::absolute(a, error), error);
    if (error) return false;
    const fs::path cb = fs::weakly_canonical(fs::absolute(b, error), error);
    return !error && ca == cb;
  };
  const auto named = [](const std::string& path) { return !path.empty() && path != "-"; };
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& [option, path] = outputs[i];
    if (!named(path)) continue;
    for (const auto& [input_option, input] : inputs) {
      // A checkpoint may be resumed and saved back in place (written whole, then renamed).
      if (option == "--save" && input_option == "--resume") continue;
      if (named(input) && same_file(path, input))
        throw ConfigError(option + " " + path + " is the file " + input_option + " reads: it would be overwritten");
    }
    for (std::size_t j = 0; j < i; ++j)
      if (named(outputs[j].second) && same_file(path, outputs[j].second))
        throw ConfigError(option + " and " + outputs[j].first + " name the same file, " + path);
  }
}

Dataset load_data(const CommonOptions& o) {
  Dataset data = load_raw_data(o);
  normalize(data, requested_normalization(o));
  return data;
}

// A raw stream far from unit scale gets one note on stderr (omkl::scale_advice() says why),
// unless a normalisation was asked for: by --normalize (none included: the values are meant as
// they are) or by the preset.
static void note_scale(const CommonOptions& o, const Dataset& raw) {
  if (!o.normalize.empty() || requested_normalization(o) != Normalization::None) return;
  const std::string advice = scale_advice(raw);
  if (!advice.empty()) std::cerr << "omkl: note: " << shown(advice) << "\n";
}

void check_normalize_matches_model(const CommonOptions& o, const Normalizer& stored, const std::string& model_path) {
  if (!o.normalize.empty() && parse_normalization(o.normalize) != stored.how)
    throw ConfigError("--normalize " + o.normalize + ": the model in " + model_path + " was trained on a '" +
                      to_string(stored.how) + "'-normalised stream and applies that normalisation, with its "
                      "training statistics, to new rows (leave --normalize out)");
}

// New rows for a saved model get the model's own normalisation, with the statistics of the
// stream it was trained on (so a row means what it meant in training). A --normalize that says
// otherwise is refused. A checkpoint from before models kept their normalisation stores none:
// then --normalize is fitted on this stream, as it used to be. An online scaler is returned in
// `online` with the rows left raw, for a caller that learns (it transforms them as it goes and
// saves the scaler's new state); without `online` (predict) it transforms them as it stands.
// A LIBSVM file's width is its largest index; a file of a model's stream whose last features are
// all zero (absent) is narrower than the model: its rows get those zeros back.
void widen_libsvm_to_model(const CommonOptions& o, const Learner& learner, Dataset& data) {
  const std::size_t d = data.n_features, wide = learner.n_features();
  if (!reads_libsvm(o.data, o.format) || d >= wide) return;  // a CSV's width is its header's: a narrower one is refused
  std::vector<double> x(data.n_samples * wide, 0.0);
  for (std::size_t t = 0; t < data.n_samples; ++t) std::copy_n(data.x.data() + t * d, d, x.data() + t * wide);
  data.x = std::move(x);
  data.n_features = wide;
}

void check_feature_names(const Learner& learner, const std::vector<std::string>& names, const std::string& source,
                         const std::string& model_path) {
  const std::vector<std::string> trained = learner.feature_names();
  if (trained.empty() || names.size() != trained.size()) return;
  for (std::size_t j = 0; j < names.size(); ++j) {
    if (names[j] == trained[j]) continue;
    std::string listed;
    for (std::size_t k = 0; k < trained.size() && k < 20; ++k) listed += (k ? ", " : "") + trained[k];
    if (trained.size() > 20) listed += ", … (" + std::to_string(trained.size()) + " in all)";
    throw InputError(source + ": feature column " + std::to_string(j + 1) + " is '" + detail::printable(names[j]) +
                     "', but the model in " + model_path + " was trained with '" + detail::printable(trained[j]) +
                     "' there (its features, in order: " + detail::printable(listed) + ")");
  }
}

Dataset load_data_for_model(const CommonOptions& o, const Learner& learner, const std::string& model_path,
                            std::optional<Normalizer>* online) {
  // A LIBSVM file is as wide as its largest index, and is made dense that wide when loaded: an
  // index beyond the model's features is found first, line by line, as `predict` finds it.
  if (o.data.rfind("synthetic:", 0) != 0 && reads_libsvm(o.data, o.format))
    detail::check_libsvm_width(o.data, learner.n_features(), "the model in " + model_path);
  Dataset data = load_raw_data(o);
  // A model learned on --one-hot's indicator columns reads a stream as written through them.
  one_hot_encode_like(data, learner.feature_names());
  widen_libsvm_to_model(o, learner, data);
  check_feature_names(learner, data.feature_names, o.data, model_path);
  const Normalizer& stored = learner.preprocessing();
  if (stored.n_features == 0) {
    normalize(data, requested_normalization(o));
    return data;
  }
  check_normalize_matches_model(o, stored, model_path);
  if (data.n_features != learner.n_features())
    throw InputError(o.data + ": stream has " + std::to_string(data.n_features) + " features, the model in " +
                     model_path + " expects " + std::to_string(learner.n_features()));
  if (stored.online() && online) {
    *online = stored;
    return data;
  }
  for (std::size_t t = 0; t < data.n_samples; ++t) stored.apply_row(data.x.data() + t * data.n_features, data.n_features, &data.y[t]);
  return data;
}

std::vector<AlgorithmSpec> parse_algos(const CommonOptions& o, const std::vector<std::string>& fallback, bool one) {
  std::vector<std::string> texts = o.algos;
  if (texts.empty() && !o.preset.empty()) {
    // A preset's own algorithms (a federated or bandit protocol's, not Raker on its stream):
    // `run` takes the first, `bench` all; a study leaves them to run_study().
    texts = preset_algorithms(find_preset(o.preset), o.loss.empty() ? "" : loss_parameter(o.loss));
    if (one && texts.size() > 1) texts.resize(1);
  }
  if (texts.empty()) texts = fallback;
  std::vector<AlgorithmSpec> specs;
  // One configuration named twice would run twice and give two identical series (a grid refuses
  // a value listed twice alike): each configuration as written, its parameters in any order, and
  // the --algo that named it first. (A default written out, "raker:D=50" beside "raker", is one
  // configuration too: run_study() finds those once it has built the algorithms.)
  std::vector<std::pair<std::string, std::string>> named;
  for (const auto& text : texts) {
    std::vector<AlgorithmSpec> grid = expand_algorithm_grid(text);
    if (one && grid.size() > 1)
      throw ConfigError("--algo '" + text + "' is a grid of " + std::to_string(grid.size()) +
                        " configurations (values joined by '|'); one learner takes one: run the grid with omkl study");
    for (const AlgorithmSpec& spec : grid) {
      AlgorithmSpec sorted = spec;
      std::sort(sorted.params.begin(), sorted.params.end());
      const std::string configuration = sorted.to_string();
      for (const auto& [earlier, earlier_text] : named)
        if (earlier == configuration)
          throw ConfigError("--algo '" + earlier_text + "' and --algo '" + text + "' both name " + spec.to_string() +
                            ": give each configuration once");
      named.emplace_back(configuration, text);
    }
    specs.insert(specs.end(), grid.begin(), grid.end());
  }
  return specs;
}

BackendKind resolve_backend(const std::string& text) {
  const BackendKind kind = parse_backend(text);
  if (kind == BackendKind::Auto) {
    if (detail::cuda_available()) return BackendKind::Cuda;
    std::cerr << "omkl: no usable CUDA device" << (OMKL_WITH_CUDA ? "" : " (built without CUDA)")
              << "; running on the CPU backend\n";
    return BackendKind::Cpu;
  }
  return kind;
}

namespace {

std::string format_metric(const std::string& metric, double v) {
  if (!std::isfinite(v)) return "diverged";
  // Error rates in percent; losses in plain scientific notation (1.2346e-02), whatever their size.
  return metric == "error_rate" ? fmt::format("{:.3f} %", v * 100) : fmt::format("{:.4e}", v);
}

void print_table(const StudyResult& result) {
  fmt::print("dataset {} (T = {}, d = {}), backend {}, profile {}{}\n", result.dataset,
             result.n_samples, result.n_features, result.backend, result.profile,
             result.preset.empty() ? "" : ", preset " + result.preset);
  fmt::print("{:<44} {:>10} {:>16} {:>14} {:>12} {:>6}\n", "algorithm", "metric", "final mean",
             "final std", "s/replicate", "seeds");
  for (const auto& r : result.results) {
    fmt::print("{:<44} {:>10} {:>16} {:>14} {:>12.4f} {:>6}{}\n", r.spec.substr(0, 44), r.metric,
               format_metric(r.metric, r.final_mean), format_metric(r.metric, r.final_std),
               r.seconds_mean, r.seeds, r.reused ? "  (reused)" : "");
  }
  if (result.results.empty() || result.results.front().n_clients == 0) return;
  // Federated streams: what the clients sent, the spread over clients, the client regret.
  fmt::print("federated: {} clients × {} rounds; floats per client-step, std of the per-client metric, "
             "client regret eq. (11) at T (mean over clients{}), client-side seconds ÷ K (§4.6)\n",
             result.results.front().n_clients, result.n_samples / result.results.front().n_clients,
             result.regret_include_reg ? "; with the λ‖θ‖² terms, regret.include_reg" : "");
  fmt::print("{:<44} {:>10} {:>10} {:>16} {:>14} {:>12}\n", "algorithm", "uplink", "downlink", "std clients",
             "regret eq.11", "client s/K");
  const auto finite_or_dash = [](double v, const char* format) {
    return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : std::string("—");
  };
  for (const auto& r : result.results)
    fmt::print("{:<44} {:>10.1f} {:>10.1f} {:>16} {:>14} {:>12}\n", r.spec.substr(0, 44), r.uplink_per_client_step,
               r.downlink_per_client_step, format_metric(r.metric, r.final_std_clients),
               finite_or_dash(r.regret_eq11_mean, "{:.4g}"), finite_or_dash(r.client_seconds_per_client, "{:.4f}"));
}

// "--progress N": one line every N units, with the rate and the time left, for logs as well as
// terminals. `what` names the unit.
// `note` (may be empty) is printed after the counts, e.g. the running metric.
using ProgressLine = std::function<void(std::size_t, std::size_t, const std::string&)>;
ProgressLine progress_lines(std::size_t every, const char* what) {
  const auto start = std::chrono::steady_clock::now();
  auto last = std::make_shared<std::size_t>(0);
  return [=](std::size_t done, std::size_t total, const std::string& note) {
    if (done < *last + every && done != total) return;
    *last = done;
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0.0;
    const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0.0;
    std::cerr << fmt::format("omkl: {}/{} {}{} ({:.3g}/s, {:.1f} s elapsed, about {:.1f} s left)\n", done, total, what,
                             note, rate, elapsed, left)
              << std::flush;
  };
}

std::function<void(std::size_t, std::size_t)> progress_bar() {
  if (!::isatty(STDERR_FILENO)) return {};
  return [](std::size_t done, std::size_t total) {
    const int width = 40;
    const int filled = total ? static_cast<int>(width * done / total) : width;
    std::cerr << "\r[" << std::string(filled, '#') << std::string(width - filled, ' ') << "] " << done
              << "/" << total << (done == total ? "\n" : "") << std::flush;
  };
}

// `omkl study` options beside the common ones.
struct StudyExtras {
  bool regret = false;
  bool regret_include_reg = false;
  std::size_t regret_features = 500;
  std::string regret_comparator = "auto";
  double regret_lambda = kDefaultRegretLambda;
  std::string regret_dict;
  double message_timeout_s = 60.0;
  std::string time_match;
  std::size_t time_match_rows = 0;
  std::string spread;  ///< --std: "sample" or "population"; empty: the preset's
  bool shuffle = false;  ///< --shuffle (a preset may shuffle on its own: bandit-oks)
};

void print_time_match(const TimeMatchReport& report) {
  fmt::print("time-matched budgets ([OKS] §6.4): reference {} at {:.3g} µs per round ({} rows per timed pass)\n",
             report.reference, report.reference_seconds_per_round * 1e6, report.probe_rows);
  for (const auto& e : report.entries)
    fmt::print("  {:<40} {:>9.3g} µs per round{}\n", e.spec.substr(0, 40), e.seconds_per_round * 1e6,
               e.note.empty() ? "" : "  (" + e.note + ")");
}

int run_study_command(const CommonOptions& o, const std::string& out_dir, std::size_t curve_points,
                      const StudyExtras& extras = {}, std::shared_ptr<Communicator> comm = nullptr,
                      const std::function<void(const StudyResult&)>& epilogue = {}) {
  const bool regret = extras.regret;
  // The time-matched mode measures one reference configuration.
  if (!extras.time_match.empty()) {
    const std::size_t configurations = expand_algorithm_grid(extras.time_match).size();
    if (configurations > 1)
      throw ConfigError("--time-match '" + extras.time_match + "' is a grid of " + std::to_string(configurations) +
                        " configurations (values joined by '|'); the reference is one configuration, no grid");
  }
  StudyConfig config;
  // None with a preset: run_study() takes the preset's own, as for every other caller.
  if (!o.algos.empty() || o.preset.empty()) config.algorithms = parse_algos(o, {"raker", "adaraker"});
  config.n_seeds = study_seeds(o);
  config.base_seed = o.seed;
  config.profile = parse_profile(o.profile);
  config.preset = o.preset;
  if (!o.preset.empty()) find_preset(o.preset);
  config.backend = resolve_backend(o.backend);
  config.threads = o.threads;
  config.out_dir = out_dir;
  config.curve_points = curve_points;
  config.regret = regret;
  config.regret_features = extras.regret_features;
  config.regret_comparator = parse_regret_comparator(extras.regret_comparator);
  config.regret_include_reg = extras.regret_include_reg;
  config.regret_lambda = extras.regret_lambda;
  config.regret_dict = extras.regret_dict;
  if (!extras.spread.empty()) config.spread = parse_spread(extras.spread);
  config.time_match = extras.time_match;
  config.shuffle = extras.shuffle;
  config.time_match_rows = extras.time_match_rows;
  config.provenance = {{"command", o.command}, {"data", o.data},
                       {"normalization", o.normalize.empty() ? (o.preset.empty() ? "none" : "the preset's") : o.normalize}};
  set_study_loss(config, o.loss);
  const bool root = !comm || comm->rank() == 0;
  if (root && o.progress) {
    const ProgressLine line = progress_lines(o.progress, "replicates");
    config.progress = [line](std::size_t done, std::size_t total) { line(done, total, ""); };
  } else if (root) {
    config.progress = progress_bar();
  }
  config.communicator = comm;
  config.message_timeout_s = extras.message_timeout_s;
  const Dataset data = load_data(o);
  if (root) note_scale(o, data);
  if (root) detail::check_study_folder("--out", out_dir);  // before hours of work, not after (run_study's check too)
  const StudyResult result = run_study(config, data);
  if (!root) return 0;  // rank 0 reports and writes the outputs
  if (!result.time_match.reference.empty()) print_time_match(result.time_match);
  print_table(result);
  for (const GridBest& g : grid_bests(result))
    fmt::print("grid {} ({} configurations): best {}\n", g.grid, g.configurations,
               g.best_spec.empty() ? std::string("none (every configuration diverged)")
                                   : g.best_spec + ", " + g.metric + " " + format_metric(g.metric, g.best_final_mean));
  if (epilogue) epilogue(result);
  if (regret && data.n_clients > 0) {
    fmt::print("mean cumulative client regret at T against the batch comparator {} (spec/federated.md §4.7){}, "
               "± std across clients:\n", result.regret_benchmark,
               result.regret_include_reg ? ", with λ‖θ̄‖² (regret.include_reg)" : "");
    for (const auto& r : result.results)
      if (!r.regret_mean.empty())
        fmt::print("  {:<42} {:>14.6g} ± {:.3g}\n", r.spec.substr(0, 42), r.regret_mean.back(), r.regret_std_clients);
  } else if (regret) {
    fmt::print("cumulative regret at t = T against batch kernel ridge with {} (§4.5):\n", result.regret_benchmark);
    for (const auto& r : result.results)
      if (!r.regret_mean.empty())
        fmt::print("  {:<42} {:>14.6g} ± {:.3g}\n", r.spec.substr(0, 42), r.regret_mean.back(), r.regret_std.back());
  }
  if (!out_dir.empty())
    fmt::print("wrote {}/summary.json and {}/curves.csv{}\n", out_dir, out_dir, regret ? " and regret.csv" : "");
  return 0;
}

}  // namespace

namespace {
// An option given an empty value ('' from an unset shell variable) is refused by name: taken as
// given, an empty path or spec would mean "not given" (no --out, no --save) without a word.
void refuse_empty_values(const CLI::App& app) {
  std::vector<const CLI::App*> commands{&app};
  for (const CLI::App* sub : app.get_subcommands()) commands.push_back(sub);
  for (const CLI::App* command : commands)
    for (const CLI::Option* option : command->get_options())
      if (option->nonpositional() && option->get_type_size() > 0)
        for (const std::string& value : option->results())
          if (value.empty()) throw ConfigError(option->get_name() + ": empty value");
}
}  // namespace

// ---- omkl run / predict (the pieces live_run.cpp shares are declared in commands.h) ------------

// Options that would change what a model is: refused beside --resume / --model, which fix them
// (given there, they would be silently ignored).
void refuse_model_options(const CLI::App& command, const char* with) {
  for (const char* name :
       {"--algo", "--seed", "--profile", "--preset", "--backend", "--loss", "--replicate", "--one-hot"})
    if (command.get_option_no_throw(name) && command.count(name) > 0)
      throw ConfigError(std::string(name) + " cannot be given with " + with + ": the model fixes it");
}

std::string run_metric(const CommonOptions& o, const Learner& learner, bool loaded) {
  if (loaded)
    for (const auto& [name, value] : learner.parameters())
      if (name == "loss" && value == "absolute") return "mae";
  return loss_metric(o.loss, learner.task());
}

double metric_term(const std::string& metric, const Learner& learner, double y, double prediction) {
  // A mistake under the algorithm's convention (the learner's), the errors as a study scores them.
  return metric == "error_rate" ? learner.mistake(prediction, y) : detail::step_error(metric, prediction, y, {});
}

// The mean of `metric` over a stream's first n predictions.
double stream_metric(const std::string& metric, const Learner& learner, const Dataset& data,
                     const std::vector<double>& predictions, std::size_t n) {
  double total = 0.0;
  for (std::size_t t = 0; t < n; ++t) total += metric_term(metric, learner, data.y[t], predictions[t]);
  return n ? total / static_cast<double>(n) : NAN;
}

std::string shown_number(double v) { return std::isnan(v) ? "nan" : fmt::format("{}", v); }

void check_last_update(const Learner& learner, const double* x, const std::string& where, const std::string& outcome) {
  const double after = learner.predict(x);
  if (!std::isfinite(after))
    throw Error(fmt::format("{} diverged with its update at {} (it now predicts that row as {}): {}; {}",
                            learner.spec(), where, shown_number(after), outcome, learner.divergence_advice()));
}

void throw_bad_label(double y, const std::string& where, const std::string& model_path) {
  throw InputError(fmt::format("{}: label {:g}, but the model{} is a classifier (labels −1 or +1)", where, y,
                               model_path.empty() ? "" : " in " + model_path));
}

void CommandOutputs::write() const {
  detail::write_files_atomic(files);
  if (to_stdout.empty()) return;
  if (std::fwrite(to_stdout.data(), 1, to_stdout.size(), stdout) != to_stdout.size() || std::fflush(stdout) != 0)
    throw Error(std::string("standard output: write failed: ") + std::strerror(errno));
}

bool names_standard_output(const std::string& path) {
  if (path == "-") return true;
  struct stat named {}, out {}, null {};
  if (path.empty() || ::stat(path.c_str(), &named) != 0 || ::fstat(STDOUT_FILENO, &out) != 0) return false;
  if (named.st_dev != out.st_dev || named.st_ino != out.st_ino) return false;
  // /dev/null takes the bytes alike either way: the report stays where it was going.
  return !(S_ISCHR(named.st_mode) && ::stat("/dev/null", &null) == 0 && named.st_rdev == null.st_rdev);
}

void check_run_paths(const CommonOptions& o, const RunOptions& r) {
  if (names_standard_output(r.save))
    throw ConfigError("--save " + r.save + ": a checkpoint is written to a file of its own, not to standard output "
                      "(which carries the report, or the predictions with --predictions -)");
  check_output_path("--predictions", r.predictions, false);
  check_output_path("--save", r.save, false);
  check_distinct_paths({{"--data", o.data}, {"--resume", r.resume}}, {{"--predictions", r.predictions}, {"--save", r.save}});
}

// t (the learner's 1-based sample count), y, prediction.
std::string predictions_csv(const Dataset& data, const std::vector<double>& predictions, std::size_t n,
                            std::size_t first_t) {
  std::string csv = "t,y,prediction\n";
  for (std::size_t t = 0; t < n; ++t)
    csv += fmt::format("{},{:.17g},{:.17g}\n", first_t + t + 1, data.y[t], predictions[t]);
  return csv;
}


LearnerContext fresh_learner_context(const CommonOptions& o, const RunOptions& r, std::size_t n_features, Task task,
                                     std::size_t horizon) {
  LearnerContext context;
  context.n_features = n_features;
  context.task = task;
  context.profile = parse_profile(o.profile);
  context.seed = o.seed;
  context.replicate = r.replicate;
  context.horizon = horizon;
  context.backend = resolve_backend(o.backend);
  if (!o.preset.empty()) context.defaults = find_preset(o.preset).defaults;
  if (!o.loss.empty()) context.defaults.emplace_back("loss", loss_parameter(o.loss));
  return context;
}

bool is_live_input(const std::string& path, const RunOptions& r) {
  if (path == "-" || r.follow) return true;
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && (S_ISFIFO(info.st_mode) || S_ISCHR(info.st_mode));
}

int run_command(const CommonOptions& o, const RunOptions& r, const CLI::App& command) {
  if (r.follow && o.data.rfind("synthetic:", 0) == 0)
    throw ConfigError("--follow needs a file (one that grows); " + o.data + " is a built-in stream");
  if (is_live_input(o.data, r)) return live_run_command(o, r, command);
  for (const char* live_only : {"--save-every", "--horizon", "--features"})
    if (command.count(live_only) > 0)
      throw ConfigError(std::string(live_only) + " is for live input (--data -, a named pipe, or --follow); " + o.data +
                        " is read whole");
  // Stopping early is for the checkpoint: without one, the run would end at the row and keep nothing.
  // -1 is the option's "not given"; written out, it is as negative as any other.
  if (command.count("--save-at") > 0 && r.save_at < 0)
    throw ConfigError("--save-at " + std::to_string(r.save_at) + " is negative (a number of rows)");
  if (r.save_at >= 0 && r.save.empty())
    throw ConfigError("--save-at " + std::to_string(r.save_at) + " needs --save PATH (the checkpoint it stops for)");
  if (!r.resume.empty()) refuse_model_options(command, "--resume");
  const auto specs = parse_algos(o, {"raker"}, true);
  if (specs.size() != 1) throw ConfigError("run: give exactly one --algo");
  std::optional<Learner> resumed;
  if (!r.resume.empty()) resumed.emplace(Learner::load(r.resume));
  std::optional<Normalizer> online;  // an online scaler: rows transformed as the learner reaches them
  Dataset data = resumed ? load_data_for_model(o, *resumed, r.resume, &online) : load_raw_data(o);
  if (data.n_samples == 0) throw InputError(data.name + ": empty stream");
  // A federated model takes its rows client by client: dealt otherwise, they would reach the
  // wrong clients' parameters.
  if (resumed && resumed->n_clients() != data.n_clients) {
    const auto dealt = [](std::size_t K) {
      return K == 0 ? std::string("not dealt to federated clients") : "dealt to " + std::to_string(K) + " clients";
    };
    throw ConfigError("--resume " + r.resume + ": the model learned a stream " + dealt(resumed->n_clients()) + "; " +
                      o.data + " is " + dealt(data.n_clients) + " (give the --clients / --rounds / --group-column "
                      "it was trained with)");
  }
  Learner learner = [&] {
    if (resumed) return std::move(*resumed);
    note_scale(o, data);
    LearnerContext context = fresh_learner_context(o, r, data.n_features, data.task, data.n_samples);
    context.n_clients = data.n_clients;  // a federated stream (--clients, a federated preset) as dealt
    context.feature_names = data.feature_names;  // checked by predict and --resume
    // The normalisation is fitted here and kept in the model, for --resume and predict.
    context.preprocessing = fit_normalizer(data, requested_normalization(o));
    if (context.preprocessing.online()) online = context.preprocessing;
    else context.preprocessing.apply(data);
    return make_learner(specs[0], context);
  }();
  if (learner.n_features() != data.n_features)
    throw InputError(o.data + ": stream has " + std::to_string(data.n_features) +
                     " features, the model in " + r.resume + " expects " +
                     std::to_string(learner.n_features()));
  // A resumed learner continues learning on this stream from its first row: the samples it has
  // seen are its state, not a position in the file.
  const std::size_t seen = static_cast<std::size_t>(learner.n_seen());
  const std::size_t n = r.save_at >= 0 ? std::min<std::size_t>(data.n_samples, static_cast<std::size_t>(r.save_at))
                                       : data.n_samples;
  // A classifier's labels, before any row is learned, by their row in the file (the learner's own
  // check can only name its sample count, which a resumed model offsets).
  for (std::size_t t = 0; t < n; ++t)
    check_label(learner, data.y[t], [&] { return o.data + ": data row " + std::to_string(t + 1); }, r.resume);
  if (online) {
    // Each row by the statistics of the rows before it and itself; the model keeps the state
    // after its last row, so that --resume continues the scaler where it stopped.
    for (std::size_t t = 0; t < n; ++t) {
      online->observe_row(data.row(t), data.n_features);
      online->apply_row(data.x.data() + t * data.n_features, data.n_features, &data.y[t]);
    }
    learner.set_preprocessing(*online);
  }
  check_run_paths(o, r);
  std::vector<double> predictions(n);
  const std::string metric = run_metric(o, learner, !r.resume.empty());
  try {
    if (o.progress == 0) {
      learner.partial_fit_block(data.row(0), data.y.data(), n, predictions.data());
    } else {
      // In blocks of --progress rows (the same numbers: blocks equal steps), a line after each.
      const auto report = progress_lines(o.progress, "rows");
      for (std::size_t first = 0; first < n; first += o.progress) {
        const std::size_t m = std::min(o.progress, n - first);
        learner.partial_fit_block(data.row(first), data.y.data() + first, m, predictions.data() + first);
        report(first + m, n, fmt::format(", {} so far {:.6g}", metric,
                                        stream_metric(metric, learner, data, predictions, first + m)));
      }
    }
  } catch (const DivergedError& e) {
    // The learner's own check: a model whose predictions stopped being finite has diverged, its
    // checkpoint would be useless and its metric NaN, so the run fails and writes nothing (a
    // study reports it as "diverged"). Named by the file's row (a resumed model's samples are offset).
    throw Error(fmt::format("{} diverged on {} at row {} (prediction {}): nothing written; {}", learner.spec(),
                            data.name, e.sample() - static_cast<std::int64_t>(seen), shown_number(e.prediction()),
                            learner.divergence_advice()));
  }
  // The last row's update shows in no prediction of this run: a checkpoint is written only for a
  // model that predicts that row finitely after learning it (to_bytes() then checks every number
  // of the state as well: a federated model predicts as its next client, so the prediction does
  // not show a diverged weight vector of the client that learned the row).
  if (!r.save.empty() && n > 0)
    check_last_update(learner, data.row(n - 1), fmt::format("row {} of {}", n, data.name), "nothing written");
  CommandOutputs outputs;
  std::FILE* report = report_stream(r.predictions);
  fmt::print(report, "{} on {}: rows 1..{} (samples {}..{} of the model), {} {}\n", learner.spec(), data.name, n,
             seen + 1, seen + n, metric,
             n ? fmt::format("{:.6g}", stream_metric(metric, learner, data, predictions, n)) : std::string("n/a"));
  if (!r.predictions.empty()) outputs.add(r.predictions, predictions_csv(data, predictions, n, seen));
  if (!r.save.empty()) outputs.add(r.save, learner.to_bytes());
  outputs.write();
  if (!r.save.empty()) fmt::print(report, "saved checkpoint after {} samples to {}\n", learner.n_seen(), r.save);
  return 0;
}

int gen_command(const std::string& kind, std::size_t samples, std::uint64_t seed,
                const std::string& out, bool raw, bool target_index, double sigma_alpha) {
  SyntheticOptions options;
  if (kind == "dataset1") options.kind = SyntheticKind::Dataset1;
  else if (kind == "dataset2") options.kind = SyntheticKind::Dataset2;
  else throw ConfigError("--kind: unknown generator '" + kind + "' (expected dataset1 or dataset2)");
  options.n_samples = samples;
  options.seed = seed;
  options.normalize = !raw;
  options.kernel_index_target = target_index;
  options.sigma_alpha = sigma_alpha;
  if (out.empty() || out == "-") throw ConfigError("--out: a file path is needed (gen writes a CSV file)");
  check_output_path("--out", out, false);  // before generating, as every command's outputs
  const Dataset data = make_synthetic(options);
  write_csv(data, out);
  fmt::print("wrote {} samples × {} features to {}\n", data.n_samples, data.n_features, out);
  return 0;
}

}  // namespace omkl::cli

// The exit status, one scheme for every command (README, "Command line").
constexpr int kExitOk = 0;
constexpr int kExitInput = 1;    // a data file or checkpoint is missing, malformed or does not fit
constexpr int kExitUsage = 2;    // the command line or a configuration is wrong (options, specs, presets)
constexpr int kExitFailure = 3;  // the run itself failed: out of memory, a device or MPI error, ...

int main(int argc, char** argv) {
  using namespace omkl;
  using namespace omkl::cli;
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  CLI::App app{"omkl " OMKL_VERSION_STRING
               " — online multi-kernel learning with random features (CPU"
               + std::string(OMKL_WITH_CUDA ? " + CUDA" : "") + " build)"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version", std::string("omkl ") + OMKL_VERSION_STRING +
                                        (OMKL_WITH_CUDA ? " (CUDA" : " (CPU only") +
                                        (OMKL_WITH_MPI ? ", MPI)" : ")"));

  CommonOptions study_options;
  study_options.command = command;
  std::string out_dir;
  std::size_t curve_points = 200;
  auto* study = app.add_subcommand("study", "Monte Carlo study: seeds × algorithms on one stream");
  add_common_options(*study, study_options, true);
  study->add_option("--out", out_dir, "write summary.json, curves.csv and a cell cache here");
  study->add_option("--curve-points", curve_points, "points per curve in curves.csv")
      ->capture_default_str()
      ->check(kPositiveCount);
  bool plot = false;
  study->add_flag("--plot", plot,
                  "also draw the curves into --out (curves.png/.svg, regret.png/.svg) with omkl's Python package "
                  "and matplotlib (python3 -m omkl plot; OMKL_PYTHON names another interpreter)");
  StudyExtras study_extras;
  study->add_flag("--shuffle", study_extras.shuffle,
                  "each replicate sees the stream in its own random order, drawn from (--seed, replicate) (the "
                  "bandit paper's protocol; bandit-oks shuffles without it); not for a federated stream, whose "
                  "order is its protocol");
  study->add_flag("--regret", study_extras.regret,
                  "also the cumulative regret of the graph journal (Fig. 6) against batch kernel ridge "
                  "(regression, T ≤ 6000, graph-aided algorithms), or on a federated stream the POF-MKL "
                  "paper's batch regret (every algorithm, mean over clients); writes regret.csv");
  study->add_flag("--regret-include-reg", study_extras.regret_include_reg,
                  "federated stream: the client regrets (--regret's batch regret and eq. (11)) add λ‖θ̄‖² of the "
                  "parameter each prediction used, and eq. (11) λ‖θ_i‖² to each kernel's loss (spec/federated.md "
                  "§4.7, regret.include_reg); the algorithms then take their host path");
  study->add_option("--std", study_extras.spread,
                    "the spread across seeds in summary.json and curves.csv: the sample standard deviation "
                    "(n − 1, R's sd, as the bandit paper's tables) or the population one (n, as the graph "
                    "journal's and POF-MKL's); default: the preset's, else sample")
      ->check(CLI::IsMember({"sample", "population"}));
  study->add_option("--regret-comparator", study_extras.regret_comparator,
                    "federated stream: --regret's comparator, exact kernel ridge or ridge on random features "
                    "(spec/federated.md §4.7); auto: exact up to 12 000 pooled rows (Naval), random features above; "
                    "exact takes up to 25 000 rows at O(T³) per kernel")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "exact", "rf"}));
  study->add_option("--regret-features", study_extras.regret_features,
                    "random features per kernel of the federated regret's random-feature comparator")
      ->capture_default_str()
      ->check(kPositiveCount);
  study->add_option("--regret-lambda", study_extras.regret_lambda,
                    "the ridge λ of --regret's batch comparator (the papers' 1e-3; spec/federated.md §4.9 names "
                    "1e-6 as lambda's alternative)")
      ->capture_default_str();
  study->add_option("--regret-dict", study_extras.regret_dict,
                    "the kernels of --regret's batch comparator, a preset name or kernels joined by '+' (default: "
                    "jmlr23-76, on a federated stream fed-51; fed-51-textbook for the textbook bandwidths)");
  study->add_option("--time-match", study_extras.time_match,
                    "the bandit paper's time-matched mode (§6.4): measure this reference's time per round "
                    "(the paper: rf-oks++:D=400) and give every algorithm whose spec leaves D (else B) unset "
                    "the budget whose time per round matches it, on this machine; summary.json reports them");
  study->add_option("--time-match-rows", study_extras.time_match_rows,
                    "rows of each timed pass of --time-match (the fastest of three counts; 0: the whole stream)")
      ->capture_default_str()
      ->check(kCount);
  study->add_option("--message-timeout", study_extras.message_timeout_s,
                    "under mpirun: seconds the federated server waits for a round's updates before it "
                    "names the missing clients and stops every process")
      ->capture_default_str()
      ->check(kPositiveSeconds);

  CommonOptions run_options;
  RunOptions run_extra;
  auto* run = app.add_subcommand("run", "one learner over a stream, with checkpoints");
  add_common_options(*run, run_options, false);
  run->add_option("--replicate", run_extra.replicate, "replicate index (randomness from (seed, replicate))")
      ->check(kCount);
  run->add_option("--save", run_extra.save, "write a checkpoint here at the end (or at --save-at)");
  run->add_option("--save-at", run_extra.save_at, "stop after this many rows of the stream and save the checkpoint there (needs --save)");
  run->add_option("--resume", run_extra.resume,
                  "continue learning from a checkpoint on this stream, from its first row (the model fixes "
                  "--algo, --seed, --profile, --preset, --backend, --loss, and normalises the rows as in training)");
  run->add_option("--predictions", run_extra.predictions,
                  "write t,y,prediction CSV here (- or /dev/stdout: standard output); live input: row by row, the "
                  "file replaced when its first row is predicted");
  // Live input's counts are at least 1: 0 would read as "not given" and be ignored.
  run->add_option("--horizon", run_extra.horizon,
                  "live input: the number of rows a fresh model's step sizes assume (T)")
      ->check(kPositiveCount);
  run->add_option("--save-every", run_extra.save_every, "live input: a checkpoint to --save every N learned rows")
      ->check(kPositiveCount);
  run->add_option("--features", run_extra.features,
                  "live input: the number of features (a resumed model knows it; a CSV stream's header must agree)")
      ->check(kPositiveCount);
  run->add_flag("--follow", run_extra.follow,
                "read --data live and, at its end, wait for more rows (a file that grows); ends on SIGINT/SIGTERM");

  CommonOptions predict_options;
  std::string predict_model, predict_out;
  auto* predict = app.add_subcommand("predict", "apply a saved model to new rows, without learning");
  predict->add_option("--model", predict_model, "a checkpoint written by omkl run --save")->required();
  predict->add_option("--data", predict_options.data, "rows to predict (as for run)")->required();
  predict->add_option("--target", predict_options.target, "CSV target column name (default: the last column)");
  add_format_option(*predict, predict_options.format);
  predict->add_option("--group-column", predict_options.group_column,
                      "a CSV column of group labels to leave out of the features (as the model was trained with)");
  predict->add_option("--normalize", predict_options.normalize,
                      "only for checkpoints that do not store their normalisation (the model applies its own)");
  predict->add_option("--predictions", predict_out, "write t,y,prediction CSV here (- : standard output)");

  std::string gen_kind = "dataset1", gen_out;
  std::size_t gen_samples = 0;
  std::uint64_t gen_seed = 1;
  bool gen_raw = false, gen_target = false;
  double gen_sigma_alpha = 0.01;
  auto* gen = app.add_subcommand("gen", "write a synthetic stream (spec/raker.md §6) to CSV");
  gen->add_option("--kind", gen_kind, "dataset1 or dataset2")->capture_default_str();
  gen->add_option("--samples", gen_samples, "T (0 = the paper's: 36000 / 6500)")->capture_default_str()->check(kCount);
  gen->add_option("--seed", gen_seed, "generator seed")->capture_default_str()->check(kCount);
  gen->add_option("--out", gen_out, "output CSV path")->required();
  gen->add_flag("--raw", gen_raw, "skip the min-max normalisation");
  gen->add_flag("--kernel-index-target", gen_target, "y_t uses κ_t of the target sample");
  gen->add_option("--sigma-alpha", gen_sigma_alpha,
                  "standard deviation σ_α of the coefficients α (not given by the paper; 0.01, spec/raker.md §6)")
      ->capture_default_str()
      ->check(kNonNegativeNumber);

  auto* list = app.add_subcommand("list", "list algorithms, presets and dictionary presets");
  std::string describe_name;
  auto* describe = app.add_subcommand("describe", "parameters of one algorithm");
  describe->add_option("name", describe_name, "algorithm name")->required();

  BenchOptions bench_options;
  auto* bench = register_bench(app, bench_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; a malformed command line is a usage error.
    if (e.get_exit_code() == 0) return app.exit(e) == 0 ? kExitOk : kExitUsage;
    const std::vector<CLI::App*> parsed = app.get_subcommands();
    std::cerr << "omkl: error: " << shown(usage_error(app, e)) << "\nRun 'omkl "
              << (parsed.empty() ? "" : parsed.front()->get_name() + " ") << "--help' for more information.\n";
    return kExitUsage;
  }
  // Started by mpirun (and built with MPI): one of several processes of one study.
  std::shared_ptr<Communicator> comm;
  try {
    comm = mpi_communicator();
  } catch (const std::exception& e) {
    std::cerr << "omkl: error: " << shown(e.what()) << "\n";
    return kExitFailure;
  }
  const bool several = comm && comm->size() > 1;
  const auto dispatch = [&]() -> int {
    if (several && !*study)
      throw ConfigError("only `omkl study` runs over several processes; start other commands without mpirun");
    refuse_empty_values(app);
    // A path switch set to a value no path has is refused before any work, whether or not this
    // build reads it (a CUDA switch in a CPU-only build would otherwise go unnoticed).
    detail::check_path_switches();
    if (*study) {
      if (plot && out_dir.empty()) throw ConfigError("--plot draws the curves from the study's files: give --out DIR");
      if (out_dir == "-")
        throw ConfigError("--out -: a study writes a folder of files (summary.json, curves.csv, ...), not standard "
                          "output; its summary is printed anyway: name a folder");
      const int code =
          run_study_command(study_options, out_dir, curve_points, study_extras, comm);
      if (code == 0 && plot && (!comm || comm->rank() == 0)) plot_study_outputs(out_dir);
      return code;
    }
    // A path that names standard output (/dev/stdout, the file `>` sent it to) is written as "-" is.
    if (*run) {
      if (names_standard_output(run_extra.predictions)) run_extra.predictions = "-";
      return run_command(run_options, run_extra, *run);
    }
    if (*predict) {
      if (names_standard_output(predict_out)) predict_out = "-";
      return predict_command(predict_options, predict_model, predict_out, *predict);
    }
    if (*gen) return gen_command(gen_kind, gen_samples, gen_seed, gen_out, gen_raw, gen_target, gen_sigma_alpha);
    if (*list) {
      fmt::print("algorithms (name, family, summary):\n");
      std::size_t name_width = 0, family_width = 0;
      for (const auto& a : list_algorithms()) {
        name_width = std::max(name_width, a.name.size());
        family_width = std::max(family_width, a.family.size());
      }
      for (const auto& a : list_algorithms())
        fmt::print("  {:<{}}  {:<{}}  {}\n", a.name, name_width, a.family, family_width, a.summary);
      fmt::print("presets:\n");
      for (const auto& name : preset_names()) {
        const Preset& preset = find_preset(name);
        fmt::print("  {}: {}\n", name, preset.description);
        if (!preset.algorithms.empty())
          fmt::print("      without --algo: {}\n", fmt::join(preset.algorithms, ", "));
        for (const auto& [loss, algorithms] : preset.algorithms_by_loss)
          fmt::print("      without --algo, loss {}: {}\n", loss, fmt::join(algorithms, ", "));
      }
      fmt::print("dictionaries:\n");
      for (const auto& name : dictionary_preset_names())
        fmt::print("  {} ({} kernels)\n", name, parse_dictionary(name).size());
      return 0;
    }
    if (*describe) {
      fmt::print("{}", describe_algorithm(describe_name));
      return 0;
    }
    if (*bench) return run_bench(bench_options);
    // No subcommand: the built-in demonstration, the Raker paper's point. Dataset 1 switches its
    // generating kernel at t = 8000, 18000 and 26000; AdaRaker's ensemble of instances started at
    // different times tracks the switches. The reference profile (the authors' code) reproduces
    // the paper; the epilogue says what the paper profile does differently.
    CommonOptions demo;
    demo.data = "synthetic:dataset1";
    demo.profile = "reference";
    demo.algos = {"raker", "adaraker"};
    return run_study_command(demo, "", curve_points, {}, nullptr, [](const StudyResult& result) {
      const double raker = result.results.at(0).final_mean, adaraker = result.results.at(1).final_mean;
      fmt::print("\nAdaRaker's MSE is {:.0f} % of Raker's on this stream, whose generating kernel switches at "
                 "t = 8000, 18000 and 26000: its instances, started at different times, track the switches "
                 "(Shen, Chen & Giannakis, JMLR 2019).\n"
                 "This is --profile reference, the authors' code, which reproduces the paper's tables. The library "
                 "default, --profile paper, follows the printed equations, under which every AdaRaker instance "
                 "starts afresh in its interval; on this stream that costs AdaRaker its lead "
                 "(omkl study --data synthetic:dataset1). README: \"Profiles and reproduction\".\n"
                 "This was `omkl` without a command; `omkl --help` lists the commands (study, run, predict, "
                 "bench, ...) and their options.\n",
                 100.0 * adaraker / raker);
    });
  };
  int code = 0;
  std::string message;
  bool deterministic = false;  // an error every process meets alike (bad input, configuration)
  try {
    code = dispatch();
  } catch (const ConfigError& e) {
    message = e.what();
    code = kExitUsage;
    deterministic = true;
  } catch (const InputError& e) {
    message = e.what();
    code = kExitInput;
    deterministic = true;
  } catch (const std::bad_alloc&) {
    // The sizes are the user's (seeds × kernels × D × d, the stream): say which knobs to turn.
    message = "out of memory: the run needs more memory than this machine can give "
              "(fewer --seeds, a smaller D or dictionary, or a shorter stream)";
    code = kExitFailure;
  } catch (const std::exception& e) {
    message = e.what();
    code = kExitFailure;
  }
  if (message.empty()) return code;
  if (!several) {
    std::cerr << "omkl: error: " << shown(message) << "\n";
    return code;
  }
  // Several processes: one message, then every process ends (the launcher's abort). An error
  // every process meets alike is reported by rank 0, which the others give a moment to do so;
  // any other is reported by the rank that met it.
  if (comm->rank() != 0 && deterministic) std::this_thread::sleep_for(std::chrono::seconds(3));
  if (comm->rank() == 0) std::cerr << "omkl: error: " << shown(message) << "\n";
  else std::cerr << "omkl: error (rank " << comm->rank() << "): " << shown(message) << "\n";
  std::cerr.flush();
  comm->abort(code);
}
