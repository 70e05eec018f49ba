// The graph-aided family's profile switches (spec/graph-aided.md §3) where the two profiles part:
// what SFG and SFG-R do after the switch step (R13, R14, §7 A-4), SFG-R's prediction set (R17),
// GF's last regenerated graph (R11), the floors of q and p (R6–R8) that the paper profile does
// not have, the conference variants' configuration (§2.7), the graph and refinement switches
// (R1–R4, R16, R18, R19), and the log-domain fallback when the weights of a step's set underflow
// (§6.4, A-18) — each checked on what the step or the configuration does, not only on the walk
// agreeing with the host path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <set>
#include <string>

#include "common/test_helpers.h"
#include "core/params.h"
#include "families/graph_aided/divergence.h"
#include "families/graph_aided/dominating_set.h"
#include "families/graph_aided/feedback_graph.h"
#include "families/graph_aided/graph_aided.h"
#include "families/graph_aided/graph_aided_config.h"
#include "families/graph_aided/refinement.h"
#include "omkl/kernel_spec.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

const std::string kFiveGaussians = "gauss:0.3+gauss:0.6+gauss:1+gauss:2+gauss:4";

// n Gaussians, σ = 0.2·1.4^k: a dictionary large enough that every vertex probability is below
// the reference floors.
std::string gaussians(std::size_t n) {
  std::string dict;
  for (std::size_t k = 0; k < n; ++k) dict += (k ? "+gauss:" : "gauss:") + std::to_string(0.2 * std::pow(1.4, double(k)));
  return dict;
}

std::size_t first_argmax(const std::vector<double>& v) {
  return static_cast<std::size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// ŷ = Σ_{k∈set} w_k f_k / Σ_{k∈set} w_k, with f_k from the trace (one per entry of `updated`).
double combination(const GraphAidedTrace& tr, const std::vector<double>& w, const std::vector<std::size_t>& set) {
  double num = 0.0, den = 0.0;
  for (std::size_t k : set) {
    const auto at = std::find(tr.updated.begin(), tr.updated.end(), k);
    EXPECT_NE(at, tr.updated.end()) << "kernel " << k << " predicted but not evaluated";
    if (at == tr.updated.end()) continue;
    num += w[k] * tr.f[static_cast<std::size_t>(at - tr.updated.begin())];
    den += w[k];
  }
  return num / den;
}

GraphAidedConfig config(const std::string& name, const AlgoContext& c, GraphFamily family, bool conference,
                        const Params& p) {
  ParamReader params(name, p);
  return read_graph_aided_config(params, c, family, conference);
}

}  // namespace

TEST(GraphAidedSwitchesTest, SfgRReferencePredictsWithTheOriginalListAndUpdatesTheRefined) {
  // §2.6.b steps 6–7 and §3 R17: S_upd = N_out_ref(I), S_pred = N_out(I). With the published NaN
  // divergences N_out_ref(0) is every kernel, and vertex 0 is drawn here after the switch
  // (sfgr_after_switch = fixed0), so the two sets differ; sfgr_predict_with_refined = true (the
  // paper's reading) predicts over the refined set instead.
  const auto data = random_stream(12, 2, Task::Regression);
  for (const bool refined : {false, true}) {
    Params params{{"dict", kFiveGaussians}, {"D", "3"},           {"M", "2"},
                  {"eta", "0.3"},   {"beta_rank", "2"},   {"switch_step", "5"},
                  {"sfgr_after_switch", "fixed0"}};
    if (refined) params.emplace_back("sfgr_predict_with_refined", "true");
    auto algo = make("omkl-sfg-r", context_for(data, Profile::Reference), params);
    run_steps(*algo, data, 0, 5);
    double largest_gap = 0.0;
    for (std::size_t t = 5; t < 12; ++t) {
      const auto w = graph_aided_kernel_weights(*algo, 0);  // before the step
      double pred = 0.0;
      algo->step(data.row(t), data.y[t], &pred);
      const GraphAidedTrace& tr = *graph_aided_trace(*algo, 0);
      ASSERT_EQ(tr.node, 0u) << t;
      ASSERT_EQ(tr.updated.size(), 5u) << "N_out_ref(0) is every kernel";
      const std::set<std::size_t> all(tr.updated.begin(), tr.updated.end());
      EXPECT_EQ(all.size(), 5u);
      if (refined) {
        EXPECT_EQ(tr.predicted, tr.updated);
      } else {
        ASSERT_EQ(tr.predicted.size(), 2u) << "N_out(0), M = 2";
        EXPECT_TRUE(std::equal(tr.predicted.begin(), tr.predicted.end(), tr.updated.begin()))
            << "the refined list extends the original one";
      }
      EXPECT_NEAR(pred, combination(tr, w, tr.predicted), 1e-12) << t;
      largest_gap = std::max(largest_gap, std::fabs(pred - combination(tr, w, tr.updated)));
    }
    // Without the flag the prediction is not the refined set's combination: the check above
    // could not pass on the wrong set.
    if (refined) EXPECT_EQ(largest_gap, 0.0);
    else EXPECT_GT(largest_gap, 1e-6);
  }
}

