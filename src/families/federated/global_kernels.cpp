/// @file global_kernels.cpp
/// @brief The federated algorithms whose kernel parameters θ live on the server and move by the
/// average of the clients' gradient steps (spec/federated.md §1, §3.1–§3.3): POF-MKL, and the
/// baselines OFSKL, OFMKL-Avg and vM-KOFL. One loop; they differ only in
///  - which kernels a client updates and uploads: POF-MKL's Algorithm 1 bin (importance weight
///    1/p), or every kernel (p = 1);
///  - how a client combines the kernels' predictions: its own private Hedge weights (POF-MKL),
///    the server's global Hedge weights (vM-KOFL), the uniform mean (OFMKL-Avg; OFSKL is its
///    one-kernel case).
/// With the same D, frequencies and data, POF-MKL(M = N), vM-KOFL and OFMKL-Avg therefore give
/// bit-identical θ (§3.3): the same updates, in the same order.
///
/// Stream: one step() is one client's sample; row t·K + k is client k's sample of round t
/// (arrange_federated()). A client predicts with the round's θ_t, then computes its update; the
/// server applies the K updates when the round's last client has reported (§1.3 S8: θ_{t+1} =
/// θ_t − (1/K)·Σ_k g_k, summed in ascending client order by the backend's aggregate_round()).
/// Only the sampled client's weights move per step, and a client's weights never leave it.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/decimal.h"
#include "core/step_path.h"
#include "families/federated/federated.h"
#include "families/federated/federated_config.h"
#include "families/federated/federation_processes.h"
#include "families/federated/kernel_selection.h"
#include "families/federated/resident_federation.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

constexpr std::uint64_t kSelectionStreams = 0xfed00000u;  // + client: each client's own draws

/// How a client combines the kernels' predictions. DrawnKernel: with the one kernel J_t the
/// server draws each round from its Hedge weights (eM-KOFL's variant=global_only, §3.4).
enum class Head { PersonalHedge, GlobalHedge, Uniform, DrawnKernel };
/// Which kernels a client updates and uploads.
enum class Uploads { Bins, AllKernels, DrawnKernel };

struct Variant {
  Head head = Head::PersonalHedge;
  Uploads uploads = Uploads::Bins;
  bool single_kernel = false;  // OFSKL
  /// Weights on the server, moved by the losses every client reports (vM-KOFL, eM-KOFL global_only).
  bool server_weights() const { return head == Head::GlobalHedge || head == Head::DrawnKernel; }
};

// ξ_k of every client from "a+b+…" (K values in (0, 1]), naming the parameter in any error.
std::vector<double> parse_per_client_xi(ParamReader& params, const std::string& text, std::size_t K) {
  std::vector<double> xi;
  for (const std::string& item : split_plus_list(text)) {
    char* stop = nullptr;
    const double v = strtod_decimal(item.c_str(), &stop);
    if (item.empty() || *stop != '\0' || !(v > 0) || v > 1)
      params.fail("xi_per_client", "value " + std::to_string(xi.size() + 1) + " '" + item + "' is not a ξ in (0, 1]");
    xi.push_back(v);
  }
  if (xi.size() != K)
    params.fail("xi_per_client", std::to_string(xi.size()) + " values for " + std::to_string(K) + " clients");
  return xi;
}

