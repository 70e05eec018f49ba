/// @file exact_kernel.cpp
/// @brief The exact-kernel family's parameters and registration: kogd, rbf, poly, linear,
/// avgmkl, omkl, omkl-b, m-forgetron (spec/raker.md §5) and the graph journal's omkr, rbf-1,
/// poly-2, rfomkr (spec/graph-aided.md §4.1–4.3).
#include "families/exact_kernel/exact_kernel.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

#include "core/decimal.h"
#include "features/rf_ensemble.h"
#include "omkl/error.h"

namespace omkl::detail {

// ---------------------------------------------------------------------------------------------
// Parameters and registration

namespace {

bool is_regression(const AlgoContext& context) { return context.task == Task::Regression; }
bool is_reference(const AlgoContext& context) { return context.profile == Profile::Reference; }

// Reserve the whole stream up front when its length is known (bounded, so a wrong horizon
// cannot allocate absurd amounts; the buffer still grows by doubling past it).
std::size_t capacity_hint(const AlgoContext& context) {
  constexpr std::size_t kMaxHint = std::size_t{1} << 20;
  return context.horizon > 0 ? std::min(context.horizon, kMaxHint) : 1024;
}

KogdRule read_rule(ParamReader& params, const AlgoContext& context, bool read_step = true) {
  const bool regression = is_regression(context);
  const bool reference = is_reference(context);
  KogdRule rule;

  // Same names and defaults as the random-feature family (rf_ensemble.cpp), so one parameter
  // string means the same thing for every method of a study. Wrappers that set the step
  // themselves (AdaMKL: η_I per interval) do not read it, so eta=... is an error there.
  if (read_step) {
    rule.schedule = params.get_choice("eta_schedule", "const", {"const", "inv_sqrt_t"},
                                      "coefficient step: eta, or eta/√t with t 1-based") == "inv_sqrt_t"
                        ? StepSchedule::InvSqrtT
                        : StepSchedule::Constant;
    const bool eta_given = params.has("eta");
    const double default_eta = rule.schedule == StepSchedule::InvSqrtT ? 1.0
                               : context.horizon > 0
                                   ? 1.0 / std::sqrt(static_cast<double>(context.horizon))
                                   : 0.0;
    rule.eta = params.get_double("eta", default_eta,
                                 "coefficient step size η (default 1/√T, T the stream length, or 1 with inv_sqrt_t)",
                                 ParamRange::above(0));
    if (!eta_given && rule.schedule == StepSchedule::Constant && context.horizon == 0)
      params.fail("eta", "has no default when the stream length is unknown; give eta=...");
  }

  rule.lambda = params.get_double("lambda", regression ? 0.01 : 0.005,
                                  "ridge weight λ (each step shrinks f by 1 − shrink_scale·η_t·λ)",
                                  ParamRange::at_least(0));

  rule.loss = parse_loss(params.get_choice(
      "loss", regression ? "squared" : "logistic",
      {"squared", "logistic", "hinge", "squared_hinge", "absolute"}, "data loss C(f, y)"));
  check_loss_labels(params, rule.loss, !regression);

  // Profile R (spec Appendix A): regression divides both the step and the ridge by 10;
  // classification uses them as they are. Profile P: shrink 1 − 2ηλ, step −η ∂C/∂f.
  rule.step_scale = params.get_double(
      "step_scale", reference && regression ? 0.1 : 1.0,
      "multiplier of the new coefficient −η_t·∂C/∂f (paper 1; reference: 1/10 regression, 1 classification)",
      ParamRange::above(0));
  rule.shrink_scale = params.get_double(
      "shrink_scale", reference ? (regression ? 0.1 : 1.0) : 2.0,
      "multiplier of η_t·λ in the shrink 1 − s·η_t·λ (paper 2; reference: 1/10 regression, 1 classification)",
      ParamRange::at_least(0));
  return rule;
}

Dictionary read_dictionary(ParamReader& params) {
  return read_dictionary_param(
      params, "jmlr19-exact", "kernel dictionary: a preset or '+'-separated kernels (gauss:SIGMA, linear, poly:Q, ...)");
}

/// η_w, β and the loss scale of the multiplicative weight rules; read whatever the rule, as the
/// random-feature family does, so that the same parameter string is accepted by both.
void read_weight_steps(ParamReader& params, WeightConfig& w) {
  w.eta_w = params.get_double("eta_w", 0.5, "kernel-weight step η_w in exp(−η_w·loss) (exp_eta)",
                              ParamRange::at_least(0));
  w.beta = params.get_double("beta", 0.5, "base β of pow_beta / minmax / mistake rules",
                             ParamRange::open_closed(0, 1));
  w.loss_scale = params.get_double("loss_scale", 1.0, "divides the loss before exp_eta / pow_beta",
                                   ParamRange::above(0));
}

/// Kernel-weight rule of OMKL / OMKL-B (spec §5.4, §3.3): paper exp_eta with the regularised
/// loss; reference min-max (regression) or mistake (classification).
WeightConfig read_weights(ParamReader& params, const AlgoContext& context, const KogdRule& rule) {
  const bool regression = is_regression(context);
  const std::string fallback = !is_reference(context) ? "exp_eta" : (regression ? "minmax" : "mistake");
  WeightConfig w;
  w.rule = parse_weight_rule(params.get_choice("weight_rule", fallback,
                                               {"exp_eta", "pow_beta", "minmax", "mistake"},
                                               "kernel-weight rule"));
  if (w.rule == WeightRule::Mistake && regression)
    params.fail("weight_rule", "'mistake' needs labels ±1 (a classification stream)");
  w.weight_loss = parse_weight_loss(params.get_choice(
      "weight_loss", "regularized_pre", {"regularized_pre", "data_only"},
      "loss of the exp_eta / pow_beta update: C(f_p, y) + λ‖f_p‖²_H before the step, or C only"));
  read_weight_steps(params, w);
  w.loss = rule.loss;
  w.lambda = rule.lambda;
  return w;
}

// spec/raker.md §7.3 and Appendix D's first_error_override: the JMLR 2019 reference code scores
// the prediction at t = 1 as an error of 1, and its profile does so by default
// (`reference_default`: false for the graph-aided baselines, whose reference code does not).
bool read_first_error_is_one(ParamReader& params, const AlgoContext& context, bool reference_default = true) {
  return params.get_bool("first_error_is_one", reference_default && context.profile == Profile::Reference,
                         "count the error at t = 1 as 1 (spec/raker.md §7.3)");
}

bool needs_norms(const WeightConfig& w) {
  return (w.rule == WeightRule::ExpEta || w.rule == WeightRule::PowBeta) &&
         w.weight_loss == WeightLoss::RegularizedPre;
}

std::unique_ptr<Algorithm> make_single(const std::string& name, KernelSpec kernel,
                                       ParamReader& params, const AlgoContext& context) {
  KogdEnsembleConfig config;
  config.name = name;
  config.rule = read_rule(params, context);
  config.kernels = {kernel};
  config.combination = Combination::Single;
  config.first_error_is_one = read_first_error_is_one(params, context);
  config.capacity_hint = capacity_hint(context);
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_kogd(ParamReader& params, const AlgoContext& context) {
  const std::string text = params.get_string(
      "kernel", "gauss:1",
      "kernel: gauss:SIGMA, gauss2:SIGMA2, lap:SIGMA, lap_l2:SIGMA, cauchy:SIGMA, linear, poly:Q[:OFFSET]");
  KernelSpec kernel;
  try {
    kernel = parse_kernel(text);
  } catch (const ConfigError& e) {
    params.fail("kernel", std::string("is invalid: ") + e.what());
  }
  return make_single(params.algorithm(), kernel, params, context);
}

std::unique_ptr<Algorithm> make_rbf(ParamReader& params, const AlgoContext& context) {
  const double sigma = params.get_double("sigma", 1.0, "Gaussian bandwidth σ in exp(−‖δ‖²/(2σ²))",
                                         ParamRange::closed(kSmallestBandwidth, kLargestBandwidth));
  return make_single(params.algorithm(), KernelSpec::gaussian(sigma), params, context);
}

std::unique_ptr<Algorithm> make_poly(ParamReader& params, const AlgoContext& context) {
  const std::int64_t degree =
      params.get_int("degree", 2, "degree q of (xᵀx' + offset)^q", ParamRange::closed(1, kMaxPolynomialDegree));
  // A negative offset makes (xᵀx' + offset)^q no kernel (not positive semi-definite); the
  // kernel's value offset^q at x ⟂ x' stays a finite number only up to a point.
  const double offset = params.get_double("offset", 0.0, "offset of the polynomial kernel (0 = homogeneous)",
                                          ParamRange::at_least(0));
  if (std::pow(offset, static_cast<double>(degree)) > kLargestParameter)
    params.fail("offset", "to the power degree = " + std::to_string(degree) + " must stay within " +
                              shortest_decimal(kLargestParameter) + " (the kernel's value), got " +
                              shortest_decimal(offset));
  return make_single(params.algorithm(), KernelSpec::polynomial(static_cast<int>(degree), offset),
                     params, context);
}

std::unique_ptr<Algorithm> make_linear(ParamReader& params, const AlgoContext& context) {
  return make_single(params.algorithm(), KernelSpec::linear(), params, context);
}

std::unique_ptr<Algorithm> make_avgmkl(ParamReader& params, const AlgoContext& context) {
  const std::string mode = params.get_choice(
      "avgmkl_mode", "uniform_learners", {"uniform_learners", "averaged_kernel"},
      "P learners combined with weights 1/P (matches Table 4), or one learner on the mean kernel");
  KogdEnsembleConfig config;
  config.name = params.algorithm();
  config.kernels = read_dictionary(params);
  config.rule = read_rule(params, context);
  config.averaged_kernel = mode == "averaged_kernel";
  config.combination = config.averaged_kernel ? Combination::Single : Combination::Uniform;
  config.first_error_is_one = read_first_error_is_one(params, context);
  config.capacity_hint = capacity_hint(context);
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_omkl_with_budget(ParamReader& params, const AlgoContext& context,
                                                 std::size_t budget) {
  return std::make_unique<KogdEnsemble>(read_omkl_config(params, context, budget, true),
                                        context.n_features, context.n_replicates());
}

std::unique_ptr<Algorithm> make_omkl(ParamReader& params, const AlgoContext& context) {
  return make_omkl_with_budget(params, context, 0);
}

std::size_t read_budget(ParamReader& params, const std::string& meaning) {
  const std::int64_t budget = params.get_int("B", 50, meaning, ParamRange::closed(1, kMaxSupportBudget));
  return static_cast<std::size_t>(budget);
}

std::unique_ptr<Algorithm> make_omkl_b(ParamReader& params, const AlgoContext& context) {
  const std::size_t budget = read_budget(params, "budget: each learner keeps the B most recent samples");
  return make_omkl_with_budget(params, context, budget);
}

std::unique_ptr<Algorithm> make_m_forgetron(ParamReader& params, const AlgoContext& context) {
  if (is_regression(context))
    throw ConfigError("algorithm '" + params.algorithm() +
                      "' is for classification only (labels ±1); the stream is a regression task");
  ForgetronConfig config;
  config.name = params.algorithm();
  config.budget = read_budget(params, "budget of every Forgetron learner");
  config.kernels = read_dictionary(params);
  config.first_error_is_one = read_first_error_is_one(params, context);

  // Paper: (21) with the mistake indicator and η_w = 0.5 (spec §5.6); reference: the
  // mistake rule of [M]'s classification weights.
  WeightConfig& w = config.weights;
  w.rule = parse_weight_rule(params.get_choice(
      "weight_rule", is_reference(context) ? "mistake" : "exp_eta", {"exp_eta", "pow_beta", "mistake"},
      "kernel-weight rule"));
  const std::string loss = params.get_choice(
      "weight_loss", "mistake", {"mistake", "hinge"},
      "loss of the weight update: mistake indicator 1{y f_p <= 0}, or hinge max(0, 1 − y f_p)");
  config.weight_loss = loss == "hinge" ? ForgetronWeightLoss::Hinge : ForgetronWeightLoss::Mistake;
  if (w.rule == WeightRule::Mistake && config.weight_loss == ForgetronWeightLoss::Hinge)
    params.fail("weight_loss", "'hinge' needs weight_rule=exp_eta or pow_beta");
  read_weight_steps(params, w);
  w.loss = LossKind::Hinge;  // the indicator is passed as a hinge loss (see MForgetron::step)
  w.weight_loss = WeightLoss::DataOnly;
  w.lambda = 0.0;            // the Forgetron has no ridge (spec §5.6)
  return std::make_unique<MForgetron>(std::move(config), context.n_features,
                                      context.n_replicates());
}

// ---- Baselines of the graph-aided journal tables (spec/graph-aided.md §4.1–4.2) -------------
//
// The reference code's "online kernel regression": every sample becomes a support vector with
// α_t = −η_t (f_t − y_t) (functional gradient of ½(f − y)², no ridge, no shrink), η_t = 0.1/√t.
// KogdRule writes α = −step_scale·η_t·∂C/∂f with ∂C/∂f = 2(f − y), hence step_scale = ½ (a power
// of two, so α is the same double as η_t (f − y)). The Gaussians of these baselines are
// exp(−‖δ‖²/γ), without the factor 2 of the random-feature dictionary (§4.1).

void require_regression(const ParamReader& params, const AlgoContext& context) {
  if (!is_regression(context))
    throw ConfigError("algorithm '" + params.algorithm() +
                      "' is an online kernel regression baseline (squared loss); the stream is a "
                      "classification task");
}

KogdRule read_okr_rule(ParamReader& params) {
  KogdRule rule;
  rule.loss = LossKind::Squared;
  rule.schedule = params.get_choice("eta_schedule", "inv_sqrt_t", {"inv_sqrt_t", "const"},
                                    "coefficient step: eta/√t (§1.6, t 1-based), or eta constant") ==
                          "inv_sqrt_t"
                      ? StepSchedule::InvSqrtT
                      : StepSchedule::Constant;
  rule.eta = params.get_double("eta", 0.1, "step size η in α_t = −η_t (f_t − y_t) (§4.1: 0.1/√t)",
                               ParamRange::above(0));
  rule.lambda = 0.0;  // §4.1: no ridge term
  rule.shrink_scale = 0.0;
  rule.step_scale = 0.5;
  return rule;
}

KogdEnsembleConfig okr_config(ParamReader& params, const AlgoContext& context) {
  KogdEnsembleConfig config;
  config.name = params.algorithm();
  config.first_error_is_one = read_first_error_is_one(params, context, false);
  config.capacity_hint = capacity_hint(context);
  return config;
}

// exp(−‖δ‖²/γ) is the library's Gaussian with σ² = γ/2.
KernelSpec gaussian_over_gamma(double gamma) { return KernelSpec::gaussian_sigma2(gamma / 2.0); }

std::unique_ptr<Algorithm> make_omkr(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  KogdEnsembleConfig config = okr_config(params, context);
  Dictionary dict = read_dictionary_param(
      params, "jmlr23-76", "kernel dictionary (a preset or '+'-separated kernels); see gauss_form");
  const std::string form = params.get_choice(
      "gauss_form", "over_gamma", {"over_gamma", "dictionary"},
      "Gaussian kernels: exp(−‖δ‖²/γ) with γ = the dictionary's σ² (§4.1 reference code), or the "
      "dictionary's own exp(−‖δ‖²/(2σ²))");
  if (form == "over_gamma") {
    for (auto& k : dict)
      if (k.family == KernelFamily::Gaussian) k = gaussian_over_gamma(k.sigma * k.sigma);
  }
  config.kernels = std::move(dict);
  config.rule = read_okr_rule(params);
  config.combination = Combination::Learned;
  // Hedge with discount β: w_k ← w_k·β^{(f_k − y)²}, ŷ = Σ w_k f_k / Σ w_k (weights start equal;
  // only their ratios matter, so the reference's 1/N start is the same).
  WeightConfig& w = config.weights;
  w.rule = WeightRule::PowBeta;
  w.weight_loss = WeightLoss::DataOnly;
  w.loss = LossKind::Squared;
  w.lambda = 0.0;
  w.beta = params.get_double("beta", 0.5, "Hedge discount β in w_k ← w_k·β^{(f_k − y)²} (§4.1: 0.5)",
                             ParamRange::open_closed(0, 1));
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_single_okr(KernelSpec kernel, ParamReader& params,
                                           const AlgoContext& context) {
  KogdEnsembleConfig config = okr_config(params, context);
  config.kernels = {kernel};
  config.rule = read_okr_rule(params);
  config.combination = Combination::Single;
  return std::make_unique<KogdEnsemble>(std::move(config), context.n_features,
                                        context.n_replicates());
}

std::unique_ptr<Algorithm> make_rbf_1(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  const double gamma = params.get_double("gamma", 1.0, "γ of the Gaussian exp(−‖δ‖²/γ) (§4.2: 1)",
                                         ParamRange::closed(kSmallestBandwidth, kLargestBandwidth));
  return make_single_okr(gaussian_over_gamma(gamma), params, context);
}

std::unique_ptr<Algorithm> make_poly_2(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  const std::int64_t degree = params.get_int("degree", 2, "degree q of (xᵀx')^q (§4.2: 2, homogeneous)",
                                             ParamRange::closed(1, kMaxPolynomialDegree));
  return make_single_okr(KernelSpec::polynomial(static_cast<int>(degree), 0.0), params, context);
}

std::unique_ptr<Algorithm> make_rfomkr(ParamReader& params, const AlgoContext& context) {
  require_regression(params, context);
  RfomkrConfig c;
  c.name = params.algorithm();
  static_cast<RfFeatures&>(c) = read_rf_features(params, "jmlr23-76", "rf", "inv_sqrt_D",
                                                 "frequency construction (§1.3: i.i.d. rows)",
                                                 "factor on [sin; cos] (§1.4: 1/√D)");
  c.inv_sqrt_t = params.get_choice("eta_schedule", "inv_sqrt_t", {"inv_sqrt_t", "const"},
                                   "θ step: eta/√t (§1.6), or eta constant") == "inv_sqrt_t";
  c.eta = params.get_double("eta", 0.1, "θ step size (§4.3: 0.1/√t)", ParamRange::above(0));
  c.beta = params.get_double("beta", 0.5, "Hedge discount β in w_k ← w_k·β^{(f_k − y)²} (§4.3: 0.5)",
                             ParamRange::open_closed(0, 1));
  c.normalize = params.get_bool("rfomkr_normalize", !is_reference(context),
                                "predict Σ w f / Σ w (paper) instead of the reference's Σ w f (§3 R20)");
  return std::make_unique<Rfomkr>(std::move(c), context);
}

}  // namespace

KogdEnsembleConfig read_omkl_config(ParamReader& params, const AlgoContext& context,
                                    std::size_t budget, bool read_step) {
  KogdEnsembleConfig config;
  config.name = params.algorithm();
  config.kernels = read_dictionary(params);
  config.rule = read_rule(params, context, read_step);
  config.weights = read_weights(params, context, config.rule);
  config.track_norms = needs_norms(config.weights);
  config.combination = Combination::Learned;
  config.budget = budget;
  config.first_error_is_one = read_first_error_is_one(params, context);
  config.capacity_hint = capacity_hint(context);
  return config;
}

void add_exact_kernel_algorithms(std::vector<AlgorithmInfo>& registry) {
  registry.push_back({"kogd", "exact-kernel online gradient descent with one kernel (kernel=gauss:SIGMA, poly:Q, linear, ...)", make_kogd});
  registry.push_back({"rbf", "exact-kernel online gradient descent, Gaussian kernel of bandwidth sigma", make_rbf});
  registry.push_back({"poly", "exact-kernel online gradient descent, polynomial kernel (xᵀx' + offset)^degree", make_poly});
  registry.push_back({"linear", "exact-kernel online gradient descent, linear kernel xᵀx'", make_linear});
  registry.push_back({"avgmkl", "AvgMKL: P exact-kernel learners combined with fixed uniform weights", make_avgmkl});
  registry.push_back({"omkl", "OMKL (Sahoo et al. 2014): P exact-kernel learners on the full history, multiplicative kernel weights", make_omkl});
  registry.push_back({"omkl-b", "OMKL-B: OMKL whose learners keep only the B most recent samples", make_omkl_b});
  registry.push_back({"m-forgetron", "M-Forgetron: P self-tuned Forgetrons with budget B and kernel weights (classification)", make_m_forgetron});
  registry.push_back({"omkr", "OMKR as in the graph-aided journal code (§4.1): budget-free exact-kernel expansion over all 76 kernels, α_t = −η_t(f − y), Hedge weights β^{(f−y)²}", make_omkr});
  registry.push_back({"rbf-1", "RBF-1 of the graph-aided journal tables (§4.2): online kernel regression with exp(−‖δ‖²/1), α_t = −η_t(f − y)", make_rbf_1});
  registry.push_back({"rfomkr", "RFOMKR of the graph-aided journal tables (§4.3): random-feature OMKR over all kernels, Hedge weights β^{(f−y)²}; reference prediction Σ w f unnormalised", make_rfomkr});
  registry.push_back({"poly-2", "POLY-2 of the graph-aided journal tables (§4.2): online kernel regression with (xᵀx')², α_t = −η_t(f − y)", make_poly_2});
}

}  // namespace omkl::detail
