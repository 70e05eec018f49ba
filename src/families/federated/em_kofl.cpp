/// @file em_kofl.cpp
/// @brief eM-KOFL, the efficient multi-kernel online federated learner of Hong & Chae as
/// spec/federated.md §3.4 reconstructs it: every client keeps a local copy θ_{ik} of every
/// kernel; each round the server draws one kernel J_t from its global Hedge weights, averages the
/// clients' copies of that kernel, and every client predicts with the average; then every client
/// updates all its copies on its own loss and uploads its N losses, which move the server's
/// weights.
///
/// Slots of the backend: client k's copy of kernel i is slot k·N + i (kernel i's frequencies,
/// shared by every client), so one step_selected() call per client sample updates its N copies.
/// With step_path=resident a block of samples is one walk of resident_em_kofl.h's program
/// instead (on the GPU with no host round trip per sample).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/step_path.h"
#include "families/federated/federated.h"
#include "families/federated/federated_config.h"
#include "families/federated/federation_processes.h"
#include "families/federated/resident_em_kofl.h"
#include "features/backend_walk.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {

constexpr std::uint64_t kServerDraws = 0xfe000001u;  // the server's J_t stream (client index 0)

class EmKofl final : public Algorithm {
 public:
  /// `fedomd_period` > 0: instead of eM-KOFL, Fed-OMD with that many local steps per
  /// communication round (OFSKL's local_steps, spec/federated.md §3.1 and §4.9
  /// fedomd.local_steps): OFSKL's one kernel and no weights; every client steps its own copy,
  /// predicts with it, and the copies are averaged at the opening of rounds 1, L + 1, 2L + 1, …
  /// (an average every round is OFSKL's server step, §3.1).
  EmKofl(ParamReader& params, const AlgoContext& context, std::size_t fedomd_period = 0)
      : context_(context), period_(fedomd_period) {
    if (context.task != Task::Regression)
      throw ConfigError("algorithm '" + params.algorithm() + "': the federated algorithms are defined for "
                        "regression (squared loss) only");
    n_clients_ = read_clients(params, context);
    const bool fedomd = period_ > 0;
    std::string dict_text;
    const Dictionary dictionary = read_federated_dictionary(params, fedomd, 10.0, &dict_text);
    const std::size_t N = dictionary.size(), K = n_clients_;
    if (!fedomd) {
      sum_losses_ = params.get_choice("weight_loss_reduction", "sum", {"sum", "mean"},
                                      "server weights' loss: the clients' losses summed or averaged (§3.3)") == "sum";
      explore_ = params.get_double("explore", 0.0, "uniform mixing of the server's kernel draw",
                                   ParamRange::closed_open(0, 1));
    }
    // An upload is the sampled kernel's local θ (2D) plus the N losses (§2.2); Fed-OMD's, θ alone.
    n_rff_ = read_budgeted_D(params, 1, fedomd ? 0 : N, &max_upload_);
    steps_ = read_federated_steps(params, context, K, fedomd ? "" : "eta_g");
    RfEnsembleConfig features = federated_features(params, dictionary, dict_text, n_rff_, steps_.lambda);
    if (fedomd) features.first_stream += kOfsklFrequencyStream;  // OFSKL's matrix (§4.4)
    std::vector<std::uint32_t> slot_kernel(K * N);
    for (std::size_t s = 0; s < K * N; ++s) slot_kernel[s] = static_cast<std::uint32_t>(s % N);
    const bool on_gpu = backend_on_gpu(context.backend);
    track_regularizer_ = context.track_regret_regularizer;
    resident_ = read_step_path(params, "client samples", on_gpu,
                               fedomd ? "Fed-OMD with local steps (OFSKL's local_steps > 1) has no resident walk"
                               : N > kMaxResidentPairs ? "the dictionary has more kernels than a resident step holds (" +
                                                             std::to_string(kMaxResidentPairs) + ")"
                               : track_regularizer_    ? kRegularizerOnHostPath
                                                     : float_walk_on_cpu(features.single_precision, on_gpu));
    backend_ = make_rf_ensemble_backend(features, context, slot_kernel);
    ledger_ = CommunicationLedger(max_upload_);
    const std::size_t R = context.n_replicates();
    log_w_.assign(R * N, 0.0);
    round_loss_.assign(R * N, 0.0);
    kernel_loss_.assign(R * K * N, 0.0);
    sampled_.assign(R, 0);
    if (track_regularizer_) last_regularizer_.assign(R, 0.0);
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }
  bool batches_replicates() const override { return true; }  // on the backend (RfBackend)
  bool walks_on_device() const override { return resident_; }

