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
  std::size_t max_index_token = 0;  ///< the 1-based token that holds it
};

/// Parses [begin, end) (no line ending) and appends its (1-based index, value) pairs to
/// `indices` / `values`. n_features = 0: any index. With `label_optional`, a line whose first
/// token is an index:value pair has no label (a row to predict). InputError located at
/// "path:line:token"; an index beyond n_features names `width_source` (where the width comes
/// from, e.g. "the model in m.ckpt") where it is not empty.
LibsvmLine parse_libsvm_line(const std::string& path, std::size_t line_number, const char* begin, const char* end,
                             std::size_t n_features, std::vector<std::size_t>& indices, std::vector<double>& values,
                             bool label_optional = false, const std::string& width_source = {});

/// Reads the LIBSVM file at `path` line by line, keeping nothing, and throws InputError at the
/// first index beyond `n_features` ("path:line:token: feature index I exceeds n_features = N
/// (`whose`)"), or at any malformed line: a whole-file load of a stream for a model of
/// `n_features` would otherwise densify it to the width of its largest index first.
void check_libsvm_width(const std::string& path, std::size_t n_features, const std::string& whose);

/// Whether a dense rows × width matrix of doubles is refused: it does not fit in a vector, or it
/// takes more than half of `physical_bytes` (the machine's memory; 0: unknown, not compared). A
/// run keeps the stream beside the model and its working copies, and a LIBSVM file's width is
/// its largest index, which one mistyped index makes huge.
bool dense_matrix_too_large(std::size_t rows, std::size_t width, double physical_bytes);

}  // namespace omkl::detail
