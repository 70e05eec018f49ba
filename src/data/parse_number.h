/// @file parse_number.h
/// @brief Helpers shared by the text readers (CSV, LIBSVM): strict number parsing, whole-file
/// reads, error locations, dataset names and task inference. Defined in csv.cpp.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "omkl/types.h"

namespace omkl::detail {

/// Outcome of parsing one cell.
enum class NumberStatus { Ok, Empty, NotANumber, NonFinite };

/// Parses [begin, end) as one decimal double (strtod_decimal: C's hexadecimal floats are not
/// numbers here). Spaces and tabs around the number are
/// allowed; anything else left over makes the cell NotANumber. NaN, ±Inf and values that
/// overflow to ±Inf are NonFinite (the learners cannot use them, and a silent Inf would poison
/// every later prediction). Underflow to a subnormal or zero is accepted.
/// strtod follows LC_NUMERIC; the library never changes the locale, so this is "C" unless the
/// host program sets another one.
NumberStatus parse_double(const char* begin, const char* end, double& out);

/// `first`, or just past a UTF-8 byte-order mark at it (spreadsheet and editor exports): the mark
/// is not part of the first header name or label.
inline const char* skip_byte_order_mark(const char* first, const char* last) {
  return last - first >= 3 && first[0] == '\xEF' && first[1] == '\xBB' && first[2] == '\xBF' ? first + 3 : first;
}

/// Reads a whole file into memory (one read, no per-line streams). Throws InputError
/// "PATH: cannot open file (reason)" when the file is missing or unreadable.
std::string read_whole_file(const std::string& path);

/// "PATH:LINE:COLUMN: " — the prefix of every located InputError.
std::string location(const std::string& path, std::size_t line, std::size_t column);

/// The cell text for an error message: quoted, shortened when long, and printable().
std::string quote_cell(const char* begin, const char* end);

/// Text from a file made safe for an error message: control bytes (a NUL among them, which would
/// cut the message short) written as \xNN.
std::string printable(const std::string& text);

/// The file's base name without its extension ("data/airfoil.csv" -> "airfoil").
std::string dataset_name_from_path(const std::string& path);

/// Classification iff every target is exactly −1 or +1 (labels 0/1 stay Regression: the
/// readers never rewrite targets).
Task infer_task(const std::vector<double>& y);

}  // namespace omkl::detail
