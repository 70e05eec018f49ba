/// @file graph_selection.h
/// @brief One replicate's side of a graph-aided step (spec/graph-aided.md §2.1, §2.5–§2.7):
/// its random stream, kernel and vertex log-weights, OMKL-GF's bipartite graph, OMKL-SFG-R's
/// refined graph; the selection of the kernels a step evaluates (plan_selection) and the
/// prediction from their outputs (combine_prediction). The algorithm (graph_aided.cpp) runs
/// these per replicate around one batched backend call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "families/graph_aided/bipartite_graph.h"
#include "families/graph_aided/graph_aided.h"
#include "families/graph_aided/graph_aided_config.h"
#include "families/graph_aided/refinement.h"
#include "features/rf_backend.h"
#include "random/selection_stream.h"

namespace omkl::detail {

struct GraphReplicate {
  std::optional<SelectionStream> rng;  // set for every replicate by the constructor
  std::vector<double> log_w, log_u;
  // OMKL-GF: the graph in use and the inputs of its last regeneration (checkpoints rebuild it).
  std::optional<BipartiteFeedbackGraph> bipartite;
  bool has_graph = false;
  std::vector<double> regen_w, regen_uniforms;
  double regen_eta = 0.0;
  // OMKL-SFG-R: D'_t of the last refresh and the refined graph built from it.
  bool refined = false;
  std::vector<std::size_t> refined_set;
  RefinedGraph refined_graph;
  GraphAidedTrace trace;
  // Vertex weights exp(log_u − u_ref), kept up to date one entry per step (only the drawn
  // vertex's u changes); u_ref moves only when every entry has become tiny. Each entry is
  // always computed from (log_u, u_ref) alone, so checkpoints need only u_ref.
  std::vector<double> u_lin;
  double u_ref = 0.0;
  bool u_valid = false;
  // The vertices by u_lin descending and each vertex's place in that order (β_t's rank rule).
  std::vector<std::uint32_t> by_weight, weight_rank;
  // Per-step scratch, kept so that a step allocates nothing once the sizes have settled.
  std::vector<double> weights;
  std::vector<std::size_t> candidate_set;
  std::vector<PairStep> pairs;  // this step's backend pairs
  double vertex_ridge = 0.0;    // u_loss = ridge: this step's λ‖Σ w̄ θ‖²
};

/// exp(a − max a), so the largest entry is 1 (weights are only used through ratios).
void shifted_exp(const std::vector<double>& log_w, std::vector<double>& out);

/// Rebuilds rep's refined graph G'_t from its refinement set D'_t (OMKL-SFG-R).
void rebuild_refined(const GraphAidedConfig& c, GraphReplicate& rep);
/// Recomputes the vertex weights exp(log_u − u_ref) and their order from (log_u, u_ref).
void refresh_vertex_weights(GraphReplicate& rep);
/// Sets u_lin[v] and moves v to its place in by_weight (a weight moves a little per step, so
/// this is a few swaps).
void set_vertex_weight(GraphReplicate& rep, std::size_t v, double value);

/// Selection of step t for one replicate: fills trace.{node, node_pmf, updated, predicted, q,
/// q_used, exploration_set} and consumes this step's uniforms. No θ/w/u change. Weights with no
/// positive sum (losses that overflowed) mark the step diverged instead (trace.diverged).
void plan_selection(const GraphAidedConfig& c, GraphReplicate& rep, std::int64_t t, double eta);

/// ŷ = Σ_{k∈S_pred} w_k f_k / Σ w_k with the current (pre-update) weights, max-shifted;
/// f holds the outputs of the kernels in `updated` (predicted ⊆ updated). NaN for a diverged step.
double combine_prediction(const GraphReplicate& rep, const std::vector<std::size_t>& updated,
                          const std::vector<double>& f, const std::vector<std::size_t>& predicted);

}  // namespace omkl::detail
