/// @file resident_sfg.cpp
/// @brief Host side of the resident OMKL-SFG program (resident_sfg.h): the flattened tables and
/// the state's round trip to the host path's replicates.
#include "families/graph_aided/resident_sfg.h"

#include <algorithm>
#include <string>

#include "families/graph_aided/graph_aided_config.h"
#include "families/graph_aided/graph_selection.h"

namespace omkl::detail {

namespace {

// Appends lists[k] for k = 0..n-1 as CSR (offsets n + 1).
template <typename ListOf>
void append_csr(std::size_t n, ListOf&& list_of, std::vector<std::uint32_t>& offsets,
                std::vector<std::uint32_t>& entries) {
  offsets.assign(1, 0);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t v : list_of(k)) entries.push_back(static_cast<std::uint32_t>(v));
    offsets.push_back(static_cast<std::uint32_t>(entries.size()));
  }
}

}  // namespace

std::string resident_sfg_unsupported(const GraphAidedConfig& config) {
  if (config.family == GraphFamily::Gf)
    return "OMKL-GF regenerates its bipartite graph every step on the host";
  if (config.family == GraphFamily::SfgR)
    return "the OMKL-SFG-R refinement runs on the host";
  if (config.rf.numpy_legacy) return "rng = numpy_legacy replays NumPy's stream on the host";
  if (config.vertex_ridge) return "u_loss = ridge reads every selected θ on the host";
  if (config.rf.loss != LossKind::Squared) return "only the squared loss is implemented";
  if (config.graph.size() > kMaxResidentPairs)
    return "N = " + std::to_string(config.graph.size()) + " exceeds the " + std::to_string(kMaxResidentPairs) +
           " kernels a resident step holds";
  return {};
}

SfgTableData make_sfg_tables(const GraphAidedConfig& config, double feature_scale, std::size_t n_rff) {
  SfgTableData data;
  const std::size_t n = config.graph.size();
  SfgTables& c = data.scalars;
  c.n = static_cast<std::uint32_t>(n);
  append_csr(n, [&](std::size_t k) -> const std::vector<std::size_t>& { return config.graph.out_neighbours(k); },
             data.out_offsets, data.out_list);
  append_csr(n, [&](std::size_t k) -> const std::vector<std::size_t>& { return config.observation_sums.in_list(k); },
             data.in_offsets, data.in_list);
  append_csr(
      n, [&](std::size_t k) -> const std::vector<std::size_t>& { return config.observation_sums.complement_list(k); },
      data.complement_offsets, data.complement_list);
  data.use_complement.resize(n);
  for (std::size_t k = 0; k < n; ++k) data.use_complement[k] = config.observation_sums.uses_complement(k) ? 1 : 0;
  for (std::size_t v : config.dominating) data.exploration.push_back(static_cast<std::uint32_t>(v));
  c.n_exploration = static_cast<std::uint32_t>(data.exploration.size());
  std::size_t max_pairs = 0;
  for (std::size_t k = 0; k < n; ++k) max_pairs = std::max(max_pairs, config.graph.out_degree(k));
  c.max_pairs = static_cast<std::uint32_t>(max_pairs);
  c.eta = config.eta;
  c.inv_sqrt_t = config.inv_sqrt_t ? 1 : 0;
  c.switch_step = config.switch_step;
  c.shifted = config.shifted ? 1 : 0;
  c.after_switch = static_cast<int>(config.after_switch);
  c.q_floor = config.q_floor;
  c.p_floor = config.p_floor;
  c.lambda = config.rf.lambda;
  c.z2 = feature_scale * feature_scale * static_cast<double>(n_rff);
  c.updated_theta_loss = config.updated_theta_loss ? 1 : 0;
  return data;
}

SfgTables SfgTableData::view() const {
  SfgTables c = scalars;
  c.out_offsets = out_offsets.data();
  c.out_list = out_list.data();
  c.in_offsets = in_offsets.data();
  c.in_list = in_list.data();
  c.complement_offsets = complement_offsets.data();
  c.complement_list = complement_list.data();
  c.use_complement = use_complement.data();
  c.exploration = exploration.data();
  return c;
}

