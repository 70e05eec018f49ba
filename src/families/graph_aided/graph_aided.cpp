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
#include "core/step_pool.h"
#include "families/graph_aided/graph_aided_config.h"
#include "families/graph_aided/graph_selection.h"
#include "families/graph_aided/resident_graph.h"
#include "features/backend_walk.h"
#include "features/rf_ensemble.h"
#include "random/notebook_stream.h"
#include "random/rng.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

class GraphAided final : public Algorithm {
 public:
  bool batches_replicates() const override { return true; }  // on the backend (RfBackend)
  bool walks_on_device() const override { return config_.resident; }
  double offline_seconds() const override { return config_.offline_seconds; }
  GraphAided(ParamReader& params, const AlgoContext& context, GraphFamily family, bool conference)
      : context_(context), config_(read_graph_aided_config(params, context, family, conference)) {
    const std::size_t N = config_.rf.dictionary.size();

    // ---- backend and state -----------------------------------------------------------------
    std::vector<std::uint32_t> slot_kernel(N);
    for (std::size_t k = 0; k < N; ++k) slot_kernel[k] = static_cast<std::uint32_t>(k);
    const std::size_t R = context.n_replicates();
    std::vector<NotebookStart> notebook;
    if (config_.rf.numpy_legacy) {
      if (config_.conference)
        params.fail("rng", "numpy_legacy replays the journal notebooks; the conference variants have none (§7 A-9)");
      const NotebookRun run = config_.family == GraphFamily::Gf ? NotebookRun::Gf
                              : config_.family == GraphFamily::Sfg ? NotebookRun::Sfg : NotebookRun::SfgR;
      NotebookShape shape{config_.rf.dictionary, config_.rf.n_rff, context.n_features, context.horizon};
      try {
        notebook = notebook_starts(numpy_seed(context), context.replicates, run, config_.M, shape);
      } catch (const ConfigError& e) {
        params.fail("rng", e.what());
      }
      // The replay that positioned the streams drew each repetition's features on the way:
      // the backend takes those instead of replaying the stream a second time.
      backend_ = make_rf_ensemble_backend(config_.rf, context, slot_kernel, [&](const FrequencySink& sink) {
        for (std::size_t r = 0; r < R; ++r) {
          for (std::size_t k = 0; k < N; ++k) sink(r, k, notebook[r].frequencies[k].data());
          notebook[r].frequencies = {};
        }
      });
    } else {
      backend_ = make_rf_ensemble_backend(config_.rf, context, slot_kernel);
    }
    pool_ = std::make_unique<StepPool>(std::min(context.host_threads, R));
    reps_.resize(R);
    for (std::size_t r = 0; r < R; ++r) {
      GraphReplicate& rep = reps_[r];
      if (config_.rf.numpy_legacy) rep.rng.emplace(notebook[r].stream);
      else rep.rng.emplace(RandomStream(context.seed, context.replicates[r], RngPurpose::Selection, config_.stream_index()));
      rep.log_w.assign(N, 0.0);
      rep.log_u.assign(config_.family == GraphFamily::Gf ? 0 : N, 0.0);
      if (config_.family == GraphFamily::Gf) {
        rep.bipartite.emplace(N, config_.J, config_.M);
        rep.regen_uniforms.assign(config_.J * config_.M, 0.0);
        rep.regen_w.assign(N, 1.0);
      }
      if (config_.family == GraphFamily::SfgR) rep.refined_set.clear();
    }
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  // One step is a block of one: the same selection, backend step and learning.
  void step(const double* x, double y, double* predictions) override {
    step_block(x, &y, 1, context_.n_features, predictions);
  }

  // Each replicate's selection is independent of the others': on the step pool when the context
  // grants host threads (lockstep GPU runs), inline otherwise. Within a block, replicate r's
  // learning at t and its selection at t + 1 share one pass over the pool (one hand-off and one
  // wait per step instead of two); each replicate does the same work in the same order as in
  // blocks of one, so the numbers are the same.
  void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                  double* predictions) override {
    if (n == 0) return;
    if (config_.resident) return walk_resident(x, y, n, n_features, predictions);
    const std::size_t R = reps_.size();
    std::int64_t t = t_ + 1;
    double eta = config_.eta_at(t);
    pool_->run(R, [&](std::size_t r) { plan_pairs(r, t, eta); });
    for (std::size_t i = 0; i < n; ++i) {
      backend_step(x + i * n_features, y[i]);
      vertex_ridge_terms();
      double* out = predictions + i * R;
      if (i + 1 < n) {
        const std::int64_t t_next = t + 1;
        const double eta_next = config_.eta_at(t_next);
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

  /// The resident walk takes every replicate's own stream (a shuffled study in lockstep).
  bool replicated_streams() const override { return config_.resident; }
  void step_block_replicated(const StreamRows& block, double* predictions) override {
    if (!config_.resident) return Algorithm::step_block_replicated(block, predictions);
    if (block.n_steps > 0) walk_resident(block.x, block.y, block.n_steps, block.n_features, predictions, &block);
  }

  /// step_path = resident: the n samples as one walk of the resident program (resident_graph.h),
  /// on the GPU where the backend lends its device memory, by the host driver otherwise (θ and
  /// V through the backend's accessors, in double: the device walk's reference, not a fast
  /// path). The state goes back into reps_, so checkpoints, predict() and the inspection hooks
  /// read it as the host path keeps it. With `replicated`, x and y are the stream whose rows
  /// it names for every replicate's sample of each step (step_block_replicated()).
  void walk_resident(const double* x, const double* y, std::size_t n, std::size_t n_features, double* predictions,
                     const StreamRows* replicated = nullptr) {
    const std::size_t R = reps_.size();
    const RfProblem& p = backend_->problem();
    if (!resident_tables_) resident_tables_ = make_graph_tables(config_, p.feature_scale, p.n_rff);
    const GraphTables& tables = resident_tables_->scalars;
    GraphStateData state(tables, R);
    state.load(reps_);
    ResidentWalkArgs<double> shape;
    shape.n_steps = n;
    shape.n_replicates = R;
    shape.n_slots = p.n_slots();
    shape.n_kernels = p.n_kernels;
    shape.n_rff = p.n_rff;
    shape.n_features = n_features;
    shape.max_pairs = tables.max_pairs;
    shape.t0 = t_ + 1;
    shape.feature_scale = p.feature_scale;
    shape.loss = p.loss;
    shape.local_state = walk_state_local();
    if (replicated) {
      shape.rows = replicated->rows;
      shape.n_rows = replicated->n_rows;
    }
    DeviceLease lease;
    if (backend_->device_lease(lease)) {
      if (!device_walk_) device_walk_ = std::make_unique<GraphDeviceWalk>(*resident_tables_, lease);
      device_walk_->walk(state, lease, shape, x, y, predictions);
    } else {
      GraphProgram<HostPhilox> program{resident_tables_->view(), state.view()};
      walk_on_backend(program, *backend_, resident_frequencies_, shape, x, y, predictions);
    }
    const std::int64_t t_last = t_ + static_cast<std::int64_t>(n);
    state.store(reps_, config_, t_last, config_.eta_at(t_last), predictions + (n - 1) * R);
    updates_ += state.updates();
    max_pairs_ = std::max(max_pairs_, R * tables.max_pairs);  // an upper bound: the walk does not report it
    t_ = t_last;
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

  /// u_loss = ridge: λ‖Σ_{k∈S} w̄_k θ_k‖² of every replicate after its step, w̄ the weights that
  /// made the prediction (§7 A-5). On the calling thread: it reads θ from the backend.
  void vertex_ridge_terms() {
    if (!config_.vertex_ridge || config_.family == GraphFamily::Gf) return;
    const std::size_t n = backend_->problem().theta_size();
    std::vector<double> sum(n), theta(n);
    for (std::size_t r = 0; r < reps_.size(); ++r) {
      GraphReplicate& rep = reps_[r];
      const std::vector<std::size_t>& S = rep.trace.predicted;
      double top = -std::numeric_limits<double>::infinity(), total = 0.0;
      for (std::size_t k : S) top = std::max(top, rep.log_w[k]);
      for (std::size_t k : S) total += std::exp(rep.log_w[k] - top);
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t k : S) {
        const double w = std::exp(rep.log_w[k] - top) / total;
        backend_->get_theta(r, k, theta.data());
        for (std::size_t j = 0; j < n; ++j) sum[j] += w * theta[j];
      }
      double n2 = 0.0;
      for (double v : sum) n2 += v * v;
      rep.vertex_ridge = config_.rf.lambda * n2;
    }
  }

  /// plan_selection(config_, ) for replicate r, then its pairs for the backend (replicate index r).
  void plan_pairs(std::size_t r, std::int64_t t, double eta) {
    GraphReplicate& rep = reps_[r];
    plan_selection(config_, rep, t, eta);
    const GraphAidedTrace& tr = rep.trace;
    rep.pairs.resize(tr.updated.size());
    for (std::size_t i = 0; i < tr.updated.size(); ++i) {
      const double q = tr.q_used[i];
      PairStep& pair = rep.pairs[i];
      pair.replicate = static_cast<std::uint32_t>(r);
      pair.slot = static_cast<std::uint32_t>(tr.updated[i]);
      // θ ← θ − η [2(f − y) z + 2λθ]/q̃; the backend's C'(f, y) is 2(f − y).
      pair.rate = eta / q;
      pair.shrink = 1.0 - 2.0 * eta * config_.rf.lambda / q;
    }
  }

  /// GraphReplicate r's prediction and weight updates from this step's backend outputs.
  void learn(std::size_t r, double y, double eta, double* predictions) {
    GraphReplicate& rep = reps_[r];
    GraphAidedTrace& tr = rep.trace;
    const std::size_t base = offsets_[r];
    tr.f.assign(f_.begin() + static_cast<std::ptrdiff_t>(base), f_.begin() + static_cast<std::ptrdiff_t>(offsets_[r + 1]));
    tr.prediction = combine_prediction(rep, tr.updated, tr.f, tr.predicted);
    predictions[r] = tr.prediction;
    // Kernel weights (§1.5 steps 3–4).
    const double z2 = config_.rf.feature_scale * config_.rf.feature_scale * static_cast<double>(config_.rf.n_rff);
    for (std::size_t i = 0; i < tr.updated.size(); ++i) {
      const PairStep& p = pairs_[base + i];
      const double f = tr.f[i];
      double n2 = norm2_[base + i];
      if (config_.updated_theta_loss) {
        const double g = p.rate * 2.0 * (f - y);
        n2 = p.shrink * p.shrink * n2 - 2.0 * p.shrink * g * f + g * g * z2;
        if (n2 < 0) n2 = 0;
      }
      const double loss = ((f - y) * (f - y) + config_.rf.lambda * n2) / tr.q_used[i];
      rep.log_w[tr.updated[i]] -= eta * loss;
    }
    // Vertex weight (§2.5 step 7); none was drawn where the replicate diverged.
    if (config_.family != GraphFamily::Gf && !tr.diverged) {
      const double err = config_.vertex_from_prediction
                             ? tr.prediction  // the 2021 code's u update (u_update_uses_prediction)
                             : (tr.prediction - y) * (tr.prediction - y) + (config_.vertex_ridge ? rep.vertex_ridge : 0.0);
      const double p_tilde = std::max(tr.node_pmf[tr.node], config_.p_floor);
      rep.log_u[tr.node] -= eta * err / p_tilde;
      if (rep.u_valid) set_vertex_weight(rep, tr.node, exp_or_zero(rep.log_u[tr.node] - rep.u_ref));
    }
  }

  void predict(const double* x, double* predictions) override {
    // Replays the selection of the next step on copies of the random streams, so the result
    // equals the prediction the next step() makes, and no state changes.
    const std::int64_t t = t_ + 1;
    const double eta = config_.eta_at(t);
    const std::size_t R = reps_.size();
    std::vector<GraphReplicate> copies(R);
    std::vector<PairStep> pairs;
    std::vector<std::size_t> offsets(R + 1, 0);
    for (std::size_t r = 0; r < R; ++r) {
      copies[r] = reps_[r];
      plan_selection(config_, copies[r], t, eta);
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
      predictions[r] = combine_prediction(copies[r], copies[r].trace.updated, fr, copies[r].trace.predicted);
    }
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("graph-aided/2");  // 2: vertex-weight reference and the numpy stream state
    out.put_i64(t_);
    // The numbers of the tables the configuration names (only with `table:FILE` options, so
    // other checkpoints are unchanged): a file changed since must not continue silently.
    for (const PinnedTable& table : pinned_tables()) out.put_f64s(*table.values);
    save_backend_state(*backend_, out);
    for (const GraphReplicate& rep : reps_) {
      rep.rng->save(out);
      // All −∞ (every weight overflowed to zero) counts as unsound: no such model is saved.
      out.put_weights(rep.log_w, rep.log_w.size(), true);
      out.put_weights(rep.log_u, rep.log_u.size(), true);
      out.put_u64(rep.u_valid ? 1 : 0);
      out.put_f64(rep.u_ref);
      if (config_.family == GraphFamily::Gf) {
        out.put_u64(rep.has_graph ? 1 : 0);
        out.put_f64s(rep.regen_w);
        out.put_f64(rep.regen_eta);
        out.put_f64s(rep.regen_uniforms);
      }
      if (config_.family == GraphFamily::SfgR) {
        std::vector<std::uint64_t> set(rep.refined_set.begin(), rep.refined_set.end());
        out.put_u64(rep.refined ? 1 : 0);
        out.put_u64s(set);
      }
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("graph-aided/2");
    t_ = in.get_i64();
    for (const PinnedTable& table : pinned_tables()) {
      std::vector<double> stored(table.values->size());
      in.get_f64s(stored.data(), stored.size());  // a stored count other than the table's is refused
      if (stored != *table.values)
        throw InputError("checkpoint: the " + table.kind + " '" + table.path +
                         "' is not the one this checkpoint was made with (its " + table.numbers + " differ)");
    }
    load_backend_state(*backend_, in);
    resident_frequencies_.clear();  // the checkpoint's matrices replace the backend's
    const std::size_t N = config_.rf.dictionary.size();
    // Sizes are checked before anything is rebuilt from them: a file with a valid checksum
    // may still come from another model (or be crafted), and the rebuilds index by them.
    // StateReader's sized read refuses a stored count other than the model's.
    const auto read_values = [&in](std::vector<double>& values, std::size_t n) {
      values.resize(n);
      in.get_f64s(values.data(), n);
    };
    // Log-weights only ever decrease from 0: −∞ is a weight that underflowed, NaN or +∞ damage,
    // and all of them −∞ no run leaves (the heaviest is shifted to 1 when used: none to shift).
    const auto expect_log_weights = [](const std::vector<double>& log_w, const char* what) {
      for (double v : log_w)
        if (unsound(v))
          throw InputError(std::string("checkpoint: graph-aided ") + what + " hold a log-weight of " + std::to_string(v));
      const std::string problem = weight_vector_problem(log_w.data(), log_w.size(), true);
      if (!problem.empty()) throw InputError(std::string("checkpoint: graph-aided ") + what + " " + problem);
    };
    if (t_ < 0) throw InputError("checkpoint: graph-aided step count " + std::to_string(t_) + " is negative");
    for (GraphReplicate& rep : reps_) {
      rep.rng->load(in);
      read_values(rep.log_w, N);
      expect_log_weights(rep.log_w, "kernel weights");
      read_values(rep.log_u, config_.family == GraphFamily::Gf ? 0 : N);
      expect_log_weights(rep.log_u, "vertex weights");
      rep.u_valid = in.get_u64() != 0;
      rep.u_ref = in.get_f64();
      // u_ref is max log_u at the last refresh and log_u only decreases since: a reference below
      // the largest log-weight (or NaN) makes vertex weights overflow to ∞ and the next update NaN.
      if (rep.u_valid && !rep.log_u.empty() &&
          !(rep.u_ref >= *std::max_element(rep.log_u.begin(), rep.log_u.end())))
        throw InputError("checkpoint: vertex-weight reference " + std::to_string(rep.u_ref) +
                         " is below the largest vertex log-weight");
      if (rep.u_valid) refresh_vertex_weights(rep);
      try {
        if (config_.family == GraphFamily::Gf) {
          rep.has_graph = in.get_u64() != 0;
          read_values(rep.regen_w, N);
          rep.regen_eta = in.get_f64();
          read_values(rep.regen_uniforms, config_.J * config_.M);
          // The graph is rebuilt from them: shifted weights (the heaviest 1), an exploration
          // rate in [0, 1] and uniforms in [0, 1), as plan_selection() drew them. A state with
          // NaN or +∞ among them is Learner::load's to refuse once it is read: not rebuilt (−∞
          // is judged below, as any other number out of range).
          bool sound = !unsound(rep.regen_eta);
          for (const std::vector<double>* values : {&rep.regen_w, &rep.regen_uniforms})
            for (double v : *values) sound = sound && !unsound(v);
          if (!sound) continue;
          double regen_total = 0.0;
          for (double w : rep.regen_w) {
            if (!(w >= 0.0 && w <= 1.0))
              throw InputError("checkpoint: OMKL-GF graph weight " + std::to_string(w) + " is not in [0, 1]");
            regen_total += w;
          }
          if (rep.has_graph && !(regen_total > 0.0))
            throw InputError("checkpoint: OMKL-GF graph weights are all zero");
          if (!(rep.regen_eta >= 0.0 && rep.regen_eta <= 1.0))
            throw InputError("checkpoint: OMKL-GF exploration rate " + std::to_string(rep.regen_eta) +
                             " is not in [0, 1]");
          for (double u : rep.regen_uniforms)
            if (!(u >= 0.0 && u < 1.0))
              throw InputError("checkpoint: OMKL-GF graph draw " + std::to_string(u) + " is not in [0, 1)");
          if (rep.has_graph)
            rep.bipartite->regenerate(rep.regen_w, rep.regen_eta, rep.regen_uniforms.data(), config_.gf_rule());
          // The next step regenerates the graph only up to last_regen: past it, it must be stored.
          else if (t_ + 1 > config_.last_regen)
            throw InputError("checkpoint: OMKL-GF state at step " + std::to_string(t_) +
                             " has no feedback graph (the last regeneration step is " +
                             std::to_string(config_.last_regen) + ")");
        }
        if (config_.family == GraphFamily::SfgR) {
          rep.refined = in.get_u64() != 0;
          const auto set = in.get_u64s();
          rep.refined_set.assign(set.begin(), set.end());
          // D'_t holds vertices (the refinement refuses an empty one as a configuration error).
          for (std::size_t v : rep.refined_set)
            if (v >= N) throw InputError("checkpoint: OMKL-SFG-R refinement vertex " + std::to_string(v) +
                                         " is not one of the " + std::to_string(N) + " kernels");
          if (rep.refined && rep.refined_set.empty())
            throw InputError("checkpoint: OMKL-SFG-R refinement set is empty");
          if (rep.refined) rebuild_refined(config_, rep);
        }
      } catch (const Error&) {
        throw;
      } catch (const std::exception& e) {  // the graph code's own argument checks
        throw InputError(std::string("checkpoint: inconsistent graph state (") + e.what() + ")");
      }
    }
  }

  /// The schedules' tables, each once (the exploration rate may share η's).
  // A file of numbers the configuration names (`table:FILE`), which a checkpoint pins.
  struct PinnedTable {
    std::string kind, path, numbers;
    const std::vector<double>* values;
  };
  std::vector<PinnedTable> pinned_tables() const {
    std::vector<PinnedTable> tables;
    if (config_.eta_table) tables.push_back({"rate table", config_.eta_table->path, "rates", &config_.eta_table->rates});
    if (config_.explore_table && config_.explore_table != config_.eta_table)
      tables.push_back({"rate table", config_.explore_table->path, "rates", &config_.explore_table->rates});
    if (!config_.divergence_table.empty())
      tables.push_back({"divergence table", config_.divergence_table, "entries", &config_.delta.values});
    return tables;
  }

  double regret_regularizer(std::size_t r) const override {
    // w_k = exp(log w_k) is the reference's unnormalised weight (it starts at 1 and is only ever
    // multiplied by exp(−ηℓ)); θ_k of every kernel, also those never selected (θ = 0).
    const GraphReplicate& rep = reps_.at(r);
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
    return config_.rf.lambda * norm2;
  }

  // ---- inspection (graph_aided.h) ----------------------------------------------------------
  const GraphAidedTrace& trace(std::size_t r) const { return reps_.at(r).trace; }
  std::vector<double> theta(std::size_t r, std::size_t k) const {
    std::vector<double> th(backend_->problem().theta_size());
    backend_->get_theta(r, k, th.data());
    return th;
  }
  std::vector<double> kernel_weights(std::size_t r) const override {
    std::vector<double> w;
    shifted_exp(reps_.at(r).log_w, w);
    double total = 0.0;
    for (double v : w) total += v;
    for (double& v : w) v /= total;  // the largest is 1, so total ≥ 1
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
  AlgoContext context_;
  GraphAidedConfig config_;
  std::unique_ptr<RfBackend> backend_;
  std::unique_ptr<StepPool> pool_;  // per-replicate host work of a step
  std::vector<GraphReplicate> reps_;
  std::int64_t t_ = 0;
  std::size_t max_pairs_ = 0;
  std::uint64_t updates_ = 0;  // θ updates sent to the backend, all replicates
  std::vector<PairStep> pairs_;
  std::vector<std::size_t> offsets_;
  std::vector<double> f_, norm2_;
  // step_path = resident
  std::optional<GraphTableData> resident_tables_;
  std::vector<double> resident_frequencies_;  // host driver: V of every (replicate, kernel)
  std::unique_ptr<GraphDeviceWalk> device_walk_;
};

const GraphAided& as_graph_aided(const Algorithm& algorithm) {
  const auto* g = dynamic_cast<const GraphAided*>(&algorithm);
  if (!g) throw Error("not a graph-aided algorithm");
  return *g;
}

AlgorithmFactory factory(GraphFamily family, bool conference) {
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
  std::vector<double> w;
  shifted_exp(as_graph_aided(algorithm).log_kernel_weights(replicate), w);
  return w;
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
                      factory(GraphFamily::Gf, false)});
  registry.push_back({"omkl-sfg", "OMKL-SFG: similarity feedback graph OMKL (Ghari & Shen, JMLR, Alg. 5)",
                      factory(GraphFamily::Sfg, false)});
  registry.push_back({"omkl-sfg-r", "OMKL-SFG-R: OMKL-SFG with graph refinement (Ghari & Shen, JMLR, Alg. 6)",
                      factory(GraphFamily::SfgR, false)});
  registry.push_back({"sfg-mkl", "SFG-MKL: conference OMKL-SFG (41 Gaussians, nearest graph, 1/sqrt(T))",
                      factory(GraphFamily::Sfg, true)});
  registry.push_back({"sfg-mkl-r", "SFG-MKL-R: conference OMKL-SFG-R (argmin refinement, 1/sqrt(T))",
                      factory(GraphFamily::SfgR, true)});
}

}  // namespace omkl::detail