class GlobalKernelFederation final : public Algorithm {
 public:
  bool batches_replicates() const override { return true; }  // on the backend (RfBackend)
  bool walks_on_device() const override { return resident_; }  // whole rounds (a study's stream)
  GlobalKernelFederation(ParamReader& params, const AlgoContext& context, Variant variant)
      : context_(context), variant_(variant) {
    if (context.task != Task::Regression)
      throw ConfigError("algorithm '" + params.algorithm() + "': the federated algorithms are defined for "
                        "regression (squared loss) only");
    n_clients_ = read_clients(params, context);
    std::string dict_text;
    const Dictionary dictionary = read_federated_dictionary(params, variant.single_kernel, 10.0, &dict_text);
    const std::size_t N = dictionary.size();
    std::size_t per_upload = N, extra = 0;
    if (variant.uploads == Uploads::Bins) {
      const std::int64_t m = params.get_int("M", 1, "kernels per bin: the most a client updates and uploads per step",
                                            ParamRange::closed(1, static_cast<double>(N)));
      M_ = static_cast<std::size_t>(m);
      per_upload = M_;
      const double xi = params.get_double("xi", 1.0, "exploration ξ of the bin PMF (the same for every client)",
                                          ParamRange::open_closed(0, 1));
      xi_.assign(n_clients_, xi);
      const std::string per_client = params.get_string(
          "xi_per_client", "", "each client's own ξ_k, K values joined by '+' (client order); instead of xi (§1.4)");
      if (!per_client.empty()) {
        if (params.given("xi")) params.fail("xi_per_client", "give xi or xi_per_client, not both");
        xi_ = parse_per_client_xi(params, per_client, n_clients_);
      }
      const bool reference = context.profile == Profile::Reference;
      post_update_selection_ = params.get_choice(
                                   "selection_weights", reference ? "pre_update" : "post_update",
                                   {"pre_update", "post_update"},
                                   "weights Algorithm 1 ranks: before this step's weight update (the code) or "
                                   "after it (the paper's Algorithm 2 order), §7 C4") == "post_update";
      skip_sort_ = params.get_bool("skip_sort_if_uniform", !reference,
                                   "with ξ = 1, bins in index order instead of the weight ranking (the paper "
                                   "calls the sort unnecessary; the code sorts), §7 C5");
    } else if (variant.uploads == Uploads::DrawnKernel) {
      M_ = 1;
      per_upload = 1;  // θ_{J_t}'s update
      explore_ = params.get_double("explore", 0.0, "uniform mixing of the server's kernel draw",
                                   ParamRange::closed_open(0, 1));
    } else {
      M_ = N;
    }
    if (variant.server_weights()) {
      extra = N;  // the clients' N losses go up with the updates (§2.2)
      sum_losses_ = params.get_choice("weight_loss_reduction", "sum", {"sum", "mean"},
                                      "server weights' loss: the clients' losses summed or averaged "
                                      "(§3.3, §7 A12)") == "sum";
    }
    n_rff_ = read_budgeted_D(params, per_upload, extra, &max_upload_);
    upload_ = params.get_choice("upload", context.profile == Profile::Reference ? "delta" : "theta",
                                {"delta", "theta"},
                                "what a client sends for each kernel it updates: its step g = θ_t − θ_{k,t+1} "
                                "(the code) or its θ_{k,t+1} (the paper), which the server subtracts from θ_t; "
                                "equal but for rounding (§4.9 message.upload, §7 C1)") == "theta"
                  ? UploadForm::Theta
                  : UploadForm::Delta;
    const char* weight_step = variant.head == Head::PersonalHedge ? "eta_k"
                              : variant.server_weights()           ? "eta_g"
                                                                   : "";
    steps_ = read_federated_steps(params, context, n_clients_, weight_step);
    RfEnsembleConfig features = federated_features(params, dictionary, dict_text, n_rff_, steps_.lambda);
    // §4.4: OFSKL's one kernel draws from a stream of its own ("rf-ofskl"), not the one the
    // multi-kernel methods' first kernel draws from, so that the two are not correlated.
    if (variant.single_kernel) features.first_stream += kOfsklFrequencyStream;
    std::vector<std::uint32_t> slot_kernel(N);
    for (std::size_t i = 0; i < N; ++i) slot_kernel[i] = static_cast<std::uint32_t>(i);
    schedules_.assign(N, SlotSchedule{});
    backend_ = make_rf_ensemble_backend(features, context, slot_kernel);
    ledger_ = CommunicationLedger(max_upload_);
    track_regularizer_ = context.track_regret_regularizer;
    const bool one_xi = std::all_of(xi_.begin(), xi_.end(), [&](double v) { return v == xi_.front(); });
    resident_ = read_step_path(params, "rounds", backend_on_gpu(context.backend),
                               variant.uploads == Uploads::DrawnKernel
                                   ? "eM-KOFL's variant=global_only has no resident walk"
                               : !one_xi            ? "clients with different ξ (the resident walk holds one)"
                               : track_regularizer_ ? kRegularizerOnHostPath
                                                    : float_walk_on_cpu(features.single_precision,
                                                                        backend_on_gpu(context.backend)));

    const std::size_t R = context.n_replicates();
    norm2_.assign(R * N, 0.0);  // θ starts at 0
    if (variant.head == Head::PersonalHedge) log_w_.assign(R * n_clients_ * N, 0.0);
    if (variant.server_weights()) {
      log_w_.assign(R * N, 0.0);
      round_loss_.assign(R * N, 0.0);
    }
    if (variant.head == Head::DrawnKernel) drawn_.assign(R, 0);
    kernel_loss_.assign(R * n_clients_ * N, 0.0);
    if (track_regularizer_) {
      gram_.assign(R * N * N, 0.0);  // θ starts at 0
      last_regularizer_.assign(R, 0.0);
    }
    selections_.resize(R);
    f_.resize(R * N);
    losses_.resize(N);
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }

  void step(const double* x, double y, double* predictions) override { client_sample(x, y, predictions, nullptr); }

