/// @file resource_pool.h
/// @brief Objects that are costly to create, kept for reuse: a GPU stream with its cuBLAS handle
/// (DeviceContexts) is made once per study thread instead of once per backend. acquire() hands
/// out a free object, or one made by the factory when none is free; the lease gives it back
/// when it ends. Thread-safe; a lease may outlive its pool (the object is then destroyed).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace omkl::detail {

template <typename T>
class ResourcePool {
  struct Core {
    std::function<std::unique_ptr<T>()> make;
    std::mutex mutex;
    std::vector<std::unique_ptr<T>> idle;
    std::size_t created = 0;
  };

 public:
  /// One object, held until the lease ends and then given back to its pool (or destroyed,
  /// for an object the lease owns alone: own()).
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept = default;
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        release();
        object_ = std::move(other.object_);
        core_ = std::move(other.core_);
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { release(); }

    /// A lease of an object that belongs to no pool.
    static Lease own(std::unique_ptr<T> object) { return Lease(std::move(object), nullptr); }

    T* get() const { return object_.get(); }
    T& operator*() const { return *object_; }
    T* operator->() const { return object_.get(); }
    explicit operator bool() const { return static_cast<bool>(object_); }

   private:
    friend class ResourcePool;
    Lease(std::unique_ptr<T> object, std::shared_ptr<Core> core) : object_(std::move(object)), core_(std::move(core)) {}
    void release() noexcept {
      if (object_ && core_) {
        std::lock_guard<std::mutex> lock(core_->mutex);
        core_->idle.push_back(std::move(object_));
      }
      object_.reset();
      core_.reset();
    }
    std::unique_ptr<T> object_;
    std::shared_ptr<Core> core_;
  };

  explicit ResourcePool(std::function<std::unique_ptr<T>()> make) : core_(std::make_shared<Core>()) {
    core_->make = std::move(make);
  }

  /// A free object, or a new one (the factory runs outside the pool's lock).
  Lease acquire() {
    {
      std::lock_guard<std::mutex> lock(core_->mutex);
      if (!core_->idle.empty()) {
        std::unique_ptr<T> object = std::move(core_->idle.back());
        core_->idle.pop_back();
        return Lease(std::move(object), core_);
      }
    }
    std::unique_ptr<T> object = core_->make();
    std::lock_guard<std::mutex> lock(core_->mutex);
    ++core_->created;
    return Lease(std::move(object), core_);
  }

  /// Objects made so far, and those waiting for a lease.
  std::size_t created() const {
    std::lock_guard<std::mutex> lock(core_->mutex);
    return core_->created;
  }
  std::size_t idle() const {
    std::lock_guard<std::mutex> lock(core_->mutex);
    return core_->idle.size();
  }

 private:
  std::shared_ptr<Core> core_;
};

}  // namespace omkl::detail
