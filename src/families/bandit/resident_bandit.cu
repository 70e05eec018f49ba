/// @file resident_bandit.cu
/// @brief The resident bandit program on the GPU (resident_bandit.h): one launch of
/// kernels/resident_walk.cuh per block of rounds, the draws from cuRAND's Philox at the host
/// stream's positions.
#include "families/bandit/resident_bandit.h"
#include "families/bandit/resident_support.h"
#include "cuda/device_contexts.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"
#include "kernels/state_device_walk.cuh"

namespace omkl::detail {

template class StateDeviceWalk<BanditProgram, BanditTables, BanditStateData>;

struct KernelBanditDeviceWalk::Impl {
  explicit Impl(DeviceContexts* contexts)
      : context(DeviceContexts::lease_from(contexts)), arena(context->stream()) {
    pool.set_stream(context->stream());
  }
  DeviceContexts::Lease context;  // the kernel expansions have no RfBackend to lend a stream
  omkl::cuda::ResidentArena arena;
  omkl::cuda::DeviceBuffer<std::uint64_t> pool;
  WalkLaunch launch = read_walk_switches();  // OMKL_CUDA_WALK_THREADS, …
};

KernelBanditDeviceWalk::KernelBanditDeviceWalk(DeviceContexts* contexts) : impl_(std::make_unique<Impl>(contexts)) {}

KernelBanditDeviceWalk::~KernelBanditDeviceWalk() = default;

void KernelBanditDeviceWalk::upload(const std::vector<std::uint64_t>& words) {
  impl_->pool.resize(words.size());
  if (!words.empty()) impl_->pool.copy_from_host(words.data(), words.size());
  impl_->context->synchronize();
}

void KernelBanditDeviceWalk::read(std::size_t offset, std::size_t bytes, void* dst) const {
  if (bytes == 0) return;
  const auto* base = reinterpret_cast<const unsigned char*>(impl_->pool.data());
  OMKL_CUDA_CHECK(cudaMemcpyAsync(dst, base + offset, bytes, cudaMemcpyDeviceToHost, impl_->context->stream()));
  impl_->context->synchronize();
}

void KernelBanditDeviceWalk::walk(const BanditTables& bandit, const SupportTables& tables, const SupportLayout& layout,
                                  BanditStateData& state, const ResidentWalkArgs<double>& shape, const double* x,
                                  const double* y, double* predictions) {
  DeviceLease lease;  // no θ or frequencies: the program evaluates its sets itself
  lease.launch = impl_->launch;
  lease.stream = impl_->context->stream();
  const SupportArrays arrays = layout.view(impl_->pool.data());
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void*, void* device_state) {
                      return KernelBanditProgram<omkl::cuda::CurandPhilox>{
                          BanditProgram<omkl::cuda::CurandPhilox>{bandit, state.view(device_state)}, tables, arrays};
                    });
}

}  // namespace omkl::detail
