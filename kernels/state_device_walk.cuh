/// @file state_device_walk.cuh
/// @brief The definitions of core/state_device_walk.h's StateDeviceWalk, for the .cu file of each
/// program that instantiates it (`template class StateDeviceWalk<…>;`).
#pragma once

#include "core/state_device_walk.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"

namespace omkl::detail {

template <template <typename> class Program, typename Tables, typename StateData>
struct StateDeviceWalk<Program, Tables, StateData>::Impl {
  explicit Impl(cudaStream_t stream) : arena(stream) {}
  omkl::cuda::ResidentArena arena;
};

template <template <typename> class Program, typename Tables, typename StateData>
StateDeviceWalk<Program, Tables, StateData>::StateDeviceWalk(const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {}

template <template <typename> class Program, typename Tables, typename StateData>
StateDeviceWalk<Program, Tables, StateData>::~StateDeviceWalk() = default;

template <template <typename> class Program, typename Tables, typename StateData>
void StateDeviceWalk<Program, Tables, StateData>::walk(const Tables& tables, StateData& state,
                                                       const DeviceLease& lease,
                                                       const ResidentWalkArgs<double>& shape, const double* x,
                                                       const double* y, double* predictions) {
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void*, void* device_state) {
                      return Program<omkl::cuda::CurandPhilox>{tables, state.view(device_state)};
                    });
}

}  // namespace omkl::detail
