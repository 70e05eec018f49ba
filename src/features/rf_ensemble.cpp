#include "features/rf_ensemble.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "random/notebook_stream.h"
#include "core/parallel.h"
#include "core/rate_schedule.h"
#include "core/timing.h"
#include "omkl/error.h"

namespace omkl::detail {

Dictionary read_dictionary_param(ParamReader& params, const std::string& default_dictionary,
                                 const std::string& meaning, std::string* text_out) {
  const std::string text = params.get_string("dict", default_dictionary, meaning);
  if (text_out) *text_out = text;
  Dictionary dict;
  try {
    dict = parse_dictionary(text);
  } catch (const ConfigError& e) {
    params.fail("dict", std::string("is invalid: ") + e.what());
  }
  if (dict.empty()) params.fail("dict", "is empty");
  return dict;
}

RfFeatures read_rf_features(ParamReader& params, const std::string& default_dictionary,
                            const std::string& default_rf, const std::string& default_scale,
                            const std::string& rf_meaning, const std::string& scale_meaning) {
  RfFeatures f;
  f.dictionary = read_dictionary_param(params, default_dictionary,
                                       "kernel dictionary: a preset name or kernels joined by '+'",
                                       &f.dictionary_text);
  for (const auto& k : f.dictionary)
    if (!k.shift_invariant())
      params.fail("dict", "contains " + k.name() + ", which has no random features");
  const std::int64_t d = params.get_int("D", 50, "random features per kernel (θ has 2D entries)",
                                        ParamRange::closed(1, kMaxRandomFeatures));
  f.n_rff = static_cast<std::size_t>(d);
  f.rf_kind = parse_rf_kind(params.get_choice("rf", default_rf, {"orf", "rf", "orf_matlab"}, rf_meaning));
  const std::string scale =
      params.get_choice("feature_scale", default_scale, {"inv_sqrt_D", "one"}, scale_meaning);
  f.feature_scale = scale == "one" ? 1.0 : 1.0 / std::sqrt(static_cast<double>(f.n_rff));
  f.numpy_legacy = params.get_choice("rng", "counter", {"counter", "numpy_legacy"},
                                     "random numbers: counter-based streams, or the graph journal "
                                     "notebook's NumPy stream replayed bit for bit") == "numpy_legacy";
  if (f.numpy_legacy && f.rf_kind != RfKind::Rf)
    params.fail("rng", "numpy_legacy draws i.i.d. frequencies: it needs rf=rf");
  f.shared_omega = params.get_bool("shared_omega", false,
                                   "one frequency matrix per replicate shared by every kernel, scaled by its 1/σ (the "
                                   "bandit paper's Raker script, spec/bandit.md §7.3), instead of one per kernel");
  if (f.shared_omega) {
    if (f.numpy_legacy)
      params.fail("shared_omega", "takes counter streams; rng=numpy_legacy draws each kernel's matrix as the notebook does");
    // One matrix scaled by 1/σ_i is the same law for each kernel only if their spectral laws
    // differ by the scale alone, i.e. the kernels are of one family.
    for (const KernelSpec& k : f.dictionary)
      if (k.family != f.dictionary.front().family)
        params.fail("shared_omega", "needs kernels of one family (their frequencies differ only by 1/σ), but the "
                                    "dictionary has " + f.dictionary.front().name() + " and " + k.name());
  }
  return f;
}

RfEnsembleConfig read_rf_ensemble_config(ParamReader& params, const AlgoContext& context,
                                         const std::string& default_dictionary,
                                         double default_lambda) {
  const bool reference = context.profile == Profile::Reference;
  const bool classification = context.task == Task::Classification;
  RfEnsembleConfig c;
  static_cast<RfFeatures&>(c) =
      read_rf_features(params, default_dictionary, reference ? "orf_matlab" : "orf",
                       reference ? "one" : "inv_sqrt_D", "frequency construction", "factor on [sin; cos]");
  c.loss = parse_loss(params.get_choice("loss", classification ? "logistic" : "squared",
                                        {"squared", "logistic", "hinge", "squared_hinge", "absolute"},
                                        "data loss"));
  check_loss_labels(params, c.loss, classification);
  c.lambda = params.get_double("lambda", default_lambda, "ridge weight λ", ParamRange::at_least(0));
  // Appendix D: the reference code divides the regression step and shrink by 10 (and writes the
  // shrink as 1 − ηλ/10 instead of 1 − 2ηλ); its classification step has no such factor.
  const double default_step_scale = reference && !classification ? 0.1 : 1.0;
  const double default_shrink_scale = reference ? (classification ? 1.0 : 0.1) : 2.0;
  c.step_scale = params.get_double("step_scale", default_step_scale, "multiplier of the θ step",
                                   ParamRange::above(0));
  c.shrink_scale = params.get_double("shrink_scale", default_shrink_scale,
                                     "multiplier of ηλ in the shrink 1 − s·ηλ (0: no shrink)", ParamRange::at_least(0));
  const std::string rule =
      params.get_choice("weight_rule", reference ? (classification ? "mistake" : "minmax") : "exp_eta",
                        {"exp_eta", "pow_beta", "minmax", "mistake"}, "kernel-weight rule");
  c.weights.rule = parse_weight_rule(rule);
  c.weights.weight_loss = parse_weight_loss(params.get_choice(
      "weight_loss", "regularized_pre", {"regularized_pre", "data_only"},
      "loss in the exp_eta / pow_beta weight update"));
  c.weights.eta_w = params.get_double("eta_w", 0.5, "kernel-weight step η_w (0: the weights stay uniform)",
                                      ParamRange::at_least(0));
  c.eta_w_inv_sqrt_t = params.get_choice("eta_w_schedule", "const", {"const", "inv_sqrt_t"},
                                         "kernel-weight step: eta_w, or eta_w/√t") == "inv_sqrt_t";
  c.weight_theta_post = params.get_choice("weight_theta", "pre", {"pre", "post"},
                                          "θ in the ridge term of the weight loss: before or after "
                                          "its update") == "post";
  // The ridge term it chooses is only in the regularised weight loss: elsewhere it would change
  // nothing (a preset's soft default, such as jmlr23-graph's, is left alone).
  if (c.weight_theta_post && c.weights.weight_loss == WeightLoss::DataOnly && params.given("weight_theta"))
    params.fail("weight_theta", "'post' chooses the θ of the ridge term, which weight_loss=data_only leaves out");
  c.weights.beta = params.get_double("beta", 0.5, "base of pow_beta / minmax / mistake rules",
                                     ParamRange::open_closed(0, 1));
  c.weights.loss_scale = params.get_double("loss_scale", 1.0, "divides ℓ before the weight update",
                                           ParamRange::above(0));
  c.single_precision = params.get_choice("precision", "double", {"double", "float"},
                                         "float: on CUDA the θ trajectories in float; on the CPU the feature map in float "
                                         "(8-lane sincos) where |angles| ≤ 256, θ in double") == "float";
  c.weights.loss = c.loss;
  c.weights.lambda = c.lambda;
  return c;
}

StepConfig read_step_config(ParamReader& params, const AlgoContext& context) {
  StepConfig s;
  const std::string schedule = params.get_choice("eta_schedule", "const", {"const", "inv_sqrt_t"},
                                                 "θ step: eta, or eta/√t");
  s.inv_sqrt_t = schedule == "inv_sqrt_t";
  const double fallback = s.inv_sqrt_t ? 1.0
                          : context.horizon > 0 ? 1.0 / std::sqrt(static_cast<double>(context.horizon))
                                                : -1.0;
  s.eta = params.get_double("eta", fallback, "θ step size (default 1/√T, T the stream length, or 1 with inv_sqrt_t)",
                            ParamRange::above(0));
  if (s.eta == -1.0 && !params.has("eta"))
    params.fail("eta", "has no default when the stream length is unknown; give eta=...");
  return s;
}

void for_each_frequency_matrix(const RfFeatures& features, const AlgoContext& context, const FrequencySink& sink) {
  const Dictionary& dictionary = features.dictionary;
  const std::size_t R = context.n_replicates(), P = dictionary.size();
  if (features.numpy_legacy) {
    NotebookShape shape{dictionary, features.n_rff, context.n_features, context.horizon};
    const auto starts = notebook_starts(numpy_seed(context), context.replicates, NotebookRun::FeaturesOnly, 0, shape);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < P; ++k) sink(r, k, starts[r].frequencies[k].data());
    return;
  }
  // Draws are independent per (replicate, kernel): a chunk of replicates is drawn in parallel,
  // then handed over in order, so that 1000 replicates never hold all their matrices twice.
  const std::size_t chunk = std::max<std::size_t>(1, std::min<std::size_t>(R, 4096 / std::max<std::size_t>(P, 1)));
  std::vector<std::vector<double>> drawn(chunk * P);
  for (std::size_t first = 0; first < R; first += chunk) {
    const std::size_t n = std::min(chunk, R - first) * P;
    parallel_for(n, R > 1 ? 0 : 1, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) {
        const std::size_t r = first + i / P, k = i % P;
        RandomStream rng(context.seed, context.replicates[r], RngPurpose::Frequencies, features.frequency_stream(k));
        drawn[i] = draw_frequencies(dictionary[k], features.n_rff, context.n_features, features.rf_kind, rng);
      }
    });
    for (std::size_t i = 0; i < n; ++i) sink(first + i / P, i % P, drawn[i].data());
  }
}

