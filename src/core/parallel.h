/// @file parallel.h
/// @brief parallel_for over independent items (replicates) with plain std::threads.
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

namespace omkl::detail {

/// Calls fn(begin, end) on contiguous chunks of [0, n) from up to `max_threads` threads
/// (0 = hardware threads). Items must be independent; the result then does not depend on the
/// thread count. Runs inline when one thread suffices. Rethrows the first exception.
template <typename Fn>
void parallel_for(std::size_t n, std::size_t max_threads, Fn&& fn) {
  std::size_t threads = max_threads ? max_threads : std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, n);
  if (threads <= 1) {
    if (n) fn(std::size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(threads);
  const std::size_t chunk = (n + threads - 1) / threads;
  for (std::size_t k = 0; k < threads; ++k) {
    const std::size_t begin = k * chunk, end = std::min(n, begin + chunk);
    if (begin >= end) break;
    pool.emplace_back([&, k, begin, end] {
      try {
        fn(begin, end);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  }
  for (auto& th : pool) th.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace omkl::detail
