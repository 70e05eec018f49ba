/// @file rate_table.h
/// @brief A step size given as a table (graph spec §1.6: the library takes arbitrary tables for
/// η_t, ξ_t and η_{e,t}): the rates of steps 1, 2, … read from a text file, so that any schedule
/// a user can compute (a callable tabulated over the stream) runs without a build of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace omkl::detail {

struct RateTable {
  std::string path;
  std::vector<double> rates;  ///< rates[t − 1] is step t's

  /// Step t's rate (t ≥ 1); an InputError naming the file past its last entry.
  double at(std::int64_t t) const;
};

/// Reads a rate table: numbers separated by whitespace or commas, `#` to the end of a line a
/// comment. An InputError names the file (missing or unreadable), or its line and column: a
/// cell that is no number, a rate that is not finite, ≤ 0 or above `max_rate`; or an empty file.
std::shared_ptr<const RateTable> read_rate_table(const std::string& path, double max_rate);

}  // namespace omkl::detail
