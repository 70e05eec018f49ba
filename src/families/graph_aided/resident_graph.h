/// @file resident_graph.h
/// @brief The graph-aided family as a device-resident program (core/resident_walk.h): the step
/// of graph_aided.cpp — OMKL-GF's bipartite graph regeneration and selective-node draw, OMKL-SFG's
/// vertex draw over the dominating set, OMKL-SFG-R's refinement set, refined graph and refined
/// observation probabilities, the prediction and the kernel and vertex weight updates — in
/// OMKL_HD code over flat arrays, in the host path's order of operations. A walk therefore
/// draws the host path's uniforms at the host path's stream positions and makes its decisions;
/// its numbers differ from the host path's only where the pairs' sums (and, on the device, the
/// math library's exp and pow) round differently.
///
/// GraphTableData is the configuration flattened once; GraphStateData every replicate's state,
/// loaded from and stored back to the GraphReplicates around a walk, so that checkpoints,
/// predict() and the inspection hooks see the state as the host path keeps it. Each is one
/// byte arena, so the GPU driver moves it in one copy. Not covered (step_path = resident is
/// refused, naming why): u_loss = ridge (it reads every predicted θ), rng = numpy_legacy.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "core/host_device.h"
#include "core/kernel_weights.h"
#include "core/rate_schedule.h"
#include "core/resident_team.h"
#include "core/resident_walk.h"
#include "features/rf_backend.h"
#include "random/sampling.h"
#include "random/stream_position.h"

