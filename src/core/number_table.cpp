/// @file number_table.cpp
/// @brief read_table_cells() (number_table.h).
#include "core/number_table.h"

#include <fstream>

#include "data/parse_number.h"
#include "omkl/error.h"

namespace omkl::detail {

void read_table_cells(const std::string& path, const std::string& what, const std::string& hint,
                      const std::function<void(const TableCell&)>& visit) {
  std::ifstream in(path);
  if (!in) throw InputError(what + " '" + path + "': cannot open the file");
  const auto separator = [](char ch) { return ch == ',' || ch == ' ' || ch == '\t' || ch == '\r'; };
  std::string line;
  TableCell cell;
  while (std::getline(in, line)) {
    ++cell.line;
    const std::size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    std::size_t pos = 0;
    while (pos < line.size()) {
      if (separator(line[pos])) {
        ++pos;
        continue;
      }
      std::size_t end = pos;
      while (end < line.size() && !separator(line[end])) ++end;
      const char* first = line.data() + pos;
      const char* last = line.data() + end;
      cell.where = location(path, cell.line, pos + 1);
      cell.text.assign(first, last);
      const NumberStatus status = parse_double(first, last, cell.value);  // the data readers' rule
      if (status == NumberStatus::NotANumber)
        throw InputError(cell.where + quote_cell(first, last) + " is not a number (" + hint + ")");
      cell.finite = status == NumberStatus::Ok;
      visit(cell);
      pos = end;
    }
  }
  if (in.bad()) throw InputError(what + " '" + path + "': read error");
}

}  // namespace omkl::detail
