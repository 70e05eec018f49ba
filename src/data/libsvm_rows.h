/// @file libsvm_rows.h
/// @brief The LIBSVM grammar one line at a time ("label idx:value ...", 1-based increasing
/// indices, '#' comments), shared by the whole-file reader (load_libsvm) and the live row reader
/// (RowStream). Defined in libsvm.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace omkl::detail {

struct LibsvmLine {
  bool has_row = false;    ///< false for a blank or comment-only line
  bool has_label = false;  ///< false only with label_optional, for a line of index:value pairs alone
  double label = 0.0;
  std::size_t max_index = 0;  ///< the largest index on the line (0: none)
};

/// Parses [begin, end) (no line ending) and appends its (1-based index, value) pairs to
/// `indices` / `values`. n_features = 0: any index. With `label_optional`, a line whose first
/// token is an index:value pair has no label (a row to predict). InputError located at
/// "path:line:token".
LibsvmLine parse_libsvm_line(const std::string& path, std::size_t line_number, const char* begin, const char* end,
                             std::size_t n_features, std::vector<std::size_t>& indices, std::vector<double>& values,
                             bool label_optional = false);

}  // namespace omkl::detail
