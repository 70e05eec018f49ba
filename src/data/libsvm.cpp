/// @file libsvm.cpp
/// @brief LIBSVM sparse text reader ("label idx:value ..."), densified row-major.
#include <cstddef>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

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
  std::size_t max_index = 0;

  const char* p = text.data();
  const char* const text_end = p + text.size();
  std::size_t line_number = 0;
  while (p < text_end) {
    const void* found = std::memchr(p, '\n', static_cast<std::size_t>(text_end - p));
    const char* line_end = found ? static_cast<const char*>(found) : text_end;
    const char* const next = found ? line_end + 1 : text_end;
    ++line_number;
    // '#' starts a comment that runs to the end of the line.
    if (const void* hash = std::memchr(p, '#', static_cast<std::size_t>(line_end - p))) {
      line_end = static_cast<const char*>(hash);
    }
    std::size_t token_number = 0;
    std::size_t previous_index = 0;
    for (const char* q = p;;) {
      while (q < line_end && is_space(*q)) ++q;
      if (q == line_end) break;
      const char* token_end = q;
      while (token_end < line_end && !is_space(*token_end)) ++token_end;
      ++token_number;
      const std::string where = location(path, line_number, token_number);
      if (token_number == 1) {
        double label = 0.0;
        const NumberStatus status = detail::parse_double(q, token_end, label);
        if (status == NumberStatus::NonFinite) {
          throw InputError(where + "non-finite value " + detail::quote_cell(q, token_end));
        }
        if (status != NumberStatus::Ok) {
          throw InputError(where + "bad label " + detail::quote_cell(q, token_end) +
                           " (expected a number)");
        }
        labels.push_back(label);
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
          throw InputError(where + "feature index " + std::to_string(index) +
                           " exceeds n_features = " + std::to_string(n_features));
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
        if (index > max_index) max_index = index;
        indices.push_back(index);
        values.push_back(value);
      }
      q = token_end;
    }
    if (token_number > 0) row_start.push_back(indices.size());  // blank lines are skipped
    p = next;
  }

  if (labels.empty()) throw InputError(path + ": no data rows");
  const std::size_t dimension = n_features != 0 ? n_features : max_index;
  if (dimension == 0) {
    throw InputError(path + ": no feature indices in any row; pass n_features explicitly");
  }

  Dataset data;
  data.name = detail::dataset_name_from_path(path);
  data.n_samples = labels.size();
  data.n_features = dimension;
  data.x.assign(data.n_samples * dimension, 0.0);  // absent entries are zero
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double* row = data.x.data() + t * dimension;
    for (std::size_t k = row_start[t]; k < row_start[t + 1]; ++k) row[indices[k] - 1] = values[k];
  }
  data.y = std::move(labels);
  // Labels are kept as written: 0/1 labels are NOT mapped to −1/+1, so such a file is read as
  // a regression stream; convert the labels beforehand to get a classification task.
  data.task = detail::infer_task(data.y);
  return data;
}

}  // namespace omkl