namespace omkl::detail {

struct GraphAidedConfig;
struct GraphReplicate;

constexpr std::uint32_t kNoVertex = 0xffffffffu;

// A team step stages at most N entries (vertex weights, probabilities, log-weights), and
// resident_graph_unsupported() refuses N above kMaxResidentPairs.
static_assert(kMaxTeamStage >= kMaxResidentPairs, "a team's staging must hold a graph of the most kernels a walk takes");

/// The configuration as the program reads it (pointers into a host or device copy of
/// GraphTableData's arena).
struct GraphTables {
  int family = 1;  ///< GraphFamily: 0 GF, 1 SFG, 2 SFG-R
  std::uint32_t n = 0;          ///< kernels (= vertices for SFG / SFG-R)
  std::uint32_t max_pairs = 0;  ///< most pairs one step names
  double eta = 0.1;      ///< learning rate of θ, w and u
  double explore = 0.1;  ///< ξ (SFG / SFG-R) or η_e (GF)
  int inv_sqrt_t = 1;
  int explore_inv_sqrt_t = 1;  ///< the exploration rate's schedule
  long long switch_step = 0;
  int shifted = 0;       ///< reference off-by-one sampler
  int after_switch = 0;  ///< AfterSwitch: 0 Fixed0, 1 ArgmaxU, 2 KeepSampling
  double q_floor = 0.0, p_floor = 0.0, lambda = 0.0;
  double z2 = 0.0;  ///< ‖z‖² = scale²·D (updated_theta_loss)
  int updated_theta_loss = 0;
  // OMKL-GF
  std::uint32_t J = 0, M = 0;
  long long last_regen = 0;
  // OMKL-SFG / -R: the similarity graph and the lists ObservationSums::q() sums.
  const std::uint32_t* out_offsets = nullptr;  ///< n + 1; N_out(i) in construction order
  const std::uint32_t* out_list = nullptr;
  const std::uint32_t* in_offsets = nullptr;  ///< n + 1; N_in(k) ascending
  const std::uint32_t* in_list = nullptr;
  const std::uint32_t* complement_offsets = nullptr;  ///< n + 1; V ∖ N_in(k) where used
  const std::uint32_t* complement_list = nullptr;
  const std::uint8_t* use_complement = nullptr;  ///< n
  const std::uint32_t* exploration = nullptr;    ///< OMKL-SFG: the dominating set D
  std::uint32_t n_exploration = 0;
  // OMKL-SFG-R
  const std::uint8_t* adjacency = nullptr;         ///< n × n, 1 iff a → b
  const std::uint32_t* dominator_order = nullptr;  ///< n × n, DominatorOrder::candidates
  int freeze_refinement = 0, double_draw = 0, predict_with_refined = 1, refine_all_vertices = 0;
  double beta_eps = 1e-7, beta_fixed = 0.0;
  std::uint32_t beta_rank = 10;
  /// 1: the step's sums, maxima and draws over vertices, nodes and predicted kernels in the
  /// teams' tree order (core/team_reductions.h), by the team; 0: by the leader in index order,
  /// the host path's numbers. Set from OMKL_WALK_SUMS (GraphTableData::sums) by the driver.
  int tree_sums = 0;
};

/// Every replicate's state; per-replicate arrays are R-strided by the sizes in the comments.
struct GraphStates {
  StreamPosition* rng = nullptr;
  double* log_w = nullptr;          ///< n
  double* pmf = nullptr;            ///< max(n, J): this step's vertex (or selective-node) PMF
  std::uint32_t* node = nullptr;    ///< this step's vertex or selective node
  std::uint32_t* n_pairs = nullptr;      ///< |S_t| (updated)
  std::uint32_t* n_predicted = nullptr;  ///< the first n_predicted of S_t make ŷ
  std::uint32_t* updated = nullptr;      ///< max_pairs: S_t
  double* q = nullptr;                   ///< max_pairs: q_k of S_t
  double* q_used = nullptr;              ///< max_pairs: q̃_k
  std::uint64_t* updates = nullptr;      ///< θ updates made in this walk
  // OMKL-SFG / -R: vertex weights exp(log_u − u_ref), valid where u_valid
  double* log_u = nullptr;  ///< n
  double* u_lin = nullptr;  ///< n
  double* u_ref = nullptr;
  std::uint8_t* u_valid = nullptr;
  // OMKL-SFG-R: the vertices by weight (graph_selection.h), D'_t and G'_t's added edges
  std::uint32_t* by_weight = nullptr;    ///< n
  std::uint32_t* weight_rank = nullptr;  ///< n
  std::uint8_t* refined = nullptr;
  std::uint32_t* set_size = nullptr;
  std::uint32_t* refined_set = nullptr;    ///< n (ascending, set_size used)
  std::uint32_t* candidate = nullptr;      ///< n scratch
  std::uint8_t* marks = nullptr;           ///< n scratch: 1 in D'_t, 2 dominated by it
  std::uint32_t* added_from = nullptr;     ///< n: source of the edge added into i, or kNoVertex
  std::uint32_t* added_start = nullptr;    ///< n + 1: added edges by source
  std::uint32_t* added_targets = nullptr;  ///< n
  // OMKL-GF: the bipartite graph and the inputs of its last regeneration
  std::uint8_t* has_graph = nullptr;
  double* link_p = nullptr;            ///< n × J: P[k, j]
  std::uint8_t* linked = nullptr;      ///< n × J: A[k, j]
  std::uint32_t* node_kernels = nullptr;  ///< J × M: kernels(j) ascending
  std::uint32_t* node_count = nullptr;    ///< J
  double* regen_w = nullptr;              ///< n
  double* regen_eta = nullptr;
  double* regen_uniforms = nullptr;  ///< J × M
  double* scratch = nullptr;  ///< graph_scratch_stride(): OMKL-GF's node weights and CDF; learn()'s weights
  // Where the arrays lie: the arena of all replicates (its base) and the table of its slices
  // (kept in the arena), and the bytes of one replicate's own copy (OMKL_WALK_STATE=local).
  void* arena = nullptr;
  const ReplicateSlices* slices = nullptr;
  std::uint32_t local_bytes = 0;
};

/// Entries of a replicate's scratch: n (learn()'s predicted weights), and for OMKL-GF at least J·M
/// (the linked kernels' shifted weights of every selective node).
OMKL_HD std::size_t graph_scratch_stride(const GraphTables& c) {
  const std::size_t n = c.n, linked = static_cast<std::size_t>(c.J) * c.M;
  return c.family == 0 && linked > n ? linked : n;
}

/// Every per-replicate array of the state, in one order, with its entries per replicate: the
/// arena's layout (GraphStateData), its views and a replicate's own copy all follow this list.
/// `visit(pointer, count)` gets each array's pointer member by reference.
template <typename Visit>
OMKL_HD void visit_graph_state(const GraphTables& c, GraphStates& s, Visit&& visit) {
  const std::size_t n = c.n, J = c.J, M = c.M, P = c.max_pairs, pmf = n > J ? n : J;
  const bool gf = c.family == 0, sfg = !gf, sfgr = c.family == 2;
  visit(s.rng, 1);
  visit(s.log_w, n);
  visit(s.pmf, pmf);
  visit(s.node, 1);
  visit(s.n_pairs, 1);
  visit(s.n_predicted, 1);
  visit(s.updated, P);
  visit(s.q, P);
  visit(s.q_used, P);
  visit(s.updates, 1);
  visit(s.log_u, sfg ? n : 0);
  visit(s.u_lin, sfg ? n : 0);
  visit(s.u_ref, sfg ? 1 : 0);
  visit(s.u_valid, sfg ? 1 : 0);
  visit(s.by_weight, sfgr ? n : 0);
  visit(s.weight_rank, sfgr ? n : 0);
  visit(s.refined, sfgr ? 1 : 0);
  visit(s.set_size, sfgr ? 1 : 0);
  visit(s.refined_set, sfgr ? n : 0);
  visit(s.candidate, sfgr ? n : 0);
  visit(s.marks, sfgr ? n : 0);
  visit(s.added_from, sfgr ? n : 0);
  visit(s.added_start, sfgr ? n + 1 : 0);
  visit(s.added_targets, sfgr ? n : 0);
  visit(s.has_graph, gf ? 1 : 0);
  visit(s.link_p, gf ? n * J : 0);
  visit(s.linked, gf ? n * J : 0);
  visit(s.node_kernels, gf ? J * M : 0);
  visit(s.node_count, gf ? J : 0);
  visit(s.regen_w, gf ? n : 0);
  visit(s.regen_eta, gf ? 1 : 0);
  visit(s.regen_uniforms, gf ? J * M : 0);
  visit(s.scratch, graph_scratch_stride(c));
}

/// The state's arrays at `base`: the arena of all replicates (`local` false; slices.offset), or
/// one replicate's own copy (slices.local), each array where `slices` places it.
OMKL_HD GraphStates graph_states_at(const GraphTables& c, void* base, const ReplicateSlices& slices, bool local) {
  GraphStates s;
  std::uint32_t i = 0;
  visit_graph_state(c, s, [&](auto*& array, std::size_t /*count*/) {
    using T = std::remove_pointer_t<std::remove_reference_t<decltype(array)>>;
    const std::size_t offset = local ? slices.local[i] : static_cast<std::size_t>(slices.offset[i]);
    array = reinterpret_cast<T*>(static_cast<unsigned char*>(base) + offset);
    ++i;
  });
  s.local_bytes = slices.local_bytes;
  return s;
}

/// Indexes the refinement edges by source (RefinedGraph::index_added()): the targets of a are
/// added_targets[added_start[a] .. added_start[a + 1]), ascending. A team's lanes (lane of lanes)
/// each write their share of the entries.
OMKL_HD void index_added_edges(std::uint32_t n, const std::uint32_t* added_from, std::uint32_t* added_start,
                               std::uint32_t* added_targets, unsigned lane = 0, unsigned lanes = 1) {
  // CSR by source: added_start[a] counts the edges from sources below a; each target sits after
  // the earlier targets of its source (ascending i). Counts per entry, so any split of the
  // entries over lanes writes the same index.
  for (std::uint32_t a = lane; a <= n; a += lanes) {
    std::uint32_t below = 0;
    for (std::uint32_t i = 0; i < n; ++i) below += added_from[i] != kNoVertex && added_from[i] < a;
    added_start[a] = below;
  }
  for (std::uint32_t i = lane; i < n; i += lanes) {
    const std::uint32_t a = added_from[i];
    if (a == kNoVertex) continue;
    std::uint32_t place = 0;
    for (std::uint32_t j = 0; j < n; ++j) place += added_from[j] != kNoVertex && (added_from[j] < a || (added_from[j] == a && j < i));
    added_targets[place] = i;
  }
}

/// One step of one replicate, a team program (core/resident_team.h): the loops over kernels,
/// vertices and pairs whose entries are independent are split over the team's lanes; the order
/// by weight is the leader's; the step's sums, maxima and draws are the leader's in the host
/// path's index order, or (GraphTables::tree_sums: OMKL_WALK_SUMS, by default on a GPU block)
/// the team's in the tree order of core/team_reductions.h, the same bits on every team and
/// within rounding of the host path. In index order with one lane (every host driver's default)
/// it is the host path's step as it was written, and a GPU block gives the same numbers.
/// `Philox` is the block function of its counter stream (the host's or cuRAND's).
template <typename Philox>
struct GraphProgram {
  static constexpr bool kTeamSteps = true;
  static constexpr bool kLocalState = true;
  GraphTables tables;
  GraphStates states;