std::vector<MatrixRecipe> frequency_recipes(const RfFeatures& features, const AlgoContext& context) {
  const Dictionary& dictionary = features.dictionary;
  std::vector<MatrixRecipe> recipes;
  recipes.reserve(context.n_replicates() * dictionary.size());
  for (std::size_t r = 0; r < context.n_replicates(); ++r)
    for (std::size_t k = 0; k < dictionary.size(); ++k)
      recipes.push_back(matrix_recipe(dictionary[k], context.n_features, features.rf_kind,
                                      RandomStream(context.seed, context.replicates[r], RngPurpose::Frequencies,
                                                   features.frequency_stream(k))));
  return recipes;
}

std::uint32_t numpy_seed(const AlgoContext& context) {
  if (context.seed > 0xffffffffu)
    throw ConfigError("rng=numpy_legacy takes a seed in 0..4294967295 (np.random.seed), not " +
                      std::to_string(context.seed));
  return static_cast<std::uint32_t>(context.seed);
}

namespace {
// The backend with its frequency matrices: drawn by the backend from `recipes` where it can
// (`recipes` is an empty function where there is none: rng = numpy_legacy, or matrices the
// caller already holds), otherwise handed over by `source`.
std::unique_ptr<RfBackend> build_backend(const RfEnsembleConfig& config, const AlgoContext& context,
                                         std::vector<std::uint32_t> slot_kernel, const FrequencySource& source,
                                         const RfBackend::RecipeSource& recipes) {
  RfProblem problem;
  problem.n_replicates = context.n_replicates();
  problem.n_kernels = config.dictionary.size();
  problem.n_rff = config.n_rff;
  problem.n_features = context.n_features;
  problem.slot_kernel = std::move(slot_kernel);
  problem.feature_scale = config.feature_scale;
  problem.loss = config.loss;
  problem.single_precision = config.single_precision;
  problem.need_norm2 = (config.weights.rule == WeightRule::ExpEta ||
                        config.weights.rule == WeightRule::PowBeta) &&
                       config.weights.weight_loss == WeightLoss::RegularizedPre;
  // OMKL_TIMING=1 reports where construction time goes (on the GPU: device set-up against
  // host frequency draws against the upload), one line on stderr per backend.
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto backend = make_rf_backend(context.backend, problem, context.device_contexts.get());
  const auto t1 = Clock::now();
  const bool drawn_by_backend = recipes && backend->draw_frequencies(recipes);
  if (!drawn_by_backend)
    source([&](std::size_t r, std::size_t k, const double* V) { backend->set_frequencies(r, k, V); });
  const auto t2 = Clock::now();
  backend->prepare();
  const auto t3 = Clock::now();
  if (timing_enabled())
    std::fprintf(stderr, "omkl timing: %s backend set-up %.2f ms, frequency matrices (%zu replicates x %zu kernels, drawn %s) %.2f ms, prepare %.2f ms\n",
                 to_string(context.backend).c_str(), elapsed_ms(t0, t1), problem.n_replicates,
                 problem.n_kernels, drawn_by_backend ? "by the backend" : "on the host", elapsed_ms(t1, t2),
                 elapsed_ms(t2, t3));
  return backend;
}
}  // namespace