TEST(GraphAidedSwitchesTest, SfgRPaperAfterTheSwitch) {
  // §7 A-4, paper profile: for t > S the vertex is argmax u (ties → smallest), D'_t is refreshed
  // every step (§3 R14), and u_I keeps moving by exp(−η_t (ŷ − y)²/p_I) with no floor.
  // sfgr_freeze_refinement_after_switch keeps D' of step S; sfgr_after_switch = fixed0 takes 0.
  const auto data = random_stream(25, 2, Task::Regression);
  const Params common{{"dict", kFiveGaussians}, {"D", "3"}, {"M", "2"}, {"beta_rank", "2"}, {"eta", "0.5"}, {"switch_step", "10"}};
  auto algo = make("omkl-sfg-r", context_for(data), common);
  run_steps(*algo, data, 0, 10);
  std::set<std::size_t> nodes_after;
  for (std::size_t t = 10; t < 25; ++t) {
    const auto u = graph_aided_vertex_weights(*algo, 0);
    const auto log_u = [&] {
      std::vector<double> v = graph_aided_vertex_weights(*algo, 0);
      for (double& x : v) x = std::log(x);
      return v;
    };
    const std::vector<double> before = log_u();
    double pred = 0.0;
    algo->step(data.row(t), data.y[t], &pred);
    const GraphAidedTrace& tr = *graph_aided_trace(*algo, 0);
    ASSERT_EQ(tr.node, first_argmax(u)) << "t = " << tr.t;
    nodes_after.insert(tr.node);
    EXPECT_EQ(tr.exploration_set, refinement_set_from_rank(u, tr.explore, 2)) << "t = " << tr.t;
    // Only u_I moves (the weights are normalised to a maximum of 1, so compare log-ratios).
    const std::vector<double> after = log_u();
    const std::size_t other = tr.node == 0 ? 1 : 0;
    const double moved = (after[tr.node] - after[other]) - (before[tr.node] - before[other]);
    const double p = tr.node_pmf[tr.node];
    EXPECT_NEAR(moved, -tr.eta * (pred - data.y[t]) * (pred - data.y[t]) / p, 1e-12) << "t = " << tr.t;
  }
  // Frozen refinement: D' stays that of step S = 10.
  Params frozen = common;
  frozen.emplace_back("sfgr_freeze_refinement_after_switch", "true");
  auto held = make("omkl-sfg-r", context_for(data), frozen);
  run_steps(*held, data, 0, 10);
  const std::vector<std::size_t> at_switch = graph_aided_trace(*held, 0)->exploration_set;
  for (std::size_t t = 10; t < 25; ++t) {
    double pred = 0.0;
    held->step(data.row(t), data.y[t], &pred);
    EXPECT_EQ(graph_aided_trace(*held, 0)->exploration_set, at_switch) << t;
  }
  Params fixed = common;
  fixed.emplace_back("sfgr_after_switch", "fixed0");
  auto zero = make("omkl-sfg-r", context_for(data), fixed);
  run_steps(*zero, data, 0, 10);
  for (std::size_t t = 10; t < 25; ++t) {
    double pred = 0.0;
    zero->step(data.row(t), data.y[t], &pred);
    EXPECT_EQ(graph_aided_trace(*zero, 0)->node, 0u) << t;
  }
}

