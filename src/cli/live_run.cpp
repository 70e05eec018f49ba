// `omkl run` on a live stream: rows read as they arrive (RowStream), each predicted and its
// prediction written before the learner learns from it, in memory that does not grow with the
// stream. Ended by the end of the input or by SIGINT / SIGTERM, after which the checkpoint (if
// --save) is written and the predictions are complete up to the last row read. And `omkl
// predict`, which reads its rows with the same reader, so that a row may come without a target.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fmt/core.h>
#include <optional>

#include "cli/commands.h"
#include "core/state_io.h"
#include "omkl/error.h"
#include "omkl/learner.h"
#include "omkl/row_stream.h"

namespace omkl::cli {

namespace {

// A signal handler may only touch lock-free atomics: these two are the whole of what it sees,
// one pair per process, as there is one set of signal dispositions per process.
std::atomic<bool> g_stop_requested{false};
std::atomic<int> g_stop_signal{0};

extern "C" void request_stop(int signal_number) {
  g_stop_signal.store(signal_number);
  g_stop_requested.store(true);
}

// SIGINT / SIGTERM end the stream at the next row boundary. No SA_RESTART, so that a read
// blocked on a quiet pipe returns (EINTR) and the reader sees the request; SA_RESETHAND, so
// that a second signal ends the process at once.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Where predictions go, one line per row, flushed as written so that a reader sees it at once:
// standard output ("-"), a pipe or character device (written as it is), or a file. A file is
// left as it was until the run's first prediction: the header and that row are written under a
// temporary name beside it, which is then renamed over it, and the later rows follow in place.
// A run that fails before (a bad first row, an empty stream) leaves an earlier file untouched;
// one that fails later leaves the rows predicted until then.
class PredictionSink {
 public:
  explicit PredictionSink(const std::string& path) : path_(path) {
    if (path.empty()) return;
    if (path == "-") {
      file_ = stdout;
      committed_ = true;
    } else {
      const detail::OutputDestination destination = detail::output_destination(path);
      target_ = destination.path;
      if (destination.direct) {  // opened before the first row: a reader waits on the header
        open(target_);
        committed_ = true;
      } else {
        temporary_ = detail::temporary_name(target_);
      }
    }
    if (file_) put("t,y,prediction\n");
  }
  ~PredictionSink() {
    if (file_ && file_ != stdout) std::fclose(file_);
    if (!committed_ && file_) std::remove(temporary_.c_str());
  }
  PredictionSink(const PredictionSink&) = delete;
  PredictionSink& operator=(const PredictionSink&) = delete;
  bool enabled() const { return !path_.empty(); }
  /// Writes and flushes one row's `line` (the first replaces the file); a failed write (a full
  /// disk, a closed pipe) ends the run, as the whole-file run's does, instead of losing every
  /// later prediction unseen.
  void write(const std::string& line) {
    if (!enabled()) return;
    if (!file_) {
      open(temporary_);
      put("t,y,prediction\n");
    }
    put(line);
    if (committed_) return;
    if (std::rename(temporary_.c_str(), target_.c_str()) != 0) {
      const int code = errno;
      throw Error("--predictions " + path_ + ": cannot rename the written file into place: " + std::strerror(code));
    }
    committed_ = true;
  }

 private:
  // A path that names no writable place is the user's (exit 1), a full disk the machine's (3).
  void open(const std::string& file) { file_ = detail::open_for_writing(file, "--predictions " + path_); }
  void put(const std::string& text) {
    if (std::fputs(text.c_str(), file_) < 0 || std::fflush(file_) != 0) {
      const int code = errno;
      throw Error("--predictions " + path_ + ": cannot write: " + std::strerror(code));
    }
  }