  /// One replicate's own copy of the state (OMKL_WALK_STATE=local: core/resident_walk.h's LocalState).
  OMKL_HD std::size_t local_state_bytes() const { return states.local_bytes; }
  /// Replicate r's state from the arena into `copy` (into_copy) or back, on a team's lanes.
  OMKL_HD void copy_state(std::size_t r, void* copy, bool into_copy, unsigned lane, unsigned lanes) const {
    states.slices->copy(states.arena, r, copy, into_copy, lane, lanes);
  }
  /// This program over a replicate's own copy at `copy`, as its replicate 0.
  OMKL_HD GraphProgram localized(void* copy) const {
    GraphProgram local = *this;
    local.states = graph_states_at(tables, copy, *states.slices, true);
    return local;
  }

  OMKL_HD double eta_at(std::int64_t t) const { return scheduled_rate(tables.eta, tables.inv_sqrt_t != 0, t); }
  OMKL_HD double explore_at(std::int64_t t) const {
    return scheduled_rate(tables.explore, tables.explore_inv_sqrt_t != 0, t);
  }

  /// graph_selection.cpp's plan_selection(), then the pairs of graph_aided.cpp's plan_pairs().
  template <typename Team>
  OMKL_HD std::size_t plan(std::size_t r, std::int64_t t, ResidentPair* pairs, Team& team) {
    const double eta = eta_at(t), explore = explore_at(t);
    std::uint32_t* updated = states.updated + r * tables.max_pairs;
    double* q = states.q + r * tables.max_pairs;
    std::uint32_t count = 0;
    if (tables.family == 0) {
      count = plan_gf(r, t, explore, updated, q, team);
    } else {
      count = plan_sfg(r, t, explore, updated, q, team);
    }
    double* q_used = states.q_used + r * tables.max_pairs;
    for (std::uint32_t i = team.lane(); i < count; i += team.size()) {
      const double qu = q[i] > tables.q_floor ? q[i] : tables.q_floor;  // std::max(q, q_floor)
      q_used[i] = qu;
      pairs[i].slot = updated[i];
      pairs[i].kernel = updated[i];
      pairs[i].rate = eta / qu;
      pairs[i].shrink = 1.0 - 2.0 * eta * tables.lambda / qu;
      pairs[i].box = 0.0;  // no clipping
    }
    if (team.leader()) {
      states.n_pairs[r] = count;
      states.updates[r] += count;  // rate = η/q̃ > 0: every pair updates
    }
    return count;
  }

