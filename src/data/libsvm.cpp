/// @file libsvm.cpp
/// @brief LIBSVM sparse text reader ("label idx:value ..."), densified row-major.
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>
#include <string>
#include <utility>
#include <vector>

#include "data/libsvm_rows.h"
#include "data/parse_number.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace {

using detail::location;
using detail::NumberStatus;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// A 1-based feature index: decimal digits only (no sign, no spaces), without overflow.
bool parse_index(const char* begin, const char* end, std::size_t& out) {
  if (begin == end) return false;
  std::size_t value = 0;
  for (; begin < end; ++begin) {
    if (*begin < '0' || *begin > '9') return false;
    const auto digit = static_cast<std::size_t>(*begin - '0');
    if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10) return false;
    value = value * 10 + digit;
  }
  out = value;
  return true;
}

}  // namespace

namespace detail {

LibsvmLine parse_libsvm_line(const std::string& path, std::size_t line_number, const char* begin, const char* line_end,
                             std::size_t n_features, std::vector<std::size_t>& indices, std::vector<double>& values,
                             bool label_optional, const std::string& width_source) {
  LibsvmLine line;
  // '#' starts a comment that runs to the end of the line.
  if (const void* hash = std::memchr(begin, '#', static_cast<std::size_t>(line_end - begin))) {
    line_end = static_cast<const char*>(hash);
  }
  std::size_t token_number = 0;
  std::size_t previous_index = 0;
  for (const char* q = begin;;) {
    while (q < line_end && is_space(*q)) ++q;
    if (q == line_end) break;
    const char* token_end = q;
    while (token_end < line_end && !is_space(*token_end)) ++token_end;
    ++token_number;
    const std::string where = location(path, line_number, token_number);
    const bool is_pair = std::memchr(q, ':', static_cast<std::size_t>(token_end - q)) != nullptr;
    if (token_number == 1 && !(label_optional && is_pair)) {
      double label = 0.0;
      const NumberStatus status = detail::parse_double(q, token_end, label);
      if (status == NumberStatus::NonFinite) {
        throw InputError(where + "non-finite value " + detail::quote_cell(q, token_end));
      }
      if (status != NumberStatus::Ok) {
        throw InputError(where + "bad label " + detail::quote_cell(q, token_end) +
                         " (expected a number)");
      }
      line.label = label;
      line.has_label = true;
    } else if (previous_index == 0 && token_end - q > 4 && std::memcmp(q, "qid:", 4) == 0) {
      // SVMlight's query id (ranking data), between the label and the features: no feature of
      // the sample, skipped. (Its value is not checked: nothing reads it.)
    } else {
      const void* colon_found = std::memchr(q, ':', static_cast<std::size_t>(token_end - q));
      if (colon_found == nullptr) {
        throw InputError(where + "bad token " + detail::quote_cell(q, token_end) +
                         " (expected index:value)");
      }
      const char* colon = static_cast<const char*>(colon_found);
      std::size_t index = 0;
      if (!parse_index(q, colon, index)) {
        throw InputError(where + "bad feature index in " + detail::quote_cell(q, token_end) +
                         " (expected a positive integer)");
      }
      if (index == 0) {
        throw InputError(where + "feature index 0 in " + detail::quote_cell(q, token_end) +
                         " (indices are 1-based)");
      }
      if (n_features != 0 && index > n_features) {
        throw InputError(where + "feature index " + std::to_string(index) + " exceeds n_features = " +
                         std::to_string(n_features) + (width_source.empty() ? "" : " (" + width_source + ")"));
      }
      if (index <= previous_index) {
        throw InputError(where + "feature index " + std::to_string(index) +
                         " does not increase (previous " + std::to_string(previous_index) + ")");
      }
      double value = 0.0;
      const NumberStatus status = detail::parse_double(colon + 1, token_end, value);
      if (status == NumberStatus::NonFinite) {
        throw InputError(where + "non-finite value " + detail::quote_cell(q, token_end));
      }
      if (status != NumberStatus::Ok) {
        throw InputError(where + "bad value in " + detail::quote_cell(q, token_end) +
                         " (expected index:number)");
      }
      previous_index = index;
      if (index > line.max_index) {
        line.max_index = index;
        line.max_index_token = token_number;
      }
      indices.push_back(index);
      values.push_back(value);
    }
    q = token_end;
  }
  line.has_row = token_number > 0;
  return line;
}

}  // namespace detail

