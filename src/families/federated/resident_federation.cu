/// @file resident_federation.cu
/// @brief The resident federation program on the GPU (resident_federation.h): one thread block
/// per replicate walks the block's rounds — phase A a warp per (client, kernel) pair, phase B a
/// thread per client, the collection on thread 0, phase C a warp per kernel, phase D on thread 0
/// — with no host round trip between rounds; the clients' draws from cuRAND's Philox at the host
/// streams' positions.
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "families/federated/resident_federation.h"
#include "kernels/curand_philox.cuh"
#include "omkl/error.h"

namespace omkl::detail {

using omkl::cuda::DeviceBuffer;

namespace {

constexpr int kRoundThreads = 256;  // 8 warps; a round names K × N pairs (23 × 51 on Naval)

template <typename Real>
__device__ __forceinline__ Real round_warp_sum(Real v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename Real>
__global__ void __launch_bounds__(kRoundThreads) federation_rounds_kernel(FederationProgram<omkl::cuda::CurandPhilox> program,
                                                                          RoundWalkArgs<Real> a) {
  const std::size_t r = blockIdx.x;
  const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, n_warps = blockDim.x >> 5;
  const std::size_t R = a.n_replicates, N = a.n_kernels, D = a.n_rff, d = a.n_features, K = a.n_clients;
  const Real* V = a.frequencies + r * N * D * d;
  Real* theta = a.theta + r * N * 2 * D;
  for (std::size_t round = 0; round < a.n_rounds; ++round) {
    const std::int64_t t = a.t0 + static_cast<std::int64_t>(round);
    const Real* x = a.x + round * K * d;
    const double* y = a.y + round * K;
    // A: f_ik and ‖θ_i‖².
    for (std::size_t p = warp; p < K * N; p += n_warps) {
      const std::size_t k = p / N, i = p % N;
      Real dot, n2;
      resident_pair_features(V + i * D * d, x + k * d, theta + i * 2 * D, static_cast<Real*>(nullptr), D, d,
                             static_cast<Real>(a.feature_scale), lane, 32u, dot, n2);
      dot = round_warp_sum(dot);
      n2 = round_warp_sum(n2);
      if (lane == 0) {
        program.states.f[(r * K + k) * N + i] = static_cast<double>(dot);
        if (k == 0) program.states.norm2[r * N + i] = static_cast<double>(n2);
      }
    }
    __syncthreads();
    // B: the clients.
    for (std::size_t k = threadIdx.x; k < K; k += blockDim.x)
      a.predictions[(round * K + k) * R + r] = program.client_step(r, static_cast<std::uint32_t>(k), t, y[k]);
    __syncthreads();
    if (threadIdx.x == 0) program.collect(r);
    __syncthreads();
    // C: the server's sums, a warp per kernel.
    for (std::size_t i = warp; i < N; i += n_warps)
      aggregate_slot(V + i * D * d, x, d, theta + i * 2 * D, D, program.uploads(r, i), a.feature_scale,
                     1.0 / static_cast<double>(K), program.tables.upload, lane, 32u);
    __syncthreads();
    if (threadIdx.x == 0) program.close_round(r);
    __syncthreads();
  }
}

}  // namespace

struct FederationDeviceWalk::Impl {
  explicit Impl(cudaStream_t s) : stream(s) {
    streams.set_stream(s);
    state.set_stream(s);
    for (auto* b : {&y, &predictions, &x_double}) b->set_stream(s);
    x_float.set_stream(s);
  }
  cudaStream_t stream;
  DeviceBuffer<StreamPosition> streams;
  DeviceBuffer<std::uint64_t> state;
  DeviceBuffer<double> y, predictions, x_double;
  DeviceBuffer<float> x_float;
};

FederationDeviceWalk::FederationDeviceWalk(const std::vector<StreamPosition>& client_streams, const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(static_cast<cudaStream_t>(lease.stream))) {
  impl_->streams.resize(client_streams.size());
  impl_->streams.copy_from_host(client_streams.data(), client_streams.size());
  OMKL_CUDA_CHECK(cudaStreamSynchronize(impl_->stream));
}

FederationDeviceWalk::~FederationDeviceWalk() = default;

namespace {

template <typename Real>
void launch_rounds(const FederationProgram<omkl::cuda::CurandPhilox>& program, const RoundWalkArgs<double>& shape,
                   const DeviceLease& lease, const double* x_host, DeviceBuffer<Real>& x_device, const double* y,
                   double* predictions) {
  if (shape.n_rounds == 0 || shape.n_replicates == 0) return;  // an empty grid is a launch error
  const std::vector<Real> x(x_host, x_host + shape.n_rounds * shape.n_clients * shape.n_features);
  x_device.resize(x.size());
  x_device.copy_from_host(x.data(), x.size());
  RoundWalkArgs<Real> a;
  a.frequencies = static_cast<const Real*>(lease.frequencies);
  a.theta = static_cast<Real*>(lease.theta);
  a.x = x_device.data();
  a.y = y;
  a.predictions = predictions;
  a.n_rounds = shape.n_rounds;
  a.n_replicates = shape.n_replicates;
  a.n_kernels = shape.n_kernels;
  a.n_rff = shape.n_rff;
  a.n_features = shape.n_features;
  a.n_clients = shape.n_clients;
  a.t0 = shape.t0;
  a.feature_scale = shape.feature_scale;
  const cudaStream_t stream = static_cast<cudaStream_t>(lease.stream);
  federation_rounds_kernel<Real><<<static_cast<unsigned>(shape.n_replicates), kRoundThreads, 0, stream>>>(program, a);
  OMKL_CUDA_CHECK_LAUNCH();
  OMKL_CUDA_CHECK(cudaStreamSynchronize(stream));  // `x` dies here
}

}  // namespace

void FederationDeviceWalk::walk(const FederationTables& tables, FederationStateData& state, const DeviceLease& lease,
                                const RoundWalkArgs<double>& shape, const double* x, const double* y,
                                double* predictions) {
  Impl& m = *impl_;
  const std::size_t words = state.size_bytes() / sizeof(std::uint64_t);
  m.state.resize(words);
  m.state.copy_from_host(static_cast<const std::uint64_t*>(state.data()), words);
  const std::size_t rows = shape.n_rounds * shape.n_clients;
  m.y.resize(rows);
  m.y.copy_from_host(y, rows);
  m.predictions.resize(rows * shape.n_replicates);
  FederationTables device_tables = tables;
  device_tables.client_streams = m.streams.data();
  const FederationProgram<omkl::cuda::CurandPhilox> program{device_tables, state.view(m.state.data())};
  if (lease.single_precision) launch_rounds<float>(program, shape, lease, x, m.x_float, m.y.data(), m.predictions.data());
  else launch_rounds<double>(program, shape, lease, x, m.x_double, m.y.data(), m.predictions.data());
  m.state.copy_to_host(static_cast<std::uint64_t*>(state.data()), words);
  m.predictions.copy_to_host(predictions, rows * shape.n_replicates);
  OMKL_CUDA_CHECK(cudaStreamSynchronize(m.stream));
}

}  // namespace omkl::detail