  /// graph_aided.cpp's learn(): ŷ from S_t's outputs, then the kernel and vertex weights (ŷ is
  /// the leader's).
  template <typename Team>
  OMKL_HD double learn(std::size_t r, std::int64_t t, double y, const double* f, const double* norm2,
                       ResidentPair* /*pairs: plan() set their steps*/, Team& team) {
    const std::size_t n = tables.n;
    const double eta = eta_at(t);
    const std::uint32_t count = states.n_pairs[r], predicted = states.n_predicted[r];
    const std::uint32_t* updated = states.updated + r * tables.max_pairs;
    const double* q_used = states.q_used + r * tables.max_pairs;
    double* log_w = states.log_w + r * n;
    // combine_prediction(): the predicted kernels are the first `predicted` of S_t; their
    // shifted weights by the lanes into the scratch (|S_t| ≤ n), the sums by the team.
    double prediction = 0.0;
    if (predicted > 0) {
      const double m = max_over(predicted, [&](std::size_t i) { return log_w[updated[i]]; }, team);
      double* w = states.scratch + r * graph_scratch_stride(tables);
      for (std::uint32_t i = team.lane(); i < predicted; i += team.size()) w[i] = std::exp(log_w[updated[i]] - m);
      team.sync();
      const double num = sum_over(predicted, [&](std::size_t i) { return w[i] * f[i]; }, team);
      const double den = sum_over(predicted, [&](std::size_t i) { return w[i]; }, team);
      prediction = num / den;
    }
    // S_t's kernels are distinct: each lane its own entries of log w (the sums above, each a
    // barrier, ordered every read of them before these writes).
    for (std::uint32_t i = team.lane(); i < count; i += team.size()) {
      const double fi = f[i];
      double n2 = norm2[i];
      if (tables.updated_theta_loss) {
        const double rate = eta / q_used[i], shrink = 1.0 - 2.0 * eta * tables.lambda / q_used[i];
        const double g = rate * 2.0 * (fi - y);
        n2 = shrink * shrink * n2 - 2.0 * shrink * g * fi + g * g * tables.z2;
        if (n2 < 0) n2 = 0;
      }
      const double loss = ((fi - y) * (fi - y) + tables.lambda * n2) / q_used[i];
      log_w[updated[i]] -= eta * loss;
    }
    if (tables.family != 0 && team.leader()) {
      const std::uint32_t node = states.node[r];
      const double err = (prediction - y) * (prediction - y);
      const double p_node = states.pmf[r * pmf_stride() + node];
      const double p_tilde = p_node > tables.p_floor ? p_node : tables.p_floor;
      double* log_u = states.log_u + r * n;
      log_u[node] -= eta * err / p_tilde;
      if (states.u_valid[r]) set_vertex_weight(r, node, exp_or_zero(log_u[node] - states.u_ref[r]));
    }
    return prediction;
  }

  /// Whether this step's sums take the tree order: asked for, and the team has it (a GPU thread alone does not).
  template <typename Team>
  OMKL_HD bool tree(const Team&) const {
    return Team::kTreeSums && tables.tree_sums != 0;
  }

  OMKL_HD std::size_t pmf_stride() const { return tables.n > tables.J ? tables.n : tables.J; }

 private:
  // ---- OMKL-GF ---------------------------------------------------------------------------------

  /// plan_selection() for the bipartite graph: the linked kernels' exps by the lanes, then each
  /// node's weight (its linked kernels' e in list order) and each kernel's q (its J terms in
  /// order) by a lane; the total and the draw by the team (sum_of(), draw_of()).
  template <typename Team>
  OMKL_HD std::uint32_t plan_gf(std::size_t r, std::int64_t t, double eta_e, std::uint32_t* updated, double* q,
                                Team& team) {
    const std::uint32_t n = tables.n, J = tables.J, M = tables.M;
    const double* log_w = states.log_w + r * n;
    if (t <= tables.last_regen) regenerate(r, eta_e, team);
    // Selective-node weights, shifted by the heaviest linked kernel (plan_selection()).
    const std::uint32_t* lists = states.node_kernels + r * J * M;
    const std::uint32_t* counts = states.node_count + r * J;
    const double top = max_over(static_cast<std::size_t>(J) * M, [&](std::size_t idx) {
      const std::size_t j = idx / M;
      return idx - j * M < counts[j] ? log_w[lists[idx]] : -INFINITY;
    }, team);
    double* e = states.scratch + r * graph_scratch_stride(tables);  // J × M, as the lists
    for (std::uint32_t idx = team.lane(); idx < J * M; idx += team.size()) {
      const std::uint32_t j = idx / M, i = idx - j * M;
      if (i < counts[j]) e[idx] = std::exp(log_w[lists[idx]] - top);
    }
    team.sync();
    double* p = states.pmf + r * pmf_stride();
    for (std::uint32_t j = team.lane(); j < J; j += team.size()) {
      double u = 0.0;
      for (std::uint32_t i = 0; i < counts[j]; ++i) u += e[j * M + i];
      p[j] = u;
    }
    team.sync();
    const double total = sum_of(p, J, team);
    // selective_node_probabilities(u, η): (1 − η)·u_j/U + η/J.
    for (std::uint32_t j = team.lane(); j < J; j += team.size())
      p[j] = (1.0 - eta_e) * p[j] / total + eta_e / static_cast<double>(J);
    team.sync();
    const double uniform = team.leader() ? states.rng[r].template uniform<Philox>() : 0.0;
    const auto node = static_cast<std::uint32_t>(draw_of(p, J, uniform, false, team));
    const double* P = states.link_p + r * n * J;
    const std::uint32_t count = counts[node];
    for (std::uint32_t i = team.lane(); i < count; i += team.size()) {
      const std::uint32_t k = lists[node * M + i];
      updated[i] = k;
      double qk = 0.0;  // observation_probability(): Σ_j P[k, j]·p_j
      for (std::uint32_t j = 0; j < J; ++j) qk += P[k * J + j] * p[j];
      q[i] = qk;
    }
    if (team.leader()) {
      states.node[r] = node;
      states.n_predicted[r] = count;
    }
    team.sync();  // plan() reads every lane's updated and q
    return count;
  }

