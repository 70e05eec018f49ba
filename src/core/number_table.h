/// @file number_table.h
/// @brief The text tables users give the library in place of a built-in rule: a rate per step
/// (rate_table.h) or the graph family's divergence matrix (a row per line). Numbers separated by
/// whitespace or commas, `#` to the end of a line a comment; every number is read as the data
/// readers read theirs (data/parse_number.h), and every error names the file, line and column.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace omkl::detail {

/// One number of a table and where it stands.
struct TableCell {
  double value = 0.0;      ///< where `finite`
  bool finite = true;      ///< false: NaN, ±∞ or out of range (the caller decides whether to accept it)
  std::size_t line = 0;    ///< 1-based
  std::string where;       ///< "PATH:LINE:COLUMN: "
  std::string text;        ///< the cell as written
};

/// Calls `visit` for every number of the file at `path`, in order. An InputError names a file
/// that cannot be read (as "`what` 'PATH'"), or the line and column of a cell that is no number,
/// with `hint` (what the table should hold) in parentheses.
void read_table_cells(const std::string& path, const std::string& what, const std::string& hint,
                      const std::function<void(const TableCell&)>& visit);

}  // namespace omkl::detail
