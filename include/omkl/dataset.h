/// @file dataset.h
/// @brief Data streams: CSV and LIBSVM readers, the synthetic generators of spec/raker.md §6,
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

  const double* row(std::size_t t) const { return x.data() + t * n_features; }
};

/// Options of the CSV reader.
struct CsvOptions {
  /// Name of the target column; empty means the last column.
  std::string target_column;
};

/// Reads a CSV file with one header row, numeric cells only. Throws InputError naming
/// "path:line:column" for a missing file, a ragged row, a non-numeric or non-finite cell, or a
/// file without data rows. The task is inferred: Classification iff every target is −1 or +1.
Dataset load_csv(const std::string& path, const CsvOptions& options = {});

/// Reads LIBSVM sparse text ("label idx:value ..."), 1-based indices. n_features = 0 infers the
/// dimension from the largest index. Same error contract as load_csv.
Dataset load_libsvm(const std::string& path, std::size_t n_features = 0);

/// Which synthetic generator of spec/raker.md §6.
enum class SyntheticKind { Dataset1, Dataset2 };

struct SyntheticOptions {
  SyntheticKind kind = SyntheticKind::Dataset1;
  std::size_t n_samples = 0;       ///< 0 = the spec default (36 000 / 6 500)
  std::size_t n_features = 10;
  double sigma_alpha = 0.01;
  bool kernel_index_target = false;  ///< false: κ_τ of the source sample (literal reading)
  std::uint64_t seed = 1;
  bool normalize = true;           ///< per-feature min-max of X and min-max of y (§6.3)
};

/// Generates a synthetic switching stream. Deterministic in (options.seed).
Dataset make_synthetic(const SyntheticOptions& options);

/// Normalisations used by the papers.
enum class Normalization {
  None,
  MinMaxFeatures,   ///< each feature column to [0, 1]
  MinMaxGlobal,     ///< all feature entries to [0, 1] with one min / max
  MinMaxAll,        ///< each feature column and y to [0, 1]
  ZScore,           ///< each feature column to zero mean, unit variance
  UnitRows          ///< each sample to unit ℓ2 norm
};
Normalization parse_normalization(const std::string& text);
/// Applies a normalisation in place (constant columns map to 0).
void normalize(Dataset& data, Normalization how);

/// Opens a stream by specification: a file path (".csv", or ".svm"/".libsvm"/".txt" for
/// LIBSVM), or "synthetic:dataset1[:T]" / "synthetic:dataset2[:T]" (seeded by `seed`).
Dataset load_stream(const std::string& spec, std::uint64_t seed = 1, const CsvOptions& csv = {});

/// Writes a dataset as CSV (header x1..xd,y), atomically (temporary file + rename).
void write_csv(const Dataset& data, const std::string& path);

}  // namespace omkl
