/// @file graph_aided.cpp
/// @brief Graph-aided online multi-kernel learning: OMKL-GF, OMKL-SFG, OMKL-SFG-R (Ghari & Shen,
/// JMLR) and the conference variants SFG-MKL, SFG-MKL-R — spec/graph-aided.md §2.1, §2.5–§2.7.
///
/// Each step evaluates only the kernels of the drawn subset S_t: one backend step_selected()
/// call with |S_t| pairs per replicate, the importance weight 1/q̃ folded into the pair's rate
/// and shrink (§1.5). Kernel and vertex weights are kept as log-weights (max-shifted when used,
/// §6.4), which is the reference's w ← w·exp(−ηℓ) without its underflow.
///
/// profile = paper gives §2.x.a, profile = reference gives §2.x.b; every §3 deviation is a
/// parameter with the Appendix B name. The per-step draws come from the counter-based stream
/// (seed, replicate, Selection, family), or with rng = numpy_legacy from the journal notebook's
/// shared NumPy stream at this run's place in it (§1.9, notebook_stream.h).
#include "families/graph_aided/graph_aided.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include "core/kernel_weights.h"
#include "features/rf_ensemble.h"
#include "random/notebook_stream.h"
#include "random/rng.h"
#include "random/selection_stream.h"
#include "core/step_pool.h"
#include "families/graph_aided/bipartite_graph.h"
#include "families/graph_aided/divergence.h"
#include "families/graph_aided/dominating_set.h"
#include "families/graph_aided/feedback_graph.h"
#include "families/graph_aided/refinement.h"
#include "random/sampling.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

enum class Family { Gf, Sfg, SfgR };
enum class AfterSwitch { Fixed0, ArgmaxU, KeepSampling };

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

/// exp(a − max a), so the largest entry is 1 (weights are only used through ratios).
void shifted_exp(const std::vector<double>& log_w, std::vector<double>& out) {
  double m = -std::numeric_limits<double>::infinity();
  for (double a : log_w) m = std::max(m, a);
  out.resize(log_w.size());
  for (std::size_t i = 0; i < log_w.size(); ++i) out[i] = exp_or_zero(log_w[i] - m);
}

std::size_t argmax_first(const std::vector<double>& v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size(); ++i)
    if (v[i] > v[best]) best = i;
  return best;
}

