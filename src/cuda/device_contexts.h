/// @file device_contexts.h
/// @brief The definition of omkl::DeviceContexts (include/omkl/device_contexts.h) for the CUDA
/// sources: a ResourcePool of CudaContexts whose factory times each creation.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include "core/resource_pool.h"
#include "cuda/device_buffer.h"
#include "omkl/device_contexts.h"

namespace omkl {

class DeviceContexts {
 public:
  using Lease = detail::ResourcePool<cuda::CudaContext>::Lease;

  DeviceContexts()
      : pool_([this] {
          const auto start = std::chrono::steady_clock::now();
          auto context = std::make_unique<cuda::CudaContext>();
          context->synchronize();
          nanoseconds_ += std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
                              .count();
          return context;
        }) {}
  DeviceContexts(const DeviceContexts&) = delete;
  DeviceContexts& operator=(const DeviceContexts&) = delete;

  Lease acquire() { return pool_.acquire(); }
  double creation_seconds() const { return 1e-9 * static_cast<double>(nanoseconds_.load()); }

  /// A context from `contexts`, or one of its own where there is none.
  static Lease lease_from(DeviceContexts* contexts) {
    return contexts ? contexts->acquire() : Lease::own(std::make_unique<cuda::CudaContext>());
  }

 private:
  std::atomic<std::int64_t> nanoseconds_{0};
  detail::ResourcePool<cuda::CudaContext> pool_;
};

}  // namespace omkl