  /// BipartiteFeedbackGraph::regenerate() from w = shifted_exp(log_w), drawing its J·M uniforms:
  /// w and each column's π and P by the lanes; the maximum, the sums, the CDF, the draws and the
  /// node lists by the leader.
  template <typename Team>
  OMKL_HD void regenerate(std::size_t r, double eta_e, Team& team) {
    const std::uint32_t n = tables.n, J = tables.J, M = tables.M;
    const double* log_w = states.log_w + r * n;
    double* w = states.regen_w + r * n;
    const double m = max_of(log_w, n, team);
    for (std::uint32_t k = team.lane(); k < n; k += team.size()) w[k] = exp_or_zero(log_w[k] - m);
    double* uniforms = states.regen_uniforms + r * J * M;
    if (team.leader()) {
      for (std::uint32_t i = 0; i < J * M; ++i) uniforms[i] = states.rng[r].template uniform<Philox>();
      states.regen_eta[r] = eta_e;
      states.has_graph[r] = 1;
    }
    team.sync();  // every lane's w: a tree sum reads the entries where they are
    const double total = sum_of(w, n, team);
    double* P = states.link_p + r * n * J;
    std::uint8_t* A = states.linked + r * n * J;
    double* cdf = states.scratch + r * graph_scratch_stride(tables);
    const double nd = static_cast<double>(n);
    for (std::uint32_t j = 0; j < J; ++j) {
      const double explore = std::pow(eta_e, static_cast<double>(j + 1));
      for (std::uint32_t k = team.lane(); k < n; k += team.size()) {
        const double pi = (1.0 - explore) * (w[k] / total) + explore / nd;
        P[k * J + j] = 1.0 - std::pow(1.0 - pi, static_cast<double>(M));
        A[k * J + j] = 0;
        cdf[k] = pi;
      }
      const double* pi = team.stage(cdf, n);
      if (team.leader()) {
        double acc = 0.0;
        for (std::uint32_t k = 0; k < n; ++k) {
          acc += pi[k];  // cumulative_sums(), left to right
          cdf[k] = acc;
        }
        for (std::uint32_t i = 0; i < M; ++i)
          A[sample_from_cdf(cdf, n, uniforms[j * M + i], tables.shifted != 0) * J + j] = 1;
        std::uint32_t* list = states.node_kernels + (r * J + j) * M;
        std::uint32_t count = 0;
        for (std::uint32_t k = 0; k < n; ++k)
          if (A[k * J + j]) list[count++] = k;
        states.node_count[r * J + j] = count;
      }
      team.sync();  // the leader is done with cdf (the next column's π) and the lists
    }
  }

  // ---- OMKL-SFG / OMKL-SFG-R -----------------------------------------------------------------

  template <typename Team>
  OMKL_HD std::uint32_t plan_sfg(std::size_t r, std::int64_t t, double xi, std::uint32_t* updated, double* q,
                                 Team& team) {
    const std::uint32_t n = tables.n;
    const double* u = vertex_weights(r, team);
    const bool before = t <= tables.switch_step;
    const std::uint32_t* exploration = tables.exploration;
    std::uint32_t n_exploration = tables.n_exploration;
    bool refined_now = false;
    double total = 0.0;  // Σ u (sum_of()'s order)
    if (tables.family == 2) {
      refined_now = team.share(!states.refined[r] || before || !tables.freeze_refinement);
      if (refined_now) total = refine(r, xi, team);  // its sum of the same u
      exploration = states.refined_set + r * n;
      n_exploration = states.set_size[r];
    }
    // vertex_probabilities(u, ξ, E): the entries by the lanes, the total by sum_of().
    double* p = states.pmf + r * pmf_stride();
    if (!refined_now) total = sum_of(u, n, team);
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) p[i] = (1.0 - xi) * (u[i] / total);
    team.sync();
    const double share = xi / static_cast<double>(n_exploration);
    for (std::uint32_t e = team.lane(); e < n_exploration; e += team.size()) p[exploration[e]] += share;  // a set
    team.sync();  // every lane's entries of p
    const DrawnVertex drawn = draw_vertex(r, p, u, before, team);
    const double p_total = drawn.p_total;
    const std::uint32_t node = drawn.node;
    // S_t = N_out(node), then (SFG-R) the refinement edges out of it, ascending.
    const std::uint32_t out_begin = tables.out_offsets[node], base_count = tables.out_offsets[node + 1] - out_begin;
    for (std::uint32_t i = team.lane(); i < base_count; i += team.size()) updated[i] = tables.out_list[out_begin + i];
    std::uint32_t count = base_count;
    if (tables.family == 2) {
      const std::uint32_t* start = states.added_start + r * (n + 1);
      const std::uint32_t* targets = states.added_targets + r * n;
      const std::uint32_t added = start[node + 1] - start[node];
      for (std::uint32_t i = team.lane(); i < added; i += team.size()) updated[base_count + i] = targets[start[node] + i];
      count += added;
    }
    if (team.leader()) states.n_predicted[r] = tables.family == 2 && tables.predict_with_refined ? count : base_count;
    team.sync();
    const std::uint32_t* added_from = tables.family == 2 ? states.added_from + r * n : nullptr;
    for (std::uint32_t i = team.lane(); i < count; i += team.size())
      q[i] = observation(updated[i], p, p_total, added_from ? added_from[updated[i]] : kNoVertex);
    team.sync();  // plan() reads every q
    return count;
  }

  /// This step's vertex and Σ p (ObservationSums::q() reads it).
  struct DrawnVertex {  // trivial: share() copies it
    double p_total;
    std::uint32_t node;
  };

