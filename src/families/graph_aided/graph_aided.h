/// @file graph_aided.h
/// @brief Inspection hooks of the graph-aided family (OMKL-GF, OMKL-SFG, OMKL-SFG-R, SFG-MKL,
/// SFG-MKL-R; spec/graph-aided.md). The algorithms themselves are registered through
/// add_graph_aided_algorithms() (algorithm_base.h); this header only exposes what tests and
/// diagnostics need to check a step against a direct computation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/algorithm_base.h"

namespace omkl::detail {

/// What one replicate did in its last step().
struct GraphAidedTrace {
  std::int64_t t = 0;                  ///< 1-based time of the step
  double eta = 0.0;                    ///< η_t, the learning rate
  double explore = 0.0;                ///< ξ_t (SFG / SFG-R) or η_{e,t} (GF): η_t unless set apart
  std::size_t node = 0;                ///< I_t: selective node (GF) or vertex (SFG/-R)
  std::vector<double> node_pmf;        ///< p_t over selective nodes (GF) or vertices (SFG/-R)
  std::vector<std::size_t> updated;    ///< kernels whose θ/w were updated (S_t, or S_upd)
  std::vector<std::size_t> predicted;  ///< kernels combined into ŷ_t (S_t, or S_pred)
  std::vector<double> q;               ///< q_k before clipping, per entry of `updated`
  std::vector<double> q_used;          ///< q̃_k after the floor, per entry of `updated`
  std::vector<double> f;               ///< f_k before the update, per entry of `updated`
  double prediction = 0.0;             ///< ŷ_t
  std::vector<std::size_t> exploration_set;  ///< D (SFG) or D'_t (SFG-R); empty for GF
  /// Every weight the step would draw from is 0 (or NaN): only losses that overflowed leave
  /// that, so the replicate has diverged. Nothing is drawn or updated, and ŷ_t is NaN, which
  /// a study counts as a divergence and a Learner refuses as one.
  bool diverged = false;
};

/// Null unless `algorithm` is a graph-aided algorithm.
const GraphAidedTrace* graph_aided_trace(const Algorithm& algorithm, std::size_t replicate);
/// θ of one kernel of one replicate (2D values).
std::vector<double> graph_aided_theta(const Algorithm& algorithm, std::size_t replicate,
                                      std::size_t kernel);
/// Kernel weights w_k and vertex weights u_i (SFG/-R), normalised to max 1 as the equations
/// write them (Algorithm::kernel_weights() gives w normalised to sum 1).
std::vector<double> graph_aided_kernel_weights(const Algorithm& algorithm, std::size_t replicate);
std::vector<double> graph_aided_vertex_weights(const Algorithm& algorithm, std::size_t replicate);
/// log w_k, unnormalised (0 at the start; the reference's w is exp of it).
std::vector<double> graph_aided_log_kernel_weights(const Algorithm& algorithm, std::size_t replicate);
/// Largest number of (replicate, kernel) pairs passed to the backend in one step so far.
std::size_t graph_aided_max_pairs_per_step(const Algorithm& algorithm);

}  // namespace omkl::detail
