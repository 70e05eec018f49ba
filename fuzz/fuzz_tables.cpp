/// @file fuzz_tables.cpp
/// @brief libFuzzer target for the text tables a user gives in place of a built-in rule
/// (src/core/number_table.h): the graph family's rate tables (read_rate_table) and its
/// divergence matrix (read_divergence_table).
/// Input: one option byte, then the file. Bit 0 of the byte: 0 = a rate table, whose rates are
/// at most 1 when bit 1 is set (an exploration rate) and unbounded otherwise; 1 = a divergence
/// table of n = 1 + (byte >> 2) % 8 rows. Seeds start with '0' (rates), '2' (rates ≤ 1), '!'
/// (0x21: a 1 × 1 matrix) or '%' (0x25: n = 1 + 9 % 8 = 2).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "core/rate_table.h"
#include "families/graph_aided/divergence.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static omkl_fuzz::ScratchCleanup cleanup{omkl_fuzz::scratch_path("tables", ".txt")};
  const std::string& path = cleanup.path;
  const std::uint8_t option = data[0];
  omkl_fuzz::write_scratch(path, data + 1, size - 1);
  return omkl_fuzz::guarded([&] {
    if (option & 1) {
      const std::size_t n = 1 + (option >> 2) % 8;
      const omkl::detail::DivergenceMatrix delta = omkl::detail::read_divergence_table(path, n);
      // What a successful read promises (divergence.h): n × n finite numbers.
      if (delta.n != n || delta.values.size() != n * n) omkl_fuzz::fail("divergence table: shape");
      for (double v : delta.values)
        if (!std::isfinite(v)) omkl_fuzz::fail("divergence table: non-finite entry accepted");
      return;
    }
    const double max_rate = option & 2 ? 1.0 : std::numeric_limits<double>::infinity();
    const auto table = omkl::detail::read_rate_table(path, max_rate);
    // rate_table.h: at least one rate, each finite, > 0 and ≤ the bound; step t reads rates[t − 1].
    if (table->rates.empty()) omkl_fuzz::fail("rate table: accepted a table without rates");
    for (double v : table->rates)
      if (!std::isfinite(v) || !(v > 0) || v > max_rate) omkl_fuzz::fail("rate table: rate out of bounds accepted");
    if (table->at(1) != table->rates.front()) omkl_fuzz::fail("rate table: step 1 is not the first rate");
  });
}
