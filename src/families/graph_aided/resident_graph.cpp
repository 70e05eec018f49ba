/// @file resident_graph.cpp
/// @brief Host side of the resident graph-aided program (resident_graph.h): the flattened tables
/// and the state's round trip to the host path's replicates.
#include "families/graph_aided/resident_graph.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/env_switch.h"
#include "families/graph_aided/graph_aided_config.h"
#include "families/graph_aided/graph_selection.h"

namespace omkl::detail {

namespace {

template <typename T>
T* at(void* base, std::size_t offset) {
  return ByteArena::at<T>(base, offset);
}
template <typename T>
const T* at(const void* base, std::size_t offset) {
  return ByteArena::at<T>(base, offset);
}

// lists[k] for k = 0..n-1 as CSR: offsets (n + 1), then the entries.
template <typename ListOf>
void csr(std::size_t n, ListOf&& list_of, std::vector<std::uint32_t>& offsets, std::vector<std::uint32_t>& entries) {
  offsets.assign(1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t v : list_of(k)) entries.push_back(static_cast<std::uint32_t>(v));
    offsets.push_back(static_cast<std::uint32_t>(entries.size()));
  }
}

}  // namespace

std::string resident_graph_unsupported(const GraphAidedConfig& config) {
  if (config.rf.numpy_legacy) return "rng = numpy_legacy replays NumPy's stream on the host";
  if (config.vertex_ridge) return "u_loss = ridge reads every predicted θ on the host";
  if (config.vertex_from_prediction) return "u_update_uses_prediction (an archaeology flag) runs on the host path";
  if (config.rf.loss != LossKind::Squared) return "only the squared loss is implemented";
  if (config.eta_table || config.explore_table) return "a rate table (schedule table:FILE) is read on the host path";
  const std::size_t n = config.rf.dictionary.size();
  if (n > kMaxResidentPairs)
    return "N = " + std::to_string(n) + " exceeds the " + std::to_string(kMaxResidentPairs) +
           " kernels a resident step holds";
  return {};
}

