/// @file wall_time.h
/// @brief add_wall_time(): the wall time of a piece of work added to a running total — the parts
/// of a run that a paper times apart (the graph family's offline construction, a federation's
/// server side).
#pragma once

#include <chrono>

namespace omkl::detail {

/// Runs `work()`, adds its wall time to `total` (also when it throws) and returns its result.
template <typename Work>
decltype(auto) add_wall_time(double& total, Work&& work) {
  struct Adder {
    double& total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Adder() { total += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); }
  } adder{total};
  return work();
}

}  // namespace omkl::detail
