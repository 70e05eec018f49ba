/// @file commands.h
/// @brief Shared pieces of the `omkl` command-line tool.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "omkl/algorithm.h"
#include "omkl/dataset.h"
#include "omkl/learner.h"
#include "omkl/study.h"
#include "core/state_io.h"

namespace omkl::cli {

/// Options common to run / study / bench.
struct CommonOptions {
  std::vector<std::string> algos;
  std::string data = "synthetic:dataset2";
  std::string target;
  std::string format;         // csv or libsvm (empty: by the file's extension; standard input: csv)
  std::string group_column;   // CSV column holding each row's group (federated non-i.i.d. split)
  std::string labels;         // as_written (empty) or pm1: two classes mapped to −1/+1 (bandit §8.2)
  std::string one_hot;        // categorical columns as indicators: all, or header names joined by ","
  std::string within_site_order;  // grouped deal: each group's order, chronological (default) or shuffled (§4.3)
  std::string client_order;       // grouped deal: each client's time order, shuffled (default) or listed
  std::size_t clients = 0;    // federated clients K (0: the preset's rule / from the data)
  std::size_t rounds = 0;     // federated rounds T (0: the preset's, if it is federated)
  std::string normalize = "";  // empty: the preset's, else none
  std::size_t seeds = 0;  // 0: not given (study_seeds(): default_seeds() of the preset)
  std::uint64_t seed = 0;
  std::string profile = "paper";
  std::string command;  // the whole command line, recorded in summary.json
  std::string loss;  // logistic, square or absolute: every algorithm's loss and the metric (empty: their own)
  std::string preset;
  std::string backend = "cpu";
  std::size_t threads = 0;
  std::size_t progress = 0;  // > 0: a progress line on stderr every this many rows (run) or replicates (study)
};

void add_common_options(CLI::App& app, CommonOptions& options, bool with_seeds);
/// --seeds if given, else default_seeds() of the preset (its repetitions, else 5).
std::size_t study_seeds(const CommonOptions& o);
/// --format csv|libsvm (the common options' and predict's).
void add_format_option(CLI::App& app, std::string& format);
/// --labels as_written|pm1 (run's and study's; not predict's, whose rows are read one by one).
void add_labels_option(CLI::App& app, std::string& labels);
/// Loads and normalises the stream named by the options (the preset's normalisation unless
/// --normalize overrides it); a federated preset, --clients or --rounds first deals the rows to
/// the clients (arrange_federated), so that the normalisation covers the rows used.
Dataset load_data(const CommonOptions& options);
/// The preset's normalisation, overridden by --normalize.
Normalization requested_normalization(const CommonOptions& options);
/// A whole stream for a saved model (main.cpp): its rows in the model's normalisation (or, for a
/// model that keeps none, --normalize fitted on these rows), the width checked against the model.
Dataset load_data_for_model(const CommonOptions& options, const Learner& learner, const std::string& model_path,
                            std::optional<Normalizer>* online = nullptr);
/// Refuses a stream whose features are named or ordered otherwise than those the model in
/// `model_path` was trained on, where both have names (CSV headers); InputError naming `source`,
/// the first column that differs and the model's names. Widths are checked elsewhere.
void check_feature_names(const Learner& learner, const std::vector<std::string>& names, const std::string& source,
                         const std::string& model_path);

/// `omkl study --plot`: draws the study in `out_dir` with the Python package (python3 -m omkl
/// plot, with the interpreter beside the tool if there is one, else python3; OMKL_PYTHON names
/// another), or says on stderr how to get it.
void plot_study_outputs(const std::string& out_dir);

/// Options of `omkl run` beside the common ones.
struct RunOptions {
  std::string save, resume, predictions;
  std::int64_t save_at = -1;
  std::size_t replicate = 0;
  std::size_t save_every = 0;  // live: a checkpoint to --save every this many learned rows
  std::size_t horizon = 0;     // live: the T a fresh model's step sizes assume
  bool follow = false;         // live: wait for a regular file to grow
  std::size_t features = 0;    // live LIBSVM: the number of features
};
/// Checks before any work that `path` can be written: an existing file (or folder, for
/// `directory`) that is writable, or a new one in a writable folder. ConfigError naming `option`.
void check_output_path(const std::string& option, const std::string& path, bool directory);
/// Option checks: a count (digits only, within 64 bits: CLI11 would wrap "-1"), a count ≥ 1,
/// and a positive, finite number of seconds.
extern const CLI::Validator kCount, kPositiveCount, kPositiveSeconds;
/// Refuses an output path (option, path) that names an input's file or another output's
/// ("-", standard output, and empty paths are skipped; --save may name --resume's file).
void check_distinct_paths(const std::vector<std::pair<std::string, std::string>>& inputs,
                          const std::vector<std::pair<std::string, std::string>>& outputs);
/// Refuses a --normalize that differs from the normalisation a loaded model applies.
void check_normalize_matches_model(const CommonOptions& options, const Normalizer& stored, const std::string& model_path);
/// Refuses the options that a loaded model fixes (they would be silently ignored beside it).
void refuse_model_options(const CLI::App& command, const char* with);
/// The learner context of a fresh model for `omkl run`, from the options.
LearnerContext fresh_learner_context(const CommonOptions& options, const RunOptions& run, std::size_t n_features,
                                     Task task, std::size_t horizon);
/// Whether `path` is read live (RowStream): "-", a named pipe or character device, or --follow.
bool is_live_input(const std::string& path, const RunOptions& run);
/// `omkl run` on a live stream: each row predicted, written, then learned from (live_run.cpp).
int live_run_command(const CommonOptions& options, const RunOptions& run, const CLI::App& command);
/// Whether an output path is this process's standard output: "-", or a name of the file, pipe or
/// terminal it goes to (/dev/stdout, /proc/self/fd/1, the file `>` redirected it to), which is
/// then written as "-" is: in order with the report, which moves to standard error. Not
/// /dev/null, which takes the bytes alike either way.
bool names_standard_output(const std::string& path);
/// Where a command's report lines go: standard error when the predictions take standard output
/// (--predictions -), so that standard output is the CSV alone; else standard output.
inline std::FILE* report_stream(const std::string& predictions_path) {
  return predictions_path == "-" ? stderr : stdout;
}

/// A command's files, all or none (detail::write_files_atomic): the predictions (to standard
/// output when their path is "-") and a checkpoint (never "-": check_run_paths()).
struct CommandOutputs {
  std::vector<std::pair<std::string, std::string>> files;
  std::string to_stdout;
  void add(const std::string& path, std::string contents) {
    if (path == "-") to_stdout = std::move(contents);
    else if (!path.empty()) files.emplace_back(path, std::move(contents));
  }
  /// The files, then standard output; a failed write (a full disk behind a redirection) is an
  /// Error naming the system's reason.
  void write() const;
};

/// `omkl run`'s output paths, before any work: --predictions and --save writable, neither naming
/// --data's or --resume's file nor each other's (--save may name --resume's), and --save not "-"
/// (a checkpoint is a binary file; standard output carries the predictions).
void check_run_paths(const CommonOptions& options, const RunOptions& run);

/// A number in a message: NaN as "nan" whatever its sign bit (fmt writes "-nan").
std::string shown_number(double v);
/// Before a checkpoint: the model, after learning the row x at `where`, must still predict it
/// finitely, or Error "SPEC diverged with its update at WHERE (…): OUTCOME; …" — an update that
/// diverged shows only in the next prediction, and a checkpoint taken before it would hold it.
void check_last_update(const Learner& learner, const double* x, const std::string& where, const std::string& outcome);

/// The InputError of a classifier's label y that is not ±1, found at `where` (the file and its row
/// or line): "WHERE: label y, but the model[ in MODEL] is a classifier".
[[noreturn]] void throw_bad_label(double y, const std::string& where, const std::string& model_path);
/// A classifier's label must be ±1 (throw_bad_label()); `where()` names it, called only then, as
/// the check runs on every row. Regression: nothing.
template <typename Where>
void check_label(const Learner& learner, double y, const Where& where, const std::string& model_path) {
  if (learner.task() == Task::Classification && y != 1.0 && y != -1.0) throw_bad_label(y, where(), model_path);
}

/// `omkl predict`: a saved model applied to new rows without learning (live_run.cpp).
int predict_command(const CommonOptions& options, const std::string& model, const std::string& predictions_path,
                    const CLI::App& command);
/// The metric `omkl run` and `omkl predict` score rows by. A fresh learner's follows study's rule
/// (loss_metric): the one that goes with --loss, or the task's (mse, error_rate) without one. A
/// model read from a file (`loaded`: --resume, predict's --model; both refuse --loss) is scored by
/// the loss it was trained with, so that a model of --loss absolute keeps reporting mae.
std::string run_metric(const CommonOptions& options, const Learner& learner, bool loaded);
/// One row's term of `metric`: the squared or absolute error, or the learner's mistake
/// (Learner::mistake, under the algorithm's convention).
double metric_term(const std::string& metric, const Learner& learner, double y, double prediction);

/// The --algo specs; without any, the preset's algorithms (the first only with `one`: `run`
/// learns one model), else `fallback`.
std::vector<AlgorithmSpec> parse_algos(const CommonOptions& options, const std::vector<std::string>& fallback,
                                       bool one = false);
/// The backend after resolving "auto" (with a one-line notice on stderr when it falls back).
BackendKind resolve_backend(const std::string& text);

/// The most --repeat a bench takes: a median of more repetitions measures nothing new.
constexpr std::size_t kMaxBenchRepeat = 1000;
struct BenchOptions {
  CommonOptions common;
  std::vector<std::size_t> seed_counts{1};
  std::size_t repeat = 3;
  std::string json_out;
};
CLI::App* register_bench(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

}  // namespace omkl::cli
