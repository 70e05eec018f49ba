/// @file window_advance.h
/// @brief The host side of a random-feature ensemble's block of steps (Raker, AdaRaker): the
/// backend advances every slot's trajectory over a window of rows, then each replicate's host
/// pass reads that window's predictions (and ‖θ‖²) row by row.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/parallel.h"
#include "features/rf_backend.h"

namespace omkl::detail {

/// Advances `backend` over rows [0, n) of x (d wide) and y in its preferred windows, from step
/// t + 1 (t is moved past each window), and after each window calls
/// each(r, row, t_row, f, norm2, scratch) for every replicate r and row of the window: rows in
/// order within a replicate, replicates split over threads (they are independent, so the
/// numbers do not depend on the thread count). f and norm2 point at the row's S slot values of
/// replicate r (norm2 null unless the backend's problem needs it); `scratch` is one Scratch per
/// thread. f_buffer and norm2_buffer are the caller's, kept between calls.
template <class Scratch, class Each>
void advance_in_windows(RfBackend& backend, const std::vector<SlotSchedule>& schedules, const double* x,
                        const double* y, std::size_t n, std::size_t d, std::size_t R, std::size_t S, std::int64_t& t,
                        std::vector<double>& f_buffer, std::vector<double>& norm2_buffer, Each&& each) {
  const bool need_norm2 = backend.problem().need_norm2;
  const std::size_t window = backend.preferred_window();
  for (std::size_t start = 0; start < n; start += window) {
    const std::size_t m = std::min(window, n - start);
    f_buffer.resize(m * R * S);
    norm2_buffer.resize(need_norm2 ? m * R * S : 0);
    backend.advance(x + start * d, y + start, m, t + 1, schedules, f_buffer.data(),
                    need_norm2 ? norm2_buffer.data() : nullptr);
    parallel_for(R, 0, [&](std::size_t r0, std::size_t r1) {
      Scratch scratch;
      for (std::size_t r = r0; r < r1; ++r)
        for (std::size_t i = 0; i < m; ++i) {
          const std::size_t at = (i * R + r) * S;
          each(r, start + i, t + 1 + static_cast<std::int64_t>(i), f_buffer.data() + at,
               need_norm2 ? norm2_buffer.data() + at : nullptr, scratch);
        }
    });
    t += static_cast<std::int64_t>(m);
  }
}

}  // namespace omkl::detail
