/// @file resident_perfedavg.cu
/// @brief The resident PerFedAvg program on the GPU (resident_perfedavg.h): one launch of
/// kernels/resident_walk.cuh per block of samples, each replicate's network in one thread block.
#include "cuda/device_contexts.h"
#include "families/federated/resident_perfedavg.h"
#include "kernels/resident_walk.cuh"

namespace omkl::detail {

struct PerFedAvgDeviceWalk::Impl {
  explicit Impl(DeviceContexts* contexts)
      : context(DeviceContexts::lease_from(contexts)), arena(context->stream()) {
  }
  DeviceContexts::Lease context;  // no RfBackend to lend a stream: the network is the model
  omkl::cuda::ResidentArena arena;
  WalkLaunch launch = read_walk_switches();  // OMKL_CUDA_WALK_THREADS, …
};

PerFedAvgDeviceWalk::PerFedAvgDeviceWalk(DeviceContexts* contexts) : impl_(std::make_unique<Impl>(contexts)) {}

PerFedAvgDeviceWalk::~PerFedAvgDeviceWalk() = default;

void PerFedAvgDeviceWalk::walk(const PerFedAvgTables& tables, PerFedAvgStateData& state,
                               const ResidentWalkArgs<double>& shape, const double* x, const double* y,
                               double* predictions) {
  DeviceLease lease;  // no θ or frequencies
  lease.launch = impl_->launch;
  lease.stream = impl_->context->stream();
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void*, void* device_state) {
                      return PerFedAvgProgram{tables, state.view(device_state)};
                    });
}

}  // namespace omkl::detail