  /// plan_sfg()'s Σ p and vertex draw (SFG-R's discarded uniform first), by the team.
  template <typename Team>
  OMKL_HD DrawnVertex draw_vertex(std::size_t r, const double* p, const double* u, bool before, Team& team) {
    const std::uint32_t n = tables.n;
    DrawnVertex drawn = {0.0, 0u};
    drawn.p_total = sum_of(p, n, team);
    const int mode = before ? 2 : tables.after_switch;
    if (mode == 2) {
      double uniform = 0.0;
      if (team.leader()) {
        if (tables.family == 2 && tables.double_draw && before) (void)states.rng[r].template uniform<Philox>();
        uniform = states.rng[r].template uniform<Philox>();
      }
      drawn.node = static_cast<std::uint32_t>(draw_of(p, n, uniform, tables.shifted != 0, team));
    } else if (mode == 1) {
      drawn.node = team.share(team.leader() ? argmax_first(u, n) : 0u);
    }
    if (team.leader()) states.node[r] = drawn.node;
    return drawn;
  }

  /// Σ v[0..n) on every lane: in the tree order (GraphTables::tree_sums) or in index order.
  template <typename Team>
  OMKL_HD double sum_of(const double* v, std::uint32_t n, Team& team) const {
    if (tree(team)) return team.tree_sum(n, [v](std::size_t i) { return v[i]; });
    return ordered_sum(v, n, team);
  }

  /// max(−∞, v[0..n)) on every lane (a maximum is the same in any order; the tree's takes fewer steps).
  template <typename Team>
  OMKL_HD double max_of(const double* v, std::uint32_t n, Team& team) const {
    if (tree(team)) return team.tree_max(n, [v](std::size_t i) { return v[i]; });
    return ordered_max(v, n, team);
  }

  /// sample_index()'s draw of `uniform` (the leader's) over p[0..n), on every lane: over p's
  /// prefix sums in the tree order, or in index order by the leader.
  template <typename Team>
  OMKL_HD std::size_t draw_of(const double* p, std::uint32_t n, double uniform, bool shifted, Team& team) const {
    if (tree(team)) return team.tree_draw(p, n, uniform, shifted);
    const double* staged = team.stage(p, n);
    std::size_t k = 0;
    if (team.leader()) k = sample_index(staged, n, uniform, shifted);
    return team.share(k);
  }

  /// Σ value_of(0..n) on every lane, in the tree order or by the leader in index order; the
  /// values must be readable by every lane (the caller's barrier since their writes).
  template <typename Team, typename ValueOf>
  OMKL_HD double sum_over(std::size_t n, ValueOf&& value_of, Team& team) const {
    if (tree(team)) return team.tree_sum(n, value_of);
    double total = 0.0;
    if (team.leader())
      for (std::size_t i = 0; i < n; ++i) total += value_of(i);
    return team.share(total);
  }

  /// max(−∞, value_of(0..n)) on every lane, as sum_over() (the first of equal maxima).
  template <typename Team, typename ValueOf>
  OMKL_HD double max_over(std::size_t n, ValueOf&& value_of, Team& team) const {
    if (tree(team)) return team.tree_max(n, value_of);
    double m = -INFINITY;
    if (team.leader())
      for (std::size_t i = 0; i < n; ++i) {
        const double v = value_of(i);
        m = v > m ? v : m;
      }
    return team.share(m);
  }

  /// Σ v[0..n) in index order, on every lane (the leader's sum of the staged entries).
  template <typename Team>
  OMKL_HD static double ordered_sum(const double* v, std::uint32_t n, Team& team) {
    const double* staged = team.stage(v, n);
    double total = 0.0;
    if (team.leader())
      for (std::uint32_t i = 0; i < n; ++i) total += staged[i];
    return team.share(total);
  }

  /// max(−∞, v[0..n)) in index order (the first of equal maxima), on every lane.
  template <typename Team>
  OMKL_HD static double ordered_max(const double* v, std::uint32_t n, Team& team) {
    const double* staged = team.stage(v, n);
    double m = -INFINITY;
    if (team.leader())
      for (std::uint32_t i = 0; i < n; ++i) m = staged[i] > m ? staged[i] : m;
    return team.share(m);
  }

