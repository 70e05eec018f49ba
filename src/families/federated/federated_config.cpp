/// @file federated_config.cpp
/// @brief Parameters, budget and ledger shared by the federated family (federated_config.h).
#include "families/federated/federated_config.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

std::size_t read_clients(ParamReader& params, const AlgoContext& context) {
  const std::int64_t k = params.get_int("clients", static_cast<std::int64_t>(context.n_clients),
                                        "K: clients per round (default: the federated stream's, e.g. "
                                        "--preset fed-pofmkl)",
                                        ParamRange::closed(1, kMaxClients));
  if (k < 1)
    params.fail("clients", context.n_clients == 0 ? "is not set: the stream is not federated (use a federated "
                                                    "preset such as fed-pofmkl, --clients, or clients=K)"
                                                  : "must be ≥ 1");
  const std::size_t K = static_cast<std::size_t>(k);
  // Row t·K + k is client k's sample of round t (§4.3): another K would deal the rows anew.
  if (context.n_clients > 0 && K != context.n_clients)
    params.fail("clients", "is " + std::to_string(K) + ", but the stream is dealt to " +
                               std::to_string(context.n_clients) + " clients (leave clients out, or change --clients)");
  if (context.horizon > 0 && context.horizon % K != 0)
    params.fail("clients", "the stream's " + std::to_string(context.horizon) + " rows are not whole rounds of " +
                               std::to_string(K) + " clients");
  return K;
}

Dictionary read_federated_dictionary(ParamReader& params, bool single_kernel, double single_sigma,
                                     std::string* text) {
  const bool textbook = params.get_choice("rbf_convention", "author", {"author", "textbook"},
                                          "Gaussian bandwidth σ: the authors' variance, ρ ~ N(0, σ⁻¹I), or the "
                                          "textbook bandwidth, ρ ~ N(0, σ⁻²I) (§4.4)") == "textbook";
  const bool dict_given = params.has("dict");
  std::string fallback = textbook ? "fed-51-textbook" : "fed-51";
  if (single_kernel) {
    // §4.9's ofskl.sigma: the one Gaussian's bandwidth, read under the convention above (not read
    // beside dict=, which names the kernel itself, unless given too: then both must agree).
    const double sigma = dict_given && !params.has("sigma")
                             ? single_sigma
                             : params.get_double("sigma", single_sigma,
                                                 "the single kernel's Gaussian bandwidth σ, under rbf_convention (§4.9 "
                                                 "ofskl.sigma; or dict= with one kernel)",
                                                 ParamRange::closed(kSmallestBandwidth, kLargestBandwidth));
    char number[32];
    std::snprintf(number, sizeof number, "%.17g", sigma);
    fallback = (textbook ? "gauss:" : "gauss2:") + std::string(number);
  }
  std::string dict_text;
  Dictionary dict = read_dictionary_param(params, fallback, "kernel dictionary: a preset name or kernels joined by '+'",
                                          &dict_text);
  if (text) *text = dict_text;
  // The convention (and a single kernel's σ) pick the default dictionary; a given dict= names its
  // kernels itself. Beside it they are accepted only where they pick that same dictionary, as
  // parameters() lists them for a learner that took the default; anything else would be ignored.
  const auto picks_the_same = [&] {
    const Dictionary picked = parse_dictionary(fallback);
    if (picked.size() != dict.size()) return false;
    for (std::size_t i = 0; i < dict.size(); ++i)
      if (picked[i].family != dict[i].family || picked[i].sigma != dict[i].sigma) return false;
    return true;
  };
  if (dict_given && !picks_the_same()) {
    if (single_kernel && params.has("sigma")) params.fail("sigma", "and dict= both name the kernel: give one of them");
    if (params.has("rbf_convention"))
      params.fail("rbf_convention", "picks the default dictionary's bandwidths and cannot apply to dict=...: write "
                                    "the kernels as gauss:σ (textbook) or gauss2:σ² (the authors' variance) instead");
  }
  if (dict_given && !params.has("rbf_convention")) params.inapplicable("rbf_convention");
  for (const auto& k : dict)
    if (!k.shift_invariant()) params.fail("dict", "contains " + k.name() + ", which has no random features");
  if (single_kernel && dict.size() != 1) params.fail("dict", "must name exactly one kernel for a single-kernel learner");
  return dict;
}