std::unique_ptr<RfBackend> make_rf_ensemble_backend(const RfEnsembleConfig& config,
                                                    const AlgoContext& context,
                                                    std::vector<std::uint32_t> slot_kernel) {
  const auto source = [&](const FrequencySink& sink) {
    for_each_frequency_matrix(config, context, sink);
  };
  if (config.numpy_legacy) return build_backend(config, context, std::move(slot_kernel), source, {});
  const auto recipes = [&] { return frequency_recipes(config, context); };
  return build_backend(config, context, std::move(slot_kernel), source, recipes);
}

std::unique_ptr<RfBackend> make_rf_ensemble_backend(const RfEnsembleConfig& config,
                                                    const AlgoContext& context,
                                                    std::vector<std::uint32_t> slot_kernel,
                                                    const FrequencySource& source) {
  return build_backend(config, context, std::move(slot_kernel), source, {});
}

void post_update_norms(const RfEnsembleConfig& config, const SlotSchedule* schedules,
                       std::int64_t t, double y, const double* f, const double* norm2_before,
                       std::size_t n_slots, double* norm2_after) {
  const double z2 = config.feature_scale * config.feature_scale * static_cast<double>(config.n_rff);
  for (std::size_t s = 0; s < n_slots; ++s) {
    const SlotSchedule& sc = schedules[s];
    const double eta = scheduled_rate(sc.eta, sc.inv_sqrt_t, t);
    const double c = 1.0 - sc.shrink_scale * eta * sc.lambda;
    const double g = sc.step_scale * eta * loss_derivative(config.loss, f[s], y);
    norm2_after[s] = c * c * norm2_before[s] - 2.0 * c * g * f[s] + g * g * z2;
  }
}

