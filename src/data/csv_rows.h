/// @file csv_rows.h
/// @brief The CSV grammar one line at a time, shared by the whole-file reader (load_csv) and
/// the live row reader (RowStream): the header with its target and group columns, and one data
/// row with the errors located as "path:line:column". Defined in csv.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "omkl/dataset.h"

namespace omkl::detail {

struct CsvHeader {
  std::vector<std::string> names;
  std::size_t target = 0;  ///< column index of the target
  std::size_t group = 0;   ///< column index of the group, or names.size() when none
  std::size_t n_columns() const { return names.size(); }
  bool grouped() const { return group != names.size(); }
  std::size_t n_features() const { return names.size() - (grouped() ? 2 : 1); }
  /// The features' names: every column's but the target's and the group's, in order.
  std::vector<std::string> feature_names() const {
    std::vector<std::string> out;
    for (std::size_t c = 0; c < names.size(); ++c)
      if (c != target && c != group) out.push_back(names[c]);
    return out;
  }
};

/// Parses the header line [begin, end) (no line ending). InputError for a numeric first row,
/// fewer than 2 columns, two columns of one name, or an unknown target / group column.
CsvHeader parse_csv_header(const std::string& path, const char* begin, const char* end, const CsvOptions& options);

/// What a data row holds besides its features.
struct CsvRowValues {
  double y = 0.0;
  bool has_target = true;
  std::uint32_t group = 0;
};

/// Parses one data line [begin, end) into `x` (header.n_features() values). With
/// `target_optional`, a row whose target cell is empty, or that lacks only its last field when
/// that is the target, is read without a target (has_target = false). InputError, located at
/// `line_number`, for a ragged row or a non-numeric, non-finite or empty cell.
CsvRowValues parse_csv_row(const std::string& path, std::size_t line_number, const CsvHeader& header,
                           const char* begin, const char* end, double* x, bool target_optional = false);

/// True for a line of spaces, tabs and carriage returns only.
bool is_blank_line(const char* begin, const char* end);

}  // namespace omkl::detail
