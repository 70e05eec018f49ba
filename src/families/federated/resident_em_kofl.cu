/// @file resident_em_kofl.cu
/// @brief The resident eM-KOFL program on the GPU (resident_em_kofl.h): one launch of
/// kernels/resident_walk.cuh per block of samples, the server's draws from cuRAND's Philox at
/// the host stream's positions.
#include "families/federated/resident_em_kofl.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"

namespace omkl::detail {

struct EmKoflDeviceWalk::Impl {
  explicit Impl(cudaStream_t stream) : arena(stream) {}
  omkl::cuda::ResidentArena arena;
};

EmKoflDeviceWalk::EmKoflDeviceWalk(const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {}

EmKoflDeviceWalk::~EmKoflDeviceWalk() = default;

void EmKoflDeviceWalk::walk(const EmKoflTables& tables, EmKoflStateData& state, const DeviceLease& lease,
                            const ResidentWalkArgs<double>& shape, const double* x, const double* y,
                            double* predictions) {
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void*, void* device_state) {
                      return EmKoflProgram<omkl::cuda::CurandPhilox>{tables, state.view(device_state)};
                    });
}

}  // namespace omkl::detail