class GraphAided final : public Algorithm {
 public:
  GraphAided(ParamReader& params, const AlgoContext& context, Family family, bool conference)
      : context_(context), family_(family), conference_(conference) {
    if (context.task != Task::Regression)
      throw ConfigError("algorithm '" + params.algorithm() +
                        "': graph-aided OMKL is defined for regression (squared loss) only");
    const bool reference = context.profile == Profile::Reference && !conference;
    read_features(params, context, conference);
    const std::size_t N = config_.dictionary.size();

    // ---- step schedule (§1.6): one number plays η, ξ and η_e ------------------------------
    const std::string schedule = params.get_choice(
        "eta_schedule", conference ? "const" : "inv_sqrt_t", {"inv_sqrt_t", "const"},
        "η_t = ξ_t = η_{e,t}: eta/√t, or eta constant");
    inv_sqrt_t_ = schedule == "inv_sqrt_t";
    double eta_default = 0.1;
    if (!inv_sqrt_t_)
      eta_default = context.horizon > 0 ? 1.0 / std::sqrt(static_cast<double>(context.horizon)) : -1.0;
    eta_ = params.get_double("eta", eta_default,
                             "rate: learning rate of θ, w, u and exploration rate (default 0.1 with "
                             "inv_sqrt_t; 1/√T with const)");
    if (eta_ == -1.0 && !params.has("eta"))
      params.fail("eta", "has no default when the stream length is unknown; give eta=...");
    if (!(eta_ > 0) || eta_ > 1) params.fail("eta", "must be in (0, 1] (it is also an exploration rate)");

    // ---- shared flags (§3) -----------------------------------------------------------------
    const std::int64_t sw = params.get_int("switch_step", 300,
                                           "switch step S: graph regeneration / sampling stops after it");
    if (sw < 0) params.fail("switch_step", "must be ≥ 0");
    switch_step_ = sw;
    shifted_ = params.get_bool("shifted_sampler", reference,
                               "reference off-by-one categorical sampler (§1.8, §3 R5)");
    updated_theta_loss_ = params.get_bool("loss_uses_updated_theta", reference,
                                          "ridge term of the weight loss uses θ_{t+1} (§3 R10)");

    const std::int64_t m_default = family == Family::Gf ? 10 : (conference ? 5 : 10);
    const std::int64_t m = params.get_int(
        "M", m_default, family == Family::Gf ? "draws per selective node" : "out-degree of every vertex");
    if (m < 1) params.fail("M", "must be ≥ 1");
    if (static_cast<std::size_t>(m) > N)
      params.fail("M", "must not exceed the dictionary size N = " + std::to_string(N));
    M_ = static_cast<std::size_t>(m);

    if (family == Family::Gf) {
      const std::int64_t j = params.get_int("J", conference ? 1 : 2, "number of selective nodes");
      if (j < 1 || j > 64) params.fail("J", "must be in 1..64");
      J_ = static_cast<std::size_t>(j);
      q_floor_ = params.get_double("gf_q_floor", reference ? 0.05 : 0.0,
                                   "floor of the observation probability q (§3 R6)");
      if (!(q_floor_ >= 0) || q_floor_ > 1) params.fail("gf_q_floor", "must be in [0, 1]");
      const std::int64_t last = params.get_int(
          "gf_last_regen_step", reference ? sw + 2 : sw,
          "last step whose graph is regenerated (reference: switch_step + 2; -1: never freeze)");
      if (last < -1) params.fail("gf_last_regen_step", "must be ≥ -1");
      last_regen_ = last < 0 ? std::numeric_limits<std::int64_t>::max() : last;
    } else {
      read_graph(params, context, reference, conference);
      if (family == Family::SfgR && eta_ >= 1) params.fail("eta", "must be < 1 for the refinement threshold");
    }
    params.get_choice("u_loss", "sq_error", {"sq_error"},
                      "vertex loss L(ŷ, y) of eq. 37 (squared error, §7 A-5)");

    // ---- backend and state -----------------------------------------------------------------
    std::vector<std::uint32_t> slot_kernel(N);
    for (std::size_t k = 0; k < N; ++k) slot_kernel[k] = static_cast<std::uint32_t>(k);
    const std::size_t R = context.n_replicates();
    std::vector<NotebookStart> notebook;
    if (config_.numpy_legacy) {
      if (conference)
        params.fail("rng", "numpy_legacy replays the journal notebooks; the conference variants have none (§7 A-9)");
      const NotebookRun run = family == Family::Gf ? NotebookRun::Gf
                              : family == Family::Sfg ? NotebookRun::Sfg : NotebookRun::SfgR;
      NotebookShape shape{config_.dictionary, config_.n_rff, context.n_features, context.horizon};
      try {
        notebook = notebook_starts(numpy_seed(context), context.replicates, run, M_, shape);
      } catch (const ConfigError& e) {
        params.fail("rng", e.what());
      }
      // The replay that positioned the streams drew each repetition's features on the way:
      // the backend takes those instead of replaying the stream a second time.
      backend_ = make_rf_ensemble_backend(config_, context, slot_kernel, [&](const FrequencySink& sink) {
        for (std::size_t r = 0; r < R; ++r) {
          for (std::size_t k = 0; k < N; ++k) sink(r, k, notebook[r].frequencies[k].data());
          notebook[r].frequencies = {};
        }
      });
    } else {
      backend_ = make_rf_ensemble_backend(config_, context, slot_kernel);
    }
    pool_ = std::make_unique<StepPool>(std::min(context.host_threads, R));
    reps_.resize(R);
    for (std::size_t r = 0; r < R; ++r) {
      Replicate& rep = reps_[r];
      if (config_.numpy_legacy) rep.rng.emplace(notebook[r].stream);
      else rep.rng.emplace(RandomStream(context.seed, context.replicates[r], RngPurpose::Selection, stream_index()));
      rep.log_w.assign(N, 0.0);
      rep.log_u.assign(family == Family::Gf ? 0 : N, 0.0);
      if (family == Family::Gf) {
        rep.bipartite.emplace(N, J_, M_);
        rep.regen_uniforms.assign(J_ * M_, 0.0);
        rep.regen_w.assign(N, 1.0);
      }
      if (family == Family::SfgR) rep.refined_set.clear();
    }
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  void step(const double* x, double y, double* predictions) override {
    const std::int64_t t = t_ + 1;
    const double eta = eta_at(t);
    const std::size_t R = reps_.size();
    // Each replicate's selection is independent of the others': on the step pool when the
    // context grants host threads (lockstep GPU runs), inline otherwise.
    pool_->run(R, [&](std::size_t r) { plan_pairs(r, t, eta); });
    backend_step(x, y);
    pool_->run(R, [&](std::size_t r) { learn(r, y, eta, predictions); });
    t_ = t;
  }

  // Within a block, replicate r's learning at t and its selection at t + 1 share one pass over
  // the step pool (one hand-off and one wait per step instead of two); each replicate does the
  // same work in the same order as step() by step(), so the numbers are the same.
  void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                  double* predictions) override {
    if (n == 0) return;
    const std::size_t R = reps_.size();
    std::int64_t t = t_ + 1;
    double eta = eta_at(t);
    pool_->run(R, [&](std::size_t r) { plan_pairs(r, t, eta); });
    for (std::size_t i = 0; i < n; ++i) {
      backend_step(x + i * n_features, y[i]);
      double* out = predictions + i * R;
      if (i + 1 < n) {
        const std::int64_t t_next = t + 1;
        const double eta_next = eta_at(t_next);
        pool_->run(R, [&](std::size_t r) {
          learn(r, y[i], eta, out);
          plan_pairs(r, t_next, eta_next);
        });
        t_ = t;
        t = t_next;
        eta = eta_next;
      } else {
        pool_->run(R, [&](std::size_t r) { learn(r, y[i], eta, out); });
        t_ = t;
      }
    }
  }