void update_kernel_weights(const RfEnsembleConfig& config, const std::vector<SlotSchedule>& schedules,
                           std::size_t first_slot, std::int64_t t, double y, const double* f,
                           const double* norm2, KernelWeights& weights, std::vector<double>& scratch) {
  const double rate_scale = config.eta_w_inv_sqrt_t ? 1.0 / std::sqrt(static_cast<double>(t)) : 1.0;
  if (config.weight_theta_post && norm2) {
    scratch.resize(weights.size());
    post_update_norms(config, schedules.data() + first_slot, t, y, f, norm2, weights.size(), scratch.data());
    norm2 = scratch.data();
  }
  weights.update(f, norm2, y, rate_scale);
}

bool fused_weights_for(const RfEnsembleConfig& config, std::size_t group_size, FusedWeights& out) {
  const WeightConfig& weights = config.weights;
  // The device keeps a constant-rate, pre-update prefix sum; the other variants run on the host.
  if (config.eta_w_inv_sqrt_t || config.weight_theta_post) return false;
  if (weights.rule != WeightRule::ExpEta && weights.rule != WeightRule::PowBeta) return false;
  out.group_size = group_size;
  out.initial = -std::log(static_cast<double>(group_size));  // as KernelWeights::reset
  out.rate = weights.rule == WeightRule::ExpEta ? weights.eta_w : -std::log(weights.beta);
  out.lambda = weights.weight_loss == WeightLoss::RegularizedPre ? weights.lambda : 0.0;
  out.loss_scale = weights.loss_scale;
  return true;
}

void save_backend_state(const RfBackend& backend, StateWriter& out) {
  const RfProblem& p = backend.problem();
  out.put_tag("rf-backend");
  out.put_u64(p.n_replicates);
  out.put_u64(p.n_kernels);
  out.put_u64(p.n_slots());
  out.put_u64(p.n_rff);
  out.put_u64(p.n_features);
  std::vector<double> buffer(std::max(p.n_rff * p.n_features, p.theta_size()));
  for (std::size_t r = 0; r < p.n_replicates; ++r) {
    for (std::size_t k = 0; k < p.n_kernels; ++k) {
      backend.get_frequencies(r, k, buffer.data());
      out.put_finite_f64s(buffer.data(), p.n_rff * p.n_features);
    }
    for (std::size_t s = 0; s < p.n_slots(); ++s) {
      backend.get_theta(r, s, buffer.data());
      out.put_finite_f64s(buffer.data(), p.theta_size());
    }
  }
}

void load_backend_state(RfBackend& backend, StateReader& in) {
  const RfProblem& p = backend.problem();
  in.expect_tag("rf-backend");
  const std::uint64_t shape[5] = {in.get_u64(), in.get_u64(), in.get_u64(), in.get_u64(), in.get_u64()};
  const std::uint64_t expected[5] = {p.n_replicates, p.n_kernels, p.n_slots(), p.n_rff, p.n_features};
  for (int i = 0; i < 5; ++i)
    if (shape[i] != expected[i])
      throw InputError("checkpoint: model shape differs (replicates, kernels, slots, D, features) = (" +
                       std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + ", " +
                       std::to_string(shape[2]) + ", " + std::to_string(shape[3]) + ", " +
                       std::to_string(shape[4]) + "), expected n_features = " +
                       std::to_string(p.n_features));
  std::vector<double> buffer(std::max(p.n_rff * p.n_features, p.theta_size()));
  for (std::size_t r = 0; r < p.n_replicates; ++r) {
    for (std::size_t k = 0; k < p.n_kernels; ++k) {
      in.get_finite_f64s(buffer.data(), p.n_rff * p.n_features);
      backend.set_frequencies(r, k, buffer.data());
    }
    for (std::size_t s = 0; s < p.n_slots(); ++s) {
      in.get_finite_f64s(buffer.data(), p.theta_size());
      backend.set_theta(r, s, buffer.data());
    }
  }
}

}  // namespace omkl::detail