std::size_t read_budgeted_D(ParamReader& params, std::size_t kernels_per_upload, std::size_t extra_floats,
                            double* max_upload_out) {
  const std::int64_t cap = params.get_int("max_upload", 1000, "floats a client may upload per step (§2.2)",
                                          ParamRange::count_from(1));
  const std::int64_t max_d = params.get_int("max_D", 100, "largest D a client can hold (§2.2)",
                                            ParamRange::closed(1, kMaxRandomFeatures));
  const std::int64_t room = cap - static_cast<std::int64_t>(extra_floats);
  const std::int64_t per_kernel = 2 * static_cast<std::int64_t>(kernels_per_upload);
  const std::int64_t fits = room > 0 ? room / per_kernel : 0;
  const std::int64_t fallback = std::min(max_d, fits);
  const std::int64_t d = params.get_int("D", fallback,
                                        "random features per kernel (default: the largest D whose upload fits "
                                        "max_upload, at most max_D)",
                                        ParamRange::closed(1, kMaxRandomFeatures));
  const auto upload = [&](std::int64_t D) { return per_kernel * D + static_cast<std::int64_t>(extra_floats); };
  if (fallback < 1 && !params.has("D"))
    params.fail("max_upload", "of " + std::to_string(cap) + " floats cannot carry " +
                                  std::to_string(kernels_per_upload) + " kernel update(s) of 2D floats" +
                                  (extra_floats ? " plus " + std::to_string(extra_floats) + " scalars" : "") +
                                  " for any D ≥ 1");
  if (upload(d) > cap)
    params.fail("D", "= " + std::to_string(d) + " makes an upload of " + std::to_string(upload(d)) +
                         " floats, over the budget max_upload = " + std::to_string(cap));
  if (d > max_d) params.fail("D", "= " + std::to_string(d) + " exceeds max_D = " + std::to_string(max_d));
  *max_upload_out = static_cast<double>(cap);
  return static_cast<std::size_t>(d);
}

FederatedSteps read_federated_steps(ParamReader& params, const AlgoContext& context, std::size_t n_clients,
                                    const std::string& weight_step_key) {
  FederatedSteps s;
  const std::size_t rounds = context.horizon / n_clients;
  const double fallback = rounds > 0 ? 1.0 / std::sqrt(static_cast<double>(rounds)) : -1.0;
  const auto read_step = [&](const std::string& key, const std::string& meaning) {
    const double v = params.get_double(key, fallback, meaning, ParamRange::above(0));
    if (v == -1.0 && !params.has(key))
      params.fail(key, "has no default when the stream length is unknown; give " + key + "=...");
    return v;
  };
  s.eta = read_step("eta", "θ step size η (default 1/√T, T = rounds)");
  if (weight_step_key == "eta_k")
    s.eta_w = read_step("eta_k", "client kernel-weight step size η_k (default 1/√T, T = rounds)");
  if (weight_step_key == "eta_g")
    s.eta_w = read_step("eta_g", "server kernel-weight step size η_g (default 1/√T, T = rounds)");
  s.lambda = params.get_double("lambda", 1e-3, "ridge weight λ in the loss (θᵀz − y)² + λ‖θ‖²",
                               ParamRange::at_least(0));
  return s;
}

