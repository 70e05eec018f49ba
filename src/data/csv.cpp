/// @file csv.cpp
/// @brief CSV reader and atomic CSV writer, plus the text helpers of parse_number.h.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

#include "core/decimal.h"
#include "core/state_io.h"
#include "data/csv_rows.h"
#include "data/parse_number.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace detail {

namespace {
bool is_blank(char c) { return c == ' ' || c == '\t'; }
}  // namespace

NumberStatus parse_double(const char* begin, const char* end, double& out) {
  while (begin < end && is_blank(*begin)) ++begin;
  while (end > begin && is_blank(end[-1])) --end;
  if (begin == end) return NumberStatus::Empty;
  // strtod would skip leading whitespace (including newlines) and read past `end`; both are
  // excluded: the first character is not blank, and the cell always ends at a delimiter
  // (',', '\r', '\n', ' ', '\t', '#' or the string's terminating NUL) that no number contains.
  char* stop = nullptr;
  const double value = strtod_decimal(begin, &stop);
  if (stop != end) return NumberStatus::NotANumber;
  if (!std::isfinite(value)) return NumberStatus::NonFinite;
  out = value;
  return NumberStatus::Ok;
}

std::string read_whole_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    throw InputError(path + ": cannot open file (" + std::strerror(errno) + ")");
  }
  std::string text;
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec) text.reserve(static_cast<std::size_t>(size));
  // Chunked reads: also correct for files whose size is unknown up front (pipes, /proc).
  char buffer[1 << 16];
  for (;;) {
    const std::size_t got = std::fread(buffer, 1, sizeof buffer, file);
    text.append(buffer, got);
    if (got < sizeof buffer) break;
  }
  const bool failed = std::ferror(file) != 0;
  const int read_errno = errno;
  std::fclose(file);
  if (failed) {
    // e.g. a directory: fopen succeeds on Linux, the read fails with EISDIR.
    throw InputError(path + ": cannot open file (" + std::strerror(read_errno) + ")");
  }
  return text;
}

std::string location(const std::string& path, std::size_t line, std::size_t column) {
  return path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": ";
}

std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    // Control bytes as \xNN: a NUL would end the message (what() is a C string), and others
    // would move the terminal's cursor. Bytes from 0x80 up are left to the terminal (UTF-8).
    if (byte < 0x20 || byte == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string quote_cell(const char* begin, const char* end) {
  constexpr std::size_t kMaxShown = 40;
  const auto length = static_cast<std::size_t>(end - begin);
  if (length <= kMaxShown) return "'" + printable(std::string(begin, end)) + "'";
  return "'" + printable(std::string(begin, begin + kMaxShown)) + "...'";
}

std::string dataset_name_from_path(const std::string& path) {
  return std::filesystem::path(path).stem().string();
}

Task infer_task(const std::vector<double>& y) {
  for (const double v : y) {
    if (v != -1.0 && v != 1.0) return Task::Regression;
  }
  return y.empty() ? Task::Regression : Task::Classification;
}

}  // namespace detail

namespace {

using detail::location;
using detail::NumberStatus;

struct Line {
  const char* begin;
  const char* end;   // content end: without "\n" or "\r\n"
  const char* next;  // start of the following line
};

Line next_line(const char* p, const char* text_end) {
  const void* found = std::memchr(p, '\n', static_cast<std::size_t>(text_end - p));
  const char* newline = found ? static_cast<const char*>(found) : text_end;
  const char* content_end = newline;
  if (content_end > p && content_end[-1] == '\r') --content_end;
  return {p, content_end, newline == text_end ? text_end : newline + 1};
}

std::size_t count_fields(const char* begin, const char* end) {
  std::size_t commas = 0;
  for (; begin < end; ++begin) commas += (*begin == ',');
  return commas + 1;
}

// A header name without surrounding spaces or double quotes, so that `"y"` matches y.
std::string header_name(const char* begin, const char* end) {
  while (begin < end && (*begin == ' ' || *begin == '\t')) ++begin;
  while (end > begin && (end[-1] == ' ' || end[-1] == '\t')) --end;
  if (end - begin >= 2 && *begin == '"' && end[-1] == '"') {
    ++begin;
    --end;
  }
  return std::string(begin, end);
}

[[noreturn]] void throw_cell_error(const std::string& path, std::size_t line, std::size_t column,
                                   NumberStatus status, const char* begin, const char* end) {
  std::string what = location(path, line, column);
  switch (status) {
    case NumberStatus::Empty:
      what += "empty cell (expected a number)";
      break;
    case NumberStatus::NotANumber:
      what += "non-numeric cell " + detail::quote_cell(begin, end);
      break;
    default:
      what += "non-finite value " + detail::quote_cell(begin, end);
      break;
  }
  throw InputError(what);
}

}  // namespace