  /// vertex_weights_lin(): exp(log_u − u_ref), refreshed (u_ref = max log_u, and the order by
  /// weight) when missing or when its largest entry has drifted below kLinearWeightRefreshFloor.
  template <typename Team>
  OMKL_HD const double* vertex_weights(std::size_t r, Team& team) {
    const std::uint32_t n = tables.n;
    double* u = states.u_lin + r * n;
    const double* log_u = states.log_u + r * n;
    // u ≥ 0, so the largest entry is the same from −∞ as from 0 (n ≥ 1); u_valid is the
    // leader's, written before a barrier, so every lane takes the same branch.
    const bool refresh = !states.u_valid[r] || max_of(u, n, team) < kLinearWeightRefreshFloor;
    if (!refresh) return u;
    const double ref = max_of(log_u, n, team);
    if (team.leader()) states.u_ref[r] = ref;
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) u[i] = exp_or_zero(log_u[i] - ref);
    team.sync();
    if (team.leader()) {
      states.u_valid[r] = 1;
      if (tables.family == 2) sort_by_weight(r);
    }
    team.sync();
    return u;
  }

  /// refresh_vertex_weights()'s order: stable, by u descending (an insertion sort: n ≤ 128 and
  /// refreshes are rare).
  OMKL_HD void sort_by_weight(std::size_t r) {
    const std::uint32_t n = tables.n;
    const double* u = states.u_lin + r * n;
    std::uint32_t* order = states.by_weight + r * n;
    for (std::uint32_t i = 0; i < n; ++i) {
      std::uint32_t k = i;
      while (k > 0 && u[order[k - 1]] < u[i]) {
        order[k] = order[k - 1];
        --k;
      }
      order[k] = i;
    }
    for (std::uint32_t k = 0; k < n; ++k) states.weight_rank[r * n + order[k]] = k;
  }

  /// graph_selection.cpp's set_vertex_weight(): u[v] and v's place in the order.
  OMKL_HD void set_vertex_weight(std::size_t r, std::uint32_t v, double value) {
    const std::uint32_t n = tables.n;
    double* u = states.u_lin + r * n;
    u[v] = value;
    if (tables.family != 2) return;  // only the refinement reads the order
    std::uint32_t* order = states.by_weight + r * n;
    std::uint32_t* rank = states.weight_rank + r * n;
    std::uint32_t k = rank[v];
    while (k + 1 < n && u[order[k + 1]] > value) {
      order[k] = order[k + 1];
      rank[order[k]] = k;
      ++k;
    }
    while (k > 0 && u[order[k - 1]] < value) {
      order[k] = order[k - 1];
      rank[order[k]] = k;
      --k;
    }
    order[k] = v;
    rank[v] = k;
  }

  /// plan_selection()'s refinement: the candidate set D'_t (refinement_set() with a fixed β,
  /// refinement_set_from_sorted() with the rank rule), and G'_t rebuilt when it changed. Returns
  /// Σ u (sum_of()'s order, on every lane), which the vertex probabilities reuse. Each vertex's test
  /// (a division and a comparison) and its place in D'_t (a count of the marks before it) by the
  /// lanes; the sum by sum_of(); the rank rule's first failing vertex, the fallback and the
  /// comparison with D'_{t−1} by the leader. Only integer counts and the same per-vertex arithmetic are split, so
  /// the set is the serial reading's whatever the team.
  template <typename Team>
  OMKL_HD double refine(std::size_t r, double xi, Team& team) {
    const std::uint32_t n = tables.n;
    const double* u = states.u_lin + r * n;
    std::uint8_t* marks = states.marks + r * n;
    std::uint32_t* candidate = states.candidate + r * n;
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) marks[i] = 0;
    const double total = sum_of(u, n, team);  // its barriers order the marks' reset too
    const double nd = static_cast<double>(n);
    if (tables.beta_fixed > 0) {
      const double threshold = (tables.beta_fixed - xi / nd) / (1.0 - xi);
      for (std::uint32_t i = team.lane(); i < n; i += team.size())
        if (u[i] / total >= threshold) marks[i] = 1;
      team.sync();
      if (team.leader()) {
        bool any = false;
        for (std::uint32_t i = 0; i < n && !any; ++i) any = marks[i] != 0;
        if (!any) marks[argmax_first(u, n)] = 1;
      }
    } else {
      // The vertices in the order by weight while they pass: each one's test by a lane (into
      // the candidate scratch), the first that fails by the leader.
      const std::uint32_t* order = states.by_weight + r * n;
      const double top = u[order[tables.beta_rank - 1]] / total;
      const double beta = (1.0 - xi) * top + xi / nd - tables.beta_eps;
      double threshold = (beta - xi / nd) / (1.0 - xi);
      threshold = top < threshold ? top : threshold;  // std::min(threshold, top)
      for (std::uint32_t k = team.lane(); k < n; k += team.size()) candidate[k] = u[order[k]] / total >= threshold;
      team.sync();
      std::uint32_t passing = 0;
      if (team.leader())
        while (passing < n && candidate[passing] != 0) ++passing;
      passing = team.share(passing);
      for (std::uint32_t k = team.lane(); k < passing; k += team.size()) marks[order[k]] = 1;
    }
    team.sync();
    // The set ascending: each marked vertex at the count of marks before it.
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) {
      if (!marks[i]) continue;
      std::uint32_t place = 0;
      for (std::uint32_t j = 0; j < i; ++j) place += marks[j] != 0;
      candidate[place] = i;
    }
    team.sync();
    bool changed = false;
    if (team.leader()) {
      // Compared with D'_{t−1}.
      std::uint32_t size = 0;
      for (std::uint32_t i = 0; i < n; ++i) size += marks[i] != 0;
      std::uint32_t* set = states.refined_set + r * n;
      bool same = states.refined[r] && size == states.set_size[r];
      for (std::uint32_t i = 0; same && i < size; ++i) same = candidate[i] == set[i];
      if (!same) {
        for (std::uint32_t i = 0; i < size; ++i) set[i] = candidate[i];
        states.set_size[r] = size;
      }
      changed = !same;
    }
    if (team.share(changed)) rebuild_refined(r, team);
    if (team.leader()) states.refined[r] = 1;
    team.sync();
    return total;
  }

  /// RefinedGraph::refine() with the dominator order: every vertex outside D'_t that D'_t does
  /// not dominate (every vertex, with refine_all_vertices) gets an in-edge from its preferred
  /// member of D'_t, unless that edge is in the base graph. Each vertex by a lane: its marks
  /// (member 3, dominated 2: an out-neighbour of a member, by the base graph's adjacency), its
  /// edge, and its place in the index of added edges (counts, so the index is the serial one's).
  template <typename Team>
  OMKL_HD void rebuild_refined(std::size_t r, Team& team) {
    const std::uint32_t n = tables.n, size = states.set_size[r];
    const std::uint32_t* set = states.refined_set + r * n;
    std::uint8_t* marks = states.marks + r * n;
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) marks[i] = 0;
    team.sync();
    for (std::uint32_t e = team.lane(); e < size; e += team.size()) marks[set[e]] = 1;  // distinct members
    team.sync();
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) {
      if (marks[i]) {
        marks[i] = 3;
        continue;
      }
      bool dominated = false;
      for (std::uint32_t e = 0; e < size && !dominated; ++e)
        dominated = tables.adjacency[static_cast<std::size_t>(set[e]) * n + i] != 0;
      marks[i] = dominated ? 2 : 0;
    }
    team.sync();
    std::uint32_t* added_from = states.added_from + r * n;
    for (std::uint32_t i = team.lane(); i < n; i += team.size()) {
      added_from[i] = kNoVertex;
      if (!tables.refine_all_vertices && marks[i] != 0) continue;
      const std::uint32_t* candidates = tables.dominator_order + static_cast<std::size_t>(i) * n;
      std::uint32_t k = 0;
      while (!(marks[candidates[k]] & 1u)) ++k;  // D'_t is non-empty
      const std::uint32_t d = candidates[k];
      if (!tables.adjacency[static_cast<std::size_t>(d) * n + i]) added_from[i] = d;
    }
    team.sync();
    index_added_edges(n, added_from, states.added_start + r * (n + 1), states.added_targets + r * n, team.lane(), team.size());
    team.sync();
  }

  OMKL_HD static std::uint32_t argmax_first(const double* v, std::uint32_t n) {
    std::uint32_t best = 0;
    for (std::uint32_t i = 1; i < n; ++i)
      if (v[i] > v[best]) best = i;
    return best;
  }

  /// ObservationSums::q(k, p, p_total, extra).
  OMKL_HD double observation(std::uint32_t k, const double* p, double p_total, std::uint32_t extra) const {
    if (tables.use_complement[k]) {
      double sum = 0.0;
      for (std::uint32_t i = tables.complement_offsets[k]; i < tables.complement_offsets[k + 1]; ++i)
        if (tables.complement_list[i] != extra) sum += p[tables.complement_list[i]];
      const double q = p_total - sum;
      if (q >= 0.5 * p_total) return q;
    }
    double sum = 0.0;
    for (std::uint32_t i = tables.in_offsets[k]; i < tables.in_offsets[k + 1]; ++i) sum += p[tables.in_list[i]];
    return extra == kNoVertex ? sum : sum + p[extra];
  }
};

