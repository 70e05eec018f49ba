/// @file resident_graph.cu
/// @brief The resident graph-aided program on the GPU (resident_graph.h): its tables uploaded
/// once, the replicates' state (one arena) uploaded before and read back after each walk, one
/// launch of kernels/resident_walk.cuh per block of samples, the random draws from cuRAND's
/// Philox at the host stream's positions.
#include "families/graph_aided/resident_graph.h"
#include "kernels/curand_philox.cuh"
#include "kernels/resident_walk.cuh"

namespace omkl::detail {

struct GraphDeviceWalk::Impl {
  Impl(const GraphTableData& t, cudaStream_t stream) : tables(t), arena(stream) {}
  const GraphTableData& tables;  // the algorithm's, which owns this walk
  omkl::cuda::ResidentArena arena;
  int tree_sums = 0;  // GraphTables::tree_sums on this walk's launch shape
};

GraphDeviceWalk::GraphDeviceWalk(const GraphTableData& tables, const DeviceLease& lease)
    : impl_(std::make_unique<Impl>(tables, static_cast<cudaStream_t>(lease.stream))) {
  // Thread 0 alone keeps the index order on the device (core/resident_team.h's SerialTeam): the
  // tree order's reference loops would have to be compiled into every launch shape.
  if (tables.sums == WalkSums::Tree && !lease.launch.team_steps)
    throw ConfigError("OMKL_WALK_SUMS=tree: the GPU walk takes the tree order with the whole block's plan "
                      "(OMKL_CUDA_WALK_PLAN=block, the default), not with thread 0's");
  // auto: the block's tree order, measured faster than its leader's index order (bench/RESULTS.md).
  impl_->tree_sums = tables.sums == WalkSums::Tree || (tables.sums == WalkSums::Auto && lease.launch.team_steps) ? 1 : 0;
  impl_->arena.upload_tables(tables.bytes);
}

GraphDeviceWalk::~GraphDeviceWalk() = default;

void GraphDeviceWalk::walk(GraphStateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape,
                           const double* x, const double* y, double* predictions) {
  const GraphTableData& tables = impl_->tables;
  impl_->arena.walk(state.data(), state.size_bytes(), lease, shape, x, y, predictions,
                    [&](const void* device_tables, void* device_state) {
                      GraphTables view = tables.view(device_tables);
                      view.tree_sums = impl_->tree_sums;
                      return GraphProgram<omkl::cuda::CurandPhilox>{view, state.view(device_state)};
                    });
}

}  // namespace omkl::detail
