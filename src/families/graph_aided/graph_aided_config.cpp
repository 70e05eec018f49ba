/// @file graph_aided_config.cpp
/// @brief The graph-aided family's parameters (graph_aided_config.h): profiles, §3 deviations,
/// the similarity graph, dominating set and divergences built once per configuration.
#include "families/graph_aided/graph_aided_config.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/error_context.h"
#include "core/step_path.h"
#include "core/wall_time.h"
#include "families/graph_aided/resident_graph.h"
#include "features/rf_backend.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

AfterSwitch parse_after_switch(const std::string& s) {
  if (s == "fixed0") return AfterSwitch::Fixed0;
  if (s == "argmax_u") return AfterSwitch::ArgmaxU;
  return AfterSwitch::KeepSampling;
}

DivergenceForm parse_divergence(const std::string& s) {
  if (s == "reference_nan") return DivergenceForm::ReferenceNan;
  if (s == "reference_formula") return DivergenceForm::ReferenceFormula;
  if (s == "reference_2021") return DivergenceForm::Reference2021;
  if (s == "normalized_exact") return DivergenceForm::NormalizedExact;
  return DivergenceForm::Exact;
}

void read_features(ParamReader& params, bool conference, RfEnsembleConfig& c) {
  static_cast<RfFeatures&>(c) = read_rf_features(params, conference ? "conf-41" : "jmlr23-76", "rf", "inv_sqrt_D",
                                                 "frequency construction (§1.3: i.i.d. rows)",
                                                 "factor on [sin; cos] (§1.4: 1/√D)");
  c.loss = LossKind::Squared;
  c.lambda = params.get_double("lambda", 1e-3, "ridge weight λ", ParamRange::at_least(0));
  c.weights.rule = WeightRule::ExpEta;  // makes the backend report ‖θ‖²
  c.weights.weight_loss = WeightLoss::RegularizedPre;
  c.weights.lambda = c.lambda;
  c.single_precision = params.get_choice("precision", "double", {"double", "float"},
                                         "float: on CUDA the θ of the selected kernels in float; on the CPU the "
                                         "feature map in float where |angles| ≤ 256, θ in double") == "float";
}