  void step(const double* x, double y, double* predictions) override {
    if (resident_) return walk_resident(x, &y, 1, context_.n_features, predictions);
    host_samples(x, &y, 1, context_.n_features, predictions);
  }

  void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                  double* predictions) override {
    if (resident_) return walk_resident(x, y, n, n_features, predictions);
    host_samples(x, y, n, n_features, predictions);
  }

  // The host path over n samples. Once a round is open every client steps only its own copies,
  // so a round's samples in the block take their steps in one step_selected_rows() call (the
  // same numbers as one sample at a time; each kernel's V read once for all of them), then
  // their bookkeeping in order.
  void host_samples(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_;
    for (std::size_t i = 0; i < n;) {
      const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(K));
      const std::int64_t t = seen_ / static_cast<std::int64_t>(K) + 1;
      const std::size_t rows = std::min(n - i, K - client);
      if (client == 0) server_clock_.time([&] { open_round(t); });
      step_clients(client, rows, x + i * d, y + i);
      for (std::size_t k = 0; k < rows; ++k, ++i) {
        finish_sample(client + k, t, y[i], f_.data() + k * R * N, norm2_.data() + k * R * N, predictions + i * R);
        ++seen_;
        if (client + k + 1 == K) server_clock_.time([&] { close_round(); });
      }
    }
  }

  // Clients first … first + rows − 1, one sample each (rows of x and y): each predicts with the
  // sampled kernel's average (its copy holds it now), then takes one gradient step on every local
  // copy, θ ← (1 − 2ηλ)θ − η·2(f − y)z. Their predictions and ‖θ‖² land in f_ and norm2_
  // (rows × R × N).
  void step_clients(std::size_t first, std::size_t rows, const double* x, const double* y) {
    const std::size_t R = n_replicates(), N = n_kernels();
    pairs_.resize(rows * R * N);
    f_.resize(rows * R * N);
    norm2_.resize(rows * R * N);
    for (std::size_t k = 0; k < rows; ++k)
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t j = 0; j < N; ++j) {
          PairStep& p = pairs_[(k * R + r) * N + j];
          p.replicate = static_cast<std::uint32_t>(r);
          p.slot = static_cast<std::uint32_t>((first + k) * N + j);
          p.rate = steps_.eta;
          p.shrink = 1.0 - 2.0 * steps_.eta * steps_.lambda;
        }
    backend_->step_selected_rows(x, y, rows, pairs_.data(), R * N, f_.data(), norm2_.data());
  }

  // Client `client`'s sample of round t after its step: the prediction, the losses per kernel
  // (added to round_loss_), the messages.
  void finish_sample(std::size_t client, std::int64_t t, double y, const double* f, const double* norm2,
                     double* predictions) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_;
    const double two_D = 2.0 * static_cast<double>(n_rff_);
    for (std::size_t r = 0; r < R; ++r) {
      predictions[r] = f[r * N + sampled_[r]];
      // regret.include_reg: θ̄ is the average θ̄_{J_t} the client predicted with (§4.7).
      if (track_regularizer_) last_regularizer_[r] = steps_.lambda * norm2[r * N + sampled_[r]];
      double* cumulative = kernel_loss_.data() + (r * K + client) * N;
      for (std::size_t i = 0; i < N; ++i) {
        const double e = f[r * N + i] - y;
        const double loss = e * e + steps_.lambda * norm2[r * N + i];
        cumulative[i] += track_regularizer_ ? loss : e * e;
        round_loss_[r * N + i] += loss;
      }
      // Received: the average of the sampled kernel. Sent: that kernel's local θ and N losses.
      // Fed-OMD: the average at a period's first round, the local θ at its last.
      if (period_ == 0) ledger_.client_step(two_D, two_D + static_cast<double>(N));
      else ledger_.client_step(averages(t) ? two_D : 0.0, averages(t + 1) ? two_D : 0.0);
    }
    updates_ += R * N;
  }

  /// step_path = resident: n samples (any part of any rounds) as one walk of the resident
  /// program (resident_em_kofl.h) — on the GPU where the backend lends its device memory, by the
  /// host driver otherwise (θ and V through the backend's accessors, in double: the device walk's
  /// reference, not a fast path). The weights, losses and J_t go back into the host path's
  /// members, so checkpoints and predict() read them as the host path keeps them.
  void walk_resident(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions) {
    if (n == 0) return;
    server_clock_.unknown();  // the walk runs both sides
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, S = K * N, D = n_rff_, D2 = 2 * D;
    EmKoflTables tables;
    tables.K = static_cast<std::uint32_t>(K);
    tables.N = static_cast<std::uint32_t>(N);
    tables.eta = steps_.eta;
    tables.eta_w = steps_.eta_w;
    tables.lambda = steps_.lambda;
    tables.explore = explore_;
    tables.sum_losses = sum_losses_ ? 1 : 0;
    EmKoflStateData state(tables, R);
    const EmKoflStates s = state.view();
    for (std::size_t r = 0; r < R; ++r) {
      s.server_stream[r] = StreamPosition::of(
          RandomStream(context_.seed, context_.replicates[r], RngPurpose::Selection, kServerDraws));
      s.sampled[r] = static_cast<std::uint32_t>(sampled_[r]);
    }
    std::copy(log_w_.begin(), log_w_.end(), s.log_w);
    std::copy(round_loss_.begin(), round_loss_.end(), s.round_loss);
    std::copy(kernel_loss_.begin(), kernel_loss_.end(), s.kernel_loss);
    ResidentWalkArgs<double> shape;
    shape.n_steps = n;
    shape.n_replicates = R;
    shape.n_slots = S;
    shape.n_kernels = N;
    shape.n_rff = D;
    shape.n_features = d;
    shape.max_pairs = N;
    shape.t0 = seen_ + 1;
    shape.feature_scale = backend_->problem().feature_scale;
    shape.loss = backend_->problem().loss;
    DeviceLease lease;
    if (backend_->device_lease(lease)) {
      if (!device_walk_) device_walk_ = std::make_unique<EmKoflDeviceWalk>(lease);
      device_walk_->walk(tables, state, lease, shape, x, y, predictions);
    } else {
      EmKoflProgram<HostPhilox> program{tables, s};
      walk_on_backend(program, *backend_, resident_frequencies_, shape, x, y, predictions);
    }
    std::copy(s.log_w, s.log_w + log_w_.size(), log_w_.begin());
    std::copy(s.round_loss, s.round_loss + round_loss_.size(), round_loss_.begin());
    std::copy(s.kernel_loss, s.kernel_loss + kernel_loss_.size(), kernel_loss_.begin());
    for (std::size_t r = 0; r < R; ++r) sampled_[r] = s.sampled[r];
    // Every client step received the average and sent the sampled kernel's θ and N losses.
    const double two_D = static_cast<double>(D2), steps = static_cast<double>(n * R);
    ledger_.client_steps(steps, two_D, steps * (two_D + static_cast<double>(N)), two_D + static_cast<double>(N));
    updates_ += n * R * N;
    seen_ += static_cast<std::int64_t>(n);
  }

  void predict(const double* x, double* predictions) override {
    // The next client predicts with the next round's average when a round is about to open;
    // compute it on copies, without touching the state.
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_;
    const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(K));
    const std::int64_t t = seen_ / static_cast<std::int64_t>(K) + 1;
    const std::size_t D2 = backend_->problem().theta_size();
    std::vector<double> theta(D2), saved(D2);
    for (std::size_t r = 0; r < R; ++r) {
      const std::size_t J = client == 0 ? draw_kernel(r, t) : sampled_[r];
      const std::size_t slot = client * N + J;
      backend_->get_theta(r, slot, saved.data());
      if (client == 0 && averages(t)) {
        average_copies(r, J, theta);
        backend_->set_theta(r, slot, theta.data());
      }
      PairStep p;
      p.replicate = static_cast<std::uint32_t>(r);
      p.slot = static_cast<std::uint32_t>(slot);
      double f = 0.0;
      try {
        backend_->step_selected(x, 0.0, &p, 1, &f, nullptr);
      } catch (...) {  // predict() leaves the model as it was, even when it fails
        backend_->set_theta(r, slot, saved.data());
        throw;
      }
      backend_->set_theta(r, slot, saved.data());
      predictions[r] = f;
    }
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("federated-em-kofl/1");
    out.put_i64(seen_);
    save_backend_state(*backend_, out);
    write_federated_weights(out, log_w_, round_loss_, kernel_loss_, n_kernels());
    std::vector<std::uint64_t> sampled(sampled_.begin(), sampled_.end());
    out.put_u64s(sampled);
  }

  void load_state(StateReader& in) override {
    in.expect_tag("federated-em-kofl/1");
    seen_ = in.get_i64();
    if (seen_ < 0) throw InputError("checkpoint: negative sample count");
    load_backend_state(*backend_, in);
    resident_frequencies_.clear();  // the checkpoint's matrices replace the backend's
    read_federated_weights(in, log_w_, round_loss_, kernel_loss_, n_kernels());
    const std::vector<std::uint64_t> sampled = in.get_u64s();
    if (sampled.size() != sampled_.size()) throw InputError("checkpoint: sampled kernels of another model");
    for (std::size_t r = 0; r < sampled.size(); ++r) {
      if (sampled[r] >= n_kernels()) throw InputError("checkpoint: sampled kernel out of range");
      sampled_[r] = static_cast<std::size_t>(sampled[r]);
    }
  }

  std::uint64_t kernel_updates() const override { return updates_; }
  double regret_regularizer(std::size_t r) const override {
    return track_regularizer_ ? last_regularizer_.at(r) : std::numeric_limits<double>::quiet_NaN();
  }
  CommunicationCount communication() const override { return ledger_.totals(); }
  double server_seconds() const override { return server_clock_.seconds(); }
  std::vector<double> client_kernel_losses(std::size_t r) const override {
    const std::size_t n = n_clients_ * n_kernels();
    return {kernel_loss_.begin() + static_cast<std::ptrdiff_t>(r * n),
            kernel_loss_.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)};
  }
  std::vector<std::pair<std::string, std::string>> reported_params() const override {
    return {{"D", std::to_string(n_rff_)}};
  }

  // eM-KOFL and Fed-OMD as server and client processes (§6.4). Per round that opens with an
  // average: the server sends J_t, each client rank answers with its clients' copies θ_{J_t,k},
  // the server sends back their mean in ascending client order (average_copies()'s sum). Then
  // every client rank steps its clients' copies and answers with one Update per client — its
  // predictions (a metrics channel, not the paper's traffic) and, for eM-KOFL, its N losses,
  // which the server adds in client order to move its weights. Client copies never leave their
  // rank except the sampled kernel's. After the last round the client ranks send their
  // per-kernel losses and message counts.
  // step_path=resident walks on the device (or its host driver); as processes the clients take
  // the host path, so a resident learner's replicates are dealt out instead.
  bool distributable() const override { return !resident_; }

  void run_distributed(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions,
                       Communicator& comm, double timeout_s) override {
    const std::size_t rounds = federation_rounds(comm, resident_, track_regularizer_, seen_, n, n_clients_);
    server_clock_.unknown();  // the clients run elsewhere
    if (comm.rank() == 0) serve(rounds, predictions, comm, timeout_s);
    else serve_clients(x, y, rounds, d, comm, timeout_s);
  }

 private:
  std::size_t n_kernels() const { return backend_->problem().n_kernels; }

  static constexpr int kDrawTag = 111, kCopyTag = 112, kAverageTag = 113, kUpdateTag = 114, kFinalTag = 115;

  // Rank 0: the draws, the averages and the server's weights.
  void serve(std::size_t rounds, double* predictions, Communicator& comm, double timeout_s) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, D2 = backend_->problem().theta_size();
    const int P = comm.size();
    std::vector<double> copies(K * R * D2), mean(R * D2), losses(K * R * N);
    for (std::size_t t = 1; t <= rounds; ++t) {
      const auto round = static_cast<std::int64_t>(t);
      if (averages(round)) {
        StateWriter draw;
        draw.put_u64(t);
        for (std::size_t r = 0; r < R; ++r) {
          sampled_[r] = draw_kernel(r, round);
          draw.put_u64(sampled_[r]);
        }
        for (int p = 1; p < P; ++p) comm.send(p, kDrawTag, draw.bytes());
        receive_round(comm, kCopyTag, t, K, timeout_s, "copies", [&](std::size_t k, StateReader& in) {
          for (std::size_t r = 0; r < R; ++r) in.get_f64s(copies.data() + (k * R + r) * D2, D2);
        });
        // θ̄_J = (1/K)·Σ_k θ_{J,k} in ascending client order, as average_copies() sums it.
        std::fill(mean.begin(), mean.end(), 0.0);
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t j = 0; j < R * D2; ++j) mean[j] += copies[k * R * D2 + j];
        for (double& v : mean) v /= static_cast<double>(K);
        StateWriter average;
        average.put_u64(t);
        average.put_f64s(mean);
        for (int p = 1; p < P; ++p) comm.send(p, kAverageTag, average.bytes());
      }
      receive_round(comm, kUpdateTag, t, K, timeout_s, "update", [&](std::size_t k, StateReader& in) {
        for (std::size_t r = 0; r < R; ++r) predictions[((t - 1) * K + k) * R + r] = in.get_f64();
        if (period_ == 0) in.get_f64s(losses.data() + k * R * N, R * N);
      });
      if (period_ == 0) {  // the losses in client order, as finish_sample() adds them in one process
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t j = 0; j < R * N; ++j) round_loss_[j] += losses[k * R * N + j];
        close_round();
      }
      seen_ += static_cast<std::int64_t>(K);
    }
    const CommunicationCount total = receive_final_reports(comm, kFinalTag, timeout_s, kernel_loss_, R, K, N, updates_);
    ledger_ = CommunicationLedger(max_upload_, total);
  }

  // Ranks 1 … P − 1: the clients k ≡ rank − 1 (mod P − 1) and their copies.
  void serve_clients(const double* x, const double* y, std::size_t rounds, std::size_t d, Communicator& comm,
                     double timeout_s) {
    const std::size_t R = n_replicates(), N = n_kernels(), K = n_clients_, D2 = backend_->problem().theta_size();
    const int me = comm.rank();
    const std::vector<std::size_t> mine = clients_of_rank(me, comm.size(), K);
    const FaultInjection faults = FaultInjection::for_rank(me);
    std::vector<double> theta(D2), mean(R * D2);
    for (std::size_t t = 1; t <= rounds; ++t) {
      faults.maybe_die(t);
      const auto round = static_cast<std::int64_t>(t);
      if (averages(round)) {
        StateReader draw(comm.receive(0, kDrawTag, timeout_s), "draw message", StateOrigin::Message);
        if (draw.get_u64() != t) throw Error("federated client: the server sent another round");
        for (std::size_t r = 0; r < R; ++r) {
          const std::uint64_t J = draw.get_u64();
          if (J >= N) throw Error("federated client: the server drew kernel " + std::to_string(J));
          sampled_[r] = static_cast<std::size_t>(J);
        }
        StateWriter copies;
        copies.put_u64(t);
        copies.put_u64(mine.size());
        for (std::size_t k : mine) {
          copies.put_u64(k);
          for (std::size_t r = 0; r < R; ++r) {
            backend_->get_theta(r, k * N + sampled_[r], theta.data());
            copies.put_f64s(theta);
          }
        }
        comm.send(0, kCopyTag, copies.bytes());
        StateReader average(comm.receive(0, kAverageTag, timeout_s), "average message", StateOrigin::Message);
        if (average.get_u64() != t) throw Error("federated client: the server sent another round");
        average.get_f64s(mean.data(), mean.size());
        for (std::size_t k : mine)
          for (std::size_t r = 0; r < R; ++r) backend_->set_theta(r, k * N + sampled_[r], mean.data() + r * D2);
      }
      StateWriter out = begin_answer(t, mine, faults);
      std::vector<double> prediction(R);
      for (std::size_t k : mine) {
        const std::size_t row = (t - 1) * K + k;
        step_clients(k, 1, x + row * d, y + row);
        std::fill(round_loss_.begin(), round_loss_.end(), 0.0);  // to hold this client's losses alone
        finish_sample(k, round, y[row], f_.data(), norm2_.data(), prediction.data());
        if (faults.drops(k, t)) continue;  // fault injection: a lost update
        out.put_u64(k);
        for (std::size_t r = 0; r < R; ++r) out.put_f64(prediction[r]);
        if (period_ == 0) out.put_f64s(round_loss_);
      }
      comm.send(0, kUpdateTag, out.bytes());
    }
    send_final_report(comm, kFinalTag, kernel_loss_, R, K, N, ledger_.totals(), updates_);
  }

  std::size_t draw_kernel(std::size_t r, std::int64_t t) const {
    const std::size_t N = n_kernels();
    return em_kofl_server_draw(log_w_.data() + r * N, N, explore_, context_.seed, context_.replicates[r], t);
  }

  // θ̄_J = (1/K)·Σ_k θ_{J,k}, summed in ascending client order.
  void average_copies(std::size_t r, std::size_t J, std::vector<double>& mean) const {
    const std::size_t N = n_kernels();
    std::vector<double> theta(mean.size());
    std::fill(mean.begin(), mean.end(), 0.0);
    for (std::size_t k = 0; k < n_clients_; ++k) {
      backend_->get_theta(r, k * N + J, theta.data());
      for (std::size_t j = 0; j < mean.size(); ++j) mean[j] += theta[j];
    }
    for (double& v : mean) v /= static_cast<double>(n_clients_);
  }

  // Whether round t opens with the clients' average: every round for eM-KOFL, every period_-th
  // (rounds 1, L + 1, …) for Fed-OMD.
  bool averages(std::int64_t t) const { return period_ == 0 || (t - 1) % static_cast<std::int64_t>(period_) == 0; }

  // §3.4 steps 1–3: the server's draw and the average every client then holds.
  void open_round(std::int64_t t) {
    if (!averages(t)) return;  // Fed-OMD between averages: the clients keep stepping their own θ
    const std::size_t N = n_kernels();
    std::vector<double> mean(backend_->problem().theta_size());
    for (std::size_t r = 0; r < n_replicates(); ++r) {
      sampled_[r] = draw_kernel(r, t);
      average_copies(r, sampled_[r], mean);
      for (std::size_t k = 0; k < n_clients_; ++k) backend_->set_theta(r, k * N + sampled_[r], mean.data());
    }
  }

  // §3.4 step 6: ω_{t+1} = ω_t·exp(−η_g·L_t), L the clients' losses summed (or averaged).
  void close_round() {
    const double reduce = sum_losses_ ? 1.0 : 1.0 / static_cast<double>(n_clients_);
    for (std::size_t j = 0; j < log_w_.size(); ++j) {
      log_w_[j] -= steps_.eta_w * reduce * round_loss_[j];
      round_loss_[j] = 0.0;
    }
  }

  AlgoContext context_;
  std::size_t period_ = 0;  // Fed-OMD's local steps per average; 0: eM-KOFL
  std::size_t n_clients_ = 0;
  bool sum_losses_ = true;
  double explore_ = 0.0;
  bool track_regularizer_ = false;        // regret.include_reg (AlgoContext::track_regret_regularizer)
  std::vector<double> last_regularizer_;  // R: λ‖θ̄_{J_t}‖² of the last client sample's prediction
  std::size_t n_rff_ = 0;
  double max_upload_ = 0.0;
  FederatedSteps steps_;
  std::unique_ptr<RfBackend> backend_;
  CommunicationLedger ledger_;
  ServerClock server_clock_;         // the host path's server side (§4.6)
  std::int64_t seen_ = 0;
  std::vector<double> log_w_;        // R × N: the server's weights ω
  std::vector<double> round_loss_;   // R × N: the round's reported losses
  std::vector<double> kernel_loss_;  // R × K × N: Σ_t (f_ik − y)² (+ λ‖θ_ik‖² when tracked), the local copies (§3.5)
  std::vector<std::size_t> sampled_; // R: J_t of the round in progress
  std::vector<PairStep> pairs_;      // scratch
  std::vector<double> f_, norm2_;    // scratch
  std::uint64_t updates_ = 0;
  // step_path = resident
  bool resident_ = false;
  std::vector<double> resident_frequencies_;  // host driver: V of every (replicate, kernel)
  std::unique_ptr<EmKoflDeviceWalk> device_walk_;
};

}  // namespace