  /// The planned pairs of every replicate, in replicate order, through one backend call.
  void backend_step(const double* x, double y) {
    const std::size_t R = reps_.size();
    pairs_.clear();
    offsets_.assign(R + 1, 0);
    for (std::size_t r = 0; r < R; ++r) {
      offsets_[r] = pairs_.size();
      pairs_.insert(pairs_.end(), reps_[r].pairs.begin(), reps_[r].pairs.end());
    }
    offsets_[R] = pairs_.size();
    max_pairs_ = std::max(max_pairs_, pairs_.size());
    for (const PairStep& pair : pairs_) updates_ += pair.rate != 0.0 || pair.shrink != 1.0;
    f_.assign(pairs_.size(), 0.0);
    norm2_.assign(pairs_.size(), 0.0);
    if (!pairs_.empty()) backend_->step_selected(x, y, pairs_.data(), pairs_.size(), f_.data(), norm2_.data());
  }

  /// plan() for replicate r, then its pairs for the backend (replicate index r).
  void plan_pairs(std::size_t r, std::int64_t t, double eta) {
    Replicate& rep = reps_[r];
    plan(rep, t, eta);
    const GraphAidedTrace& tr = rep.trace;
    rep.pairs.resize(tr.updated.size());
    for (std::size_t i = 0; i < tr.updated.size(); ++i) {
      const double q = tr.q_used[i];
      PairStep& pair = rep.pairs[i];
      pair.replicate = static_cast<std::uint32_t>(r);
      pair.slot = static_cast<std::uint32_t>(tr.updated[i]);
      // θ ← θ − η [2(f − y) z + 2λθ]/q̃; the backend's C'(f, y) is 2(f − y).
      pair.rate = eta / q;
      pair.shrink = 1.0 - 2.0 * eta * config_.lambda / q;
    }
  }

  /// Replicate r's prediction and weight updates from this step's backend outputs.
  void learn(std::size_t r, double y, double eta, double* predictions) {
    Replicate& rep = reps_[r];
    GraphAidedTrace& tr = rep.trace;
    const std::size_t base = offsets_[r];
    tr.f.assign(f_.begin() + static_cast<std::ptrdiff_t>(base), f_.begin() + static_cast<std::ptrdiff_t>(offsets_[r + 1]));
    tr.prediction = combine(rep, tr.updated, tr.f, tr.predicted);
    predictions[r] = tr.prediction;
    // Kernel weights (§1.5 steps 3–4).
    const double z2 = config_.feature_scale * config_.feature_scale * static_cast<double>(config_.n_rff);
    for (std::size_t i = 0; i < tr.updated.size(); ++i) {
      const PairStep& p = pairs_[base + i];
      const double f = tr.f[i];
      double n2 = norm2_[base + i];
      if (updated_theta_loss_) {
        const double g = p.rate * 2.0 * (f - y);
        n2 = p.shrink * p.shrink * n2 - 2.0 * p.shrink * g * f + g * g * z2;
        if (n2 < 0) n2 = 0;
      }
      const double loss = ((f - y) * (f - y) + config_.lambda * n2) / tr.q_used[i];
      rep.log_w[tr.updated[i]] -= eta * loss;
    }
    // Vertex weight (§2.5 step 7).
    if (family_ != Family::Gf) {
      const double err = (tr.prediction - y) * (tr.prediction - y);
      const double p_tilde = std::max(tr.node_pmf[tr.node], p_floor_);
      rep.log_u[tr.node] -= eta * err / p_tilde;
      if (rep.u_valid) set_vertex_weight(rep, tr.node, exp_or_zero(rep.log_u[tr.node] - rep.u_ref));
    }
  }

