/// @file resident_em_kofl.cu
/// @brief The resident eM-KOFL program on the GPU (resident_em_kofl.h): one launch of
/// kernels/resident_walk.cuh per block of samples, the server's draws from cuRAND's Philox at
/// the host stream's positions.
#include "families/federated/resident_em_kofl.h"
#include "kernels/state_device_walk.cuh"

namespace omkl::detail {

template class StateDeviceWalk<EmKoflProgram, EmKoflTables, EmKoflStateData>;

}  // namespace omkl::detail
