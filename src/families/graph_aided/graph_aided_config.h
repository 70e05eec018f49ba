/// @file graph_aided_config.h
/// @brief One configuration of the graph-aided family (spec/graph-aided.md): which algorithm
/// (OMKL-GF, OMKL-SFG, OMKL-SFG-R; journal or conference form), its step schedule, every §3
/// reference deviation as a named parameter, and what is built once from them — the similarity
/// graph, its dominating set, the kernel divergences and the refinement's dominator order.
/// Read once by read_graph_aided_config(); immutable while the algorithm runs.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/algorithm_base.h"
#include "core/rate_schedule.h"
#include "core/rate_table.h"
#include "families/graph_aided/divergence.h"
#include "families/graph_aided/dominating_set.h"
#include "families/graph_aided/feedback_graph.h"
#include "families/graph_aided/refinement.h"
#include "features/rf_ensemble.h"
#include "random/sampling.h"

namespace omkl::detail {

enum class GraphFamily { Gf, Sfg, SfgR };
/// The vertex chosen after switch_step (§3 R13, R14).
enum class AfterSwitch { Fixed0, ArgmaxU, KeepSampling };

struct GraphAidedConfig {
  GraphFamily family = GraphFamily::Sfg;
  bool conference = false;  ///< SFG-MKL / SFG-MKL-R (§2.7)
  /// Wall time of building the graph, dominating set and divergences (§1.7's timed offline part).
  double offline_seconds = 0.0;
  /// divergence=table:FILE: the file of the user's Δ (in `delta`); empty for a built-in form.
  std::string divergence_table;
  RfEnsembleConfig rf;      ///< dictionary, D, features, λ (squared loss)

  bool inv_sqrt_t = true;  ///< η_t = eta/√t, else eta constant (§1.6)
  bool explore_inv_sqrt_t = true;  ///< ξ_t / η_{e,t} likewise (by default η's schedule)
  double eta = 0.1;        ///< learning rate of θ, w and u
  double explore = 0.1;    ///< exploration rate: ξ (SFG / SFG-R) or η_e (GF); eta unless given
  /// `*_schedule=table:FILE` (§1.6's tables): η_t, or ξ_t / η_{e,t}, as the file lists them (the
  /// numbers above then unused); the exploration's is η's table unless it has its own.
  std::shared_ptr<const RateTable> eta_table, explore_table;
  std::int64_t switch_step = 300;
  bool shifted = false;             ///< reference off-by-one sampler (§3 R5)
  bool updated_theta_loss = false;  ///< ridge term of the weight loss uses θ_{t+1} (§3 R10)
  bool vertex_ridge = false;        ///< the vertex loss adds λ‖Σ_{k∈S} w̄_k θ_k‖² (§7 A-5)
  /// u_update_uses_prediction: the vertex weight moves by exp(−η·ŷ/p̃), the prediction in place of
  /// the loss, as the 2021 conference-era code did (archaeology only; spec/graph-aided.md §7 A-9).
  bool vertex_from_prediction = false;
  std::size_t M = 10, J = 2;
  double q_floor = 0.0, p_floor = 0.0;
  std::int64_t last_regen = 300;  ///< OMKL-GF: last step whose bipartite graph is regenerated
  /// step_path = resident: blocks of steps walk as one program (resident_graph.h) — on the GPU
  /// with the CUDA backend, by the host driver otherwise — instead of a host decision per step.
  bool resident = false;

  // OMKL-SFG / -R: the similarity graph and what derives from it.
  FeedbackGraph graph;
  ObservationSums observation_sums;  ///< q_k of graph (and of G'_t with its one extra in-edge)
  std::vector<std::size_t> dominating;
  AfterSwitch after_switch = AfterSwitch::ArgmaxU;
  bool freeze_refinement = false, double_draw = false, predict_with_refined = true;
  double beta_eps = 1e-7, beta_fixed = 0.0;
  std::size_t beta_rank = 10;
  RefinementOptions refinement;
  DivergenceMatrix delta;
  DominatorOrder dominator_order;

  double eta_at(std::int64_t t) const { return eta_table ? eta_table->at(t) : scheduled_rate(eta, inv_sqrt_t, t); }
  /// ξ_t (SFG / SFG-R) or η_{e,t} (GF).
  double explore_at(std::int64_t t) const {
    return explore_table ? explore_table->at(t) : scheduled_rate(explore, explore_inv_sqrt_t, t);
  }
  SamplerRule gf_rule() const { return shifted ? SamplerRule::Shifted : SamplerRule::InverseCdf; }
  /// The selection stream's index: distinct per family so that runs of different families
  /// never share draws.
  std::uint64_t stream_index() const {
    return 0x6a00u + static_cast<std::uint64_t>(family) + (conference ? 16u : 0u);
  }
};

/// Reads and validates every parameter of one configuration (ConfigError naming the parameter),
/// in the order `omkl describe` lists them, and builds the graphs.
GraphAidedConfig read_graph_aided_config(ParamReader& params, const AlgoContext& context, GraphFamily family,
                                         bool conference);

}  // namespace omkl::detail