namespace {

// Every line of `text`, a LIBSVM file's, through parse_libsvm_line() (its pairs appended to
// `indices` / `values`), then `on_line(line_number, line)`.
template <typename OnLine>
void parse_libsvm_lines(const std::string& path, const std::string& text, std::size_t n_features,
                        std::vector<std::size_t>& indices, std::vector<double>& values, const OnLine& on_line) {
  const char* const text_end = text.data() + text.size();
  const char* p = detail::skip_byte_order_mark(text.data(), text_end);
  std::size_t line_number = 0;
  while (p < text_end) {
    const void* found = std::memchr(p, '\n', static_cast<std::size_t>(text_end - p));
    const char* line_end = found ? static_cast<const char*>(found) : text_end;
    ++line_number;
    on_line(line_number, detail::parse_libsvm_line(path, line_number, p, line_end, n_features, indices, values));
    p = found ? line_end + 1 : text_end;
  }
}

double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

}  // namespace

namespace detail {

void check_libsvm_width(const std::string& path, std::size_t n_features, const std::string& whose) {
  const std::string text = read_whole_file(path);
  std::vector<std::size_t> indices;
  std::vector<double> values;
  parse_libsvm_lines(path, text, 0, indices, values, [&](std::size_t line_number, const LibsvmLine& line) {
    if (line.max_index > n_features)
      throw InputError(location(path, line_number, line.max_index_token) + "feature index " +
                       std::to_string(line.max_index) + " exceeds n_features = " + std::to_string(n_features) + " (" +
                       whose + ")");
    indices.clear();  // nothing kept: only the widths are looked at
    values.clear();
  });
}

bool dense_matrix_too_large(std::size_t rows, std::size_t width, double physical_bytes) {
  if (rows == 0 || width == 0) return false;
  if (width > std::vector<double>{}.max_size() / rows) return true;
  const double bytes = static_cast<double>(rows) * static_cast<double>(width) * sizeof(double);
  return physical_bytes > 0 && bytes > physical_bytes / 2;
}

}  // namespace detail

Dataset load_libsvm(const std::string& path, std::size_t n_features) {
  const std::string text = detail::read_whole_file(path);
  {
    bool empty = true;
    for (const char c : text) {
      if (!is_space(c) && c != '\n') {
        empty = false;
        break;
      }
    }
    if (empty) throw InputError(path + ": empty file");
  }

  // First pass: sparse rows (CSR), so that the dimension can be inferred before densifying.
  std::vector<double> labels;
  std::vector<std::size_t> row_start{0};
  std::vector<std::size_t> indices;  // 1-based
  std::vector<double> values;
  std::size_t max_index = 0, max_index_line = 0, max_index_token = 0;

  parse_libsvm_lines(path, text, n_features, indices, values,
                     [&](std::size_t line_number, const detail::LibsvmLine& line) {
                       if (!line.has_row) return;  // blank and comment lines are skipped
                       labels.push_back(line.label);
                       row_start.push_back(indices.size());
                       if (line.max_index > max_index) {
                         max_index = line.max_index;
                         max_index_line = line_number;
                         max_index_token = line.max_index_token;
                       }
                     });

  if (labels.empty()) throw InputError(path + ": no data rows");
  const std::size_t dimension = n_features != 0 ? n_features : max_index;
  if (dimension == 0) {
    throw InputError(path + ": no feature indices in any row; pass n_features explicitly");
  }

  // An inferred dimension comes from the file (one index can be near 2^64): a dense size that
  // does not fit in a vector, or in memory, is the row with the widest index's doing. Refused
  // before the allocation, which the system may grant (overcommit) and then fill for minutes.
  const double physical = physical_memory_bytes();
  const auto too_wide = [&] {
    const std::string where =
        n_features != 0 ? path + ": " : detail::location(path, max_index_line, max_index_token);
    const auto gigabytes = [](double bytes) {
      char text[32];
      std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
      return std::string(text);
    };
    const double bytes = static_cast<double>(labels.size()) * static_cast<double>(dimension) * sizeof(double);
    return InputError(where + std::to_string(labels.size()) + " rows of dimension " + std::to_string(dimension) +
                      (n_features != 0 ? "" : " (the widest feature index)") +
                      " do not fit in memory as a dense matrix (" + gigabytes(bytes) +
                      (physical > 0 ? ", more than half of this machine's " + gigabytes(physical) : "") +
                      (n_features != 0 ? ")" : "; is that index right?)"));
  };
  if (detail::dense_matrix_too_large(labels.size(), dimension, physical)) throw too_wide();

  Dataset data;
  data.name = detail::dataset_name_from_path(path);
  data.n_samples = labels.size();
  data.n_features = dimension;
  try {
    data.x.assign(data.n_samples * dimension, 0.0);  // absent entries are zero
  } catch (const std::bad_alloc&) {
    throw too_wide();
  }
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double* row = data.x.data() + t * dimension;
    for (std::size_t k = row_start[t]; k < row_start[t + 1]; ++k) row[indices[k] - 1] = values[k];
  }
  data.y = std::move(labels);
  // Labels are kept as written: 0/1 labels are NOT mapped to −1/+1 here, so such a file is read
  // as a regression stream; map_labels_to_pm1() (--labels pm1) makes it a classification one.
  data.task = detail::infer_task(data.y);
  return data;
}

}  // namespace omkl
