/// @file graph_selection.cpp
/// @brief Per-replicate selection and prediction of the graph-aided family (graph_selection.h).
#include "families/graph_aided/graph_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/kernel_weights.h"
#include "random/sampling.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

std::size_t argmax_first(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

/// exp(log_u − u_ref), refreshed in full (u_ref = max log_u) only when it is missing or its
/// largest entry has drifted below kLinearWeightRefreshFloor; otherwise step() keeps it current.
const std::vector<double>& vertex_weights_lin(GraphReplicate& rep) {
  double top = 0.0;
  if (rep.u_valid)
    for (double v : rep.u_lin) top = std::max(top, v);
  if (!rep.u_valid || top < kLinearWeightRefreshFloor) {
    rep.u_ref = -std::numeric_limits<double>::infinity();
    for (double a : rep.log_u) rep.u_ref = std::max(rep.u_ref, a);
    refresh_vertex_weights(rep);
  }
  return rep.u_lin;
}

bool positive_sum(const std::vector<double>& w) {
  double total = 0.0;
  for (double v : w) total += v;
  return total > 0.0;  // false for NaN too
}

/// The step of a replicate whose weights are all gone (GraphAidedTrace::diverged).
void mark_diverged(GraphAidedTrace& tr) {
  tr.diverged = true;
  tr.node = 0;
  tr.node_pmf.clear();
  tr.updated.clear();
  tr.predicted.clear();
  tr.exploration_set.clear();
}

}  // namespace

void shifted_exp(const std::vector<double>& log_w, std::vector<double>& out) {
  double m = -std::numeric_limits<double>::infinity();
  for (double a : log_w) m = std::max(m, a);
  out.resize(log_w.size());
  for (std::size_t i = 0; i < log_w.size(); ++i) out[i] = exp_or_zero(log_w[i] - m);
}

void rebuild_refined(const GraphAidedConfig& c, GraphReplicate& rep) {
  rep.refined_graph.refine(c.graph, c.dominator_order, rep.refined_set, c.refinement);
}

void refresh_vertex_weights(GraphReplicate& rep) {
  const std::size_t n = rep.log_u.size();
  rep.u_lin.resize(n);
  for (std::size_t i = 0; i < n; ++i) rep.u_lin[i] = exp_or_zero(rep.log_u[i] - rep.u_ref);
  rep.u_valid = true;
  rep.by_weight.resize(n);
  for (std::size_t i = 0; i < n; ++i) rep.by_weight[i] = static_cast<std::uint32_t>(i);
  std::stable_sort(rep.by_weight.begin(), rep.by_weight.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return rep.u_lin[a] > rep.u_lin[b]; });
  rep.weight_rank.resize(n);
  for (std::size_t k = 0; k < n; ++k) rep.weight_rank[rep.by_weight[k]] = static_cast<std::uint32_t>(k);
}

void set_vertex_weight(GraphReplicate& rep, std::size_t v, double value) {
  rep.u_lin[v] = value;
  std::vector<std::uint32_t>& order = rep.by_weight;
  std::size_t k = rep.weight_rank[v];
  while (k + 1 < order.size() && rep.u_lin[order[k + 1]] > value) {
    order[k] = order[k + 1];
    rep.weight_rank[order[k]] = static_cast<std::uint32_t>(k);
    ++k;
  }
  while (k > 0 && rep.u_lin[order[k - 1]] < value) {
    order[k] = order[k - 1];
    rep.weight_rank[order[k]] = static_cast<std::uint32_t>(k);
    --k;
  }
  order[k] = static_cast<std::uint32_t>(v);
  rep.weight_rank[v] = static_cast<std::uint32_t>(k);
}

