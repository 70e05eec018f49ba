/// @file rate_table.cpp
/// @brief read_rate_table() and RateTable::at() (rate_table.h).
#include "core/rate_table.h"

#include <cmath>
#include <sstream>

#include "core/number_table.h"
#include "omkl/error.h"

namespace omkl::detail {

double RateTable::at(std::int64_t t) const {
  if (t < 1 || static_cast<std::uint64_t>(t) > rates.size())
    throw InputError("rate table '" + path + "' has " + std::to_string(rates.size()) + " rates; step " +
                     std::to_string(t) + " needs its own");
  return rates[static_cast<std::size_t>(t - 1)];
}

std::shared_ptr<const RateTable> read_rate_table(const std::string& path, double max_rate) {
  auto table = std::make_shared<RateTable>();
  table->path = path;
  read_table_cells(path, "rate table", "a rate table lists one rate per step", [&](const TableCell& cell) {
    if (!cell.finite || !(cell.value > 0) || cell.value > max_rate) {
      std::ostringstream bound;
      bound << max_rate;
      throw InputError(cell.where + "rate " + cell.text + " must be finite, > 0" +
                       (std::isfinite(max_rate) ? " and ≤ " + bound.str() : std::string()));
    }
    table->rates.push_back(cell.value);
  });
  if (table->rates.empty()) throw InputError("rate table '" + path + "' lists no rate");
  return table;
}

}  // namespace omkl::detail