namespace detail {

bool is_blank_line(const char* begin, const char* end) {
  for (; begin < end; ++begin) {
    if (*begin != ' ' && *begin != '\t' && *begin != '\r') return false;
  }
  return true;
}

CsvHeader parse_csv_header(const std::string& path, const char* begin, const char* end, const CsvOptions& options) {
  // Lines ending in a carriage return alone (classic Mac OS) make the whole file one line: say
  // so, rather than report a header of odd names and no data rows.
  if (const void* cr = std::memchr(begin, '\r', static_cast<std::size_t>(end - begin))) {
    const std::size_t column = count_fields(begin, static_cast<const char*>(cr));
    throw InputError(location(path, 1, column) + "a carriage return inside the header line: the file's lines end "
                     "in CR alone (classic Mac OS); convert its line endings to LF or CRLF");
  }
  CsvHeader header;
  std::vector<std::string>& names = header.names;
  for (const char* cell = begin;;) {
    const void* comma = std::memchr(cell, ',', static_cast<std::size_t>(end - cell));
    const char* cell_end = comma ? static_cast<const char*>(comma) : end;
    names.push_back(header_name(cell, cell_end));
    if (!comma) break;
    cell = cell_end + 1;
  }
  const std::size_t n_columns = names.size();
  // A first row of numbers is data, not names: reading it as a header would drop a sample and
  // name columns "0.5"; say so instead.
  {
    bool all_numbers = true;
    for (const std::string& name : names) {
      double v = 0.0;
      all_numbers = all_numbers && !name.empty() &&
                    detail::parse_double(name.data(), name.data() + name.size(), v) == NumberStatus::Ok;
    }
    if (all_numbers)
      throw InputError(location(path, 1, 1) + "the first row holds numbers, not column names: the file needs a "
                       "header row (names of the features, then the target)");
  }
  if (n_columns < 2) {
    throw InputError(location(path, 1, 1) +
                     "need at least 2 columns (features and a target), got " +
                     std::to_string(n_columns));
  }
  // Each column a name of its own: a model keeps its features' names and refuses a file whose
  // columns differ (predict, resume), which two columns of one name, or an unnamed one (a
  // spreadsheet's blank heading, a pandas index written without one), would let through.
  for (std::size_t j = 0; j < n_columns; ++j)
    if (names[j].empty())
      throw InputError(location(path, 1, j + 1) + "column " + std::to_string(j + 1) +
                       " has no name: give every column its own name" +
                       (j == 0 ? " (a row index written by pandas? write the file with to_csv(index=False), or "
                                 "name the column to learn from it)"
                               : ""));
  {
    std::unordered_map<std::string, std::size_t> first_of;
    first_of.reserve(n_columns);
    for (std::size_t j = 0; j < n_columns; ++j) {
      const auto [earlier, fresh] = first_of.emplace(names[j], j);
      if (fresh) continue;
      throw InputError(location(path, 1, j + 1) + "column " + std::to_string(j + 1) + " '" + printable(names[j]) +
                       "' repeats the name of column " + std::to_string(earlier->second + 1) +
                       ": give every column its own name");
    }
  }
  // A named column's index; the error names the file, the column and what the header has.
  const auto find_column = [&](const std::string& wanted, const char* role) {
    std::size_t found = n_columns;  // the names are distinct (above)
    for (std::size_t j = 0; j < n_columns && found == n_columns; ++j)
      if (names[j] == wanted) found = j;
    if (found == n_columns) {
      std::string known;
      for (std::size_t j = 0; j < n_columns; ++j) known += (j ? ", " : "") + names[j];
      throw InputError(location(path, 1, 1) + "unknown " + role + " column '" + printable(wanted) +
                       "' (header has: " + printable(known) + ")");
    }
    return found;
  };
  header.target = options.target_column.empty() ? n_columns - 1 : find_column(options.target_column, "target");
  const bool grouped = !options.group_column.empty();
  header.group = grouped ? find_column(options.group_column, "group") : n_columns;
  if (grouped && header.group == header.target)
    throw InputError(location(path, 1, header.group + 1) + "column '" + printable(names[header.group]) +
                     "' cannot be both the target and the group");
  if (grouped && n_columns < 3)
    throw InputError(location(path, 1, 1) + "need at least 3 columns (features, a group and a target), got " +
                     std::to_string(n_columns));
  return header;
}

CsvRowValues parse_csv_row(const std::string& path, std::size_t line_number, const CsvHeader& header,
                           const char* begin, const char* end, double* x, bool target_optional) {
  const std::size_t n_columns = header.n_columns();
  CsvRowValues values;
  std::size_t column = 0;
  for (const char* cell = begin;;) {
    const void* comma = std::memchr(cell, ',', static_cast<std::size_t>(end - cell));
    const char* cell_end = comma ? static_cast<const char*>(comma) : end;
    if (column == n_columns) {
      throw InputError(location(path, line_number, n_columns + 1) + "ragged row: expected " +
                       std::to_string(n_columns) + " fields, got " + std::to_string(count_fields(begin, end)));
    }
    double value = 0.0;
    const NumberStatus status = detail::parse_double(cell, cell_end, value);
    if (column == header.target && status == NumberStatus::Empty && target_optional) {
      values.has_target = false;  // a row to predict, not to learn from
    } else if (status != NumberStatus::Ok) {
      throw_cell_error(path, line_number, column + 1, status, cell, cell_end);
    } else if (column == header.target) {
      values.y = value;
    } else if (column == header.group) {
      // Group labels are small non-negative integers (site 0, 1, ...).
      if (!(value >= 0 && value <= 4294967295.0 && value == std::floor(value)))
        throw InputError(location(path, line_number, column + 1) + "group label '" +
                         printable(std::string(cell, cell_end)) +
                         (value >= 0 && value == std::floor(value) ? "' is too large (group labels are below 2^32)"
                                                                   : "' is not a non-negative integer"));
      values.group = static_cast<std::uint32_t>(value);
    } else {
      *x++ = value;
    }
    ++column;
    if (!comma) break;
    cell = cell_end + 1;
  }
  if (target_optional && column + 1 == n_columns && header.target == n_columns - 1) {
    values.has_target = false;  // the target column left out altogether
    return values;
  }
  if (column < n_columns) {
    throw InputError(location(path, line_number, column + 1) + "ragged row: expected " +
                     std::to_string(n_columns) + " fields, got " + std::to_string(column));
  }
  return values;
}

}  // namespace detail