/// The configuration's tables in one arena; view(base) points GraphTables into a copy of it.
/// OMKL_WALK_SUMS: the order of the walk's sums, maxima and draws (GraphTables::tree_sums).
/// `auto` (the default): the tree order where a GPU block plans the step (measured faster on an
/// H200, 2026-11-27), the index order on one GPU thread and on the host's drivers (the host
/// path's bits); `ordered` / `tree`: that order wherever the team has it (a GPU thread alone has
/// only the index order, so `tree` is refused there).
enum class WalkSums { Auto, Ordered, Tree };

struct GraphTableData {
  GraphTables scalars;  // pointers unset; tree_sums as a host driver takes it
  WalkSums sums = WalkSums::Auto;
  std::vector<std::uint64_t> bytes;
  std::size_t out_offsets = 0, out_list = 0, in_offsets = 0, in_list = 0, complement_offsets = 0,
              complement_list = 0, use_complement = 0, exploration = 0, adjacency = 0, dominator_order = 0;

  GraphTables view(const void* base) const;
  GraphTables view() const { return view(bytes.data()); }
};

/// Empty when the resident walk can run this configuration, else why not.
std::string resident_graph_unsupported(const GraphAidedConfig& config);
GraphTableData make_graph_tables(const GraphAidedConfig& config, double feature_scale, std::size_t n_rff);

/// Every replicate's state in one arena; view(base) points GraphStates into a copy of it.
class GraphStateData {
 public:
  GraphStateData(const GraphTables& tables, std::size_t n_replicates);
  GraphStates view(void* base) const;
  GraphStates view() { return view(bytes_.data()); }
  void* data() { return bytes_.data(); }
  std::size_t size_bytes() const { return bytes_.size() * sizeof(std::uint64_t); }

  /// From the host path's replicates (stream positions, weights and what the family keeps).
  void load(const std::vector<GraphReplicate>& reps);
  /// Back into them, with each replicate's last step as its trace (node, PMF, S_t, q, q̃, ŷ).
  void store(std::vector<GraphReplicate>& reps, const GraphAidedConfig& config, std::int64_t t_last,
             double eta_last, const double* last_predictions);
  /// θ updates of the walk, all replicates.
  std::uint64_t updates();

 private:
  GraphTables c_;
  std::size_t R_;
  std::vector<std::uint64_t> bytes_;
  ReplicateSlices slices_;    // visit_graph_state()'s arrays, in its order
  std::size_t slices_at_ = 0;  // the arena's copy of slices_ (read by a device walk)
};

/// The program on the GPU (resident_graph.cu; in a build without CUDA src/cuda/no_cuda.cpp's, whose
/// constructor throws): the tables uploaded once, the state uploaded and read back around each
/// walk (one copy each way), θ and V the CUDA backend's own (RfBackend::device_lease()).
class GraphDeviceWalk {
 public:
  /// Uploads the tables on the lease's stream; keeps a reference to them (they must outlive it).
  GraphDeviceWalk(const GraphTableData& tables, const DeviceLease& lease);
  ~GraphDeviceWalk();
  GraphDeviceWalk(const GraphDeviceWalk&) = delete;
  GraphDeviceWalk& operator=(const GraphDeviceWalk&) = delete;
  /// Walks n_steps samples from time t0 for every replicate: x n_steps × d and y (host),
  /// predictions n_steps × R (host). `shape` gives the sizes, t0 and the loss (its pointers are
  /// ignored); θ and V are the lease's.
  void walk(GraphStateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape, const double* x,
            const double* y, double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace omkl::detail