  // step_path = resident: the whole rounds of the block as one walk (resident_federation.h);
  // samples before the first round boundary and after the last whole round take the host path.
  void step_block(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions) override {
    const std::size_t R = n_replicates(), K = n_clients_;
    std::size_t i = 0;
    if (resident_) {
      i = std::min<std::size_t>(n, (K - static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(K))) % K);
      host_samples(x, y, i, d, predictions);
      const std::size_t rounds = (n - i) / K;
      if (rounds > 0) walk_rounds(x + i * d, y + i, rounds, d, predictions + i * R);
      i += rounds * K;
    }
    host_samples(x + i * d, y + i, n - i, d, predictions + i * R);
  }

  // The host path over n samples: the clients of a round predict against the same θ, so each
  // round's samples in the block are predicted together first (predict_rows(): the same numbers
  // as one at a time, each kernel's V read once for all of them), then stepped in order.
  void host_samples(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_;
    for (std::size_t i = 0; i < n;) {
      const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(K));
      const std::size_t rows = std::min(n - i, K - client);
      if (rows > 1) {
        round_f_.resize(rows * R * N);
        backend_->predict_rows(x + i * d, rows, seen_ / static_cast<std::int64_t>(K) + 1, schedules_, round_f_.data());
      }
      for (std::size_t k = 0; k < rows; ++k, ++i)
        client_sample(x + i * d, y[i], predictions + i * R, rows > 1 ? round_f_.data() + k * R * N : nullptr);
    }
  }

  // One client's sample; `f`, where given, is its predictions (R × N) against the round's θ.
  void client_sample(const double* x, double y, double* predictions, const double* f) {
    const std::size_t K = n_clients_, d = context_.n_features;
    const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(K));
    const std::int64_t t = seen_ / static_cast<std::int64_t>(K) + 1;
    if (client == 0) {
      round_x_.clear();
      updates_.clear();
      if (variant_.head == Head::DrawnKernel)
        for (std::size_t r = 0; r < n_replicates(); ++r) drawn_[r] = draw_kernel(r, t);
    }
    round_x_.insert(round_x_.end(), x, x + d);
    client_step(client, t, x, y, predictions, updates_, round_loss_.data(), f);
    ++seen_;
    if (client + 1 == K) server_clock_.time([&] { close_round(); });
  }

  void walk_rounds(const double* x, const double* y, std::size_t rounds, std::size_t d, double* predictions) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, D = n_rff_, D2 = 2 * D;
    server_clock_.unknown();  // the walk runs both sides
    FederationTables tables;
    tables.head = variant_.head == Head::PersonalHedge ? 0 : variant_.head == Head::GlobalHedge ? 1 : 2;
    tables.bins = variant_.uploads == Uploads::Bins ? 1 : 0;
    tables.K = static_cast<std::uint32_t>(K);
    tables.N = static_cast<std::uint32_t>(N);
    tables.M = static_cast<std::uint32_t>(M_);
    tables.n_bins = static_cast<std::uint32_t>((N + M_ - 1) / M_);
    tables.xi = xi_.empty() ? 1.0 : xi_.front();  // one ξ for every client here (the constructor's check)
    tables.sort = !(skip_sort_ && tables.xi == 1.0) ? 1 : 0;
    tables.post_update_selection = post_update_selection_ ? 1 : 0;
    tables.sum_losses = sum_losses_ ? 1 : 0;
    tables.upload = upload_;
    tables.eta = steps_.eta;
    tables.eta_w = steps_.eta_w;
    tables.lambda = steps_.lambda;
    if (client_streams_.empty())
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t k = 0; k < K; ++k)
          client_streams_.push_back(StreamPosition::of(
              RandomStream(context_.seed, context_.replicates[r], RngPurpose::Selection, kSelectionStreams + k)));
    tables.client_streams = client_streams_.data();
    FederationStateData state(tables, R);
    const FederationStates s = state.view();
    std::copy(log_w_.begin(), log_w_.end(), s.log_w);
    std::copy(round_loss_.begin(), round_loss_.end(), s.round_loss);
    std::copy(kernel_loss_.begin(), kernel_loss_.end(), s.kernel_loss);
    RoundWalkArgs<double> shape;
    shape.n_rounds = rounds;
    shape.n_replicates = R;
    shape.n_kernels = N;
    shape.n_rff = D;
    shape.n_features = d;
    shape.n_clients = K;
    shape.t0 = seen_ / static_cast<std::int64_t>(K) + 1;
    shape.feature_scale = backend_->problem().feature_scale;
    std::vector<double> theta(R * N * D2);
    DeviceLease lease;
    if (backend_->device_lease(lease)) {
      if (!device_walk_) device_walk_ = std::make_unique<FederationDeviceWalk>(client_streams_, lease);
      device_walk_->walk(tables, state, lease, shape, x, y, predictions);
      backend_->get_all_theta(theta.data());
    } else {
      // The host driver, on θ and V through the backend's accessors (the GPU walk's reference).
      const std::size_t block = D * d;
      if (resident_frequencies_.empty()) {
        resident_frequencies_.resize(R * N * block);
        for (std::size_t r = 0; r < R; ++r)
          for (std::size_t i = 0; i < N; ++i)
            backend_->get_frequencies(r, i, resident_frequencies_.data() + (r * N + i) * block);
      }
      backend_->get_all_theta(theta.data());
      shape.frequencies = resident_frequencies_.data();
      shape.theta = theta.data();
      shape.x = x;
      shape.y = y;
      shape.predictions = predictions;
      FederationProgram<HostPhilox> program{tables, s};
      walk_rounds_on_host(program, shape);
      backend_->set_all_theta(theta.data());
    }
    // Back into the host path's state.
    std::copy(s.log_w, s.log_w + log_w_.size(), log_w_.begin());
    std::copy(s.round_loss, s.round_loss + round_loss_.size(), round_loss_.begin());
    std::copy(s.kernel_loss, s.kernel_loss + kernel_loss_.size(), kernel_loss_.begin());
    for (std::size_t j = 0; j < R * N; ++j)  // ‖θ‖² after the last round, as aggregate_round() reports it
      refresh_norm2(j / N, j % N, theta.data() + j * D2);
    const double two_D = static_cast<double>(D2);
    const double extra = variant_.head == Head::GlobalHedge ? static_cast<double>(N) : 0.0;
    const double steps_per_replicate = static_cast<double>(rounds * K);
    for (std::size_t r = 0; r < R; ++r) {
      ledger_.client_steps(steps_per_replicate, two_D * static_cast<double>(N) + extra,
                           two_D * s.chosen_total[r] + steps_per_replicate * extra, two_D * s.chosen_max[r] + extra);
      kernel_updates_ += static_cast<std::uint64_t>(s.chosen_total[r]);
      // The last client's selection (the inspection hook's).
      const std::size_t row = r * K + (K - 1);
      KernelSelection& sel = selections_[r];
      sel.n_bins = tables.bins ? tables.n_bins : 1;
      sel.bin = s.bin[row];
      sel.probability = s.probability[row];
      sel.ranking.assign(s.ranking + row * N, s.ranking + (row + 1) * N);
      if (tables.bins) sel.q.assign(s.q + row * tables.n_bins, s.q + (row + 1) * tables.n_bins);
      else sel.q.assign(1, 1.0);
      const std::size_t first = sel.bin * M_, last = std::min(N, first + (tables.bins ? M_ : N));
      sel.kernels.assign(sel.ranking.begin() + static_cast<std::ptrdiff_t>(first),
                         sel.ranking.begin() + static_cast<std::ptrdiff_t>(last));
    }
    seen_ += static_cast<std::int64_t>(rounds * K);
  }

  void predict(const double* x, double* predictions) override {
    const std::size_t R = n_replicates(), N = n_kernels();
    const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(n_clients_));
    std::vector<double> f(R * N);
    const std::int64_t t = seen_ / static_cast<std::int64_t>(n_clients_) + 1;
    backend_->predict(x, t, schedules_, f.data());
    for (std::size_t r = 0; r < R; ++r)
      // A round's first client predicts with the kernel the server is about to draw for it.
      predictions[r] = variant_.head == Head::DrawnKernel && client == 0 ? f[r * N + draw_kernel(r, t)]
                                                                         : combine(r, client, f.data() + r * N);
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("federated-global/1");
    out.put_i64(seen_);
    save_backend_state(*backend_, out);
    write_federated_weights(out, log_w_, round_loss_, kernel_loss_, n_kernels());
    out.put_f64s(round_x_);
    out.put_u64(updates_.size());
    for (const ClientUpdate& u : updates_) {
      out.put_u64(u.replicate);
      out.put_u64(u.slot);
      out.put_u64(u.client);
      out.put_f64(u.a);
      out.put_f64(u.b);
    }
  }

  void load_state(StateReader& in) override {
    in.expect_tag("federated-global/1");
    seen_ = in.get_i64();
    if (seen_ < 0) throw InputError("checkpoint: negative sample count");
    load_backend_state(*backend_, in);
    resident_frequencies_.clear();  // the checkpoint's matrices replace the backend's
    read_federated_weights(in, log_w_, round_loss_, kernel_loss_, n_kernels());
    // The round in progress: the clients that have reported and their updates.
    const std::size_t in_round = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(n_clients_));
    round_x_.resize(in_round * context_.n_features);
    in.get_f64s(round_x_.data(), round_x_.size());
    const std::uint64_t n = in.get_u64();
    in.require_values(n, 5 * 8);
    updates_.resize(static_cast<std::size_t>(n));
    const std::size_t R = n_replicates(), N = n_kernels();
    for (ClientUpdate& u : updates_) {
      const std::uint64_t r = in.get_u64(), slot = in.get_u64(), client = in.get_u64();
      if (r >= R || slot >= N || client >= in_round)
        throw InputError("checkpoint: a pending client update names replicate " + std::to_string(r) + ", kernel " +
                         std::to_string(slot) + ", client " + std::to_string(client) + " outside the model");
      u.replicate = static_cast<std::uint32_t>(r);
      u.slot = static_cast<std::uint32_t>(slot);
      u.client = static_cast<std::uint32_t>(client);
      u.a = in.get_f64();
      u.b = in.get_f64();
    }
    // ‖θ‖² of the round's θ, as the last aggregation left it.
    std::vector<double> theta(backend_->problem().theta_size());
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t i = 0; i < N; ++i) {
        backend_->get_theta(r, i, theta.data());
        refresh_norm2(r, i, theta.data());
      }
    if (track_regularizer_) refresh_gram();
    // The round in progress keeps the kernel drawn at its opening: the server's weights have not
    // moved since, so the same keyed draw gives it again.
    if (variant_.head == Head::DrawnKernel && in_round > 0)
      for (std::size_t r = 0; r < R; ++r) drawn_[r] = draw_kernel(r, seen_ / static_cast<std::int64_t>(n_clients_) + 1);
  }

  std::uint64_t kernel_updates() const override { return kernel_updates_; }
  double regret_regularizer(std::size_t r) const override {
    return track_regularizer_ ? last_regularizer_.at(r) : std::numeric_limits<double>::quiet_NaN();
  }
  CommunicationCount communication() const override { return ledger_.totals(); }
  double server_seconds() const override { return server_clock_.seconds(); }
  // As processes the clients take the host path, so a resident learner's replicates are dealt
  // out instead (a study then keeps the one-process numbers).
  bool distributable() const override { return !resident_; }

  // ---- the server and its clients in separate processes (§6.4) -------------------------------
  // Per round: the server sends every client rank the round's θ (and the global weights of
  // vM-KOFL; eM-KOFL's global_only: J_t and θ_{J_{t−1}}); each client rank answers with one
  // Update per client it holds — its predictions (a metrics channel, not the paper's traffic),
  // its uploads (kernel, g = (a·scale)·u + b·θ, or θ − g with upload=theta) and the losses vM-KOFL
  // and eM-KOFL report; the server adds the g of each kernel in ascending client order, as
  // aggregate_round() does in one process (upload_form.h's two halves), and divides by K. After
  // the last round the client ranks send their per-kernel losses and their message counts (the
  // regret and the summary).
  void run_distributed(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions,
                       Communicator& comm, double timeout_s) override {
    const std::size_t rounds = federation_rounds(comm, resident_, track_regularizer_, seen_, n, n_clients_);
    server_clock_.unknown();  // the clients run elsewhere
    if (comm.rank() == 0) serve(rounds, predictions, comm, timeout_s);
    else serve_clients(x, y, rounds, d, comm, timeout_s);
  }
  std::vector<double> client_kernel_losses(std::size_t r) const override {
    const std::size_t n = n_clients_ * n_kernels();
    return {kernel_loss_.begin() + static_cast<std::ptrdiff_t>(r * n),
            kernel_loss_.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)};
  }
  std::vector<std::pair<std::string, std::string>> reported_params() const override {
    std::vector<std::pair<std::string, std::string>> out;
    if (variant_.uploads == Uploads::Bins) out.emplace_back("M", std::to_string(M_));
    out.emplace_back("D", std::to_string(n_rff_));
    return out;
  }

  // ---- inspection (federated.h) -----------------------------------------------------------
  std::size_t n_clients() const { return n_clients_; }
  std::vector<double> theta(std::size_t r, std::size_t i) const {
    std::vector<double> th(backend_->problem().theta_size());
    backend_->get_theta(r, i, th.data());
    return th;
  }
  std::vector<double> log_weights(std::size_t r, std::size_t client) const {
    const std::size_t N = n_kernels();
    if (variant_.head == Head::PersonalHedge) {
      const double* w = log_w_.data() + (r * n_clients_ + client) * N;
      return {w, w + N};
    }
    if (variant_.server_weights()) return {log_w_.begin() + static_cast<std::ptrdiff_t>(r * N),
                                                    log_w_.begin() + static_cast<std::ptrdiff_t>((r + 1) * N)};
    return {};
  }
  const KernelSelection& last_selection(std::size_t r) const { return selections_.at(r); }

 private:
  std::size_t n_kernels() const { return backend_->problem().n_kernels; }

  // One client's share of round t, for every replicate (§1.3 S2–S7): its predictions, its
  // private weights, the updates it uploads (appended to `uploads`, a = 2η(f − y)/p, b = 2ηλ/p)
  // and, for the server's weights, the losses it reports (added to `reported`, R × N).
  // `given`: its predictions (R × N) where the caller has them, else null.
  void client_step(std::size_t client, std::int64_t t, const double* x, double y, double* predictions,
                   std::vector<ClientUpdate>& uploads, double* reported, const double* given = nullptr) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_;
    if (!given) {
      backend_->predict(x, t, schedules_, f_.data());
      given = f_.data();
    }
    const double two_D = 2.0 * static_cast<double>(n_rff_);
    for (std::size_t r = 0; r < R; ++r) {
      const double* f = given + r * N;
      predictions[r] = combine(r, client, f);
      if (track_regularizer_) last_regularizer_[r] = steps_.lambda * combined_norm2(r, client);
      double* cumulative = kernel_loss_.data() + (r * K + client) * N;
      for (std::size_t i = 0; i < N; ++i) {
        const double e2 = (f[i] - y) * (f[i] - y);
        losses_[i] = e2 + steps_.lambda * norm2_[r * N + i];
        cumulative[i] += track_regularizer_ ? losses_[i] : e2;  // regret.include_reg: λ‖θ_{i,t}‖² too
      }
      // Which kernels this client updates, with what probability (§1.4); then its weights (§1.3 S6).
      KernelSelection& sel = selections_[r];
      if (variant_.uploads == Uploads::Bins) {
        double* log_w = client_log_weights(r, client);
        const double u = client_uniform(context_.seed, context_.replicates[r], kSelectionStreams, client, t);
        const double xi = xi_[client];
        const bool sort = !(skip_sort_ && xi == 1.0);
        if (!post_update_selection_) select_kernels(log_w, N, M_, xi, sort, u, sel);
        for (std::size_t i = 0; i < N; ++i) log_w[i] -= steps_.eta_w * losses_[i];
        if (post_update_selection_) select_kernels(log_w, N, M_, xi, sort, u, sel);
      } else {
        if (variant_.uploads == Uploads::DrawnKernel) select_one(sel, drawn_[r]);
        else select_all(sel, N);
        if (variant_.server_weights())
          for (std::size_t i = 0; i < N; ++i) reported[r * N + i] += losses_[i];
      }
      // The client's update of each selected kernel (§1.3 S7): g = (η/p)(2(f − y)z + 2λθ).
      const double scale = steps_.eta / sel.probability;
      kernel_updates_ += sel.kernels.size();
      for (std::uint32_t i : sel.kernels) {
        ClientUpdate u;
        u.replicate = static_cast<std::uint32_t>(r);
        u.slot = i;
        u.client = static_cast<std::uint32_t>(client);
        u.a = scale * 2.0 * (f[i] - y);
        u.b = scale * 2.0 * steps_.lambda;
        uploads.push_back(u);
      }
      const double extra = variant_.server_weights() ? static_cast<double>(N) : 0.0;
      // Received: every θ and the server's weights; with a drawn kernel only θ_{J_{t−1}} after the
      // server's step (the one θ that moved; each client keeps the global θ current with it) and
      // J_t (an index: free).
      const double received = variant_.uploads == Uploads::DrawnKernel
                                  ? two_D
                                  : two_D * static_cast<double>(N) + (variant_.head == Head::GlobalHedge ? extra : 0.0);
      ledger_.client_step(received,
                          two_D * static_cast<double>(sel.kernels.size()) + extra);
    }
  }

  static constexpr int kRoundTag = 101, kUpdateTag = 102, kFinalTag = 103;

  // Rank 0: θ for every round, the clients' updates added in client order. eM-KOFL's global_only
  // sends each round's J_t and the one θ the last round moved (θ_{J_{t−1}}, from round 2: every
  // θ starts at 0 on every rank): the clients keep the global θ current with it.
  void serve(std::size_t rounds, double* predictions, Communicator& comm, double timeout_s) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, D2 = backend_->problem().theta_size();
    const int P = comm.size();
    const bool drawn = variant_.head == Head::DrawnKernel;
    std::vector<double> theta(R * N * D2), acc(N * D2);
    std::vector<char> touched(N);
    std::vector<std::size_t> moved;  // drawn: J_{t−1} per replicate, the θ the clients lack
    // Per client, per replicate: the uploads (kernel and g) of this round.
    std::vector<std::vector<std::vector<std::pair<std::uint32_t, std::vector<double>>>>> uploads(K);
    std::vector<std::vector<double>> reported(K);
    for (std::size_t t = 1; t <= rounds; ++t) {
      StateWriter round;
      round.put_u64(t);
      backend_->get_all_theta(theta.data());
      if (drawn) {
        for (std::size_t r = 0; r < R; ++r) {
          drawn_[r] = draw_kernel(r, static_cast<std::int64_t>(t));
          round.put_u64(drawn_[r]);
          if (t > 1) round.put_f64s(theta.data() + (r * N + moved[r]) * D2, D2);
        }
        moved = drawn_;
      } else {
        round.put_f64s(theta);
        if (variant_.head == Head::GlobalHedge) round.put_f64s(log_w_);
      }
      for (int p = 1; p < P; ++p) comm.send(p, kRoundTag, round.bytes());
      for (auto& u : uploads) u.assign(R, {});
      receive_round(comm, kUpdateTag, t, K, timeout_s, "update", [&](std::size_t k, StateReader& in) {
        for (std::size_t r = 0; r < R; ++r) {
          predictions[((t - 1) * K + k) * R + r] = in.get_f64();
          const std::uint64_t m = in.get_u64();
          for (std::uint64_t j = 0; j < m; ++j) {
            const std::uint64_t i = in.get_u64();
            if (i >= N) throw Error("federated server: an update names kernel " + std::to_string(i));
            std::vector<double> g(D2);
            in.get_f64s(g.data(), D2);
            uploads[k][r].emplace_back(static_cast<std::uint32_t>(i), std::move(g));
          }
        }
        if (variant_.server_weights()) {
          reported[k].resize(R * N);
          in.get_f64s(reported[k].data(), R * N);
        }
      });
      // §1.3 S8: θ ← θ − (1/K)·Σ_k g, each kernel's sum in ascending client order (with
      // upload=theta, each g the round's θ less the client's θ_{k,t+1}).
      const double scale = 1.0 / static_cast<double>(K);
      for (std::size_t r = 0; r < R; ++r) {
        std::fill(acc.begin(), acc.end(), 0.0);
        std::fill(touched.begin(), touched.end(), 0);
        for (std::size_t k = 0; k < K; ++k)
          for (const auto& [kernel, value] : uploads[k][r]) {
            double* a = acc.data() + kernel * D2;
            const double* th = theta.data() + (r * N + kernel) * D2;
            for (std::size_t j = 0; j < D2; ++j) a[j] += received_step(th[j], value[j], upload_);
            touched[kernel] = 1;
          }
        for (std::size_t i = 0; i < N; ++i) {
          if (!touched[i]) continue;  // a kernel no client selected keeps its θ
          double* th = theta.data() + (r * N + i) * D2;
          const double* a = acc.data() + i * D2;
          for (std::size_t j = 0; j < D2; ++j) th[j] -= scale * a[j];
          backend_->set_theta(r, i, th);
        }
      }
      if (variant_.server_weights()) {
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t j = 0; j < R * N; ++j) round_loss_[j] += reported[k][j];
        close_global_weights();
      }
      seen_ += static_cast<std::int64_t>(K);
    }
    // The clients' per-kernel losses and message counts.
    const CommunicationCount total =
        receive_final_reports(comm, kFinalTag, timeout_s, kernel_loss_, R, K, N, kernel_updates_);
    ledger_ = CommunicationLedger(max_upload_, total);
  }

  // ‖θ_i‖² of replicate r's kernel i on a client rank, as aggregate_round() reports it.
  void refresh_norm2(std::size_t r, std::size_t i, const double* th) {
    const std::size_t D2 = backend_->problem().theta_size();
    double n2 = 0.0;
    for (std::size_t j = 0; j < D2; ++j) n2 += th[j] * th[j];
    norm2_[r * n_kernels() + i] = n2;
  }

  // Ranks 1 … P − 1: the clients k ≡ rank − 1 (mod P − 1), each round against the server's θ.
  void serve_clients(const double* x, const double* y, std::size_t rounds, std::size_t d, Communicator& comm,
                     double timeout_s) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, D2 = backend_->problem().theta_size();
    const int P = comm.size(), me = comm.rank();
    const std::vector<std::size_t> mine = clients_of_rank(me, P, K);
    const bool drawn = variant_.head == Head::DrawnKernel;
    std::vector<double> theta(R * N * D2), g(D2), reported(R * N), prediction(R);
    std::vector<ClientUpdate> uploads;
    const FaultInjection faults = FaultInjection::for_rank(me);
    for (std::size_t t = 1; t <= rounds; ++t) {
      faults.maybe_die(t);
      StateReader in(comm.receive(0, kRoundTag, timeout_s), "round message", StateOrigin::Message);
      if (in.get_u64() != t) throw Error("federated client: the server sent another round");
      if (drawn) {
        for (std::size_t r = 0; r < R; ++r) {
          const std::uint64_t J = in.get_u64();
          if (J >= N) throw Error("federated client: the server drew kernel " + std::to_string(J));
          if (t > 1) {  // θ of the kernel the last round moved
            double* th = theta.data() + (r * N + drawn_[r]) * D2;
            in.get_f64s(th, D2);
            backend_->set_theta(r, drawn_[r], th);
            refresh_norm2(r, drawn_[r], th);
          }
          drawn_[r] = static_cast<std::size_t>(J);
        }
      } else {
        in.get_f64s(theta.data(), theta.size());
        for (std::size_t r = 0; r < R; ++r)
          for (std::size_t i = 0; i < N; ++i) {
            const double* th = theta.data() + (r * N + i) * D2;
            backend_->set_theta(r, i, th);
            refresh_norm2(r, i, th);
          }
        if (variant_.head == Head::GlobalHedge) in.get_f64s(log_w_.data(), log_w_.size());
      }
      StateWriter out = begin_answer(t, mine, faults);
      for (std::size_t k : mine) {
        const std::size_t row = (t - 1) * K + k;
        uploads.clear();
        std::fill(reported.begin(), reported.end(), 0.0);
        client_step(k, static_cast<std::int64_t>(t), x + row * d, y[row], prediction.data(), uploads, reported.data());
        if (faults.drops(k, t)) continue;  // fault injection: a lost update
        out.put_u64(k);
        std::size_t next = 0;
        for (std::size_t r = 0; r < R; ++r) {
          out.put_f64(prediction[r]);
          std::size_t m = 0;
          while (next + m < uploads.size() && uploads[next + m].replicate == r) ++m;
          out.put_u64(m);
          for (std::size_t j = next; j < next + m; ++j) {
            const ClientUpdate& u = uploads[j];
            backend_->client_update(r, u.slot, x + row * d, u.a, u.b, g.data());
            // θ_{k,t+1} = θ_t − g with upload=theta, θ_t as this rank holds it (the backend's too)
            const double* th = theta.data() + (r * N + u.slot) * D2;
            for (std::size_t e = 0; e < D2; ++e) g[e] = uploaded_value(th[e], g[e], upload_);
            out.put_u64(u.slot);
            out.put_f64s(g.data(), D2);
          }
          next += m;
        }
        if (variant_.server_weights()) out.put_f64s(reported);
      }
      comm.send(0, kUpdateTag, out.bytes());
    }
    send_final_report(comm, kFinalTag, kernel_loss_, R, K, N, ledger_.totals(), kernel_updates_);
  }

  double* client_log_weights(std::size_t r, std::size_t client) {
    return log_w_.data() + (r * n_clients_ + client) * n_kernels();
  }

  double combine(std::size_t r, std::size_t client, const double* f) const {
    const std::size_t N = n_kernels();
    switch (variant_.head) {
      case Head::PersonalHedge: return softmax_combine(log_w_.data() + (r * n_clients_ + client) * N, f, N);
      case Head::GlobalHedge: return softmax_combine(log_w_.data() + r * N, f, N);
      case Head::DrawnKernel: return f[drawn_[r]];
      case Head::Uniform: break;
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < N; ++i) sum += f[i];
    return sum / static_cast<double>(N);
  }

  // ‖θ̄‖² of the parameter a client of replicate r predicts with, θ̄ = Σ_i w̄_i θ_i (w̄ the
  // normalised weights of combine()): w̄ᵀ G w̄ with G the round's Gram matrix (spec/federated.md
  // §4.7; the same sum of 2D-vectors of different kernels as the paper's).
  double combined_norm2(std::size_t r, std::size_t client) const {
    const std::size_t N = n_kernels();
    if (variant_.head == Head::DrawnKernel) return norm2_[r * N + drawn_[r]];  // θ̄ = θ_{J_t}
    std::vector<double>& w = weight_scratch_;
    w.assign(N, 1.0 / static_cast<double>(N));
    if (variant_.head != Head::Uniform) {
      const double* log_w = variant_.head == Head::PersonalHedge ? log_w_.data() + (r * n_clients_ + client) * N
                                                                 : log_w_.data() + r * N;
      const double top = *std::max_element(log_w, log_w + N);
      double sum = 0.0;
      for (std::size_t i = 0; i < N; ++i) sum += (w[i] = std::exp(log_w[i] - top));
      for (double& v : w) v /= sum;
    }
    const double* G = gram_.data() + r * N * N;
    double total = 0.0;
    for (std::size_t i = 0; i < N; ++i) {
      double row = 0.0;
      for (std::size_t j = 0; j < N; ++j) row += G[i * N + j] * w[j];
      total += w[i] * row;
    }
    return total;
  }

  // G_ij = θ_iᵀθ_j of every replicate's round θ (track_regularizer_).
  void refresh_gram() {
    const std::size_t R = n_replicates(), N = n_kernels(), D2 = backend_->problem().theta_size();
    std::vector<double> theta(N * D2);
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t i = 0; i < N; ++i) backend_->get_theta(r, i, theta.data() + i * D2);
      double* G = gram_.data() + r * N * N;
      for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = 0; j <= i; ++j) {
          double dot = 0.0;
          for (std::size_t e = 0; e < D2; ++e) dot += theta[i * D2 + e] * theta[j * D2 + e];
          G[i * N + j] = G[j * N + i] = dot;
        }
    }
  }

  // eM-KOFL's J_t, as the local-copies form draws it.
  std::size_t draw_kernel(std::size_t r, std::int64_t t) const {
    const std::size_t N = n_kernels();
    return em_kofl_server_draw(log_w_.data() + r * N, N, explore_, context_.seed, context_.replicates[r], t);
  }

  // The server's kernel J_t alone, p = 1.
  static void select_one(KernelSelection& sel, std::size_t J) {
    sel.n_bins = 1;
    sel.bin = 0;
    sel.q.assign(1, 1.0);
    sel.probability = 1.0;
    sel.kernels.assign(1, static_cast<std::uint32_t>(J));
    sel.ranking = sel.kernels;
  }

  static void select_all(KernelSelection& sel, std::size_t N) {
    if (sel.kernels.size() == N) return;
    sel.n_bins = 1;
    sel.bin = 0;
    sel.q.assign(1, 1.0);
    sel.probability = 1.0;
    sel.kernels.resize(N);
    for (std::size_t i = 0; i < N; ++i) sel.kernels[i] = static_cast<std::uint32_t>(i);
    sel.ranking = sel.kernels;
  }

  // vM-KOFL's server weights from the round's reported losses (§3.3 step 5).
  void close_global_weights() {
    const double reduce = sum_losses_ ? 1.0 : 1.0 / static_cast<double>(n_clients_);
    for (std::size_t j = 0; j < log_w_.size(); ++j) {
      log_w_[j] -= steps_.eta_w * reduce * round_loss_[j];
      round_loss_[j] = 0.0;
    }
  }

  // The server's step once every client of the round has reported (§1.3 S8; §3.3 step 5).
  void close_round() {
    backend_->aggregate_round(round_x_.data(), n_clients_, updates_.data(), updates_.size(),
                              1.0 / static_cast<double>(n_clients_), upload_, norm2_.data());
    if (variant_.server_weights()) close_global_weights();
    if (track_regularizer_) refresh_gram();
    round_x_.clear();
    updates_.clear();
  }

  AlgoContext context_;
  Variant variant_;
  std::size_t n_clients_ = 0;
  std::size_t M_ = 1;
  std::vector<double> xi_;           // Bins: ξ_k of every client (§1.4)
  double explore_ = 0.0;             // DrawnKernel: uniform mixing of the server's draw
  std::vector<std::size_t> drawn_;   // DrawnKernel: J_t of the round in progress, per replicate
  bool post_update_selection_ = false, skip_sort_ = false, sum_losses_ = true;
  UploadForm upload_ = UploadForm::Delta;  // what a client sends per updated kernel (upload_form.h)
  std::size_t n_rff_ = 0;
  double max_upload_ = 0.0;
  FederatedSteps steps_;
  std::vector<SlotSchedule> schedules_;
  std::unique_ptr<RfBackend> backend_;
  CommunicationLedger ledger_;
  ServerClock server_clock_;              // the host path's server side (§4.6)
  std::int64_t seen_ = 0;                 // client samples consumed (K per round)
  std::vector<double> norm2_;             // R × N: ‖θ_i‖² of the round's θ
  std::vector<double> log_w_;             // personal: R × K × N; global: R × N
  std::vector<double> round_loss_;        // global: R × N, the round's reported losses
  std::vector<double> kernel_loss_;       // R × K × N: Σ_t (f_ik − y)² (+ λ‖θ_i‖² when tracked), the regret's comparators
  std::vector<double> round_x_;           // the round's samples so far (clients × d)
  std::vector<ClientUpdate> updates_;     // the round's uploads so far, in client order
  std::vector<KernelSelection> selections_;  // per replicate: the last client's selection
  std::vector<double> f_, losses_;        // scratch
  std::vector<double> round_f_;           // scratch: a round's rows' predictions (rows × R × N)
  std::uint64_t kernel_updates_ = 0;     // θ updates uploaded, all replicates
  // regret.include_reg (AlgoContext::track_regret_regularizer)
  bool track_regularizer_ = false;
  std::vector<double> gram_;              // R × N × N: θ_iᵀθ_j of the round's θ
  std::vector<double> last_regularizer_;  // R: λ‖θ̄‖² of the last client sample's prediction
  mutable std::vector<double> weight_scratch_;
  // step_path = resident
  bool resident_ = false;
  std::vector<StreamPosition> client_streams_;  // R × K: each client's draw stream at position 0
  std::vector<double> resident_frequencies_;    // host driver: V of every (replicate, kernel)
  std::unique_ptr<FederationDeviceWalk> device_walk_;
};

}  // namespace