void read_graph(ParamReader& params, const AlgoContext& context, bool reference, GraphAidedConfig& c) {
  const bool conference = c.conference;
  const std::size_t N = c.rf.dictionary.size();
  // Δ: a built-in form, or (§7 A-15) a matrix of the user's own, `table:FILE`.
  const std::string div = params.get_string(
      "divergence", reference ? "reference_nan" : "exact",
      "kernel divergence Δ (§2.2, §3 R1): exact|reference_nan|reference_formula|reference_2021|normalized_exact, or "
      "table:FILE, an N × N matrix of your own (row i on line i; §7 A-15)");
  const bool table = div.rfind("table:", 0) == 0;
  if (table && div.size() == 6) params.fail("divergence", "table: needs a file name (table:FILE)");
  if (!table && div != "exact" && div != "reference_nan" && div != "reference_formula" && div != "reference_2021" &&
      div != "normalized_exact")
    params.fail("divergence", "must be one of exact|reference_nan|reference_formula|reference_2021|normalized_exact "
                              "or table:FILE, got '" + div + "'");
  const std::string dim = params.get_choice("divergence_dim", "d", {"d", "1"},
                                            "integration dimension of Δ_S (§2.2.2)");
  const std::string rule = params.get_choice("graph_rule", conference ? "conference_nearest" : "journal_greedy",
                                             {"journal_greedy", "conference_nearest"},
                                             "similarity-graph rule (§2.3, §3 R3)");
  const std::string mask = params.get_choice("greedy_mask", reference ? "zero" : "neg_inf",
                                             {"zero", "neg_inf"}, "greedy exclusion of chosen vertices");
  SimilarityGraphOptions options;
  options.rule = rule == "journal_greedy" ? GraphRule::JournalGreedy : GraphRule::ConferenceNearest;
  options.divergence = table ? DivergenceForm::Exact : parse_divergence(div);  // (not read with a table)
  options.divergence_dim = dim == "d" ? context.n_features : 1;
  options.mask = mask == "zero" ? GreedyMask::Zero : GreedyMask::NegInf;
  if (table && params.given("divergence_dim"))
    params.fail("divergence_dim", "is the integration dimension of the built-in Δ; divergence=table:FILE gives Δ");
  // Δ and the similarity graph (§2.2–§2.3): Δ from the table, or the built-in form's (computed
  // once, for the graph and SFG-R's refinement), or none (reference_nan: the index-order graph,
  // no Δ evaluated). Building them is §1.7's timed offline part (reading a table is not).
  double& offline = c.offline_seconds;
  const bool nan_delta = !table && options.divergence == DivergenceForm::ReferenceNan;
  try {
    if (table) {
      c.divergence_table = div.substr(6);
      try {
        c.delta = read_divergence_table(c.divergence_table, N);
      } catch (...) {
        rethrow_with_context("algorithm '" + params.algorithm() + "', divergence: ");
      }
    } else if (!nan_delta) {
      c.delta = add_wall_time(
          offline, [&] { return divergence_matrix(c.rf.dictionary, options.divergence, options.divergence_dim); });
    }
    c.graph = add_wall_time(offline, [&] {
      if (nan_delta) return similarity_graph(c.rf.dictionary, c.M, options);
      return options.rule == GraphRule::ConferenceNearest ? similar_graph(c.delta, c.M)
                                                          : dissimilar_graph(c.delta, c.M, options.mask);
    });
  } catch (const ConfigError& e) {
    params.fail("divergence", std::string("cannot build the similarity graph: ") + e.what());
  }
  c.observation_sums = add_wall_time(offline, [&] { return ObservationSums(c.graph); });
  c.q_floor = params.get_double("sfg_q_floor", reference ? 0.1 : 0.0, "floor of q (§3 R7)", ParamRange::closed(0, 1));
  c.p_floor = params.get_double("sfg_p_floor", reference ? 0.2 : 0.0, "floor of p_I in the vertex loss (§3 R8)",
                                ParamRange::closed(0, 1));
  if (c.family == GraphFamily::Sfg) {
    const std::string cand = params.get_choice("dominating_candidates", reference ? "uncovered" : "all",
                                               {"uncovered", "all"}, "dominating-set greedy candidates (§3 R4)");
    c.dominating = add_wall_time(offline, [&] {
      return dominating_set(c.graph, cand == "all" ? DominatingCandidates::All : DominatingCandidates::Uncovered);
    });
    c.after_switch = parse_after_switch(params.get_choice(
        "sfg_after_switch", reference ? "fixed0" : "argmax_u", {"fixed0", "argmax_u", "keep_sampling"},
        "vertex choice after switch_step (§3 R13)"));
    return;
  }
  // OMKL-SFG-R
  c.after_switch = parse_after_switch(params.get_choice(
      "sfgr_after_switch", reference ? "keep_sampling" : "argmax_u", {"keep_sampling", "argmax_u", "fixed0"},
      "vertex choice after switch_step (§3 R14)"));
  c.freeze_refinement = params.get_bool("sfgr_freeze_refinement_after_switch", reference,
                                       "keep D'_t and G'_t of step switch_step afterwards (§3 R14)");
  c.double_draw = params.get_bool("sfgr_double_draw", reference,
                                 "draw and discard one uniform before the real draw while t ≤ switch_step (§3 R15)");
  c.refinement.refine_all_vertices = params.get_bool("sfgr_refine_all_vertices", reference,
                                                    "refinement edge for every vertex (§3 R16)");
  c.predict_with_refined = params.get_bool("sfgr_predict_with_refined", !reference,
                                          "predict over the refined out-neighbourhood (§3 R17)");
  c.beta_eps = params.get_double("sfgr_beta_eps", 1e-7, "β is lowered by this before the comparison (§3 R18)",
                                 ParamRange::closed_open(0, 1));
  c.refinement.pick = params.get_choice("refine_pick", conference ? "argmin" : "argmax", {"argmax", "argmin"},
                                       "dominator of a refinement edge: most dissimilar or most similar (§3 R19)") ==
                             "argmax"
                         ? RefinePick::Argmax
                         : RefinePick::Argmin;
  const std::int64_t rank = params.get_int("beta_rank", 10, "β_t = (1 − ξ)·(beta_rank-th largest ū) + ξ/N",
                                           ParamRange::count_from(1));
  if (static_cast<std::size_t>(rank) > N)
    params.fail("dict", "has " + std::to_string(N) + " kernels, fewer than beta_rank = " + std::to_string(rank) +
                            " (lower beta_rank or use a larger dictionary)");
  c.beta_rank = static_cast<std::size_t>(rank);
  c.beta_fixed = params.get_double("beta", 0.0, "fixed β instead of the rank rule (default: the rank rule)",
                                   ParamRange::open_closed(0, 1));
  // Without it the rank rule decides β, and 0 is no value to give back (it is refused above).
  if (!params.has("beta")) params.inapplicable("beta");
  // The refinement's Δ: the one the graph was built from, or all NaN (§2.2.3).
  if (nan_delta) {
    c.delta.n = N;
    c.delta.values.assign(N * N, std::numeric_limits<double>::quiet_NaN());
  }
  c.dominator_order = add_wall_time(offline, [&] { return DominatorOrder(c.delta, c.refinement.pick); });
}

}  // namespace

