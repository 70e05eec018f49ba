/// @file host_team.h
/// @brief A team (resident_team.h) of host threads in lockstep: what a GPU block's threads do
/// with a team program's plan() and learn(), run where there is no GPU, so that the program's
/// sharing of its loops (which lane writes what, where it waits) is tested on any machine — a
/// missing barrier shows as a race under ThreadSanitizer or as numbers that are not the serial
/// reading's. A check, not a fast path: a step costs a few barriers of the host's threads.
/// OMKL_HOST_WALK_LANES=N (default 1) makes the host driver of a resident walk
/// (resident_walk.h's walk_on_host()) run team programs on N lanes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/env_switch.h"
#include "core/resident_team.h"
#include "omkl/error.h"

namespace omkl::detail {

/// Reusable barrier of `count` threads (C++17 has no std::barrier).
class HostBarrier {
 public:
  explicit HostBarrier(unsigned count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const std::uint64_t generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable released_;
  unsigned count_, waiting_ = 0;
  std::uint64_t generation_ = 0;
};

/// One lane of a host team.
class HostTeam {
 public:
  static constexpr bool kTreeSums = true;
  /// `slots`: 2 × kTeamShareWords words shared by the lanes; `staging`: kMaxTeamStage entries.
  HostTeam(unsigned lane, unsigned size, HostBarrier& barrier, std::uint64_t* slots, double* staging)
      : lane_(lane), size_(size), barrier_(&barrier), slots_(slots), staging_(staging) {}
  unsigned lane() const { return lane_; }
  unsigned size() const { return size_; }
  bool leader() const { return lane_ == 0; }
  void sync() { barrier_->arrive_and_wait(); }
  template <typename T>
  T share(T v) {
    static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= sizeof(std::uint64_t) * kTeamShareWords,
                  "share() hands out a value of at most kTeamShareWords words");
    std::uint64_t* slot = slots_ + (shares_++ & 1u) * kTeamShareWords;  // alternating: one barrier
    if (leader()) std::memcpy(slot, &v, sizeof(T));
    sync();
    std::memcpy(&v, slot, sizeof(T));
    return v;
  }
  /// As the GPU block: the lanes copy v[0..n) into the team's one staging buffer between two
  /// barriers, so that a program that read a copy after the next stage() (or staged more than
  /// kMaxTeamStage entries) fails here too.
  const double* stage(const double* v, std::size_t n) {
    if (n > kMaxTeamStage) {
      std::fprintf(stderr, "omkl: a team program staged %zu entries (at most %zu)\n", n, kMaxTeamStage);
      std::abort();  // a lane cannot throw: the others would wait at the barrier
    }
    sync();
    for (std::size_t i = lane_; i < n; i += size_) staging_[i] = v[i];
    sync();
    return staging_;
  }
  /// The tree-order reductions by the leader, handed out as share() does.
  template <typename ValueOf>
  double tree_sum(std::size_t n, ValueOf&& value_of) {
    return share(leader() ? tree_order_sum(n, value_of) : 0.0);
  }
  template <typename ValueOf>
  double tree_max(std::size_t n, ValueOf&& value_of) {
    return share(leader() ? tree_order_max(n, value_of) : 0.0);
  }
  std::size_t tree_draw(const double* p, std::size_t n, double r, bool shifted) {
    return share(leader() ? tree_order_draw(p, n, r, shifted) : std::size_t{0});
  }

 private:
  unsigned lane_, size_;
  HostBarrier* barrier_;
  std::uint64_t* slots_;
  unsigned shares_ = 0;
  double* staging_;
};

/// `lanes` − 1 threads kept for the runner's life; run(fn) calls fn(team) on every lane (lane 0
/// on the calling thread) and returns when all are done. fn must not throw: a lane that left by
/// an exception would leave the others at a barrier (so an exception ends the process).
class HostTeamRunner {
 public:
  explicit HostTeamRunner(unsigned lanes) : lanes_(lanes), start_(lanes), done_(lanes), team_(lanes) {
    for (unsigned lane = 1; lane < lanes; ++lane) workers_.emplace_back([this, lane] { work(lane); });
  }
  ~HostTeamRunner() {
    stop_ = true;
    start_.arrive_and_wait();
    for (std::thread& worker : workers_) worker.join();
  }
  HostTeamRunner(const HostTeamRunner&) = delete;
  HostTeamRunner& operator=(const HostTeamRunner&) = delete;

  /// run() of fn(team) → a value: the leader's.
  template <typename Fn>
  auto leaders_result(Fn&& fn) {
    decltype(fn(std::declval<HostTeam&>())) result{};
    auto lane = [&](HostTeam& team) {
      auto value = fn(team);
      if (team.leader()) result = value;
    };
    run(lane);
    return result;
  }

  template <typename Fn>
  void run(Fn& fn) {
    job_ = [&fn](HostTeam& team) noexcept { fn(team); };
    start_.arrive_and_wait();
    HostTeam team(0, lanes_, team_, slots_, staging_);
    job_(team);
    done_.arrive_and_wait();
  }

 private:
  void work(unsigned lane) {
    for (;;) {
      start_.arrive_and_wait();
      if (stop_) return;
      HostTeam team(lane, lanes_, team_, slots_, staging_);
      job_(team);
      done_.arrive_and_wait();
    }
  }

  unsigned lanes_;
  HostBarrier start_, done_, team_;
  std::uint64_t slots_[2 * kTeamShareWords] = {};
  double staging_[kMaxTeamStage] = {};
  std::function<void(HostTeam&)> job_;
  bool stop_ = false;  // written before start_, read after it: the barrier's mutex orders it
  std::vector<std::thread> workers_;
};

/// OMKL_HOST_WALK_LANES: the lanes the host driver gives a team program (1 to 128; default 1).
inline unsigned host_walk_lanes() { return path_switch_count("OMKL_HOST_WALK_LANES"); }

}  // namespace omkl::detail