GraphTableData make_graph_tables(const GraphAidedConfig& config, double feature_scale, std::size_t n_rff) {
  GraphTableData data;
  GraphTables& c = data.scalars;
  const std::size_t n = config.rf.dictionary.size();
  c.family = static_cast<int>(config.family);
  c.n = static_cast<std::uint32_t>(n);
  c.eta = config.eta;
  c.explore = config.explore;
  c.inv_sqrt_t = config.inv_sqrt_t ? 1 : 0;
  c.explore_inv_sqrt_t = config.explore_inv_sqrt_t ? 1 : 0;
  c.switch_step = config.switch_step;
  c.shifted = config.shifted ? 1 : 0;
  c.after_switch = static_cast<int>(config.after_switch);
  c.q_floor = config.q_floor;
  c.p_floor = config.p_floor;
  c.lambda = config.rf.lambda;
  c.z2 = feature_scale * feature_scale * static_cast<double>(n_rff);
  c.updated_theta_loss = config.updated_theta_loss ? 1 : 0;
  const std::string sums = path_switch("OMKL_WALK_SUMS");
  data.sums = sums == "tree" ? WalkSums::Tree : sums == "ordered" ? WalkSums::Ordered : WalkSums::Auto;
  c.tree_sums = data.sums == WalkSums::Tree ? 1 : 0;  // the host's drivers: the index order unless asked
  std::vector<std::uint32_t> out_offsets, out_list, in_offsets, in_list, complement_offsets, complement_list,
      exploration, dominator_order;
  std::vector<std::uint8_t> use_complement, adjacency;
  if (config.family == GraphFamily::Gf) {
    c.J = static_cast<std::uint32_t>(config.J);
    c.M = static_cast<std::uint32_t>(config.M);
    c.last_regen = config.last_regen;
    c.max_pairs = c.M;  // a selective node links at most M distinct kernels
  } else {
    const FeedbackGraph& g = config.graph;
    const ObservationSums& sums = config.observation_sums;
    csr(n, [&](std::size_t k) -> const std::vector<std::size_t>& { return g.out_neighbours(k); }, out_offsets,
        out_list);
    csr(n, [&](std::size_t k) -> const std::vector<std::size_t>& { return sums.in_list(k); }, in_offsets, in_list);
    csr(n, [&](std::size_t k) -> const std::vector<std::size_t>& { return sums.complement_list(k); },
        complement_offsets, complement_list);
    for (std::size_t k = 0; k < n; ++k) use_complement.push_back(sums.uses_complement(k) ? 1 : 0);
    for (std::size_t v : config.dominating) exploration.push_back(static_cast<std::uint32_t>(v));
    c.n_exploration = static_cast<std::uint32_t>(exploration.size());
    std::size_t max_pairs = 0;
    for (std::size_t k = 0; k < n; ++k) max_pairs = std::max(max_pairs, g.out_degree(k));
    c.max_pairs = static_cast<std::uint32_t>(max_pairs);
    if (config.family == GraphFamily::SfgR) {
      c.max_pairs = static_cast<std::uint32_t>(n);  // base list plus refinement edges, no repeats
      adjacency.resize(n * n);
      for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) adjacency[a * n + b] = g.has_edge(a, b) ? 1 : 0;
      dominator_order.resize(n * n);
      for (std::size_t i = 0; i < n; ++i)
        std::copy(config.dominator_order.candidates(i), config.dominator_order.candidates(i) + n,
                  dominator_order.begin() + static_cast<std::ptrdiff_t>(i * n));
      c.freeze_refinement = config.freeze_refinement ? 1 : 0;
      c.double_draw = config.double_draw ? 1 : 0;
      c.predict_with_refined = config.predict_with_refined ? 1 : 0;
      c.refine_all_vertices = config.refinement.refine_all_vertices ? 1 : 0;
      c.beta_eps = config.beta_eps;
      c.beta_fixed = config.beta_fixed;
      c.beta_rank = static_cast<std::uint32_t>(config.beta_rank);
    }
  }
  ByteArena arena;
  data.out_offsets = arena.reserve<std::uint32_t>(out_offsets.size());
  data.out_list = arena.reserve<std::uint32_t>(out_list.size());
  data.in_offsets = arena.reserve<std::uint32_t>(in_offsets.size());
  data.in_list = arena.reserve<std::uint32_t>(in_list.size());
  data.complement_offsets = arena.reserve<std::uint32_t>(complement_offsets.size());
  data.complement_list = arena.reserve<std::uint32_t>(complement_list.size());
  data.exploration = arena.reserve<std::uint32_t>(exploration.size());
  data.dominator_order = arena.reserve<std::uint32_t>(dominator_order.size());
  data.use_complement = arena.reserve<std::uint8_t>(use_complement.size());
  data.adjacency = arena.reserve<std::uint8_t>(adjacency.size());
  data.bytes.assign(arena.words(), 0);
  void* base = data.bytes.data();
  const auto put = [base](std::size_t offset, const auto& v) {
    if (!v.empty()) std::memcpy(static_cast<unsigned char*>(base) + offset, v.data(), v.size() * sizeof(v[0]));
  };
  put(data.out_offsets, out_offsets);
  put(data.out_list, out_list);
  put(data.in_offsets, in_offsets);
  put(data.in_list, in_list);
  put(data.complement_offsets, complement_offsets);
  put(data.complement_list, complement_list);
  put(data.exploration, exploration);
  put(data.dominator_order, dominator_order);
  put(data.use_complement, use_complement);
  put(data.adjacency, adjacency);
  return data;
}

