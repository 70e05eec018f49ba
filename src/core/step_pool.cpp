#include "core/step_pool.h"

#include <chrono>
#include <stdexcept>

namespace omkl::detail {

namespace {
// How long an idle worker spins before it sleeps: long enough to span the device round trip
// between two host phases of a step, short enough not to burn a core between runs.
constexpr auto kSpin = std::chrono::microseconds(200);

// The ticket packs (generation, batch size, next index) so that one compare-and-swap both
// claims an item and proves the claim belongs to the batch being run: a worker that wakes up
// late can never take an item of a batch it did not see published.
constexpr int kIndexBits = 24, kSizeBits = 24;
constexpr std::uint64_t kIndexMask = (std::uint64_t{1} << kIndexBits) - 1;
constexpr std::uint64_t kSizeMask = (std::uint64_t{1} << kSizeBits) - 1;

inline std::uint64_t ticket_index(std::uint64_t t) { return t & kIndexMask; }
inline std::uint64_t ticket_size(std::uint64_t t) { return (t >> kIndexBits) & kSizeMask; }

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}
}  // namespace

StepPool::StepPool(std::size_t threads) {
  for (std::size_t k = 1; k < threads; ++k) workers_.emplace_back([this] { worker(); });
}

StepPool::~StepPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void StepPool::work_on_batch() {
  std::uint64_t t = ticket_.load(std::memory_order_acquire);
  while (ticket_index(t) < ticket_size(t)) {
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The claim is this batch's: fn_ cannot change before remaining_ reaches 0, which needs
    // this item done.
    try {
      (*fn_)(static_cast<std::size_t>(ticket_index(t)));
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    remaining_.fetch_sub(1, std::memory_order_acq_rel);
    t = ticket_.load(std::memory_order_acquire);
  }
}

void StepPool::worker() {
  std::uint64_t seen = 0;
  for (;;) {
    // Spin for the next batch, then sleep until run() or the destructor wakes us.
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    std::uint64_t g = generation_.load(std::memory_order_acquire);
    while (g == seen && !stop_.load(std::memory_order_acquire)) {
      if (std::chrono::steady_clock::now() > spin_until) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleeping_.fetch_add(1, std::memory_order_acq_rel);
        wake_.wait(lock, [&] {
          return generation_.load(std::memory_order_acquire) != seen || stop_.load(std::memory_order_acquire);
        });
        sleeping_.fetch_sub(1, std::memory_order_acq_rel);
      } else {
        cpu_relax();
      }
      g = generation_.load(std::memory_order_acquire);
    }
    if (stop_.load(std::memory_order_acquire)) return;
    seen = g;
    work_on_batch();
  }
}

void StepPool::run(std::size_t n, const std::function<void(std::size_t)>& fn) {
  if (workers_.empty() || n <= 1) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  if (n > kSizeMask) throw std::length_error("StepPool::run: too many items in one batch");
  fn_ = &fn;
  error_ = nullptr;
  remaining_.store(n, std::memory_order_relaxed);
  const std::uint64_t g = generation_.load(std::memory_order_relaxed) + 1;
  {
    // Under the mutex, so that a worker between its predicate check and its wait cannot miss it.
    std::lock_guard<std::mutex> lock(mutex_);
    ticket_.store(((g & 0xffff) << (kIndexBits + kSizeBits)) | (static_cast<std::uint64_t>(n) << kIndexBits),
                  std::memory_order_release);
    generation_.store(g, std::memory_order_release);
  }
  if (sleeping_.load(std::memory_order_acquire) > 0) wake_.notify_all();
  work_on_batch();
  while (remaining_.load(std::memory_order_acquire) != 0) cpu_relax();
  if (error_) std::rethrow_exception(error_);
}

}  // namespace omkl::detail