GraphAidedConfig read_graph_aided_config(ParamReader& params, const AlgoContext& context, GraphFamily family,
                                         bool conference) {
  GraphAidedConfig c;
  c.family = family;
  c.conference = conference;
  if (context.task != Task::Regression)
    throw ConfigError("algorithm '" + params.algorithm() +
                      "': graph-aided OMKL is defined for regression (squared loss) only");
  const bool reference = context.profile == Profile::Reference && !conference;
  read_features(params, conference, c.rf);
  const std::size_t N = c.rf.dictionary.size();

  // ---- step schedules (§1.6): η, and ξ (SFG / SFG-R) or η_e (GF), by default on η's schedule;
  // the experiments give all three one number. A schedule is rate/√t, constant, or a table of
  // rates read from a file (`table:FILE`, the t-th number for step t) ------------------------
  const bool gf = c.family == GraphFamily::Gf;
  const char* explore_key = gf ? "eta_e" : "xi";
  const auto table_of = [&params, &context](const std::string& key, const std::string& schedule,
                                            double max_rate) -> std::shared_ptr<const RateTable> {
    if (schedule == "inv_sqrt_t" || schedule == "const") return nullptr;
    if (schedule.rfind("table:", 0) != 0 || schedule.size() == 6)
      params.fail(key, "must be inv_sqrt_t, const or table:FILE, not '" + schedule + "'");
    std::shared_ptr<const RateTable> table;
    try {
      table = read_rate_table(schedule.substr(6), max_rate);
    } catch (...) {
      rethrow_with_context("algorithm '" + params.algorithm() + "', " + key + ": ");
    }
    if (context.horizon > 0 && table->rates.size() < context.horizon)
      params.fail(key, "'" + table->path + "' lists " + std::to_string(table->rates.size()) +
                           " rates for a stream of " + std::to_string(context.horizon) + " steps");
    return table;
  };
  // §1.6's three presets, each the defaults of eta_schedule and eta (which, given, win): the
  // journal's η_t = ξ_t = η_{e,t} = 0.1/√t, the conference's η = ξ = 1/√T and the ICML code's
  // η_t = η_{e,t} = 1/√t.
  const std::string preset = params.get_choice(
      "step_preset", conference ? "conference" : "journal", {"journal", "conference", "icml"},
      "§1.6's step sizes: journal 0.1/√t, conference 1/√T constant, icml 1/√t (the defaults of eta_schedule "
      "and eta)");
  const std::string schedule = params.get_string(
      "eta_schedule", preset == "conference" ? "const" : "inv_sqrt_t",
      "η_t (and ξ_t or η_{e,t}): eta/√t (inv_sqrt_t), eta constant (const), or table:FILE, the file's "
      "t-th number for step t");
  const std::string explore_schedule_key = std::string(explore_key) + "_schedule";
  const std::string explore_schedule = params.get_string(
      explore_schedule_key, schedule,
      std::string(explore_key) + "/√t, " + explore_key + " constant, or table:FILE (default: eta_schedule)");
  // η's table is also the exploration rate's unless that has its own: its rates are then ≤ 1.
  const bool shares_table = explore_schedule == schedule;
  c.eta_table = table_of("eta_schedule", schedule,
                         shares_table ? 1.0 : std::numeric_limits<double>::infinity());
  c.inv_sqrt_t = schedule == "inv_sqrt_t";
  if (c.eta_table) {
    if (params.given("eta")) params.fail("eta", "is eta_schedule's table; give one of them");
    c.eta = c.eta_table->rates[0];  // unused: eta_at() reads the table
  } else {
    double eta_default = preset == "icml" ? 1.0 : 0.1;
    if (!c.inv_sqrt_t)
      eta_default = context.horizon > 0 ? 1.0 / std::sqrt(static_cast<double>(context.horizon)) : -1.0;
    c.eta = params.get_double("eta", eta_default,
                             "learning rate of θ, w and u, and the exploration rate unless xi (SFG / SFG-R) "
                             "or eta_e (GF) is given: then at most 1 (default 0.1 with inv_sqrt_t, 1 with step_preset=icml; "
                             "1/√T with const, T the stream length)",
                             ParamRange::above(0));
    if (c.eta == -1.0 && !params.has("eta"))
      params.fail("eta", "has no default when the stream length is unknown; give eta=...");
  }
  c.explore_table = shares_table ? c.eta_table : table_of(explore_schedule_key, explore_schedule, 1.0);
  c.explore_inv_sqrt_t = explore_schedule == "inv_sqrt_t";
  bool explore_given = false;
  if (c.explore_table) {
    if (params.given(explore_key))
      params.fail(explore_key, "is " + explore_schedule_key + "'s table; give one of them");
    c.explore = c.explore_table->rates[0];  // unused: explore_at() reads the table
  } else {
    if (c.eta_table && !params.has(explore_key))
      params.fail(explore_key, "has no default when eta_schedule is a table and " + explore_schedule_key +
                                   " is not; give " + explore_key + "=...");
    c.explore = params.get_double(explore_key, c.eta,
                                  gf ? "η_e: exploration of the graph's links (eq. 20) and of the selective-node PMF "
                                       "(eq. 19), on eta_e_schedule (default: eta)"
                                     : "ξ: exploration of the vertex PMF (eq. 33) and of SFG-R's refinement "
                                       "threshold, on xi_schedule (default: eta)",
                                  ParamRange::open_closed(0, 1));
    explore_given = params.has(explore_key);  // by the user or a preset
  }
  if (!c.eta_table && (!(c.eta > 0) || (!explore_given && !c.explore_table && c.eta > 1)))
    params.fail("eta", explore_given || c.explore_table
                           ? "must be > 0"
                           : std::string("must be in (0, 1] (it is also the exploration rate; ") + explore_key +
                                 "=... sets that apart)");

  // ---- shared flags (§3) -----------------------------------------------------------------
  const std::int64_t sw = params.get_int("switch_step", 300,
                                         "switch step S: graph regeneration / sampling stops after it (0: from "
                                         "the first step on; OMKL-GF keeps the first step's graph)",
                                         ParamRange::count_from(0));
  c.switch_step = sw;
  c.shifted = params.get_bool("shifted_sampler", reference,
                             "reference off-by-one categorical sampler (§1.8, §3 R5)");
  c.updated_theta_loss = params.get_bool("loss_uses_updated_theta", reference,
                                        "ridge term of the weight loss uses θ_{t+1} (§3 R10)");

  const std::int64_t m_default = c.family == GraphFamily::Gf ? 10 : (conference ? 5 : 10);
  const std::int64_t m = params.get_int(
      "M", m_default, c.family == GraphFamily::Gf ? "draws per selective node" : "out-degree of every vertex",
      ParamRange::count_from(1));
  if (static_cast<std::size_t>(m) > N)
    params.fail("M", "must not exceed the dictionary size N = " + std::to_string(N));
  c.M = static_cast<std::size_t>(m);

  if (c.family == GraphFamily::Gf) {
    const std::int64_t j =
        params.get_int("J", conference ? 1 : 2, "number of selective nodes", ParamRange::closed(1, 64));
    c.J = static_cast<std::size_t>(j);
    c.q_floor = params.get_double("gf_q_floor", reference ? 0.05 : 0.0,
                                 "floor of the observation probability q (§3 R6)", ParamRange::closed(0, 1));
    const std::int64_t last = params.get_int(
        "gf_last_regen_step", reference ? sw + 2 : sw,
        "last step whose graph is regenerated (default switch_step, reference switch_step + 2; 0 or 1: the first "
        "step's graph is kept throughout; -1: never freeze)",
        ParamRange::count_from(-1));
    // Step 1 has no graph to keep: it draws one whatever the parameter says, so 0 ("no step
    // regenerates") keeps that first graph, as 1 does.
    c.last_regen = last < 0 ? std::numeric_limits<std::int64_t>::max() : std::max<std::int64_t>(last, 1);
  } else {
    read_graph(params, context, reference, c);
    if (c.family == GraphFamily::SfgR) {
      if (c.explore_table) {
        for (double xi : c.explore_table->rates)
          if (xi >= 1)
            params.fail(explore_schedule_key, "'" + c.explore_table->path +
                                                  "' lists a rate ≥ 1; the refinement threshold divides by 1 − ξ");
      } else if (c.explore >= 1) {
        params.fail(explore_given ? "xi" : "eta", "must be < 1 for the refinement threshold (it divides by 1 − ξ)");
      }
    }
  }
  // sq_error_plus_ridge is §3 R9's name for ridge.
  c.vertex_ridge = params.get_choice("u_loss", "sq_error", {"sq_error", "ridge", "sq_error_plus_ridge"},
                                     "vertex loss L(ŷ, y) of eq. 37: squared error, or with eq. 5's ridge term "
                                     "λ‖Σ_{k∈S} w̄_k θ_k‖² (θ after the step; §7 A-5)") != "sq_error";
  c.vertex_from_prediction = params.get_bool(
      "u_update_uses_prediction", false,
      "archaeology: the vertex weight moves by exp(−η·ŷ/p̃), the prediction in place of the loss, as the 2021 "
      "code did (fixed in 2022; for reproducing the conference runs only)");
  if (c.vertex_from_prediction && c.vertex_ridge)
    params.fail("u_update_uses_prediction", "replaces the vertex loss; it cannot go with u_loss=ridge");
  const bool on_gpu = backend_on_gpu(context.backend);
  std::string why_not = resident_graph_unsupported(c);
  if (why_not.empty()) why_not = float_walk_on_cpu(c.rf.single_precision, on_gpu);
  c.resident = read_step_path(params, "steps", on_gpu, why_not);
  return c;
}

}  // namespace omkl::detail