  std::string path_;       // as given
  std::string target_;     // the file (or device) written
  std::string temporary_;  // a file's name until its first row
  std::FILE* file_ = nullptr;
  bool committed_ = false;  // the predictions are at target_ (or standard output)
};

// The transform for a live stream's rows: a loaded model's own (with its training statistics),
// or, for a fresh model, one that needs no statistics of the whole stream.
Normalizer live_normalizer(const CommonOptions& o, const std::optional<Learner>& resumed, const std::string& model_path,
                           std::size_t n_features) {
  if (resumed && resumed->preprocessing().n_features != 0) {
    check_normalize_matches_model(o, resumed->preprocessing(), model_path);
    return resumed->preprocessing();
  }
  Dataset no_rows;  // the scaler's state before any row
  no_rows.n_features = n_features;
  const Normalization how = requested_normalization(o);
  Normalizer z;
  z.how = how;
  if (!z.needs_statistics()) z = fit_normalizer(no_rows, how);
  if (z.needs_statistics())
    throw ConfigError("--normalize " + to_string(z.how) + " needs statistics of the whole stream, which a live "
                      "stream does not have: use an online scaler (running-minmax, running-zscore), none or "
                      "unit-rows, or train a model on a file with --normalize " +
                      to_string(z.how) + " and --resume it here (it brings that file's statistics)");
  return z;
}

// --format, or the file name's extension as whole-file reading goes by it (standard input: CSV).
RowStreamOptions::Format live_format(const std::string& path, const std::string& format) {
  return reads_libsvm(path, format) ? RowStreamOptions::Format::Libsvm : RowStreamOptions::Format::Csv;
}

// A row read as written, put through a one-hot model's indicator columns where it has them
// (`scratch` keeps the row's old storage for the next one).
void encode_row(const OneHotColumns& one_hot, StreamRow& row, std::vector<double>& scratch) {
  if (!one_hot.active()) return;
  scratch.resize(one_hot.width());
  one_hot.encode(row.x.data(), scratch.data());
  row.x.swap(scratch);
}

}  // namespace

int live_run_command(const CommonOptions& o, const RunOptions& r, const CLI::App& command) {
  if (!r.resume.empty()) refuse_model_options(command, "--resume");
  if (!r.resume.empty() && r.horizon > 0)
    throw ConfigError("--horizon cannot be given with --resume: the model fixes it");
  if (r.save_at >= 0) throw ConfigError("--save-at: a live stream has no row to stop at; use --save-every N");
  if (r.save_every > 0 && r.save.empty()) throw ConfigError("--save-every needs --save PATH (where to checkpoint)");
  check_run_paths(o, r);
  if (o.clients > 0 || o.rounds > 0 || !o.group_column.empty() || !o.within_site_order.empty() ||
      !o.client_order.empty())
    throw ConfigError("--clients / --rounds / --group-column / --within-site-order / --client-order deal a whole "
                      "file to federated clients; a live stream is one client's rows");
  if (o.labels == "pm1")
    throw ConfigError("--labels pm1 maps the two values of a whole stream's target, which rows read live do not "
                      "have yet; write the labels as −1 and +1");
  if (!o.one_hot.empty())
    throw ConfigError("--one-hot takes each column's values from the whole stream, which rows read live do not "
                      "have yet; write the indicator columns into the rows");
  const auto specs = parse_algos(o, {"raker"}, true);
  if (specs.size() != 1) throw ConfigError("run: give exactly one --algo");
  std::optional<Learner> resumed;
  if (!r.resume.empty()) resumed.emplace(Learner::load(r.resume));
  if (!resumed && r.horizon == 0)
    throw ConfigError("--horizon T: a fresh model on a live stream needs the horizon its step sizes assume "
                      "(the number of rows it will learn from, e.g. --horizon 100000)");

  install_stop_handlers();
  RowStreamOptions stream_options;
  stream_options.csv.target_column = o.target;
  stream_options.format = live_format(o.data, o.format);
  // LIBSVM rows carry no width: --features, or the resumed model's.
  stream_options.n_features = r.features ? r.features : resumed ? resumed->n_features() : 0;
  stream_options.width_source = r.features ? "--features" : resumed ? "the model in " + r.resume : "";
  stream_options.follow = r.follow;
  stream_options.stop = &g_stop_requested;
  RowStream rows(o.data, stream_options);
  const std::size_t d = rows.n_features();
  if (r.features > 0 && r.features != d)  // a CSV header sets the width; --features must agree with it
    throw ConfigError("--features " + std::to_string(r.features) + ": " + rows.name() + " has " + std::to_string(d) +
                      " features");
  // A resumed model learned on --one-hot's indicator columns reads the rows as written through them.
  const OneHotColumns one_hot(rows.feature_names(), d, resumed ? resumed->feature_names() : std::vector<std::string>{});
  const std::size_t width = one_hot.active() ? one_hot.width() : d;
  if (resumed && resumed->n_features() != width)
    throw InputError(rows.name() + ": stream has " + std::to_string(d) + " features, the model in " + r.resume +
                     " expects " + std::to_string(resumed->n_features()));
  // Rows read through the model's indicator columns have its names by construction.
  if (resumed && !one_hot.active()) check_feature_names(*resumed, rows.feature_names(), rows.name(), r.resume);
  Normalizer transform = live_normalizer(o, resumed, r.resume, width);
  Learner learner = [&] {
    if (resumed) return std::move(*resumed);
    // A live stream's task cannot be read off its targets in advance: the logistic loss means ±1 labels.
    const Task task = o.loss == "logistic" ? Task::Classification : Task::Regression;
    LearnerContext context = fresh_learner_context(o, r, d, task, r.horizon);
    context.preprocessing = transform;
    context.feature_names = rows.feature_names();  // checked by predict and --resume
    return make_learner(specs[0], context);
  }();
  const std::string metric = run_metric(o, learner, !r.resume.empty());
  PredictionSink predictions(r.predictions);
  std::FILE* report = report_stream(r.predictions);

  const auto start = std::chrono::steady_clock::now();
  const std::int64_t seen_before = learner.n_seen();
  std::size_t n_rows = 0, n_learned = 0;
  double loss_sum = 0.0;
  // A checkpoint is written only for a model whose prediction of the row it last learned, after
  // that update, is finite: an update that diverged shows only in the next prediction, and a
  // checkpoint taken between the two would hold it.
  std::vector<double> last_learned;
  std::size_t last_learned_line = 0;
  const auto check_learned = [&] {
    if (!last_learned.empty())
      check_last_update(learner, last_learned.data(), rows.name() + ":" + std::to_string(last_learned_line),
                        "stopped without writing the checkpoint");
  };
  const auto write_checkpoint = [&] {
    if (transform.online()) learner.set_preprocessing(transform);  // the scaler's state goes with the model
    learner.save(r.save);
  };
  StreamRow row;
  std::vector<double> encoded;
  while (rows.next(row)) {
    ++n_rows;
    encode_row(one_hot, row, encoded);
    transform.observe_row(row.x.data(), width);  // an online scaler learns the row; the others do nothing
    transform.apply_row(row.x.data(), width, row.has_target ? &row.y : nullptr);
    // A model whose predictions stopped being finite has diverged: every later prediction is
    // useless and so would its checkpoint be, so the run stops here (exit 3) and writes none.
    // The --save-every checkpoints before it stay (each was checked by check_learned()).
    const auto diverged = [&](double prediction) {
      return Error(fmt::format("{} diverged at {}:{} (prediction {}): stopped without a checkpoint; {}",
                               learner.spec(), rows.name(), row.line, shown_number(prediction),
                               learner.divergence_advice()));
    };
    double prediction = 0.0;
    try {
      prediction = row.has_target ? learner.partial_fit(row.x, row.y) : learner.predict(row.x);
    } catch (const InputError& e) {  // e.g. a label other than ±1: name the line it came from
      throw InputError(rows.name() + ":" + std::to_string(row.line) + ": " + e.what());
    } catch (const DivergedError& e) {  // the learner's own check of a learned row
      throw diverged(e.prediction());
    }
    if (row.has_target) {
      ++n_learned;
      loss_sum += metric_term(metric, learner, row.y, prediction);
      if (!r.save.empty()) {
        last_learned.assign(row.x.begin(), row.x.end());
        last_learned_line = row.line;
      }
    }
    // t: the model's sample number for a learned row; the one it would be, for a row to predict.
    if (predictions.enabled())
      predictions.write(fmt::format("{},{},{:.17g}\n", learner.n_seen() + (row.has_target ? 0 : 1),
                                    row.has_target ? fmt::format("{:.17g}", row.y) : std::string(), prediction));
    if (!std::isfinite(prediction)) throw diverged(prediction);  // a row only predicted
    if (r.save_every > 0 && row.has_target && n_learned % r.save_every == 0) {
      check_learned();
      write_checkpoint();
    }
    if (o.progress > 0 && n_rows % o.progress == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      fmt::print(stderr, "omkl: {} rows ({} learned), {} so far {:.6g} ({:.3g} rows/s)\n", n_rows, n_learned,
                 metric, n_learned ? loss_sum / static_cast<double>(n_learned) : NAN,
                 elapsed > 0 ? static_cast<double>(n_rows) / elapsed : 0.0);
    }
  }
  const int signal_number = g_stop_signal.load();
  // A stream that ended by itself without one row is bad input, as an empty file is (a stop
  // by signal before the first row is not: the stream was cut, not empty).
  if (n_rows == 0 && signal_number == 0) throw InputError(rows.name() + ": empty stream (no data rows)");
  if (!r.save.empty()) check_learned();  // before the report: a run that writes no checkpoint fails
  // Rows without a target are predicted, not learned from (a target cell left empty or out): counted
  // apart, so that a stream whose rows lost their targets does not pass for one that learned.
  const std::string unlabelled =
      n_rows > n_learned ? fmt::format(", {} without a target, predicted only", n_rows - n_learned) : std::string();
  fmt::print(report, "{} on {} (live): {} rows, {} learned{} (samples {}..{} of the model), {} {}{}\n",
             learner.spec(), rows.name(), n_rows, n_learned, unlabelled, seen_before + 1, learner.n_seen(),
             metric,
             n_learned ? fmt::format("{:.6g}", loss_sum / static_cast<double>(n_learned)) : std::string("n/a"),
             signal_number ? fmt::format("; stopped by signal {}", signal_number) : std::string());
  if (!r.save.empty()) {
    write_checkpoint();
    fmt::print(report, "saved checkpoint after {} samples to {}\n", learner.n_seen(), r.save);
  }
  std::fflush(report);
  return signal_number ? 128 + signal_number : 0;
}

// `omkl predict`: each row gets the prediction the model would make for it as its next sample;
// the model learns nothing and its file is not touched. The rows are read as a live stream's are
// (a file, a named pipe or standard input): a row whose target cell is empty or left out (a
// LIBSVM line without a label) is predicted without one, and the metric covers the rows that
// have a target. Each row is transformed by the model's own normalisation (an online scaler as
// it stood at the end of training: predicting does not move it). Two sources have no row
// reader and are loaded whole, as `omkl run` loads them, every row with its target: a synthetic
// stream, and, for a model that keeps no normalisation (saved before models kept theirs, or
// from the API without one), a --normalize that needs the statistics of these rows.
int predict_command(const CommonOptions& o, const std::string& model, const std::string& predictions_path,
                    const CLI::App& command) {
  refuse_model_options(command, "--model");
  check_output_path("--predictions", predictions_path, false);
  check_distinct_paths({{"--data", o.data}, {"--model", model}}, {{"--predictions", predictions_path}});
  const std::optional<Learner> loaded(Learner::load(model));
  const Learner& learner = *loaded;
  const std::string metric = run_metric(o, learner, true);
  std::string csv = "t,y,prediction\n";
  std::size_t n_rows = 0, n_scored = 0;
  double metric_sum = 0.0;
  // One row, transformed already (normalisations leave a classifier's labels as they are), `where()`
  // naming it for a message.
  const auto predict_row = [&](const double* x, const double* y, const auto& where) {
    ++n_rows;
    if (y) check_label(learner, *y, where, model);
    const double prediction = learner.predict(x);
    if (y) {
      ++n_scored;
      metric_sum += metric_term(metric, learner, *y, prediction);
    }
    csv += fmt::format("{},{},{:.17g}\n", n_rows, y ? fmt::format("{:.17g}", *y) : std::string(), prediction);
  };
  Normalizer requested;
  requested.how = requested_normalization(o);
  const bool whole_stream = o.data.rfind("synthetic:", 0) == 0 ||
                            (learner.preprocessing().n_features == 0 && requested.needs_statistics());
  std::string name;
  if (whole_stream) {
    if (!o.group_column.empty())
      throw ConfigError("--group-column " + o.group_column + ": for CSV rows read one by one, not with " +
                        (o.data.rfind("synthetic:", 0) == 0 ? "a synthetic stream" : "a --normalize fitted on the rows"));
    Dataset data = load_data_for_model(o, learner, model);
    name = data.name;
    for (std::size_t t = 0; t < data.n_samples; ++t)
      predict_row(data.row(t), &data.y[t], [&] { return o.data + ": data row " + std::to_string(t + 1); });
  } else {
    RowStreamOptions stream_options;
    stream_options.csv.target_column = o.target;
    stream_options.csv.group_column = o.group_column;  // a federated model's group labels: not features
    stream_options.format = live_format(o.data, o.format);
    if (!o.group_column.empty() && stream_options.format != RowStreamOptions::Format::Csv)
      throw ConfigError("--group-column " + o.group_column + ": " + o.data + " is not a CSV file with a header");
    stream_options.n_features = learner.n_features();  // LIBSVM rows carry no width
    stream_options.width_source = "the model in " + model;
    RowStream rows(o.data, stream_options);
    name = rows.name();
    const std::size_t d = rows.n_features();
    // A model learned on --one-hot's indicator columns reads the rows as written through them.
    const OneHotColumns one_hot(rows.feature_names(), d, learner.feature_names());
    const std::size_t width = one_hot.active() ? one_hot.width() : d;
    if (width != learner.n_features())
      throw InputError(rows.name() + ": stream has " + std::to_string(d) + " features, the model in " + model +
                       " expects " + std::to_string(learner.n_features()) +
                       (d + 1 == learner.n_features() && stream_options.format == RowStreamOptions::Format::Csv
                            ? " (the header's last column is the target: for rows without one, name a target "
                              "column in the header and leave its cells empty or out)"
                            : ""));
    if (!one_hot.active()) check_feature_names(learner, rows.feature_names(), rows.name(), model);
    const Normalizer transform = live_normalizer(o, loaded, model, width);
    StreamRow row;
    std::vector<double> encoded;
    while (rows.next(row)) {
      encode_row(one_hot, row, encoded);
      transform.apply_row(row.x.data(), width, row.has_target ? &row.y : nullptr);
      predict_row(row.x.data(), row.has_target ? &row.y : nullptr,
                  [&] { return rows.name() + ":" + std::to_string(row.line); });
    }
  }
  if (n_rows == 0) throw InputError(name + ": empty stream (no data rows)");
  fmt::print(report_stream(predictions_path), "{} (after {} samples) on {}: {} rows ({} with a target), {} {}\n",
             learner.spec(), learner.n_seen(), name, n_rows, n_scored, metric,
             n_scored ? fmt::format("{:.6g}", metric_sum / static_cast<double>(n_scored)) : std::string("n/a"));
  CommandOutputs outputs;
  outputs.add(predictions_path, std::move(csv));
  outputs.write();
  return 0;
}

}  // namespace omkl::cli
