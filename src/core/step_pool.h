/// @file step_pool.h
/// @brief A fixed set of worker threads for work that is split thousands of times per second:
/// the per-replicate host work of one step of a lockstep run (graph-aided sampling, weights and
/// refinement for every seed while the device waits). parallel_for() spawns threads per call,
/// which costs more than such a step.
///
/// Workers spin briefly for the next batch, then sleep on a condition variable, so an idle pool
/// costs nothing and a busy one answers in well under a microsecond. Items must be
/// independent; results then do not depend on the thread count.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace omkl::detail {

class StepPool {
 public:
  /// `threads` counts the calling thread: 1 (or 0) runs everything inline.
  explicit StepPool(std::size_t threads);
  ~StepPool();
  StepPool(const StepPool&) = delete;
  StepPool& operator=(const StepPool&) = delete;

  std::size_t size() const { return workers_.size() + 1; }

  /// fn(i) for every i in [0, n), spread over the threads; returns when all are done and
  /// rethrows the first exception an item threw. Not reentrant.
  void run(std::size_t n, const std::function<void(std::size_t)>& fn);

 private:
  void worker();
  void work_on_batch();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint64_t> ticket_{0};     // (generation, batch size, next index), see .cpp
  std::atomic<std::size_t> remaining_{0};    // items of the current batch not finished yet
  std::atomic<int> sleeping_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(std::size_t)>* fn_ = nullptr;
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

}  // namespace omkl::detail
