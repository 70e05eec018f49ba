/// @file local_communicator.h
/// @brief Communicators for P "processes" that are threads of one test: the multi-process paths
/// of the study and the federated protocol run in every CI build, with or without MPI, and under
/// the sanitizers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "omkl/communicator.h"
#include "omkl/error.h"

namespace omkl::test {

/// Thrown on every thread when one of them calls abort().
struct Aborted : std::runtime_error {
  explicit Aborted(int code) : std::runtime_error("aborted with " + std::to_string(code)) {}
};

class LocalHub {
 public:
  void post(int from, int to, int tag, std::string bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      boxes_[{from, to, tag}].push_back(std::move(bytes));
    }
    ready_.notify_all();
  }
  std::string take(int from, int to, int tag, double timeout_s) {
    std::unique_lock<std::mutex> lock(mutex_);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s > 0 ? timeout_s : 1e9);
    auto& box = boxes_[{from, to, tag}];
    while (box.empty()) {
      if (aborted_) throw Aborted(code_);
      if (ready_.wait_until(lock, deadline) == std::cv_status::timeout && box.empty()) {
        if (aborted_) throw Aborted(code_);
        throw Error("no message from rank " + std::to_string(from) + " within " + std::to_string(timeout_s) + " s");
      }
    }
    std::string bytes = std::move(box.front());
    box.pop_front();
    return bytes;
  }
  void abort(int code) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
      code_ = code;
    }
    ready_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  std::map<std::tuple<int, int, int>, std::deque<std::string>> boxes_;
  bool aborted_ = false;
  int code_ = 0;
};

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<LocalHub> hub, int rank, int size) : hub_(std::move(hub)), rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void send(int to, int tag, const std::string& bytes) override { hub_->post(rank_, to, tag, bytes); }
  std::string receive(int from, int tag, double timeout_s) override { return hub_->take(from, rank_, tag, timeout_s); }
  [[noreturn]] void abort(int code) override {
    hub_->abort(code);
    throw Aborted(code);
  }

 private:
  std::shared_ptr<LocalHub> hub_;
  int rank_, size_;
};

/// Runs body(communicator) on `size` threads, one rank each; a rank that throws aborts the
/// others (as an MPI launcher would). Returns each rank's exception message ("" when it ended
/// normally).
inline std::vector<std::string> run_ranks(int size, const std::function<void(Communicator&)>& body) {
  auto hub = std::make_shared<LocalHub>();
  std::vector<std::string> errors(static_cast<std::size_t>(size));
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      LocalCommunicator comm(hub, r, size);
      try {
        body(comm);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
        hub->abort(1);
      }
    });
  for (auto& t : threads) t.join();
  return errors;
}

}  // namespace omkl::test