  void predict(const double* x, double* predictions) override {
    // Replays the selection of the next step on copies of the random streams, so the result
    // equals the prediction the next step() makes, and no state changes.
    const std::int64_t t = t_ + 1;
    const double eta = eta_at(t);
    const std::size_t R = reps_.size();
    std::vector<Replicate> copies(R);
    std::vector<PairStep> pairs;
    std::vector<std::size_t> offsets(R + 1, 0);
    for (std::size_t r = 0; r < R; ++r) {
      copies[r] = reps_[r];
      plan(copies[r], t, eta);
      offsets[r] = pairs.size();
      for (std::size_t k : copies[r].trace.updated) {
        PairStep pair;
        pair.replicate = static_cast<std::uint32_t>(r);
        pair.slot = static_cast<std::uint32_t>(k);
        pairs.push_back(pair);  // rate 0, shrink 1: predict only
      }
    }
    offsets[R] = pairs.size();
    std::vector<double> f(pairs.size(), 0.0);
    if (!pairs.empty()) backend_->step_selected(x, 0.0, pairs.data(), pairs.size(), f.data(), nullptr);
    for (std::size_t r = 0; r < R; ++r) {
      std::vector<double> fr(f.begin() + static_cast<std::ptrdiff_t>(offsets[r]),
                             f.begin() + static_cast<std::ptrdiff_t>(offsets[r + 1]));
      predictions[r] = combine(copies[r], copies[r].trace.updated, fr, copies[r].trace.predicted);
    }
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("graph-aided/2");  // 2: vertex-weight reference and the numpy stream state
    out.put_i64(t_);
    save_backend_state(*backend_, out);
    for (const Replicate& rep : reps_) {
      rep.rng->save(out);
      out.put_f64s(rep.log_w);
      out.put_f64s(rep.log_u);
      out.put_u64(rep.u_valid ? 1 : 0);
      out.put_f64(rep.u_ref);
      if (family_ == Family::Gf) {
        out.put_u64(rep.has_graph ? 1 : 0);
        out.put_f64s(rep.regen_w);
        out.put_f64(rep.regen_eta);
        out.put_f64s(rep.regen_uniforms);
      }
      if (family_ == Family::SfgR) {
        std::vector<std::uint64_t> set(rep.refined_set.begin(), rep.refined_set.end());
        out.put_u64(rep.refined ? 1 : 0);
        out.put_u64s(set);
      }
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("graph-aided/2");
    t_ = in.get_i64();
    load_backend_state(*backend_, in);
    const std::size_t N = config_.dictionary.size();
    // Sizes are checked before anything is rebuilt from them: a file with a valid checksum
    // may still come from another model (or be crafted), and the rebuilds index by them.
    // StateReader's sized read refuses a stored count other than the model's.
    const auto read_values = [&in](std::vector<double>& values, std::size_t n) {
      values.resize(n);
      in.get_f64s(values.data(), n);
    };
    // Log-weights only ever decrease from 0: −∞ is a weight that underflowed, NaN or +∞ damage.
    const auto expect_log_weights = [](const std::vector<double>& log_w, const char* what) {
      for (double v : log_w)
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity())
          throw InputError(std::string("checkpoint: ") + what + " hold a log-weight of " + std::to_string(v));
    };
    for (Replicate& rep : reps_) {
      rep.rng->load(in);
      read_values(rep.log_w, N);
      expect_log_weights(rep.log_w, "kernel weights");
      read_values(rep.log_u, family_ == Family::Gf ? 0 : N);
      expect_log_weights(rep.log_u, "vertex weights");
      rep.u_valid = in.get_u64() != 0;
      rep.u_ref = in.get_f64();
      if (rep.u_valid) refresh_vertex_weights(rep);
      try {
        if (family_ == Family::Gf) {
          rep.has_graph = in.get_u64() != 0;
          read_values(rep.regen_w, N);
          rep.regen_eta = in.get_f64();
          read_values(rep.regen_uniforms, J_ * M_);
          if (rep.has_graph)
            rep.bipartite->regenerate(rep.regen_w, rep.regen_eta, rep.regen_uniforms.data(), gf_rule());
        }
        if (family_ == Family::SfgR) {
          rep.refined = in.get_u64() != 0;
          const auto set = in.get_u64s();
          rep.refined_set.assign(set.begin(), set.end());
          if (rep.refined) rebuild_refined(rep);
        }
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {  // the graph code's own argument checks
        throw InputError(std::string("checkpoint: inconsistent graph state (") + e.what() + ")");
      }
    }
  }

  double regret_regularizer(std::size_t r) const override {
    // w_k = exp(log w_k) is the reference's unnormalised weight (it starts at 1 and is only ever
    // multiplied by exp(−ηℓ)); θ_k of every kernel, also those never selected (θ = 0).
    const Replicate& rep = reps_.at(r);
    const std::size_t n = backend_->problem().theta_size();
    std::vector<double> sum(n, 0.0), theta(n);
    for (std::size_t k = 0; k < rep.log_w.size(); ++k) {
      const double w = exp_or_zero(rep.log_w[k]);
      if (w == 0.0) continue;
      backend_->get_theta(r, k, theta.data());
      for (std::size_t i = 0; i < n; ++i) sum[i] += w * theta[i];
    }
    double norm2 = 0.0;
    for (double v : sum) norm2 += v * v;
    return config_.lambda * norm2;
  }

  // ---- inspection (graph_aided.h) ----------------------------------------------------------
  const GraphAidedTrace& trace(std::size_t r) const { return reps_.at(r).trace; }
  std::vector<double> theta(std::size_t r, std::size_t k) const {
    std::vector<double> th(backend_->problem().theta_size());
    backend_->get_theta(r, k, th.data());
    return th;
  }
  std::vector<double> kernel_weights(std::size_t r) const {
    std::vector<double> w;
    shifted_exp(reps_.at(r).log_w, w);
    return w;
  }
  std::vector<double> log_kernel_weights(std::size_t r) const { return reps_.at(r).log_w; }
  std::vector<double> vertex_weights(std::size_t r) const {
    std::vector<double> u;
    shifted_exp(reps_.at(r).log_u, u);
    return u;
  }
  std::size_t max_pairs() const { return max_pairs_; }
  std::uint64_t kernel_updates() const override { return updates_; }

 private:
  struct Replicate {
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
  };

  std::uint64_t stream_index() const {
    // Distinct per family so that runs of different families never share draws.
    return 0x6a00u + static_cast<std::uint64_t>(family_) + (conference_ ? 16u : 0u);
  }

  double eta_at(std::int64_t t) const {
    return inv_sqrt_t_ ? eta_ / std::sqrt(static_cast<double>(t)) : eta_;
  }

  SamplerRule gf_rule() const { return shifted_ ? SamplerRule::Shifted : SamplerRule::InverseCdf; }

  void read_features(ParamReader& params, const AlgoContext& context, bool conference) {
    RfEnsembleConfig& c = config_;
    static_cast<RfFeatures&>(c) = read_rf_features(params, conference ? "conf-41" : "jmlr23-76", "rf", "inv_sqrt_D",
                                                   "frequency construction (§1.3: i.i.d. rows)",
                                                   "factor on [sin; cos] (§1.4: 1/√D)");
    c.loss = LossKind::Squared;
    c.lambda = params.get_double("lambda", 1e-3, "ridge weight λ");
    if (!(c.lambda >= 0)) params.fail("lambda", "must be ≥ 0");
    c.weights.rule = WeightRule::ExpEta;  // makes the backend report ‖θ‖²
    c.weights.weight_loss = WeightLoss::RegularizedPre;
    c.weights.lambda = c.lambda;
    (void)context;
  }

  void read_graph(ParamReader& params, const AlgoContext& context, bool reference, bool conference) {
    const std::size_t N = config_.dictionary.size();
    const std::string div = params.get_choice(
        "divergence", reference ? "reference_nan" : "exact",
        {"exact", "reference_nan", "reference_formula", "reference_2021", "normalized_exact"},
        "kernel divergence Δ (§2.2, §3 R1)");
    const std::string dim = params.get_choice("divergence_dim", "d", {"d", "1"},
                                              "integration dimension of Δ_S (§2.2.2)");
    const std::string rule = params.get_choice("graph_rule", conference ? "conference_nearest" : "journal_greedy",
                                               {"journal_greedy", "conference_nearest"},
                                               "similarity-graph rule (§2.3, §3 R3)");
    const std::string mask = params.get_choice("greedy_mask", reference ? "zero" : "neg_inf",
                                               {"zero", "neg_inf"}, "greedy exclusion of chosen vertices");
    SimilarityGraphOptions options;
    options.rule = rule == "journal_greedy" ? GraphRule::JournalGreedy : GraphRule::ConferenceNearest;
    options.divergence = parse_divergence(div);
    options.divergence_dim = dim == "d" ? context.n_features : 1;
    options.mask = mask == "zero" ? GreedyMask::Zero : GreedyMask::NegInf;
    try {
      graph_ = similarity_graph(config_.dictionary, M_, options);
    } catch (const ConfigError& e) {
      params.fail("divergence", std::string("cannot build the similarity graph: ") + e.what());
    }
    observation_sums_ = ObservationSums(graph_);
    q_floor_ = params.get_double("sfg_q_floor", reference ? 0.1 : 0.0, "floor of q (§3 R7)");
    if (!(q_floor_ >= 0) || q_floor_ > 1) params.fail("sfg_q_floor", "must be in [0, 1]");
    p_floor_ = params.get_double("sfg_p_floor", reference ? 0.2 : 0.0, "floor of p_I in the vertex loss (§3 R8)");
    if (!(p_floor_ >= 0) || p_floor_ > 1) params.fail("sfg_p_floor", "must be in [0, 1]");
    if (family_ == Family::Sfg) {
      const std::string cand = params.get_choice("dominating_candidates", reference ? "uncovered" : "all",
                                                 {"uncovered", "all"}, "dominating-set greedy candidates (§3 R4)");
      dominating_ = dominating_set(graph_, cand == "all" ? DominatingCandidates::All : DominatingCandidates::Uncovered);
      after_switch_ = parse_after_switch(params.get_choice(
          "sfg_after_switch", reference ? "fixed0" : "argmax_u", {"fixed0", "argmax_u", "keep_sampling"},
          "vertex choice after switch_step (§3 R13)"));
      return;
    }
    // OMKL-SFG-R
    after_switch_ = parse_after_switch(params.get_choice(
        "sfgr_after_switch", reference ? "keep_sampling" : "argmax_u", {"keep_sampling", "argmax_u", "fixed0"},
        "vertex choice after switch_step (§3 R14)"));
    freeze_refinement_ = params.get_bool("sfgr_freeze_refinement_after_switch", reference,
                                         "keep D'_t and G'_t of step switch_step afterwards (§3 R14)");
    double_draw_ = params.get_bool("sfgr_double_draw", reference,
                                   "draw and discard one uniform before the real draw while t ≤ switch_step (§3 R15)");
    refinement_.refine_all_vertices = params.get_bool("sfgr_refine_all_vertices", reference,
                                                      "refinement edge for every vertex (§3 R16)");
    predict_with_refined_ = params.get_bool("sfgr_predict_with_refined", !reference,
                                            "predict over the refined out-neighbourhood (§3 R17)");
    beta_eps_ = params.get_double("sfgr_beta_eps", 1e-7, "β is lowered by this before the comparison (§3 R18)");
    if (!(beta_eps_ >= 0) || beta_eps_ >= 1) params.fail("sfgr_beta_eps", "must be in [0, 1)");
    refinement_.pick = params.get_choice("refine_pick", conference ? "argmin" : "argmax", {"argmax", "argmin"},
                                         "dominator of a refinement edge: most dissimilar or most similar (§3 R19)") ==
                               "argmax"
                           ? RefinePick::Argmax
                           : RefinePick::Argmin;
    const std::int64_t rank = params.get_int("beta_rank", 10, "β_t = (1 − ξ)·(beta_rank-th largest ū) + ξ/N");
    if (rank < 1) params.fail("beta_rank", "must be ≥ 1");
    if (static_cast<std::size_t>(rank) > N)
      params.fail("dict", "has " + std::to_string(N) + " kernels, fewer than beta_rank = " + std::to_string(rank) +
                              " (lower beta_rank or use a larger dictionary)");
    beta_rank_ = static_cast<std::size_t>(rank);
    beta_fixed_ = params.get_double("beta", 0.0, "fixed β ∈ (0, 1] instead of the rank rule (0: rank rule)");
    if (params.has("beta") && !(beta_fixed_ > 0 && beta_fixed_ <= 1)) params.fail("beta", "must be in (0, 1]");
    const DivergenceForm form = parse_divergence(div);
    if (form != DivergenceForm::ReferenceNan) {
      try {
        delta_ = divergence_matrix(config_.dictionary, form, options.divergence_dim);
      } catch (const ConfigError& e) {
        params.fail("divergence", e.what());
      }
    } else {
      delta_.n = N;
      delta_.values.assign(N * N, std::numeric_limits<double>::quiet_NaN());
    }
    dominator_order_ = DominatorOrder(delta_, refinement_.pick);
  }

  void rebuild_refined(Replicate& rep) const {
    rep.refined_graph.refine(graph_, dominator_order_, rep.refined_set, refinement_);
  }

  /// exp(log_u − u_ref), refreshed in full (u_ref = max log_u) only when it is missing or its
  /// largest entry has drifted below 1e-200; otherwise step() keeps it current.
  const std::vector<double>& vertex_weights_lin(Replicate& rep) const {
    double top = 0.0;
    if (rep.u_valid)
      for (double v : rep.u_lin) top = std::max(top, v);
    if (!rep.u_valid || top < 1e-200) {
      rep.u_ref = -std::numeric_limits<double>::infinity();
      for (double a : rep.log_u) rep.u_ref = std::max(rep.u_ref, a);
      refresh_vertex_weights(rep);
    }
    return rep.u_lin;
  }
  static void refresh_vertex_weights(Replicate& rep) {
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

  /// Sets u_lin[v] and moves v to its place in by_weight (a weight moves a little per step, so
  /// this is a few swaps).
  static void set_vertex_weight(Replicate& rep, std::size_t v, double value) {
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

  /// Selection of step t for one replicate: fills trace.{node, node_pmf, updated, predicted, q,
  /// q_used, exploration_set} and consumes this step's uniforms. No θ/w/u change.
  void plan(Replicate& rep, std::int64_t t, double eta) const {
    GraphAidedTrace& tr = rep.trace;
    tr.t = t;
    tr.eta = eta;
    tr.q.clear();
    tr.q_used.clear();
    if (family_ == Family::Gf) {
      if (t <= last_regen_) {
        std::vector<double>& w = rep.weights;
        shifted_exp(rep.log_w, w);
        for (double& u : rep.regen_uniforms) u = rep.rng->uniform();
        rep.regen_w = w;
        rep.regen_eta = eta;
        rep.bipartite->regenerate(w, eta, rep.regen_uniforms.data(), gf_rule());
        rep.has_graph = true;
      }
      // Selective-node weights Σ_{k linked to j} w_k, shifted by the heaviest *linked* kernel:
      // once the graph stops regenerating, every kernel it links may have fallen far behind the
      // heaviest kernel overall, and w shifted by that maximum would underflow to all zeros.
      double top = -std::numeric_limits<double>::infinity();
      for (std::size_t j = 0; j < J_; ++j)
        for (std::size_t k : rep.bipartite->kernels(j)) top = std::max(top, rep.log_w[k]);
      std::vector<double> u(J_, 0.0);
      for (std::size_t j = 0; j < J_; ++j)
        for (std::size_t k : rep.bipartite->kernels(j)) u[j] += std::exp(rep.log_w[k] - top);
      tr.node_pmf = selective_node_probabilities(u, eta);
      tr.node = sample_index(tr.node_pmf, rep.rng->uniform(), SamplerRule::InverseCdf);
      tr.updated = rep.bipartite->kernels(tr.node);
      tr.predicted = tr.updated;
      for (std::size_t k : tr.updated) tr.q.push_back(rep.bipartite->observation_probability(k, tr.node_pmf));
      tr.exploration_set.clear();
    } else {
      const std::vector<double>& u = vertex_weights_lin(rep);
      const SamplerRule rule = shifted_ ? SamplerRule::Shifted : SamplerRule::InverseCdf;
      const bool before = t <= switch_step_;
      const RefinedGraph* refined = nullptr;
      if (family_ == Family::Sfg) {
        tr.exploration_set = dominating_;
      } else {
        if (!rep.refined || before || !freeze_refinement_) {
          std::vector<std::size_t>& set = rep.candidate_set;
          if (beta_fixed_ > 0) {
            set = refinement_set(u, eta, beta_fixed_);
            if (set.empty()) set.push_back(argmax_first(u));
          } else {
            refinement_set_from_sorted(u, rep.by_weight, eta, beta_rank_, beta_eps_, set);
          }
          if (!rep.refined || set != rep.refined_set) {
            rep.refined_set.swap(set);
            rebuild_refined(rep);
          }
          rep.refined = true;
        }
        tr.exploration_set = rep.refined_set;
        refined = &rep.refined_graph;
      }
      vertex_probabilities(u, eta, tr.exploration_set, tr.node_pmf);
      double p_total = 0.0;
      for (double v : tr.node_pmf) p_total += v;
      if (family_ == Family::SfgR && double_draw_ && before) (void)rep.rng->uniform();
      const AfterSwitch mode = before ? AfterSwitch::KeepSampling : after_switch_;
      if (mode == AfterSwitch::KeepSampling) tr.node = sample_index(tr.node_pmf, rep.rng->uniform(), rule);
      else if (mode == AfterSwitch::Fixed0) tr.node = 0;
      else tr.node = argmax_first(u);
      if (refined) {
        refined->out_neighbours(tr.node, tr.updated);
        if (predict_with_refined_) tr.predicted = tr.updated;
        else tr.predicted = graph_.out_neighbours(tr.node);
        // N'_in(k) = N_in(k) plus at most the refinement edge into k; the sums run over the
        // shorter side of N_in(k), since a few kernels have in-degree N (feedback_graph.h).
        for (std::size_t k : tr.updated)
          tr.q.push_back(observation_sums_.q(k, tr.node_pmf, p_total, refined->added_from(k)));
      } else {
        tr.updated = graph_.out_neighbours(tr.node);
        tr.predicted = tr.updated;
        for (std::size_t k : tr.updated) tr.q.push_back(observation_sums_.q(k, tr.node_pmf, p_total));
      }
    }
    for (double q : tr.q) tr.q_used.push_back(std::max(q, q_floor_));
  }

  /// ŷ = Σ_{k∈S_pred} w_k f_k / Σ w_k with the current (pre-update) weights, max-shifted.
  double combine(const Replicate& rep, const std::vector<std::size_t>& updated, const std::vector<double>& f,
                 const std::vector<std::size_t>& predicted) const {
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

  AlgoContext context_;
  Family family_;
  bool conference_;
  RfEnsembleConfig config_;
  bool inv_sqrt_t_ = true;
  double eta_ = 0.1;
  std::int64_t switch_step_ = 300;
  bool shifted_ = false;
  bool updated_theta_loss_ = false;
  std::size_t M_ = 10, J_ = 2;
  double q_floor_ = 0.0, p_floor_ = 0.0;
  std::int64_t last_regen_ = 300;
  FeedbackGraph graph_;
  ObservationSums observation_sums_;  // q_k of graph_ (and of G'_t with its one extra in-edge)
  std::vector<std::size_t> dominating_;
  AfterSwitch after_switch_ = AfterSwitch::ArgmaxU;
  bool freeze_refinement_ = false, double_draw_ = false, predict_with_refined_ = true;
  double beta_eps_ = 1e-7, beta_fixed_ = 0.0;
  std::size_t beta_rank_ = 10;
  RefinementOptions refinement_;
  DivergenceMatrix delta_;
  DominatorOrder dominator_order_;
  std::unique_ptr<RfBackend> backend_;
  std::unique_ptr<StepPool> pool_;  // per-replicate host work of a step
  std::vector<Replicate> reps_;
  std::int64_t t_ = 0;
  std::size_t max_pairs_ = 0;
  std::uint64_t updates_ = 0;  // θ updates sent to the backend, all replicates
  std::vector<PairStep> pairs_;
  std::vector<std::size_t> offsets_;
  std::vector<double> f_, norm2_;
};

const GraphAided& as_graph_aided(const Algorithm& algorithm) {
  const auto* g = dynamic_cast<const GraphAided*>(&algorithm);
  if (!g) throw Error("not a graph-aided algorithm");
  return *g;
}

AlgorithmFactory factory(Family family, bool conference) {
  return [family, conference](ParamReader& params, const AlgoContext& context) {
    return std::unique_ptr<Algorithm>(new GraphAided(params, context, family, conference));
  };
}

}  // namespace

const GraphAidedTrace* graph_aided_trace(const Algorithm& algorithm, std::size_t replicate) {
  const auto* g = dynamic_cast<const GraphAided*>(&algorithm);
  return g ? &g->trace(replicate) : nullptr;
}
std::vector<double> graph_aided_theta(const Algorithm& algorithm, std::size_t replicate, std::size_t kernel) {
  return as_graph_aided(algorithm).theta(replicate, kernel);
}
std::vector<double> graph_aided_kernel_weights(const Algorithm& algorithm, std::size_t replicate) {
  return as_graph_aided(algorithm).kernel_weights(replicate);
}
std::vector<double> graph_aided_log_kernel_weights(const Algorithm& algorithm, std::size_t replicate) {
  return as_graph_aided(algorithm).log_kernel_weights(replicate);
}
std::vector<double> graph_aided_vertex_weights(const Algorithm& algorithm, std::size_t replicate) {
  return as_graph_aided(algorithm).vertex_weights(replicate);
}
std::size_t graph_aided_max_pairs_per_step(const Algorithm& algorithm) {
  return as_graph_aided(algorithm).max_pairs();
}

void add_graph_aided_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"omkl-gf", "OMKL-GF: bipartite feedback-graph OMKL (Ghari & Shen, JMLR, Alg. 1-3)",
                      factory(Family::Gf, false)});
  registry.push_back({"omkl-sfg", "OMKL-SFG: similarity feedback graph OMKL (Ghari & Shen, JMLR, Alg. 5)",
                      factory(Family::Sfg, false)});
  registry.push_back({"omkl-sfg-r", "OMKL-SFG-R: OMKL-SFG with graph refinement (Ghari & Shen, JMLR, Alg. 6)",
                      factory(Family::SfgR, false)});
  registry.push_back({"sfg-mkl", "SFG-MKL: conference OMKL-SFG (41 Gaussians, nearest graph, 1/sqrt(T))",
                      factory(Family::Sfg, true)});
  registry.push_back({"sfg-mkl-r", "SFG-MKL-R: conference OMKL-SFG-R (argmin refinement, 1/sqrt(T))",
                      factory(Family::SfgR, true)});
}

}  // namespace omkl::detail