TEST(GraphAidedSwitchesTest, SfgAfterTheSwitchByProfile) {
  // Paper (§7 A-4): argmax u, and u_I moves by exp(−η(ŷ − y)²/p_I) with p_I the PMF value — with
  // 12 vertices p_I < 0.2, so the reference floor would show. Reference (§2.5.b (ii)): vertex 0
  // at every step, and only u_0 moves. keep_sampling (reference sampler): still drawn, never 0.
  const auto data = random_stream(45, 2, Task::Regression);
  const std::string dict = gaussians(12);
  auto paper = make("omkl-sfg", context_for(data), {{"dict", dict}, {"D", "3"}, {"M", "3"}, {"eta", "0.4"}, {"switch_step", "10"}});
  run_steps(*paper, data, 0, 10);
  for (std::size_t t = 10; t < 25; ++t) {
    std::vector<double> before = graph_aided_vertex_weights(*paper, 0);
    double pred = 0.0;
    paper->step(data.row(t), data.y[t], &pred);
    const GraphAidedTrace& tr = *graph_aided_trace(*paper, 0);
    EXPECT_EQ(tr.node, first_argmax(before)) << t;
    const std::vector<double> after = graph_aided_vertex_weights(*paper, 0);
    const std::size_t other = tr.node == 0 ? 1 : 0;
    const double moved = std::log(after[tr.node] / after[other]) - std::log(before[tr.node] / before[other]);
    const double p = tr.node_pmf[tr.node];
    ASSERT_LT(p, 0.2);
    EXPECT_NEAR(moved, -tr.eta * (pred - data.y[t]) * (pred - data.y[t]) / p, 1e-12) << t;
  }

  auto reference = make("omkl-sfg", context_for(data, Profile::Reference),
                        {{"dict", dict}, {"D", "3"}, {"M", "3"}, {"switch_step", "3"}});
  run_steps(*reference, data, 0, 3);
  const std::vector<double> at_switch = graph_aided_vertex_weights(*reference, 0);
  for (std::size_t t = 3; t < 20; ++t) {
    double pred = 0.0;
    reference->step(data.row(t), data.y[t], &pred);
    EXPECT_EQ(graph_aided_trace(*reference, 0)->node, 0u) << t;
  }
  const std::vector<double> later = graph_aided_vertex_weights(*reference, 0);
  for (std::size_t j = 2; j < 12; ++j)  // the ratios among u_1 … u_11 never change
    EXPECT_NEAR(std::log(later[j] / later[1]), std::log(at_switch[j] / at_switch[1]), 1e-12) << j;
  EXPECT_GT(std::fabs(std::log(later[0] / later[1]) - std::log(at_switch[0] / at_switch[1])), 1e-6) << "u_0 moves";

  auto sampling = make("omkl-sfg", context_for(data, Profile::Reference),
                       {{"dict", dict}, {"D", "3"}, {"M", "3"}, {"switch_step", "3"}, {"sfg_after_switch", "keep_sampling"}});
  run_steps(*sampling, data, 0, 3);
  std::set<std::size_t> drawn;
  for (std::size_t t = 3; t < 45; ++t) {
    double pred = 0.0;
    sampling->step(data.row(t), data.y[t], &pred);
    const std::size_t node = graph_aided_trace(*sampling, 0)->node;
    EXPECT_NE(node, 0u) << "the shifted sampler never returns 0 (§1.8)";
    drawn.insert(node);
  }
  EXPECT_GE(drawn.size(), 2u);
}