void plan_selection(const GraphAidedConfig& c, GraphReplicate& rep, std::int64_t t, double eta) {
  GraphAidedTrace& tr = rep.trace;
  const double explore = c.explore_at(t);  // η_{e,t} (GF) or ξ_t (SFG / SFG-R)
  tr.t = t;
  tr.eta = eta;
  tr.explore = explore;
  tr.q.clear();
  tr.q_used.clear();
  tr.diverged = false;
  if (c.family == GraphFamily::Gf) {
    if (t <= c.last_regen) {
      std::vector<double>& w = rep.weights;
      shifted_exp(rep.log_w, w);
      if (!positive_sum(w)) return mark_diverged(tr);
      for (double& u : rep.regen_uniforms) u = rep.rng->uniform();
      rep.regen_w = w;
      rep.regen_eta = explore;
      rep.bipartite->regenerate(w, explore, rep.regen_uniforms.data(), c.gf_rule());
      rep.has_graph = true;
    }
    // Selective-node weights Σ_{k linked to j} w_k, shifted by the heaviest *linked* kernel:
    // once the graph stops regenerating, every kernel it links may have fallen far behind the
    // heaviest kernel overall, and w shifted by that maximum would underflow to all zeros.
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t j = 0; j < c.J; ++j)
      for (std::size_t k : rep.bipartite->kernels(j)) top = std::max(top, rep.log_w[k]);
    std::vector<double> u(c.J, 0.0);
    for (std::size_t j = 0; j < c.J; ++j)
      for (std::size_t k : rep.bipartite->kernels(j)) u[j] += std::exp(rep.log_w[k] - top);
    if (!positive_sum(u)) return mark_diverged(tr);
    tr.node_pmf = selective_node_probabilities(u, explore);
    tr.node = sample_index(tr.node_pmf, rep.rng->uniform(), SamplerRule::InverseCdf);
    tr.updated = rep.bipartite->kernels(tr.node);
    tr.predicted = tr.updated;
    for (std::size_t k : tr.updated) tr.q.push_back(rep.bipartite->observation_probability(k, tr.node_pmf));
    tr.exploration_set.clear();
  } else {
    const std::vector<double>& u = vertex_weights_lin(rep);
    if (!positive_sum(u)) return mark_diverged(tr);
    const SamplerRule rule = c.shifted ? SamplerRule::Shifted : SamplerRule::InverseCdf;
    const bool before = t <= c.switch_step;
    const RefinedGraph* refined = nullptr;
    if (c.family == GraphFamily::Sfg) {
      tr.exploration_set = c.dominating;
    } else {
      if (!rep.refined || before || !c.freeze_refinement) {
        std::vector<std::size_t>& set = rep.candidate_set;
        if (c.beta_fixed > 0) {
          set = refinement_set(u, explore, c.beta_fixed);
          if (set.empty()) set.push_back(argmax_first(u));
        } else {
          refinement_set_from_sorted(u, rep.by_weight, explore, c.beta_rank, c.beta_eps, set);
        }
        if (!rep.refined || set != rep.refined_set) {
          rep.refined_set.swap(set);
          rebuild_refined(c, rep);
        }
        rep.refined = true;
      }
      tr.exploration_set = rep.refined_set;
      refined = &rep.refined_graph;
    }
    vertex_probabilities(u, explore, tr.exploration_set, tr.node_pmf);
    double p_total = 0.0;
    for (double v : tr.node_pmf) p_total += v;
    if (c.family == GraphFamily::SfgR && c.double_draw && before) (void)rep.rng->uniform();
    const AfterSwitch mode = before ? AfterSwitch::KeepSampling : c.after_switch;
    if (mode == AfterSwitch::KeepSampling) tr.node = sample_index(tr.node_pmf, rep.rng->uniform(), rule);
    else if (mode == AfterSwitch::Fixed0) tr.node = 0;
    else tr.node = argmax_first(u);
    if (refined) {
      refined->out_neighbours(tr.node, tr.updated);
      if (c.predict_with_refined) tr.predicted = tr.updated;
      else tr.predicted = c.graph.out_neighbours(tr.node);
      // N'_in(k) = N_in(k) plus at most the refinement edge into k; the sums run over the
      // shorter side of N_in(k), since a few kernels have in-degree N (feedback_graph.h).
      for (std::size_t k : tr.updated)
        tr.q.push_back(c.observation_sums.q(k, tr.node_pmf, p_total, refined->added_from(k)));
    } else {
      tr.updated = c.graph.out_neighbours(tr.node);
      tr.predicted = tr.updated;
      for (std::size_t k : tr.updated) tr.q.push_back(c.observation_sums.q(k, tr.node_pmf, p_total));
    }
  }
  for (double q : tr.q) tr.q_used.push_back(std::max(q, c.q_floor));
}

double combine_prediction(const GraphReplicate& rep, const std::vector<std::size_t>& updated,
                        const std::vector<double>& f, const std::vector<std::size_t>& predicted) {
  if (rep.trace.diverged) return std::numeric_limits<double>::quiet_NaN();
  if (predicted.empty()) return 0.0;
  double m = -std::numeric_limits<double>::infinity();
  for (std::size_t k : predicted) m = std::max(m, rep.log_w[k]);
  double num = 0.0, den = 0.0;
  for (std::size_t k : predicted) {
    // predicted ⊆ updated (the refined lists extend the base lists).
    const auto it = std::find(updated.begin(), updated.end(), k);
    if (it == updated.end()) throw Error("graph-aided: predicted kernel not evaluated");
    const double w = std::exp(rep.log_w[k] - m);
    num += w * f[static_cast<std::size_t>(it - updated.begin())];
    den += w;
  }
  return num / den;
}

}  // namespace omkl::detail
