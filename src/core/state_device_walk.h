/// @file state_device_walk.h
/// @brief A resident program on the GPU whose tables travel in the program itself and whose
/// replicates' state is one arena (core/resident_walk.h's ByteArena): the state uploaded before
/// and read back after each walk, θ and V a CUDA RfBackend's (DeviceLease), one launch of
/// kernels/resident_walk.cuh per block of steps, the draws from cuRAND's Philox at the host
/// streams' positions. The random-feature bandit walk and eM-KOFL's are this class over their
/// programs; the definitions are in kernels/state_device_walk.cuh, instantiated by each
/// program's .cu file (in a build without CUDA, by src/cuda/no_cuda.cpp, whose constructor
/// throws).
#pragma once

#include <memory>

#include "core/resident_walk.h"
#include "features/rf_backend.h"

namespace omkl::detail {

/// `Program<Philox>{tables, state.view(device state)}` is the program the kernel runs; StateData
/// has data(), size_bytes() and view(base).
template <template <typename> class Program, typename Tables, typename StateData>
class StateDeviceWalk {
 public:
  /// The walks' copies on the lease's stream.
  explicit StateDeviceWalk(const DeviceLease& lease);
  ~StateDeviceWalk();
  StateDeviceWalk(const StateDeviceWalk&) = delete;
  StateDeviceWalk& operator=(const StateDeviceWalk&) = delete;
  /// Walks shape.n_steps samples (x, y and predictions on the host) for every replicate.
  void walk(const Tables& tables, StateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape,
            const double* x, const double* y, double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace omkl::detail