GraphTables GraphTableData::view(const void* base) const {
  GraphTables c = scalars;
  c.out_offsets = at<std::uint32_t>(base, out_offsets);
  c.out_list = at<std::uint32_t>(base, out_list);
  c.in_offsets = at<std::uint32_t>(base, in_offsets);
  c.in_list = at<std::uint32_t>(base, in_list);
  c.complement_offsets = at<std::uint32_t>(base, complement_offsets);
  c.complement_list = at<std::uint32_t>(base, complement_list);
  c.exploration = at<std::uint32_t>(base, exploration);
  c.dominator_order = at<std::uint32_t>(base, dominator_order);
  c.use_complement = at<std::uint8_t>(base, use_complement);
  c.adjacency = at<std::uint8_t>(base, adjacency);
  return c;
}

GraphStateData::GraphStateData(const GraphTables& tables, std::size_t n_replicates) : c_(tables), R_(n_replicates) {
  ByteArena arena;
  slices_at_ = arena.reserve<ReplicateSlices>(1);
  GraphStates layout;  // visit_graph_state() only names the arrays here
  visit_graph_state(c_, layout, [&](auto*& array, std::size_t count) {
    using T = std::remove_pointer_t<std::remove_reference_t<decltype(array)>>;
    slices_.reserve<T>(arena, R_, count);
  });
  bytes_.assign(arena.words(), 0);
  std::memcpy(static_cast<unsigned char*>(static_cast<void*>(bytes_.data())) + slices_at_, &slices_, sizeof slices_);
}

GraphStates GraphStateData::view(void* base) const {
  GraphStates s = graph_states_at(c_, base, slices_, false);
  s.arena = base;
  s.slices = at<ReplicateSlices>(base, slices_at_);
  return s;
}

void GraphStateData::load(const std::vector<GraphReplicate>& reps) {
  const GraphStates s = view();
  const std::size_t n = c_.n, J = c_.J, M = c_.M;
  for (std::size_t r = 0; r < R_; ++r) {
    const GraphReplicate& rep = reps[r];
    s.rng[r] = StreamPosition::of(rep.rng->counter_stream());
    s.updates[r] = 0;
    std::copy(rep.log_w.begin(), rep.log_w.end(), s.log_w + r * n);
    if (c_.family != 0) {
      std::copy(rep.log_u.begin(), rep.log_u.end(), s.log_u + r * n);
      s.u_valid[r] = rep.u_valid ? 1 : 0;
      s.u_ref[r] = rep.u_ref;
      if (rep.u_valid) std::copy(rep.u_lin.begin(), rep.u_lin.end(), s.u_lin + r * n);
    }
    if (c_.family == 2) {
      if (rep.u_valid) {
        std::copy(rep.by_weight.begin(), rep.by_weight.end(), s.by_weight + r * n);
        std::copy(rep.weight_rank.begin(), rep.weight_rank.end(), s.weight_rank + r * n);
      }
      s.refined[r] = rep.refined ? 1 : 0;
      s.set_size[r] = static_cast<std::uint32_t>(rep.refined_set.size());
      for (std::size_t i = 0; i < rep.refined_set.size(); ++i)
        s.refined_set[r * n + i] = static_cast<std::uint32_t>(rep.refined_set[i]);
      if (rep.refined) {
        std::uint32_t* added_from = s.added_from + r * n;
        for (std::size_t i = 0; i < n; ++i) {
          const std::size_t a = rep.refined_graph.added_from(i);
          added_from[i] = a == RefinedGraph::npos ? kNoVertex : static_cast<std::uint32_t>(a);
        }
        index_added_edges(static_cast<std::uint32_t>(n), added_from, s.added_start + r * (n + 1),
                          s.added_targets + r * n);
      }
    }
    if (c_.family == 0) {
      s.has_graph[r] = rep.has_graph ? 1 : 0;
      std::copy(rep.regen_w.begin(), rep.regen_w.end(), s.regen_w + r * n);
      s.regen_eta[r] = rep.regen_eta;
      std::copy(rep.regen_uniforms.begin(), rep.regen_uniforms.end(), s.regen_uniforms + r * J * M);
      if (rep.has_graph) {
        const BipartiteFeedbackGraph& g = *rep.bipartite;
        for (std::size_t k = 0; k < n; ++k)
          for (std::size_t j = 0; j < J; ++j) {
            s.link_p[(r * n + k) * J + j] = g.link_probability(k, j);
            s.linked[(r * n + k) * J + j] = g.linked(k, j) ? 1 : 0;
          }
        for (std::size_t j = 0; j < J; ++j) {
          const auto& list = g.kernels(j);
          s.node_count[r * J + j] = static_cast<std::uint32_t>(list.size());
          for (std::size_t i = 0; i < list.size(); ++i)
            s.node_kernels[(r * J + j) * M + i] = static_cast<std::uint32_t>(list[i]);
        }
      }
    }
  }
}