std::size_t em_kofl_server_draw(const double* log_w, std::size_t N, double explore, std::uint64_t seed,
                                std::uint64_t replicate, std::int64_t t) {
  std::vector<double> w(N);
  return em_kofl_draw(log_w, N, explore, client_uniform(seed, replicate, kServerDraws, 0, t), w.data());
}

std::unique_ptr<Algorithm> make_fedomd_local_steps(ParamReader& params, const AlgoContext& context,
                                                   std::size_t local_steps) {
  return std::unique_ptr<Algorithm>(new EmKofl(params, context, local_steps));
}

void add_em_kofl(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"em-kofl",
                      "eM-KOFL: local copies of every kernel per client, one server-drawn kernel averaged and "
                      "used for prediction per round, global Hedge weights from the clients' losses (§3.4)",
                      [](ParamReader& params, const AlgoContext& context) -> std::unique_ptr<Algorithm> {
                        const std::string variant = params.get_choice(
                            "variant", "local_copies", {"local_copies", "global_only"},
                            "local_copies: every client keeps a copy of every kernel (§3.4); global_only: the "
                            "server's θ alone, θ_{J_t} moved by the clients' averaged gradients");
                        if (variant == "global_only") return make_global_only_em_kofl(params, context);
                        return std::unique_ptr<Algorithm>(new EmKofl(params, context));
                      }});
}

}  // namespace omkl::detail
