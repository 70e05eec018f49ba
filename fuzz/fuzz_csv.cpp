/// @file fuzz_csv.cpp
/// @brief libFuzzer target for the CSV reader (load_csv).
/// Input: one option byte, then the file. The option byte's low two bits pick the CsvOptions:
/// 0 = defaults (target = last column), 1 = target column "y", 2 = group column "g",
/// 3 = both. Seeds start with the characters '0'..'3'.
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "omkl/dataset.h"

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
  });
}