void GraphStateData::store(std::vector<GraphReplicate>& reps, const GraphAidedConfig& config, std::int64_t t_last,
                           double eta_last, const double* last_predictions) {
  const GraphStates s = view();
  const std::size_t n = c_.n, J = c_.J, M = c_.M, P = c_.max_pairs;
  const std::size_t pmf = std::max(n, J);
  for (std::size_t r = 0; r < R_; ++r) {
    GraphReplicate& rep = reps[r];
    rep.rng->seek_counter(s.rng[r].position);
    std::copy(s.log_w + r * n, s.log_w + (r + 1) * n, rep.log_w.begin());
    if (c_.family != 0) {
      std::copy(s.log_u + r * n, s.log_u + (r + 1) * n, rep.log_u.begin());
      rep.u_ref = s.u_ref[r];
      // The weights and their order recomputed from (log_u, u_ref), as a checkpoint restores
      // them: every entry the walk kept is exp(log_u − u_ref) of its last change.
      if (s.u_valid[r]) refresh_vertex_weights(rep);
      else rep.u_valid = false;
    }
    if (c_.family == 2) {
      rep.refined = s.refined[r] != 0;
      rep.refined_set.assign(s.refined_set + r * n, s.refined_set + r * n + s.set_size[r]);
      if (rep.refined) rebuild_refined(config, rep);
    }
    if (c_.family == 0) {
      rep.has_graph = s.has_graph[r] != 0;
      rep.regen_w.assign(s.regen_w + r * n, s.regen_w + (r + 1) * n);
      rep.regen_eta = s.regen_eta[r];
      rep.regen_uniforms.assign(s.regen_uniforms + r * J * M, s.regen_uniforms + (r + 1) * J * M);
      if (rep.has_graph) rep.bipartite->regenerate(rep.regen_w, rep.regen_eta, rep.regen_uniforms.data(), config.gf_rule());
    }
    GraphAidedTrace& tr = rep.trace;
    const std::uint32_t count = s.n_pairs[r];
    tr.t = t_last;
    tr.eta = eta_last;
    tr.explore = config.explore_at(t_last);
    tr.node = s.node[r];
    tr.node_pmf.assign(s.pmf + r * pmf, s.pmf + r * pmf + (c_.family == 0 ? J : n));
    tr.updated.assign(s.updated + r * P, s.updated + r * P + count);
    tr.predicted.assign(tr.updated.begin(), tr.updated.begin() + s.n_predicted[r]);
    tr.q.assign(s.q + r * P, s.q + r * P + count);
    tr.q_used.assign(s.q_used + r * P, s.q_used + r * P + count);
    tr.f.clear();  // the walk does not keep the pairs' outputs
    tr.prediction = last_predictions ? last_predictions[r] : 0.0;
    if (c_.family == 1) tr.exploration_set = config.dominating;
    else if (c_.family == 2) tr.exploration_set = rep.refined_set;
    else tr.exploration_set.clear();
  }
}

std::uint64_t GraphStateData::updates() {
  const GraphStates s = view();
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < R_; ++r) total += s.updates[r];
  return total;
}

}  // namespace omkl::detail
