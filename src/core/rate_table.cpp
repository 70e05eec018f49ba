/// @file rate_table.cpp
/// @brief read_rate_table() and RateTable::at() (rate_table.h).
#include "core/rate_table.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "data/parse_number.h"
#include "omkl/error.h"

namespace omkl::detail {

double RateTable::at(std::int64_t t) const {
  if (t < 1 || static_cast<std::uint64_t>(t) > rates.size())
    throw InputError("rate table '" + path + "' has " + std::to_string(rates.size()) + " rates; step " +
                     std::to_string(t) + " needs its own");
  return rates[static_cast<std::size_t>(t - 1)];
}

std::shared_ptr<const RateTable> read_rate_table(const std::string& path, double max_rate) {
  std::ifstream in(path);
  if (!in) throw InputError("rate table '" + path + "': cannot open the file");
  auto table = std::make_shared<RateTable>();
  table->path = path;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    const std::size_t comment = line.find('#');
    if (comment != std::string::npos) line.resize(comment);
    std::size_t pos = 0;
    while (pos < line.size()) {
      const char ch = line[pos];
      if (ch == ',' || ch == ' ' || ch == '\t' || ch == '\r') {
        ++pos;
        continue;
      }
      std::size_t end = pos;
      while (end < line.size() && line[end] != ',' && line[end] != ' ' && line[end] != '\t' && line[end] != '\r')
        ++end;
      const char* cell = line.data() + pos;
      const char* cell_end = line.data() + end;
      const std::string where = location(path, line_no, pos + 1);
      double rate = 0.0;
      const NumberStatus status = parse_double(cell, cell_end, rate);  // the data readers' rule
      if (status == NumberStatus::NotANumber)
        throw InputError(where + quote_cell(cell, cell_end) +
                         " is not a number (a rate table lists one rate per step)");
      if (status != NumberStatus::Ok || !(rate > 0) || rate > max_rate) {
        std::ostringstream bound;
        bound << max_rate;
        throw InputError(where + "rate " + std::string(cell, cell_end) + " must be finite, > 0" +
                         (std::isfinite(max_rate) ? " and ≤ " + bound.str() : std::string()));
      }
      table->rates.push_back(rate);
      pos = end;
    }
  }
  if (in.bad()) throw InputError("rate table '" + path + "': read error");
  if (table->rates.empty()) throw InputError("rate table '" + path + "' lists no rate");
  return table;
}

}  // namespace omkl::detail
