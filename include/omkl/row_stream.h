/// @file row_stream.h
/// @brief Live input: the rows of a CSV or LIBSVM stream read as they arrive, in constant memory, from a
/// file, a named pipe or standard input ("-"), for learners that predict each row before they
/// learn from it (omkl run --data -).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "omkl/dataset.h"

namespace omkl {

/// One row of a live stream.
struct StreamRow {
  std::vector<double> x;    ///< n_features() values
  double y = 0.0;           ///< the target, when has_target
  bool has_target = false;  ///< false: the row is to be predicted only (its target cell empty or left out)
  std::size_t line = 0;     ///< 1-based line in the source (the header is line 1)
};

struct RowStreamOptions {
  /// CSV (a header row, then one sample per line) or LIBSVM ("label idx:value ...", no header).
  enum class Format { Csv, Libsvm } format = Format::Csv;
  CsvOptions csv;  ///< the target column (the last one by default); a group column is left out of the features
  /// LIBSVM: the number of features (required: a live stream cannot be scanned for its largest index).
  std::size_t n_features = 0;
  /// Where n_features comes from, named when a LIBSVM row's index exceeds it ("the model in
  /// m.ckpt", "--features"); empty: not named.
  std::string width_source;
  /// At the end of a regular file, wait for more rows instead of ending (a file that grows, as
  /// `tail -f` reads it); the stream then ends only through `stop`.
  bool follow = false;
  /// Polled while waiting for input: once true, next() returns false at the next row boundary
  /// (for a signal handler, which may only set a lock-free atomic). May be null.
  const std::atomic<bool>* stop = nullptr;
};

/// Reads CSV rows (header first, then one sample per line, the grammar of load_csv) or LIBSVM
/// rows (load_libsvm's grammar) one at a time with a fixed-size buffer: memory does not grow
/// with the length of the stream. A row without a target (an empty or left-out CSV target cell,
/// a LIBSVM line of index:value pairs only) is returned with has_target = false. Errors are
/// InputErrors located at "name:line:column" as the whole-file readers' are; the name of
/// standard input is "<stdin>".
class RowStream {
 public:
  /// Opens `path` ("-": standard input) and reads its header (waiting for it to arrive).
  RowStream(const std::string& path, RowStreamOptions options = {});
  ~RowStream();
  RowStream(const RowStream&) = delete;
  RowStream& operator=(const RowStream&) = delete;

  std::size_t n_features() const;
  /// The features' names from a CSV header (target and group columns left out); empty for LIBSVM.
  std::vector<std::string> feature_names() const;
  /// The source's name in messages: the path, or "<stdin>".
  const std::string& name() const;
  /// The next row into `row`; false at the end of the stream or when stopped.
  bool next(StreamRow& row);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace omkl