TEST(GraphAidedSwitchesTest, ThePaperProfileHasNoFloors) {
  // §3 R6–R8: the reference clips q at 0.1 (SFG) / 0.05 (GF) and p_I at 0.2 in the vertex loss;
  // the paper's equations do not. First steps where every floor binds: SFG with 12 vertices and
  // M = 1 (q_k = p_k = 1/12, D = every vertex), GF with 30 kernels, J = M = 1 (q_k = 1/30).
  const auto data = random_stream(3, 2, Task::Regression);
  const double y2 = data.y[0] * data.y[0];
  for (const Profile profile : {Profile::Paper, Profile::Reference}) {
    const bool reference = profile == Profile::Reference;
    auto sfg = make("omkl-sfg", context_for(data, profile), {{"dict", gaussians(12)}, {"D", "3"}, {"M", "1"}, {"eta", "0.3"}});
    double pred = 0.0;
    sfg->step(data.row(0), data.y[0], &pred);
    ASSERT_EQ(pred, 0.0);
    const GraphAidedTrace& tr = *graph_aided_trace(*sfg, 0);
    ASSERT_EQ(tr.q.size(), 1u);
    EXPECT_NEAR(tr.q[0], 1.0 / 12.0, 1e-15);
    EXPECT_EQ(tr.q_used[0], reference ? 0.1 : tr.q[0]);
    const double p = tr.node_pmf[tr.node];
    EXPECT_NEAR(p, 1.0 / 12.0, 1e-15);
    const auto u = graph_aided_vertex_weights(*sfg, 0);  // u_I < 1 = the others
    EXPECT_NEAR(std::log(u[tr.node]), -0.3 * y2 / (reference ? 0.2 : p), 1e-12);

    auto gf = make("omkl-gf", context_for(data, profile), {{"dict", gaussians(30)}, {"D", "3"}, {"J", "1"}, {"M", "1"}, {"eta", "0.3"}});
    gf->step(data.row(0), data.y[0], &pred);
    const GraphAidedTrace& g = *graph_aided_trace(*gf, 0);
    ASSERT_EQ(g.q.size(), 1u);
    EXPECT_NEAR(g.q[0], 1.0 / 30.0, 1e-15);
    EXPECT_EQ(g.q_used[0], reference ? 0.05 : g.q[0]);
    // The kernel's weight moves by its loss over q̃ (squared error of f = 0; the paper form has no
    // ridge term on the first step, the reference one adds λ‖θ_{t+1}‖², checked elsewhere).
    if (!reference) {
      const auto log_w = graph_aided_log_kernel_weights(*gf, 0);
      EXPECT_NEAR(log_w[g.updated[0]], -0.3 * y2 / g.q[0], 1e-12);
    }
  }
}

TEST(GraphAidedSwitchesTest, GfLastRegeneratedGraph) {
  // §3 R11: the bipartite graph is regenerated through step S (paper) or S + 2 (reference), then
  // frozen; −1 never freezes. A later last step draws J·M more kernels at each step it adds, so
  // runs agree up to the earlier one and differ after; once frozen, a selective node always
  // updates the same kernels.
  const auto data = random_stream(60, 2, Task::Regression);
  const AlgoContext paper = context_for(data), reference = context_for(data, Profile::Reference);
  EXPECT_EQ(config("omkl-gf", paper, GraphFamily::Gf, false, {{"switch_step", "10"}}).last_regen, 10);
  EXPECT_EQ(config("omkl-gf", reference, GraphFamily::Gf, false, {{"switch_step", "10"}}).last_regen, 12);
  EXPECT_EQ(config("omkl-gf", paper, GraphFamily::Gf, false, {{"gf_last_regen_step", "-1"}}).last_regen,
            std::numeric_limits<std::int64_t>::max());

  const Params common{{"dict", gaussians(8)}, {"D", "3"}, {"M", "2"}, {"switch_step", "5"}};
  const auto with_last = [&](const char* last) {
    return make("omkl-gf", paper, omkl::test::with_param(common, "gf_last_regen_step", last));
  };
  const auto five = run_steps(*with_last("5"), data), seven = run_steps(*with_last("7"), data);
  const auto by_default = run_steps(*make("omkl-gf", paper, common), data);
  EXPECT_EQ(by_default, five) << "the paper's default is S";
  for (std::size_t t = 0; t < 5; ++t) EXPECT_EQ(five[t], seven[t]) << t;
  bool differ = false;
  for (std::size_t t = 5; t < data.n_samples; ++t) differ |= five[t] != seven[t];
  EXPECT_TRUE(differ);

  auto frozen = with_last("5");
  run_steps(*frozen, data, 0, 5);
  std::vector<std::vector<std::size_t>> kernels_of(2);  // per selective node, once seen
  std::set<std::size_t> nodes;
  for (std::size_t t = 5; t < data.n_samples; ++t) {
    double pred = 0.0;
    frozen->step(data.row(t), data.y[t], &pred);
    const GraphAidedTrace& tr = *graph_aided_trace(*frozen, 0);
    ASSERT_LT(tr.node, 2u);
    nodes.insert(tr.node);
    std::vector<std::size_t> set = tr.updated;
    std::sort(set.begin(), set.end());
    if (kernels_of[tr.node].empty()) kernels_of[tr.node] = set;
    EXPECT_EQ(set, kernels_of[tr.node]) << "t = " << tr.t << ", node " << tr.node;
  }
  EXPECT_EQ(nodes.size(), 2u);
}