std::unique_ptr<Algorithm> make_global_only_em_kofl(ParamReader& params, const AlgoContext& context) {
  return std::unique_ptr<Algorithm>(
      new GlobalKernelFederation(params, context, {Head::DrawnKernel, Uploads::DrawnKernel, false}));
}

namespace {

const GlobalKernelFederation& as_federation(const Algorithm& algorithm) {
  const auto* g = dynamic_cast<const GlobalKernelFederation*>(&algorithm);
  if (!g) throw Error("not a federated algorithm with server-side kernels");
  return *g;
}

AlgorithmFactory factory(Variant variant) {
  return [variant](ParamReader& params, const AlgoContext& context) {
    return std::unique_ptr<Algorithm>(new GlobalKernelFederation(params, context, variant));
  };
}

}  // namespace

std::vector<double> federated_theta(const Algorithm& algorithm, std::size_t replicate, std::size_t kernel) {
  return as_federation(algorithm).theta(replicate, kernel);
}
std::vector<double> federated_log_weights(const Algorithm& algorithm, std::size_t replicate, std::size_t client) {
  return as_federation(algorithm).log_weights(replicate, client);
}
const KernelSelection& federated_last_selection(const Algorithm& algorithm, std::size_t replicate) {
  return as_federation(algorithm).last_selection(replicate);
}