Dataset load_csv(const std::string& path, const CsvOptions& options) {
  const std::string text = detail::read_whole_file(path);
  const char* p = text.data();
  const char* const text_end = p + text.size();
  p = detail::skip_byte_order_mark(p, text_end);
  {
    bool empty = true;
    for (const char* q = p; q < text_end && empty; ++q) {
      empty = (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n');
    }
    if (empty) throw InputError(path + ": empty file");
  }

  // ---- header -------------------------------------------------------------------------------
  const Line header_line = next_line(p, text_end);
  const detail::CsvHeader header = detail::parse_csv_header(path, header_line.begin, header_line.end, options);
  const std::size_t n_columns = header.n_columns();

  // ---- data rows: one pass over the buffer --------------------------------------------------
  Dataset data;
  data.name = detail::dataset_name_from_path(path);
  data.n_features = header.n_features();
  data.feature_names = header.feature_names();
  {
    const auto newlines = static_cast<std::size_t>(
        std::count(header_line.next, text_end, '\n'));  // upper bound on rows, minus at most one
    data.y.reserve(newlines + 1);
    data.x.reserve((newlines + 1) * data.n_features);
  }
  std::size_t line_number = 1;
  std::size_t first_blank_line = 0;  // a blank line is fine only if nothing follows it
  for (p = header_line.next; p < text_end;) {
    const Line line = next_line(p, text_end);
    p = line.next;
    ++line_number;
    if (detail::is_blank_line(line.begin, line.end)) {
      if (first_blank_line == 0) first_blank_line = line_number;
      continue;
    }
    if (first_blank_line != 0) {
      throw InputError(location(path, first_blank_line, 1) +
                       "blank line inside the data (expected " + std::to_string(n_columns) +
                       " fields)");
    }
    data.x.resize(data.x.size() + data.n_features);
    const detail::CsvRowValues values = detail::parse_csv_row(path, line_number, header, line.begin, line.end,
                                                              data.x.data() + data.x.size() - data.n_features);
    data.y.push_back(values.y);
    if (header.grouped()) data.groups.push_back(values.group);
  }
  if (data.y.empty()) throw InputError(path + ": no data rows");
  data.n_samples = data.y.size();
  data.task = detail::infer_task(data.y);
  return data;
}

void write_csv(const Dataset& data, const std::string& path) {
  if (data.y.size() != data.n_samples || data.x.size() != data.n_samples * data.n_features) {
    throw InputError(path + ": cannot write dataset '" + data.name + "': x has " +
                     std::to_string(data.x.size()) + " values and y " +
                     std::to_string(data.y.size()) + ", expected " +
                     std::to_string(data.n_samples) + " x " + std::to_string(data.n_features) +
                     " and " + std::to_string(data.n_samples));
  }
  // load_csv rejects non-finite cells, so writing them would produce an unreadable file.
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    for (std::size_t j = 0; j <= data.n_features; ++j) {
      const double v = j < data.n_features ? data.row(t)[j] : data.y[t];
      if (!std::isfinite(v)) {
        throw InputError(path + ": cannot write non-finite value at sample " +
                         std::to_string(t + 1) + ", column " + std::to_string(j + 1));
      }
    }
  }

  std::string out;
  out.reserve(data.n_samples * (data.n_features + 1) * 20 + 64);
  for (std::size_t j = 0; j < data.n_features; ++j) out += "x" + std::to_string(j + 1) + ",";
  out += "y\n";
  char number[32];
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    const double* row = data.row(t);
    for (std::size_t j = 0; j <= data.n_features; ++j) {
      const double v = j < data.n_features ? row[j] : data.y[t];
      const int length = std::snprintf(number, sizeof number, "%.17g", v);  // round-trips
      out.append(number, static_cast<std::size_t>(length));
      out += (j < data.n_features ? ',' : '\n');
    }
  }
  // Whole or not at all, as every result file (a device or pipe is written as it is).
  detail::write_file_atomic(path, out);
}

}  // namespace omkl