TEST(GraphAidedSwitchesTest, ConferenceVariantsConfiguration) {
  // §2.7: SFG-MKL / SFG-MKL-R build the nearest-neighbour graph (§2.3.2), default to M = 5,
  // refine with argmin (SFG-MKL-R), and keep the paper's sampler, floors and argmax u under either
  // profile; the dominating set's greedy considers every vertex (Appendix B).
  const auto data = random_stream(10, 5, Task::Regression);
  const Dictionary conf = parse_dictionary("conf-41");
  const FeedbackGraph nearest = similar_graph(divergence_matrix(conf, DivergenceForm::Exact, 5), 5);
  for (const Profile profile : {Profile::Paper, Profile::Reference}) {
    const AlgoContext c = context_for(data, profile);
    for (const GraphFamily family : {GraphFamily::Sfg, GraphFamily::SfgR}) {
      const std::string name = family == GraphFamily::Sfg ? "sfg-mkl" : "sfg-mkl-r";
      const GraphAidedConfig cfg = config(name, c, family, true, {{"dict", "conf-41"}});
      SCOPED_TRACE(name + (profile == Profile::Reference ? ", reference" : ", paper"));
      EXPECT_EQ(cfg.M, 5u);
      EXPECT_EQ(cfg.q_floor, 0.0);
      EXPECT_EQ(cfg.p_floor, 0.0);
      EXPECT_FALSE(cfg.shifted);
      EXPECT_EQ(cfg.after_switch, AfterSwitch::ArgmaxU);
      for (std::size_t i = 0; i < conf.size(); ++i) ASSERT_EQ(cfg.graph.out_neighbours(i), nearest.out_neighbours(i)) << i;
      if (family == GraphFamily::Sfg) {
        EXPECT_EQ(cfg.dominating, dominating_set(nearest, DominatingCandidates::All));
      } else {
        EXPECT_EQ(cfg.refinement.pick, RefinePick::Argmin);
      }
    }
  }
}

TEST(GraphAidedSwitchesTest, SfgFamilySurvivesWeightsThatUnderflow) {
  // §6.4 / A-18: targets in the hundreds and thousands push the kernel and vertex weights
  // thousands of nats apart; the weights of a step's set, shifted by the heaviest, would all
  // underflow to 0 and are taken in the log domain instead. Every prediction stays finite and
  // every vertex distribution sums to 1.
  for (const double scale : {300.0, 1e4}) {
    auto data = random_stream(300, 3, Task::Regression);
    for (double& y : data.y) y *= scale;
    for (const char* name : {"omkl-sfg", "omkl-sfg-r", "sfg-mkl", "sfg-mkl-r"}) {
      for (const Profile profile : {Profile::Paper, Profile::Reference}) {
        Params params{{"switch_step", "40"}, {"D", "6"}, {"dict", gaussians(12)}, {"M", "3"}};
        if (std::string(name).find("-r") != std::string::npos) params.emplace_back("beta_rank", "4");
        auto algo = make(name, context_for(data, profile), params);
        for (std::size_t t = 0; t < data.n_samples; ++t) {
          double pred = 0.0;
          ASSERT_NO_THROW(algo->step(data.row(t), data.y[t], &pred)) << name << " t " << t;
          ASSERT_TRUE(std::isfinite(pred)) << name << " t " << t;
          const GraphAidedTrace& tr = *graph_aided_trace(*algo, 0);
          const double total = std::accumulate(tr.node_pmf.begin(), tr.node_pmf.end(), 0.0);
          ASSERT_NEAR(total, 1.0, 1e-12) << name << " t " << t;
        }
        const auto log_w = graph_aided_log_kernel_weights(*algo, 0);
        const auto [lo, hi] = std::minmax_element(log_w.begin(), log_w.end());
        EXPECT_GT(*hi - *lo, 745.0) << name << ": the weights span more than a double's exponent range";
      }
    }
  }
}