RfEnsembleConfig federated_features(ParamReader& params, const Dictionary& dictionary, const std::string& text,
                                    std::size_t n_rff, double lambda) {
  RfEnsembleConfig c;
  c.single_precision = params.get_choice("precision", "double", {"double", "float"},
                                         "float: on CUDA θ and the features in float; on the CPU the feature map in "
                                         "float where |angles| ≤ 256, θ in double") == "float";
  c.dictionary = dictionary;
  c.dictionary_text = text;
  c.n_rff = n_rff;
  c.rf_kind = RfKind::Rf;
  c.feature_scale = 1.0 / std::sqrt(static_cast<double>(n_rff));
  c.loss = LossKind::Squared;
  c.lambda = lambda;
  c.weights.rule = WeightRule::MinMax;  // no backend-side norms: the family keeps its own
  // A frequency matrix is the first D rows of its stream's draw, so configurations with different D
  // share their first frequencies (less comparison noise, §4.4). Without that, each D draws from
  // streams of its own: D·2³² is above every other Frequencies stream index of the library (the
  // dictionaries' 0 … N − 1, OFSKL's, the bandit family's), which all stay below 2³², and below
  // the 2⁴⁸ a stream index holds while D < 2¹⁶.
  if (!params.get_bool("share_prefix_across_D", true,
                       "configurations with different D share their first frequencies (§4.4 "
                       "rf.share_prefix_across_D); false: each D draws its own")) {
    if (n_rff >= (std::size_t{1} << 16))
      params.fail("share_prefix_across_D", "false needs D < 65536 (the streams are keyed by D)");
    c.first_stream = static_cast<std::uint64_t>(n_rff) << 32;
  }
  return c;
}

void CommunicationLedger::client_step(double downlink, double uplink) {
  if (max_upload_ > 0 && uplink > max_upload_)
    throw Error("federated message layer: a client upload of " + std::to_string(uplink) +
                " floats exceeds the cap of " + std::to_string(max_upload_));
  totals_.uplink_floats += uplink;
  totals_.downlink_floats += downlink;
  totals_.max_uplink = std::max(totals_.max_uplink, uplink);
  totals_.client_steps += 1.0;
}

void CommunicationLedger::client_steps(double n, double downlink, double uplink_total, double uplink_max) {
  if (max_upload_ > 0 && uplink_max > max_upload_)
    throw Error("federated message layer: a client upload of " + std::to_string(uplink_max) +
                " floats exceeds the cap of " + std::to_string(max_upload_));
  totals_.uplink_floats += uplink_total;
  totals_.downlink_floats += n * downlink;
  totals_.max_uplink = std::max(totals_.max_uplink, uplink_max);
  totals_.client_steps += n;
}

void write_federated_weights(StateWriter& out, const std::vector<double>& log_w, const std::vector<double>& round_loss,
                             const std::vector<double>& kernel_loss, std::size_t n_kernels) {
  out.put_weights(log_w, n_kernels, true);
  out.put_f64s(round_loss);
  out.put_f64s(kernel_loss);
}

void read_federated_weights(StateReader& in, std::vector<double>& log_w, std::vector<double>& round_loss,
                            std::vector<double>& kernel_loss, std::size_t n_kernels) {
  in.get_f64s(log_w.data(), log_w.size());
  in.get_f64s(round_loss.data(), round_loss.size());
  in.get_f64s(kernel_loss.data(), kernel_loss.size());
  // Log-weights only ever decrease from 0: −∞ is a weight that underflowed, NaN or +∞ damage,
  // and a vector all −∞ no run leaves (its heaviest entry is shifted to 1 when used).
  for (std::size_t first = 0; n_kernels > 0 && first < log_w.size(); first += n_kernels) {
    const std::size_t n = std::min(n_kernels, log_w.size() - first);
    for (std::size_t k = first; k < first + n; ++k)
      if (unsound(log_w[k]))
        throw InputError("checkpoint: federated weights hold a log-weight of " + std::to_string(log_w[k]));
    const std::string problem = weight_vector_problem(log_w.data() + first, n, true);
    if (!problem.empty()) throw InputError("checkpoint: federated weights " + problem);
  }
  // (NaN and +∞ among them are Learner::load's to refuse, with any other such number of the state.)
  for (const std::vector<double>* losses : {&round_loss, &kernel_loss})
    for (double v : *losses)
      if (v < 0.0) throw InputError("checkpoint: federated losses hold " + std::to_string(v) + " (losses are ≥ 0)");
}

double client_uniform(std::uint64_t seed, std::uint64_t replicate, std::uint64_t stream_base, std::size_t client,
                      std::int64_t t) {
  RandomStream stream(seed, replicate, RngPurpose::Selection, stream_base + client);
  stream.seek(2 * static_cast<std::uint64_t>(t - 1));
  return stream.uniform();
}

}  // namespace omkl::detail
