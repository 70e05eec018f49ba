/// @file resident_sfg.cu
/// @brief The resident OMKL-SFG program on the GPU (resident_sfg.h): its tables uploaded once,
/// every replicate's state uploaded before and read back after each walk, one launch of
/// kernels/resident_walk.cuh per block of samples, the random draws from cuRAND's Philox at the
/// host stream's positions.
#include <string>
#include <vector>

#include "cuda/device_buffer.h"
#include "families/graph_aided/resident_sfg.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"
#include "omkl/error.h"

namespace omkl::detail {

using omkl::cuda::DeviceBuffer;

struct SfgDeviceWalk::Impl {
  explicit Impl(cudaStream_t s) : stream(s) {
    for (auto* b : {&out_offsets, &out_list, &in_offsets, &in_list, &complement_offsets, &complement_list,
                    &exploration, &node, &n_pairs, &updated})
      b->set_stream(stream);
    for (auto* b : {&log_w, &log_u, &u_lin, &u_ref, &pmf, &q_used, &y, &predictions}) b->set_stream(stream);
    for (auto* b : {&x_double, &z_double}) b->set_stream(stream);
    for (auto* b : {&x_float, &z_float}) b->set_stream(stream);
    use_complement.set_stream(stream);
    u_valid.set_stream(stream);
    rng.set_stream(stream);
    updates.set_stream(stream);
  }
  cudaStream_t stream;
  DeviceBuffer<std::uint32_t> out_offsets, out_list, in_offsets, in_list, complement_offsets, complement_list,
      exploration, node, n_pairs, updated;
  DeviceBuffer<std::uint64_t> updates;
  DeviceBuffer<std::uint8_t> use_complement, u_valid;
  DeviceBuffer<double> log_w, log_u, u_lin, u_ref, pmf, q_used, y, predictions;
  DeviceBuffer<double> x_double, z_double;
  DeviceBuffer<float> x_float, z_float;
  DeviceBuffer<StreamPosition> rng;
  SfgTables tables;
};

namespace {

template <typename T>
void upload(DeviceBuffer<T>& buffer, const std::vector<T>& host) {
  buffer.resize(host.size());
  if (!host.empty()) buffer.copy_from_host(host.data(), host.size());
}
template <typename T>
void download(const DeviceBuffer<T>& buffer, std::vector<T>& host) {
  if (!host.empty()) buffer.copy_to_host(host.data(), host.size());
}

template <typename Real>
void launch(const SfgTables& tables, const SfgStates& states, const DeviceLease& lease,
            const ResidentWalkArgs<double>& shape, const double* y, double* predictions, DeviceBuffer<Real>& x_device,
            DeviceBuffer<Real>& z_device, const double* x_host) {
  const std::size_t d = shape.n_features;
  std::vector<Real> x(x_host, x_host + shape.n_steps * d);
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
  const SfgProgram<omkl::cuda::CurandPhilox> program{tables, states};
  omkl::cuda::launch_resident_walk(program, a, static_cast<cudaStream_t>(lease.stream));
  // `x` dies here: the copy must be complete.
  OMKL_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(lease.stream)));
}

}  // namespace

SfgDeviceWalk::SfgDeviceWalk(const SfgTableData& data, const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {
  Impl& m = *impl_;
  upload(m.out_offsets, data.out_offsets);
  upload(m.out_list, data.out_list);
  upload(m.in_offsets, data.in_offsets);
  upload(m.in_list, data.in_list);
  upload(m.complement_offsets, data.complement_offsets);
  upload(m.complement_list, data.complement_list);
  upload(m.exploration, data.exploration);
  upload(m.use_complement, data.use_complement);
  m.tables = data.scalars;
  m.tables.out_offsets = m.out_offsets.data();
  m.tables.out_list = m.out_list.data();
  m.tables.in_offsets = m.in_offsets.data();
  m.tables.in_list = m.in_list.data();
  m.tables.complement_offsets = m.complement_offsets.data();
  m.tables.complement_list = m.complement_list.data();
  m.tables.use_complement = m.use_complement.data();
  m.tables.exploration = m.exploration.data();
  OMKL_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

SfgDeviceWalk::~SfgDeviceWalk() = default;

void SfgDeviceWalk::walk(SfgStateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape,
                         const double* x, const double* y, double* predictions) {
  Impl& m = *impl_;
  if (shape.max_pairs > kMaxResidentPairs) throw Error("resident walk: more pairs per step than a block holds");
  upload(m.log_w, state.log_w);
  upload(m.log_u, state.log_u);
  upload(m.u_lin, state.u_lin);
  upload(m.u_ref, state.u_ref);
  upload(m.u_valid, state.u_valid);
  upload(m.rng, state.rng);
  upload(m.pmf, state.pmf);
  upload(m.q_used, state.q_used);
  upload(m.node, state.node);
  upload(m.n_pairs, state.n_pairs);
  upload(m.updated, state.updated);
  upload(m.updates, state.updates);
  const std::vector<double> y_host(y, y + shape.n_steps);
  upload(m.y, y_host);
  m.predictions.resize(shape.n_steps * shape.n_replicates);
  const SfgStates states{m.log_w.data(), m.log_u.data(), m.u_lin.data(),   m.u_ref.data(),   m.u_valid.data(),
                         m.rng.data(),   m.pmf.data(),   m.node.data(),    m.n_pairs.data(), m.updated.data(),
                         m.q_used.data(), m.updates.data()};
  if (lease.single_precision)
    launch<float>(m.tables, states, lease, shape, m.y.data(), m.predictions.data(), m.x_float, m.z_float, x);
  else
    launch<double>(m.tables, states, lease, shape, m.y.data(), m.predictions.data(), m.x_double, m.z_double, x);
  download(m.log_w, state.log_w);
  download(m.log_u, state.log_u);
  download(m.u_lin, state.u_lin);
  download(m.u_ref, state.u_ref);
  download(m.u_valid, state.u_valid);
  download(m.rng, state.rng);
  download(m.pmf, state.pmf);
  download(m.q_used, state.q_used);
  download(m.node, state.node);
  download(m.n_pairs, state.n_pairs);
  download(m.updated, state.updated);
  download(m.updates, state.updates);
  m.predictions.copy_to_host(predictions, shape.n_steps * shape.n_replicates);
  OMKL_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

}  // namespace omkl::detail
