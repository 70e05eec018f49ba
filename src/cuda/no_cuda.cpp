/// @file no_cuda.cpp
/// @brief The CUDA entry points in a build without CUDA (OMKL_ENABLE_CUDA off or no nvcc), as
/// src/mpi/no_mpi.cpp is MPI's: no device is ever available, and whatever would need one throws
/// the CudaError that names the build. With these, the families and the backend factory hold no
/// `#if OMKL_WITH_CUDA` (STYLE.md): which file is compiled is CMake's choice alone.
///
/// Nothing here runs on a CPU build's normal paths: a device walk is made only after a backend
/// lent device memory (RfBackend::device_lease()) or require_cuda_device() passed, and neither
/// happens without CUDA. The throws are for a library caller who asks for the GPU anyway.
#include <memory>
#include <string>

#include "core/state_device_walk.h"
#include "families/bandit/resident_bandit.h"
#include "families/bandit/resident_support.h"
#include "families/federated/resident_em_kofl.h"
#include "families/federated/resident_federation.h"
#include "families/federated/resident_perfedavg.h"
#include "families/graph_aided/resident_graph.h"
#include "features/rf_backend.h"
#include "omkl/device_contexts.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {
[[noreturn]] void no_cuda() {
  throw CudaError("backend cuda (BackendKind::Cuda, --backend cuda): this omkl build has no CUDA backend (configure "
                  "with -DOMKL_ENABLE_CUDA=ON)");
}
}  // namespace

namespace cuda {
bool device_available() { return false; }
std::string device_description() { return "cuda"; }
void require_device() { no_cuda(); }
std::unique_ptr<RfBackend> make_cuda_rf_backend(const RfProblem&, DeviceContexts*) { no_cuda(); }
std::shared_ptr<DeviceContexts> make_device_contexts(double*) { no_cuda(); }
double device_context_seconds(const DeviceContexts&) { return 0.0; }
}  // namespace cuda

// The device walks: each constructor throws, so no other member is ever called.
struct GraphDeviceWalk::Impl {};
GraphDeviceWalk::GraphDeviceWalk(const GraphTableData&, const DeviceLease&) { no_cuda(); }
GraphDeviceWalk::~GraphDeviceWalk() = default;
void GraphDeviceWalk::walk(GraphStateData&, const DeviceLease&, const ResidentWalkArgs<double>&, const double*,
                           const double*, double*) {
  no_cuda();
}

struct KernelBanditDeviceWalk::Impl {};
KernelBanditDeviceWalk::KernelBanditDeviceWalk(DeviceContexts*) { no_cuda(); }
KernelBanditDeviceWalk::~KernelBanditDeviceWalk() = default;
void KernelBanditDeviceWalk::upload(const std::vector<std::uint64_t>&) { no_cuda(); }
void KernelBanditDeviceWalk::read(std::size_t, std::size_t, void*) const { no_cuda(); }
void KernelBanditDeviceWalk::walk(const BanditTables&, const SupportTables&, const SupportLayout&, BanditStateData&,
                                  const ResidentWalkArgs<double>&, const double*, const double*, double*) {
  no_cuda();
}

struct FederationDeviceWalk::Impl {};
FederationDeviceWalk::FederationDeviceWalk(const std::vector<StreamPosition>&, const DeviceLease&) { no_cuda(); }
FederationDeviceWalk::~FederationDeviceWalk() = default;
void FederationDeviceWalk::walk(const FederationTables&, FederationStateData&, const DeviceLease&,
                                const RoundWalkArgs<double>&, const double*, const double*, double*) {
  no_cuda();
}

struct PerFedAvgDeviceWalk::Impl {};
PerFedAvgDeviceWalk::PerFedAvgDeviceWalk(DeviceContexts*) { no_cuda(); }
PerFedAvgDeviceWalk::~PerFedAvgDeviceWalk() = default;
void PerFedAvgDeviceWalk::walk(const PerFedAvgTables&, PerFedAvgStateData&, const ResidentWalkArgs<double>&,
                               const double*, const double*, double*) {
  no_cuda();
}

template <template <typename> class Program, typename Tables, typename StateData>
struct StateDeviceWalk<Program, Tables, StateData>::Impl {};
template <template <typename> class Program, typename Tables, typename StateData>
StateDeviceWalk<Program, Tables, StateData>::StateDeviceWalk(const DeviceLease&) {
  no_cuda();
}
template <template <typename> class Program, typename Tables, typename StateData>
StateDeviceWalk<Program, Tables, StateData>::~StateDeviceWalk() = default;
template <template <typename> class Program, typename Tables, typename StateData>
void StateDeviceWalk<Program, Tables, StateData>::walk(const Tables&, StateData&, const DeviceLease&,
                                                       const ResidentWalkArgs<double>&, const double*, const double*,
                                                       double*) {
  no_cuda();
}
template class StateDeviceWalk<BanditProgram, BanditTables, BanditStateData>;
template class StateDeviceWalk<EmKoflProgram, EmKoflTables, EmKoflStateData>;

}  // namespace omkl::detail