TEST(GraphAidedSwitchesTest, GraphAndRefinementSwitchesReachTheConfiguration) {
  // §3 R1–R4, R16, R18, R19: each switch of the graph and the refinement is what the
  // configuration holds, against the graph functions called directly. §7 A-3's example: exact
  // Δ_S with d = 1 (divergence_dim = 1), jmlr23-76, M = 10: the journal's greedy rule gives
  // N_out(0) = [0, 75, 51, 74, 52, 53, 73, 54, 50, 55], the conference's nearest rule {0 … 5, 56 … 59}.
  const auto data = random_stream(10, 5, Task::Regression);
  const Dictionary dict = parse_dictionary("jmlr23-76");
  const AlgoContext paper = context_for(data), reference = context_for(data, Profile::Reference);
  const Params base{{"dict", "jmlr23-76"}, {"M", "10"}};
  const auto with = [&](Params extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };

  const GraphAidedConfig one_dim = config("omkl-sfg", paper, GraphFamily::Sfg, false, with({{"divergence_dim", "1"}}));
  EXPECT_EQ(one_dim.graph.out_neighbours(0), (std::vector<std::size_t>{0, 75, 51, 74, 52, 53, 73, 54, 50, 55}));
  const FeedbackGraph greedy_d = dissimilar_graph(divergence_matrix(dict, DivergenceForm::Exact, 5), 10, GreedyMask::NegInf);
  const GraphAidedConfig by_default = config("omkl-sfg", paper, GraphFamily::Sfg, false, base);
  for (std::size_t i = 0; i < dict.size(); ++i) ASSERT_EQ(by_default.graph.out_neighbours(i), greedy_d.out_neighbours(i)) << i;

  const GraphAidedConfig nearest =
      config("omkl-sfg", paper, GraphFamily::Sfg, false, with({{"divergence_dim", "1"}, {"graph_rule", "conference_nearest"}}));
  const std::vector<std::size_t> n0 = nearest.graph.out_neighbours(0);
  EXPECT_EQ(std::set<std::size_t>(n0.begin(), n0.end()), (std::set<std::size_t>{0, 1, 2, 3, 4, 5, 56, 57, 58, 59}));

  // dominating_candidates (R4): every vertex in the paper profile, the uncovered ones in the
  // reference's; either by name.
  EXPECT_EQ(by_default.dominating, dominating_set(by_default.graph, DominatingCandidates::All));
  const GraphAidedConfig uncovered =
      config("omkl-sfg", paper, GraphFamily::Sfg, false, with({{"dominating_candidates", "uncovered"}}));
  EXPECT_EQ(uncovered.dominating, dominating_set(uncovered.graph, DominatingCandidates::Uncovered));
  const GraphAidedConfig ref_sfg = config("omkl-sfg", reference, GraphFamily::Sfg, false, base);
  EXPECT_EQ(ref_sfg.dominating, dominating_set(ref_sfg.graph, DominatingCandidates::Uncovered));

  // The refinement's switches (R16, R18, R19): profile defaults, then each given.
  const GraphAidedConfig p = config("omkl-sfg-r", paper, GraphFamily::SfgR, false, base);
  const GraphAidedConfig r = config("omkl-sfg-r", reference, GraphFamily::SfgR, false, base);
  EXPECT_EQ(p.refinement.pick, RefinePick::Argmax);
  EXPECT_FALSE(p.refinement.refine_all_vertices);
  EXPECT_TRUE(r.refinement.refine_all_vertices);
  EXPECT_EQ(p.beta_eps, 1e-7);
  const GraphAidedConfig given = config("omkl-sfg-r", paper, GraphFamily::SfgR, false,
                                        with({{"refine_pick", "argmin"}, {"sfgr_refine_all_vertices", "true"}, {"sfgr_beta_eps", "0"}}));
  EXPECT_EQ(given.refinement.pick, RefinePick::Argmin);
  EXPECT_TRUE(given.refinement.refine_all_vertices);
  EXPECT_EQ(given.beta_eps, 0.0);
}
