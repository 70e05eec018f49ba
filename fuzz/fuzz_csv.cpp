/// @file fuzz_csv.cpp
/// @brief libFuzzer target for the CSV reader (load_csv), and for the indicator columns made
/// from what it read (one_hot_encode(), one_hot_encode_like()).
/// Input: one option byte, then the file. The option byte's low two bits pick the CsvOptions:
/// 0 = defaults (target = last column), 1 = target column "y", 2 = group column "g",
/// 3 = both; bit 2 then encodes every feature column as indicators ('4'..'7'). Seeds start with
/// the characters '0'..'7'.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_common.h"
#include "omkl/dataset.h"

namespace {

// What one_hot_encode() promises of an accepted stream (dataset.h): the rows, targets and groups
// unchanged; each source column as 0/1 indicators named "NAME=VALUE", exactly one of them 1 per
// row; and the model's names reading the stream as written reproduce the encoding bit for bit.
void check_one_hot(const omkl::Dataset& read, const std::string& path, const omkl::CsvOptions& options) {
  omkl::Dataset encoded = read;
  omkl::one_hot_encode(encoded, "all");
  if (encoded.n_samples != read.n_samples || encoded.y != read.y || encoded.groups != read.groups)
    omkl_fuzz::fail("one-hot: rows, targets or groups changed");
  if (encoded.x.size() != encoded.n_samples * encoded.n_features || encoded.feature_names.size() != encoded.n_features)
    omkl_fuzz::fail("one-hot: sizes");
  if (encoded.n_features < read.n_features) omkl_fuzz::fail("one-hot: fewer columns than the stream's");
  for (const std::string& name : encoded.feature_names)
    if (name.find('=') == std::string::npos) omkl_fuzz::fail("one-hot: a column not named NAME=VALUE");
  std::vector<double> row_total(encoded.n_samples, 0.0);
  for (std::size_t t = 0; t < encoded.n_samples; ++t)
    for (std::size_t j = 0; j < encoded.n_features; ++j) {
      const double v = encoded.x[t * encoded.n_features + j];
      if (v != 0.0 && v != 1.0) omkl_fuzz::fail("one-hot: an indicator that is not 0 or 1");
      row_total[t] += v;
    }
  for (double total : row_total)
    if (total != static_cast<double>(read.n_features)) omkl_fuzz::fail("one-hot: not one indicator per column and row");
  omkl::Dataset again = omkl::load_csv(path, options);
  if (!omkl::one_hot_encode_like(again, encoded.feature_names)) omkl_fuzz::fail("one-hot: the model's names not applied");
  if (again.n_features != encoded.n_features || again.x != encoded.x)
    omkl_fuzz::fail("one-hot: the model's names read the stream otherwise");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static omkl_fuzz::ScratchCleanup cleanup{omkl_fuzz::scratch_path("csv", ".csv")};
  const std::string& path = cleanup.path;
  omkl::CsvOptions options;
  if (data[0] & 1) options.target_column = "y";
  if (data[0] & 2) options.group_column = "g";
  omkl_fuzz::write_scratch(path, data + 1, size - 1);
  return omkl_fuzz::guarded([&] {
    const omkl::Dataset d = omkl::load_csv(path, options);
    // What a successful read promises (dataset.h).
    if (d.n_samples == 0) omkl_fuzz::fail("csv: accepted a file without data rows");
    if (d.x.size() != d.n_samples * d.n_features) omkl_fuzz::fail("csv: x size != n_samples * n_features");
    if (d.y.size() != d.n_samples) omkl_fuzz::fail("csv: y size != n_samples");
    if (!d.groups.empty() && d.groups.size() != d.n_samples) omkl_fuzz::fail("csv: groups size != n_samples");
    if (options.group_column.empty() && !d.groups.empty()) omkl_fuzz::fail("csv: groups without a group column");
    bool labels = true;
    for (double v : d.x)
      if (!std::isfinite(v)) omkl_fuzz::fail("csv: non-finite feature accepted");
    for (double v : d.y) {
      if (!std::isfinite(v)) omkl_fuzz::fail("csv: non-finite target accepted");
      labels = labels && (v == -1.0 || v == 1.0);
    }
    if ((d.task == omkl::Task::Classification) != labels) omkl_fuzz::fail("csv: task inference");
    if (data[0] & 4) check_one_hot(d, path, options);
  });
}
