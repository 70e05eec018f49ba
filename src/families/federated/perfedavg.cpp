/// @file perfedavg.cpp
/// @brief PerFedAvg (Fallah, Mokhtari & Ozdaglar, NeurIPS 2020) as the POF-MKL paper's baseline,
/// spec/federated.md §3.6: a small fully-connected ReLU network (hidden layers of width 20, as
/// many as keep the parameter count below the upload cap; a linear output), online Per-FedAvg
/// with one local step: a client personalises the broadcast model on its previous sample,
/// predicts, and uploads w − β∇ℓ(w − α∇ℓ(w)) on its new sample (first-order; variant=hessian_free
/// or exact multiply ∇ℓ(w̃) by I − α∇²ℓ(w) first); the server averages.
/// Written with plain loops: the networks have at most 1000 parameters. With step_path=resident
/// a block of samples is one walk of resident_perfedavg.h's program (on the GPU with
/// --backend cuda, no host round trip per sample).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/step_path.h"
#include "families/federated/federated.h"
#include "families/federated/federated_config.h"
#include "families/federated/federation_processes.h"
#include "families/federated/mlp.h"
#include "families/federated/resident_perfedavg.h"
#include "features/rf_backend.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

namespace {

constexpr std::uint64_t kInitStream = 0xfeda0001u;

class PerFedAvg final : public Algorithm {
 public:
  PerFedAvg(ParamReader& params, const AlgoContext& context) : context_(context) {
    if (context.task != Task::Regression)
      throw ConfigError("algorithm '" + params.algorithm() + "': the federated algorithms are defined for "
                        "regression (squared loss) only");
    n_clients_ = read_clients(params, context);
    const std::size_t d = context.n_features;
    const std::int64_t cap = params.get_int("max_upload", 1000, "floats a client may upload per step (§2.2)",
                                            ParamRange::count_from(2));
    const std::int64_t width =
        params.get_int("width", 20, "neurons per hidden layer", ParamRange::closed(1, 4096));
    // Appendix C: as many hidden layers of `width` as keep the parameter count below the cap.
    std::size_t auto_layers = 0;
    if (Mlp::parameter_count(d, 0, static_cast<std::size_t>(width)) >= static_cast<std::size_t>(cap))
      params.fail("max_upload", "cannot carry even a linear model of " + std::to_string(d + 1) + " parameters");
    while (auto_layers < 64 &&
           Mlp::parameter_count(d, auto_layers + 1, static_cast<std::size_t>(width)) < static_cast<std::size_t>(cap))
      ++auto_layers;
    const std::int64_t layers = params.get_int("hidden_layers", static_cast<std::int64_t>(auto_layers),
                                               "hidden layers (default: the most whose parameters stay below "
                                               "max_upload; 0 = a linear model)",
                                               ParamRange::closed(0, 64));
    net_ = Mlp(d, static_cast<std::size_t>(layers), static_cast<std::size_t>(width));
    if (net_.size() >= static_cast<std::size_t>(cap))
      params.fail("hidden_layers", std::to_string(layers) + " layers of " + std::to_string(width) + " have " +
                                       std::to_string(net_.size()) + " parameters, not below max_upload = " +
                                       std::to_string(cap));
    const std::size_t rounds = context.horizon / n_clients_;
    const double fallback = rounds > 0 ? 1.0 / std::sqrt(static_cast<double>(rounds)) : -1.0;
    alpha_ = params.get_double("alpha", fallback, "personalisation step α (default 1/√T, T = rounds)",
                               ParamRange::above(0));
    beta_ = params.get_double("beta", fallback, "meta step β (default 1/√T, T = rounds)", ParamRange::above(0));
    if ((alpha_ == -1.0 && !params.has("alpha")) || (beta_ == -1.0 && !params.has("beta")))
      params.fail("alpha", "has no default when the stream length is unknown; give alpha=... and beta=...");
    personalize_ = params.get_choice("personalize", "prev_sample", {"prev_sample", "none"},
                                     "a client adapts the broadcast model on its previous sample before "
                                     "predicting, or predicts with it as is") == "prev_sample";
    // §3.6 step 3's update: first-order MAML, or MAML's second-order one with the Hessian-vector
    // product ∇²ℓ(w)∇ℓ(w̃) as a central difference of two gradients (Fallah et al.'s HF) or exact
    // (the R-operator of Mlp::hessian_vector).
    const std::string variant = params.get_choice(
        "variant", "first_order", {"first_order", "hessian_free", "exact"},
        "first_order: w' = w − β∇ℓ(w̃); hessian_free and exact: w' = w − β(I − α∇²ℓ(w))∇ℓ(w̃), the "
        "Hessian-vector product by a central difference of two gradients or exactly (§3.6, perfedavg.variant)");
    hessian_free_ = variant == "hessian_free";
    exact_hessian_ = variant == "exact";
    if (params.given("hf_delta") && !hessian_free_)
      params.fail("hf_delta", "is the central difference's step of variant=hessian_free; the variant is " + variant);
    if (hessian_free_) {
      hf_delta_ = params.get_double("hf_delta", 1e-3, "hessian_free: the central difference's step δ along ∇ℓ(w̃)",
                                    ParamRange::above(0));
    }
    resident_ = read_step_path(params, "client samples", backend_on_gpu(context.backend),
                               variant != "first_order" ? "variant=" + variant + " (the resident walk is first-order)"
                                                        : "");
    // The walk is made at the first walk; a missing device is said now (a study validating its
    // cells), not later in a worker.
    if (resident_ && backend_on_gpu(context.backend)) require_cuda_device();
    ledger_ = CommunicationLedger(static_cast<double>(cap));
    const std::size_t R = context.n_replicates(), P = net_.size();
    model_.assign(R * P, 0.0);
    round_sum_.assign(R * P, 0.0);
    for (std::size_t r = 0; r < R; ++r) {
      RandomStream rng(context.seed, context.replicates[r], RngPurpose::Misc, kInitStream);
      net_.initialize(model_.data() + r * P, rng);
    }
    previous_x_.assign(n_clients_ * d, 0.0);
    previous_y_.assign(n_clients_, 0.0);
    has_previous_.assign(n_clients_, 0);
    g_.resize(P);
    w_.resize(P);
    upload_.resize(P);
  }