void add_global_kernel_federations(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"pof-mkl",
                      "POF-MKL (Ghari & Shen, NeurIPS 2022): personalized online federated MKL — private "
                      "client kernel weights, Algorithm 1's bins of M kernels uploaded with weight 1/p",
                      factory({Head::PersonalHedge, Uploads::Bins, false})});
  registry.push_back({"ofskl", "OFSKL: Fed-OMD with one kernel (RBF σ = 10, D = 100), FedAvg every step (§3.1)",
                      [](ParamReader& params, const AlgoContext& context) -> std::unique_ptr<Algorithm> {
                        const std::int64_t local_steps = params.get_int(
                            "local_steps", 1,
                            "Fed-OMD's local steps per average (§3.1, fedomd.local_steps): 1 = the server's step "
                            "every round; L > 1: each client steps its own θ, averaged every L rounds",
                            ParamRange::count_from(1));
                        if (local_steps > 1)
                          return make_fedomd_local_steps(params, context, static_cast<std::size_t>(local_steps));
                        return std::unique_ptr<Algorithm>(
                            new GlobalKernelFederation(params, context, {Head::Uniform, Uploads::AllKernels, true}));
                      }});
  registry.push_back({"ofmkl-avg", "OFMKL-Avg: N kernels learned by FedAvg, predictions averaged uniformly (§3.2)",
                      factory({Head::Uniform, Uploads::AllKernels, false})});
  registry.push_back({"vm-kofl",
                      "vM-KOFL: every kernel's update and loss uploaded, global Hedge weights on the server (§3.3)",
                      factory({Head::GlobalHedge, Uploads::AllKernels, false})});
}

}  // namespace omkl::detail
