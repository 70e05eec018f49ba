/// @file resident_graph.cu
/// @brief The resident graph-aided program on the GPU (resident_graph.h): its tables uploaded
/// once, the replicates' state (one arena) uploaded before and read back after each walk, one
/// launch of kernels/resident_walk.cuh per block of samples, the random draws from cuRAND's
/// Philox at the host stream's positions.
#include <string>
#include <vector>

#include "cuda/device_buffer.h"
#include "families/graph_aided/resident_graph.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"
#include "omkl/error.h"

namespace omkl::detail {

using omkl::cuda::DeviceBuffer;

struct GraphDeviceWalk::Impl {
  explicit Impl(cudaStream_t s) : stream(s) {
    for (auto* b : {&tables, &state}) b->set_stream(stream);
    for (auto* b : {&y, &predictions, &x_double, &z_double}) b->set_stream(stream);
    for (auto* b : {&x_float, &z_float}) b->set_stream(stream);
  }
  cudaStream_t stream;
  DeviceBuffer<std::uint64_t> tables, state;
  DeviceBuffer<double> y, predictions, x_double, z_double;
  DeviceBuffer<float> x_float, z_float;
  GraphTables device_tables;
};

namespace {

template <typename Real>
void launch(const GraphTables& tables, const GraphStates& states, const DeviceLease& lease,
            const ResidentWalkArgs<double>& shape, const double* y, double* predictions, DeviceBuffer<Real>& x_device,
            DeviceBuffer<Real>& z_device, const double* x_host) {
  const std::size_t d = shape.n_features;
  const std::vector<Real> x(x_host, x_host + shape.n_steps * d);
  x_device.resize(x.size());
  x_device.copy_from_host(x.data(), x.size());
  z_device.resize(shape.n_replicates * shape.max_pairs * 2 * shape.n_rff);
  ResidentWalkArgs<Real> a;
  a.frequencies = static_cast<const Real*>(lease.frequencies);
  a.theta = static_cast<Real*>(lease.theta);
  a.x = x_device.data();
  a.y = y;
  a.predictions = predictions;
  a.z_scratch = z_device.data();
  a.n_steps = shape.n_steps;
  a.n_replicates = shape.n_replicates;
  a.n_slots = shape.n_slots;
  a.n_kernels = shape.n_kernels;
  a.n_rff = shape.n_rff;
  a.n_features = d;
  a.max_pairs = shape.max_pairs;
  a.t0 = shape.t0;
  a.feature_scale = shape.feature_scale;
  a.loss = shape.loss;
  const GraphProgram<omkl::cuda::CurandPhilox> program{tables, states};
  omkl::cuda::launch_resident_walk(program, a, static_cast<cudaStream_t>(lease.stream));
  // `x` dies here: its copy must be complete.
  OMKL_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(lease.stream)));
}

}  // namespace

GraphDeviceWalk::GraphDeviceWalk(const GraphTableData& data, const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {
  Impl& m = *impl_;
  m.tables.resize(data.bytes.size());
  m.tables.copy_from_host(data.bytes.data(), data.bytes.size());
  m.device_tables = data.view(m.tables.data());
  OMKL_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

GraphDeviceWalk::~GraphDeviceWalk() = default;

void GraphDeviceWalk::walk(GraphStateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape,
                           const double* x, const double* y, double* predictions) {
  Impl& m = *impl_;
  if (shape.max_pairs > kMaxResidentPairs) throw Error("resident walk: more pairs per step than a block holds");
  const std::size_t words = state.size_bytes() / sizeof(std::uint64_t);
  m.state.resize(words);
  m.state.copy_from_host(static_cast<const std::uint64_t*>(state.data()), words);
  m.y.resize(shape.n_steps);
  m.y.copy_from_host(y, shape.n_steps);
  m.predictions.resize(shape.n_steps * shape.n_replicates);
  const GraphStates states = state.view(m.state.data());
  if (lease.single_precision)
    launch<float>(m.device_tables, states, lease, shape, m.y.data(), m.predictions.data(), m.x_float, m.z_float, x);
  else
    launch<double>(m.device_tables, states, lease, shape, m.y.data(), m.predictions.data(), m.x_double, m.z_double, x);
  m.state.copy_to_host(static_cast<std::uint64_t*>(state.data()), words);
  m.predictions.copy_to_host(predictions, shape.n_steps * shape.n_replicates);
  OMKL_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

}  // namespace omkl::detail
