/// @file resident_bandit.cu
/// @brief The resident bandit program on the GPU (resident_bandit.h): one launch of
/// kernels/resident_walk.cuh per block of rounds, the draws from cuRAND's Philox at the host
/// stream's positions.
#include "families/bandit/resident_bandit.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"

namespace omkl::detail {

struct BanditDeviceWalk::Impl {
  explicit Impl(cudaStream_t stream) : arena(stream) {}
  omkl::cuda::ResidentArena arena;
};

BanditDeviceWalk::BanditDeviceWalk(const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {}

BanditDeviceWalk::~BanditDeviceWalk() = default;

void BanditDeviceWalk::walk(const BanditTables& tables, BanditStateData& state, const DeviceLease& lease,
                            const ResidentWalkArgs<double>& shape, const double* x, const double* y,
                            double* predictions) {
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void*, void* device_state) {
                      return BanditProgram<omkl::cuda::CurandPhilox>{tables, state.view(device_state)};
                    });
}

}  // namespace omkl::detail
