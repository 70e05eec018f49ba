/// @file dataset.h
/// @brief Data streams: CSV and LIBSVM readers, the synthetic generators of [Raker]
/// (docs/papers.md),
/// and the normalisations the papers use. All data live on the host, row-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "omkl/types.h"

namespace omkl {

/// A finite stream of labelled samples, in stream order.
struct Dataset {
  std::string name;             ///< file name or generator name
  std::size_t n_samples = 0;
  std::size_t n_features = 0;
  std::vector<double> x;        ///< n_samples × n_features, row-major
  std::vector<double> y;        ///< n_samples targets
  Task task = Task::Regression;
  /// Group label of every sample (e.g. the site of a federated "Air" row), read from the CSV
  /// column CsvOptions::group_column; empty when the stream has none. Not a feature.
  std::vector<std::uint32_t> groups;
  /// Federated layout (arrange_federated()): 0 for an ordinary stream; otherwise the stream is
  /// n_samples / n_clients rounds of n_clients rows, row t·K + k holding client k's t-th sample.
  std::size_t n_clients = 0;
  /// The features' names from a CSV header, in column order without the target and group
  /// columns; empty where the source has none (LIBSVM, synthetic).
  std::vector<std::string> feature_names;

  const double* row(std::size_t t) const { return x.data() + t * n_features; }
};

/// Options of the CSV reader.
struct CsvOptions {
  /// Name of the target column; empty means the last column.
  std::string target_column;
  /// Name of a column holding each row's group (non-negative integers): it is taken out of the
  /// features into Dataset::groups. Empty: none.
  std::string group_column;
};

/// Reads a CSV file with one header row, numeric cells only. Throws InputError naming
/// "path:line:column" for a missing file, a ragged row, a non-numeric or non-finite cell, or a
/// file without data rows. The task is inferred: Classification iff every target is −1 or +1.
/// Details: cells are parsed with std::strtod (C locale), spaces around a number and "\r\n"
/// line endings are allowed, blank lines only at the end of the file. Lines count the header as
/// line 1 and columns are 1-based field indices; a missing or unreadable file is
/// "path: cannot open file (...)", an empty one "path: empty file", a header without rows
/// "path: no data rows". Dataset::name is the file's base name without extension.
Dataset load_csv(const std::string& path, const CsvOptions& options = {});

/// Reads LIBSVM sparse text ("label idx:value ..."), 1-based indices. n_features = 0 infers the
/// dimension from the largest index. Same error contract as load_csv.
/// Indices must increase strictly within a line; '#' starts a comment; blank lines are skipped;
/// the column of an error is the 1-based token index (the label is token 1). Labels are kept
/// as written (0/1 labels are not mapped to −1/+1, so such a file reads as Regression).
Dataset load_libsvm(const std::string& path, std::size_t n_features = 0);

/// Which synthetic generator of [Raker] (its Datasets 1 and 2).
enum class SyntheticKind { Dataset1, Dataset2 };

struct SyntheticOptions {
  SyntheticKind kind = SyntheticKind::Dataset1;
  std::size_t n_samples = 0;       ///< 0 = [Raker]'s lengths (36 000 / 6 500)
  std::size_t n_features = 10;
  double sigma_alpha = 0.01;
  bool kernel_index_target = false;  ///< false: κ_τ of the source sample (literal reading)
  std::uint64_t seed = 1;
  bool normalize = true;           ///< per-feature min-max of X and min-max of y ([Raker])
};

/// Generates a synthetic switching stream. Deterministic in (options.seed).
/// Draws come from RandomStream(seed, 0, RngPurpose::Synthetic, 1 for Dataset1 / 2 for
/// Dataset2) in the order: for t = 1..T, the d entries of x_t, then e_t (α_t = 1 + σ_α e_t).
/// y is [Raker]'s O(T²) kernel sum, computed on all hardware threads with a result that does
/// not depend on the thread count. Throws ConfigError for n_features = 0 or σ_α < 0.
Dataset make_synthetic(const SyntheticOptions& options);

/// Normalisations used by the papers.
enum class Normalization {
  None,
  MinMaxFeatures,   ///< each feature column to [0, 1]
  MinMaxGlobal,     ///< all feature entries to [0, 1] with one min / max
  MinMaxAll,        ///< each feature column and y to [0, 1]
  ZScore,           ///< each feature column to zero mean, unit variance
  UnitRows,         ///< each sample to unit ℓ2 norm
  /// Graph-aided journal notebooks ([GA-J] reference code): targets min–max scaled to
  /// [0, 1], computed as the reference code writes it, y/(max−min) − min/(max−min); inputs
  /// divided by the largest row norm max_τ ‖x_τ‖₂ (no centring, no per-feature scaling), so
  /// afterwards max_t ‖x_t‖₂ = 1. Constant targets map to 0; all-zero inputs stay zero.
  Jmlr23,
  /// Bandit kernel selection ([OKS] reference code): every feature to [−1, 1] by min–max over
  /// the stream (constant columns to 0), regression targets to [0, 1], labels ±1 kept.
  Symmetric,
  /// Online scalers, for live streams: each feature by the statistics of the rows seen so far,
  /// this row included (nothing of the future), updated row by row. Running min–max to [0, 1]
  /// (a feature constant so far maps to 0) and running mean / population standard deviation.
  RunningMinMax,
  RunningZScore,
  /// Symmetric, except that a feature whose values are exactly {0, 1} (both present) is kept as
  /// it is: the `no_rescale_binary` sensitivity check of [OKS]'s protocol (docs/features.md,
  /// "Normalisations"; min–max maps LIBSVM's binary features to {−1, 1}, doubling their distances).
  SymmetricKeepBinary
};
Normalization parse_normalization(const std::string& text);
std::string to_string(Normalization how);

/// A normalisation with the statistics it was fitted on (minimum and range, mean and standard
/// deviation, the largest row norm, per feature and for the target), so that another stream —
/// new rows for a saved model — gets the same transform. apply() on the stream it was fitted on
/// gives normalize()'s result bit for bit.
struct Normalizer {
  Normalization how = Normalization::None;
  std::size_t n_features = 0;
  std::vector<double> offset, scale;  ///< per feature (one value for minmax-global and jmlr23)
  double y_offset = 0.0, y_scale = 0.0;
  bool scale_y = false;               ///< the target is transformed too
  /// Online scalers: the rows observed so far (offset / scale then hold the running minimum /
  /// maximum, or mean / sum of squared deviations).
  std::uint64_t n_observed = 0;
  /// Transforms `data` in place. InputError for a stream of another width. An online scaler
  /// transforms the rows in order as a copy of it observes them (this one is unchanged).
  void apply(Dataset& data) const;
  /// Whether the statistics are updated row by row (RunningMinMax, RunningZScore).
  bool online() const { return how == Normalization::RunningMinMax || how == Normalization::RunningZScore; }
  /// An online scaler's update with one row of `d` features (before apply_row() of that row);
  /// nothing for the other normalisations.
  void observe_row(const double* x, std::size_t d);
  /// Transforms one row of `d` features in place, and its target when `y` is not null (a row
  /// to predict has none): apply() row by row, bit for bit.
  void apply_row(double* x, std::size_t d, double* y) const;
  /// Whether the transform needs statistics of a whole stream (fitted or to be fitted), as
  /// opposed to none or unit-rows, which transform each row on its own.
  bool needs_statistics() const { return how != Normalization::None && how != Normalization::UnitRows && !online(); }
};
/// The statistics of `how` on `data` (data unchanged); for an online scaler, its state before
/// any row (it learns its statistics as it goes).
Normalizer fit_normalizer(const Dataset& data, Normalization how);
/// Applies a normalisation in place (constant columns map to 0): fit_normalizer(data, how).apply(data).
void normalize(Dataset& data, Normalization how);

/// What scale_advice() calls far from unit scale: a feature entry, or a regression target, larger
/// than these in magnitude.
constexpr double kUnitScaleFeatureLimit = 100.0;
constexpr double kUnitScaleTargetLimit = 10.0;
/// A note for a stream about to be learned without normalisation: empty when every feature entry
/// and (regression only) every target is within the limits above; otherwise one sentence naming
/// the feature column of the largest magnitude (by name, else its 1-based index) with its range,
/// the target's range where that is the cause, and the normalisations that would help. Every
/// kernel dictionary's bandwidths and every default step size assume values of order one, so a raw
/// stream such as airfoil (a feature up to 20 000, targets 103–141) learns next to nothing, and
/// nothing else says why. `keep_values` is how the caller keeps the values as they are (the
/// command line's "--normalize none", Python's "normalize='none'"), named as what silences it.
std::string scale_advice(const Dataset& data, const std::string& keep_values = "--normalize none");

/// How a pooled dataset is dealt to the clients of a federated study ([POF], its experiments).
struct FederatedLayout {
  std::size_t rounds = 500;   ///< T: samples per client
  std::size_t clients = 0;    ///< K; 0 = as many as the data allow (see arrange_federated)
  /// Grouped data: rows each client takes from every other group; 0 = rounds / 10 (the paper's
  /// 50 of 500).
  std::size_t minority_rows = 0;
  /// Grouped data: each group's rows in stream (chronological) order when they are dealt
  /// ([POF]'s protocol's `noniid.within_site_order = chronological`, the default; docs/features.md,
  /// "Federated layouts"), or, true, the rows the
  /// deal uses from each group (its first C·T) permuted with the data seed first (`shuffled`).
  bool shuffle_sites = false;
  /// Grouped data: each client's T rows in an order shuffled with the data seed (the authors'
  /// code: "this shuffle sets the client's time order"), or, false, in the order the protocol
  /// lists them — its own block, then the other groups' blocks in group order (`--client-order
  /// listed`, not an option of the protocol). The published tables were reproduced with
  /// the shuffle.
  bool shuffle_within_client = true;
  std::uint64_t seed = 0;     ///< the data seed: the permutation and the clients' time orders
};

/// Rearranges `data` into a federated stream of K clients × T rounds (Dataset::n_clients = K;
/// row t·K + k is client k's t-th sample):
///  - without groups (i.i.d. split): one seeded permutation π of all rows; client k gets
///    π[kT], …, π[kT + T − 1] in that order. K defaults to ⌊n / T⌋.
///  - with groups (non-i.i.d. split by the G distinct group values, ascending): C = K / G clients
///    per group; client c = s·C + g takes rows [a·g, a·g + a) of its own group s (a = T − (G − 1)·m,
///    m = minority_rows, by default T/10) and m rows from every other group s', starting at a·C + m·(r·C + g), where r
///    is s's position among the groups other than s'; its T rows (own block, then the others in group
///    order) are then shuffled with the data seed (unless shuffle_within_client is false); with
///    shuffle_sites, each group's first C·T rows are permuted with the data seed before. K defaults
///    to G·min_s ⌊n_s / T⌋.
/// Throws ConfigError when the data hold fewer rows than K × T (naming both), when K is not a
/// multiple of the group count, when the minority rows leave no room for the own group, or when
/// there are none (fewer than 10 rounds and minority_rows left at its default).
void arrange_federated(Dataset& data, const FederatedLayout& layout);

/// Opens a stream by specification: a file path (".csv", or ".svm"/".libsvm"/".txt" for
/// LIBSVM), or "synthetic:dataset1[:T]" / "synthetic:dataset2[:T]" (seeded by `seed`).
/// Extensions are matched case-insensitively; any other path is read as CSV. An unknown
/// synthetic kind or a T that is not a positive integer throws ConfigError.
/// `format` ("csv" or "libsvm"; empty: by the name, reads_libsvm()) overrides the file name; a
/// built-in stream takes none.
Dataset load_stream(const std::string& spec, std::uint64_t seed = 1, const CsvOptions& csv = {},
                    const std::string& format = {});
/// Whether load_stream() reads `path` as LIBSVM: a ".svm", ".libsvm" or ".txt" name, any case.
bool is_libsvm_path(const std::string& path);
/// Whether `path` is read as LIBSVM: `format` "libsvm" or "csv" says, an empty one leaves it to
/// the name (is_libsvm_path; standard input "-" is CSV). Another format is a ConfigError.
bool reads_libsvm(const std::string& path, const std::string& format);

/// Classification labels as −1 / +1 ([OKS]'s protocol; docs/features.md, "Labels"). A target with exactly two distinct
/// values (0/1, 1/2, …) becomes −1 for the smaller and +1 for the larger, and the stream a
/// classification task; one already in {−1, +1} is only marked classification. ConfigError
/// naming the stream when its target has one value, or more than two (the first three found).
void map_labels_to_pm1(Dataset& data);

/// The most distinct values one_hot_encode() takes in a column: more is no categorical column.
inline constexpr std::size_t kMaxOneHotValues = 256;

/// Replaces categorical feature columns by indicator columns, one per distinct value in
/// ascending order (1 where the row holds that value, 0 elsewhere), in place, the other columns
/// kept where they stand: `columns` is "all" or CSV header names joined by ','. LIBSVM's
/// binarised data sets are made so: its `phishing` is the UCI file's 30 columns as 68 (docs/
/// features.md, "Categorical columns"). The new columns are named "NAME=VALUE" ("xJ=VALUE" without a header), so
/// that a model learned on them reads a stream written as before through them (OneHotColumns)
/// and refuses one encoded otherwise. ConfigError for an empty
/// stream, a name the header lacks, names without a header, or a column with more than
/// kMaxOneHotValues values.
void one_hot_encode(Dataset& data, const std::string& columns);

/// How a model learned on one_hot_encode()'s columns reads a stream written as before the
/// encoding: given the model's feature names, each "NAME=VALUE" is the indicator of VALUE in the
/// stream's column NAME (0 for a value the model never saw) and each other name the stream's
/// column of that name ("xJ": column J of a stream without a header). Inactive where the names
/// are the stream's own, hold no indicator, or name a column the stream lacks (the caller's
/// checks then say what differs).
class OneHotColumns {
 public:
  /// From a stream whose `width` columns `header` names (empty: none) to `model_names`.
  OneHotColumns(const std::vector<std::string>& header, std::size_t width, const std::vector<std::string>& model_names);
  bool active() const { return !sources_.empty(); }
  /// The model's width (active only).
  std::size_t width() const { return sources_.size(); }
  /// One stream row as the model's width() values.
  void encode(const double* row, double* out) const;

 private:
  struct Source {
    std::size_t column;  ///< the stream's column
    bool indicator;      ///< its indicator of `value`, or the column as written
    double value;
  };
  std::vector<Source> sources_;
};

/// A whole stream through OneHotColumns; false, leaving it as it is, where they are inactive.
bool one_hot_encode_like(Dataset& data, const std::vector<std::string>& model_names);

/// Writes a dataset as CSV (header x1..xd,y), atomically (temporary file + rename).
/// Values are printed with "%.17g", so load_csv reads back the same doubles. The temporary
/// file is "path.tmp.<pid>" in the same directory; on any failure it is removed and
/// InputError names the path. Non-finite values are refused (load_csv would reject them).
void write_csv(const Dataset& data, const std::string& path);

}  // namespace omkl