  std::size_t n_replicates() const override { return context_.n_replicates(); }
  bool batches_replicates() const override { return resident_; }  // the walk, on the GPU
  bool walks_on_device() const override { return resident_; }

  void step(const double* x, double y, double* predictions) override {
    if (resident_) return walk_resident(x, &y, 1, context_.n_features, predictions);
    const std::size_t R = n_replicates(), P = net_.size();
    const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(n_clients_));
    for (std::size_t r = 0; r < R; ++r) {
      predictions[r] = client_step(r, client, x, y, upload_.data());
      double* sum = round_sum_.data() + r * P;
      for (std::size_t j = 0; j < P; ++j) sum[j] += upload_[j];
    }
    remember_sample(client, x, y);
    ++seen_;
    if (client + 1 == n_clients_) server_clock_.time([&] { close_round(); });
  }

  void step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                  double* predictions) override {
    if (resident_) return walk_resident(x, y, n, n_features, predictions);
    Algorithm::step_block(x, y, n, n_features, predictions);
  }

  /// step_path = resident: n samples (any part of any rounds) as one walk of the resident
  /// program — on the GPU where the context asks for it, by the host driver otherwise (the GPU
  /// walk's reference). The models, the round's sums and the clients' previous samples go back
  /// into the host path's members, so checkpoints and predict() read them as it keeps them.
  void walk_resident(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions) {
    if (n == 0) return;
    server_clock_.unknown();  // the walk runs both sides
    const std::size_t R = n_replicates(), P = net_.size(), K = n_clients_;
    PerFedAvgTables tables;
    tables.net = net_.shape();
    tables.K = static_cast<std::uint32_t>(K);
    tables.d = static_cast<std::uint32_t>(d);
    tables.alpha = alpha_;
    tables.beta = beta_;
    tables.personalize = personalize_ ? 1 : 0;
    PerFedAvgStateData state(tables, R);
    const PerFedAvgStates s = state.view();
    std::copy(model_.begin(), model_.end(), s.model);
    std::copy(round_sum_.begin(), round_sum_.end(), s.round_sum);
    for (std::size_t r = 0; r < R; ++r) {  // one stream: the clients' samples are every replicate's
      std::copy(previous_x_.begin(), previous_x_.end(), s.previous_x + r * K * d);
      std::copy(previous_y_.begin(), previous_y_.end(), s.previous_y + r * K);
      for (std::size_t k = 0; k < K; ++k) s.has_previous[r * K + k] = has_previous_[k] ? 1 : 0;
    }
    ResidentWalkArgs<double> shape;
    shape.n_steps = n;
    shape.n_replicates = R;
    shape.n_slots = 1;
    shape.n_kernels = 1;
    shape.n_features = d;
    shape.max_pairs = 1;
    shape.t0 = seen_ + 1;
    const bool gpu = backend_on_gpu(context_.backend);
    if (gpu) {
      if (!device_walk_) {
        require_cuda_device();
        device_walk_ = std::make_unique<PerFedAvgDeviceWalk>(context_.device_contexts.get());
      }
      device_walk_->walk(tables, state, shape, x, y, predictions);
    } else {
      PerFedAvgProgram program{tables, s};
      walk_on_host(program, shape, nullptr, nullptr, x, y, predictions);
    }
    std::copy(s.model, s.model + model_.size(), model_.begin());
    std::copy(s.round_sum, s.round_sum + round_sum_.size(), round_sum_.begin());
    std::copy(s.previous_x, s.previous_x + K * d, previous_x_.begin());
    std::copy(s.previous_y, s.previous_y + K, previous_y_.begin());
    for (std::size_t k = 0; k < K; ++k) has_previous_[k] = s.has_previous[k] != 0;
    const double steps = static_cast<double>(n * R), floats = static_cast<double>(P);
    ledger_.client_steps(steps, floats, steps * floats, floats);
    seen_ += static_cast<std::int64_t>(n);
  }

  void predict(const double* x, double* predictions) override {
    const std::size_t R = n_replicates(), P = net_.size();
    const std::size_t client = static_cast<std::size_t>(seen_ % static_cast<std::int64_t>(n_clients_));
    for (std::size_t r = 0; r < R; ++r) predictions[r] = personalized_prediction(model_.data() + r * P, client, x);
  }

  void save_state(StateWriter& out) const override {
    out.put_tag("federated-perfedavg/1");
    out.put_i64(seen_);
    out.put_f64s(model_);
    out.put_f64s(round_sum_);
    out.put_f64s(previous_x_);
    out.put_f64s(previous_y_);
    out.put_u64s(std::vector<std::uint64_t>(has_previous_.begin(), has_previous_.end()));
  }

  void load_state(StateReader& in) override {
    in.expect_tag("federated-perfedavg/1");
    seen_ = in.get_i64();
    if (seen_ < 0) throw InputError("checkpoint: negative sample count");
    in.get_f64s(model_.data(), model_.size());
    in.get_f64s(round_sum_.data(), round_sum_.size());
    in.get_f64s(previous_x_.data(), previous_x_.size());
    in.get_f64s(previous_y_.data(), previous_y_.size());
    const auto flags = in.get_u64s();
    if (flags.size() != has_previous_.size()) throw InputError("checkpoint: client flags of another model");
    for (std::size_t k = 0; k < flags.size(); ++k) has_previous_[k] = flags[k] != 0;
  }

  CommunicationCount communication() const override { return ledger_.totals(); }
  double server_seconds() const override { return server_clock_.seconds(); }
  std::vector<std::pair<std::string, std::string>> reported_params() const override {
    return {{"parameters", std::to_string(net_.size())}};
  }

  // ---- the server and its clients in separate processes (§6.4) -------------------------------
  // Per round: the server sends every client rank the model w (P floats per replicate); each
  // client rank answers with one Update per client it holds — its prediction (a metrics channel,
  // not the paper's traffic) and its upload w' — and the server averages the uploads in
  // ascending client order, as close_round() does in one process. A client's previous sample,
  // which personalises its prediction, never leaves its rank. As processes the clients take the
  // host path, so a resident learner's replicates are dealt out instead.
  bool distributable() const override { return !resident_; }

  void run_distributed(const double* x, const double* y, std::size_t n, std::size_t d, double* predictions,
                       Communicator& comm, double timeout_s) override {
    const std::size_t rounds =
        federation_rounds(comm, resident_, context_.track_regret_regularizer, seen_, n, n_clients_);
    server_clock_.unknown();  // the clients run elsewhere
    if (comm.rank() == 0) serve(rounds, predictions, comm, timeout_s);
    else serve_clients(x, y, rounds, d, comm, timeout_s);
  }

 private:
  static constexpr int kRoundTag = 121, kUpdateTag = 122, kFinalTag = 123;

  // Client `client`'s sample (x, y) against replicate r's model: its personalised prediction
  // (returned) and its upload w' (P values). First-order Per-FedAvg (§3.6 step 3): w̃ = w − α∇ℓ(w),
  // w' = w − β∇ℓ(w̃); hessian_free and exact multiply ∇ℓ(w̃) by (I − α∇²ℓ(w)) first.
  double client_step(std::size_t r, std::size_t client, const double* x, double y, double* upload) {
    const std::size_t P = net_.size();
    const double* w = model_.data() + r * P;
    const double prediction = personalized_prediction(w, client, x);
    net_.gradient(w, x, y, g_.data());
    for (std::size_t j = 0; j < P; ++j) w_[j] = w[j] - alpha_ * g_[j];
    net_.gradient(w_.data(), x, y, g_.data());
    if (hessian_free_) hessian_free_direction(w, x, y);  // g ← (I − α∇²ℓ(w))g
    if (exact_hessian_) exact_hessian_direction(w, x, y);
    for (std::size_t j = 0; j < P; ++j) upload[j] = w[j] - beta_ * g_[j];
    ledger_.client_step(static_cast<double>(P), static_cast<double>(P));
    return prediction;
  }

  // The client's sample, kept to personalise its next prediction.
  void remember_sample(std::size_t client, const double* x, double y) {
    const std::size_t d = context_.n_features;
    std::copy(x, x + d, previous_x_.begin() + static_cast<std::ptrdiff_t>(client * d));
    previous_y_[client] = y;
    has_previous_[client] = 1;
  }

  // The server's average of the K uploads, summed in client order.
  void close_round() {
    for (std::size_t j = 0; j < model_.size(); ++j) {
      model_[j] = round_sum_[j] / static_cast<double>(n_clients_);
      round_sum_[j] = 0.0;
    }
  }

  // Rank 0: the model of every round, the uploads added in client order.
  void serve(std::size_t rounds, double* predictions, Communicator& comm, double timeout_s) {
    const std::size_t R = n_replicates(), P = net_.size(), K = n_clients_;
    const int size = comm.size();
    std::vector<double> uploads(K * R * P);
    for (std::size_t t = 1; t <= rounds; ++t) {
      StateWriter round;
      round.put_u64(t);
      round.put_f64s(model_);
      for (int p = 1; p < size; ++p) comm.send(p, kRoundTag, round.bytes());
      receive_round(comm, kUpdateTag, t, K, timeout_s, "update", [&](std::size_t k, StateReader& in) {
        for (std::size_t r = 0; r < R; ++r) {
          predictions[((t - 1) * K + k) * R + r] = in.get_f64();
          in.get_f64s(uploads.data() + (k * R + r) * P, P);
        }
      });
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t r = 0; r < R; ++r)
          for (std::size_t j = 0; j < P; ++j) round_sum_[r * P + j] += uploads[(k * R + r) * P + j];
      close_round();
      seen_ += static_cast<std::int64_t>(K);
    }
    std::vector<double> no_kernels;
    std::uint64_t no_updates = 0;
    ledger_ = CommunicationLedger(ledger_.cap(),
                                  receive_final_reports(comm, kFinalTag, timeout_s, no_kernels, R, K, 0, no_updates));
  }

  // Ranks 1 … P − 1: the clients k ≡ rank − 1 (mod P − 1) and their previous samples.
  void serve_clients(const double* x, const double* y, std::size_t rounds, std::size_t d, Communicator& comm,
                     double timeout_s) {
    const std::size_t R = n_replicates(), K = n_clients_;
    const int me = comm.rank();
    const std::vector<std::size_t> mine = clients_of_rank(me, comm.size(), K);
    const FaultInjection faults = FaultInjection::for_rank(me);
    for (std::size_t t = 1; t <= rounds; ++t) {
      faults.maybe_die(t);
      StateReader in(comm.receive(0, kRoundTag, timeout_s), "round message", StateOrigin::Message);
      if (in.get_u64() != t) throw Error("federated client: the server sent another round");
      in.get_f64s(model_.data(), model_.size());
      StateWriter out = begin_answer(t, mine, faults);
      for (std::size_t k : mine) {
        const std::size_t row = (t - 1) * K + k;
        const bool sent = !faults.drops(k, t);  // fault injection: a lost update
        if (sent) out.put_u64(k);
        for (std::size_t r = 0; r < R; ++r) {
          const double prediction = client_step(r, k, x + row * d, y[row], upload_.data());
          if (!sent) continue;
          out.put_f64(prediction);
          out.put_f64s(upload_);
        }
        remember_sample(k, x + row * d, y[row]);
      }
      comm.send(0, kUpdateTag, out.bytes());
    }
    send_final_report(comm, kFinalTag, {}, R, K, 0, ledger_.totals(), 0);
  }

  // Per-FedAvg HF: g ← g − α·d with d = (∇ℓ(w + δg) − ∇ℓ(w − δg))/(2δ), the central difference
  // of ∇ℓ along g = ∇ℓ(w̃) (exact where ∇ℓ is linear in w, e.g. a linear model).
  void hessian_free_direction(const double* w, const double* x, double y) {
    const std::size_t P = net_.size();
    hf_plus_.resize(P);
    hf_minus_.resize(P);
    hf_w_.resize(P);
    for (std::size_t j = 0; j < P; ++j) hf_w_[j] = w[j] + hf_delta_ * g_[j];
    net_.gradient(hf_w_.data(), x, y, hf_plus_.data());
    for (std::size_t j = 0; j < P; ++j) hf_w_[j] = w[j] - hf_delta_ * g_[j];
    net_.gradient(hf_w_.data(), x, y, hf_minus_.data());
    for (std::size_t j = 0; j < P; ++j) g_[j] -= alpha_ * (hf_plus_[j] - hf_minus_[j]) / (2.0 * hf_delta_);
  }

  // The same with the exact product (the R-operator): g ← g − α∇²ℓ(w)g.
  void exact_hessian_direction(const double* w, const double* x, double y) {
    const std::size_t P = net_.size();
    hf_plus_.resize(P);
    net_.hessian_vector(w, x, y, g_.data(), hf_plus_.data());
    for (std::size_t j = 0; j < P; ++j) g_[j] -= alpha_ * hf_plus_[j];
  }

  // h_φ(x) with φ = w − α∇ℓ(w; x_prev, y_prev) adapted on the client's previous sample (§3.6
  // step 2), or w itself before the client has one (or with personalize = none).
  double personalized_prediction(const double* w, std::size_t client, const double* x) {
    const std::size_t P = net_.size(), d = context_.n_features;
    if (!personalize_ || !has_previous_[client]) return net_.forward(w, x);
    net_.gradient(w, previous_x_.data() + client * d, previous_y_[client], g_.data());
    for (std::size_t j = 0; j < P; ++j) w_[j] = w[j] - alpha_ * g_[j];
    return net_.forward(w_.data(), x);
  }

  AlgoContext context_;
  std::size_t n_clients_ = 0;
  Mlp net_;
  double alpha_ = 0.0, beta_ = 0.0;
  bool personalize_ = true;
  bool hessian_free_ = false;
  bool exact_hessian_ = false;  // variant = exact
  double hf_delta_ = 1e-3;
  std::vector<double> hf_plus_, hf_minus_, hf_w_;  // scratch of the two second-order directions
  CommunicationLedger ledger_;
  ServerClock server_clock_;       // the host path's server side (§4.6)
  std::int64_t seen_ = 0;
  std::vector<double> model_;      // R × P: the server model of the round
  std::vector<double> round_sum_;  // R × P: Σ of the round's uploads so far
  std::vector<double> previous_x_, previous_y_;  // each client's last sample
  std::vector<char> has_previous_;
  std::vector<double> g_, w_, upload_;  // scratch
  bool resident_ = false;          // step_path = resident
  std::unique_ptr<PerFedAvgDeviceWalk> device_walk_;
};

}  // namespace

void add_perfedavg(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"perfedavg",
                      "PerFedAvg (online; first-order, Hessian-free or exact): a small ReLU network "
                      "personalised on each client's previous sample, FedAvg of the meta-updates (§3.6)",
                      [](ParamReader& params, const AlgoContext& context) {
                        return std::unique_ptr<Algorithm>(new PerFedAvg(params, context));
                      }});
}

}  // namespace omkl::detail