SfgStateData::SfgStateData(std::size_t n_vertices, std::size_t max_pairs_, std::size_t n_replicates_)
    : n(n_vertices), max_pairs(max_pairs_), n_replicates(n_replicates_) {
  const std::size_t R = n_replicates;
  log_w.assign(R * n, 0.0);
  log_u.assign(R * n, 0.0);
  u_lin.assign(R * n, 0.0);
  pmf.assign(R * n, 0.0);
  u_ref.assign(R, 0.0);
  u_valid.assign(R, 0);
  rng.resize(R);
  node.assign(R, 0);
  n_pairs.assign(R, 0);
  updated.assign(R * max_pairs, 0);
  q_used.assign(R * max_pairs, 0.0);
  updates.assign(R, 0);
}

SfgStates SfgStateData::view() {
  return {log_w.data(), log_u.data(),  u_lin.data(),   u_ref.data(),   u_valid.data(), rng.data(),
          pmf.data(),   node.data(),   n_pairs.data(), updated.data(), q_used.data(), updates.data()};
}

void SfgStateData::load(const std::vector<GraphReplicate>& reps) {
  for (std::size_t r = 0; r < n_replicates; ++r) {
    const GraphReplicate& rep = reps[r];
    std::copy(rep.log_w.begin(), rep.log_w.end(), log_w.begin() + static_cast<std::ptrdiff_t>(r * n));
    std::copy(rep.log_u.begin(), rep.log_u.end(), log_u.begin() + static_cast<std::ptrdiff_t>(r * n));
    u_valid[r] = rep.u_valid ? 1 : 0;
    u_ref[r] = rep.u_ref;
    if (rep.u_valid) std::copy(rep.u_lin.begin(), rep.u_lin.end(), u_lin.begin() + static_cast<std::ptrdiff_t>(r * n));
    rng[r] = StreamPosition::of(rep.rng->counter_stream());
    updates[r] = 0;
  }
}

void SfgStateData::store(std::vector<GraphReplicate>& reps, std::int64_t t_last, double eta_last,
                         const double* last_predictions) const {
  for (std::size_t r = 0; r < n_replicates; ++r) {
    GraphReplicate& rep = reps[r];
    const auto at = [&](const std::vector<double>& v, std::size_t stride) {
      return v.begin() + static_cast<std::ptrdiff_t>(r * stride);
    };
    std::copy(at(log_w, n), at(log_w, n) + static_cast<std::ptrdiff_t>(n), rep.log_w.begin());
    std::copy(at(log_u, n), at(log_u, n) + static_cast<std::ptrdiff_t>(n), rep.log_u.begin());
    rep.u_ref = u_ref[r];
    if (u_valid[r]) {
      // u_lin and its order, recomputed from (log_u, u_ref) as a checkpoint restores them: the
      // walk kept exactly these values (each entry is exp(log_u − u_ref) of its last change).
      rep.u_ref = u_ref[r];
      refresh_vertex_weights(rep);
    } else {
      rep.u_valid = false;
    }
    rep.rng->seek_counter(rng[r].position);
    GraphAidedTrace& tr = rep.trace;
    tr.t = t_last;
    tr.eta = eta_last;
    tr.node = node[r];
    tr.node_pmf.assign(at(pmf, n), at(pmf, n) + static_cast<std::ptrdiff_t>(n));
    tr.updated.assign(updated.begin() + static_cast<std::ptrdiff_t>(r * max_pairs),
                      updated.begin() + static_cast<std::ptrdiff_t>(r * max_pairs + n_pairs[r]));
    tr.predicted = tr.updated;
    tr.q_used.assign(at(q_used, max_pairs), at(q_used, max_pairs) + static_cast<std::ptrdiff_t>(n_pairs[r]));
    tr.q = tr.q_used;  // the walk keeps q̃ only
    tr.f.clear();
    tr.prediction = last_predictions ? last_predictions[r] : 0.0;
    tr.exploration_set.clear();
  }
}

}  // namespace omkl::detail
