#include "core/interval_weights.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {

IntervalConfig read_interval_config(ParamReader& params, const AlgoContext& context, LossKind loss) {
  const bool reference = context.profile == Profile::Reference;
  const bool classification = context.task == Task::Classification;
  IntervalConfig c;
  c.task = context.task;
  c.loss = loss;
  c.placement = params.get_choice("placement", reference ? "matlab_0based" : "daniely_1based",
                                  {"daniely_1based", "matlab_0based"},
                                  "interval placement") == "matlab_0based"
                    ? Placement::Matlab
                    : Placement::Daniely;
  c.fresh = params.get_choice("restart_state", reference ? "persistent" : "fresh",
                              {"fresh", "persistent"}, "instance state at a new interval") == "fresh";
  if (c.fresh && c.placement == Placement::Matlab)
    params.fail("restart_state", "fresh needs placement=daniely_1based");
  c.rule = params.get_choice("h_rule", reference ? "matlab" : "hedge", {"hedge", "matlab"},
                             "instance-weight rule") == "matlab"
               ? HRule::Matlab
               : HRule::Hedge;
  c.literal_sign = params.get_choice("h_sign", "corrected", {"corrected", "literal"},
                                     "sign in eq. (31); literal is a test switch") == "literal";
  c.h_after_first = params.get_choice("h_init_slot", "at_start", {"at_start", "after_first"},
                                      "a new instance's weight η_I from its first step (at_start), or from the "
                                      "next, weight 0 at its first as eq. (31) reads literally (after_first)") ==
                    "after_first";
  if (c.h_after_first && c.rule == HRule::Matlab)
    params.fail("h_init_slot", "after_first is eq. (31)'s index; it needs h_rule=hedge");
  // η_I = min(cap, eta0/√len); the reference code uses len = 2|I| (§4.9).
  const double eta0 = params.get_double("eta0", reference ? (classification ? 1.0 : 0.1) : 10.0,
                                        "interval rate numerator η_0", ParamRange::above(0));
  const double cap = params.get_double("eta_cap", reference ? (classification ? 0.5 : 0.05) : 0.5,
                                       "upper bound of interval rates", ParamRange::above(0));
  std::int64_t default_levels = 32;
  if (context.horizon > 0) default_levels = floor_log2(context.horizon) + 1;
  else if (c.rule == HRule::Matlab)
    params.fail("h_rule", "matlab needs the stream length (all levels share the normaliser)");
  const std::int64_t levels =
      params.get_int("levels", default_levels,
                     "number of interval levels (default ⌊log2 T⌋ + 1, T the stream length; 32 when it is unknown)",
                     ParamRange::closed(1, 62));
  c.n_levels = static_cast<std::size_t>(levels);
  for (std::size_t j = 0; j < c.n_levels; ++j) {
    const double length = std::ldexp(1.0, static_cast<int>(j) + (c.placement == Placement::Matlab));
    c.level_rate.push_back(std::min(cap, eta0 / std::sqrt(length)));
  }
  return c;
}

IntervalWeights::IntervalWeights(const IntervalConfig* config)
    : config_(config), g_(config->n_levels, config->rule == HRule::Matlab ? 1.0 : 0.0) {}

void IntervalWeights::begin_step(std::int64_t t) {
  for (std::size_t j = 0; j < config_->n_levels; ++j) {
    const double rate = config_->level_rate[j];
    if (config_->h_after_first) {
      // Weight 0 (log −∞) at s_I, where an update leaves it 0; η_I at s_I + 1, if the interval
      // reaches it (a level-0 interval is one step long and never gets a weight).
      if (starts(j, t)) g_[j] = -HUGE_VAL;
      else if (t > 1 && starts(j, t - 1) && active(j, t)) g_[j] = std::log(rate);
      continue;
    }
    if (!starts(j, t)) continue;
    g_[j] = config_->rule == HRule::Hedge ? std::log(rate) : rate;
  }
}

void IntervalWeights::save(StateWriter& out) const {
  // Hedge's log-weights may all be −∞ (every active instance at weight 0: combine() predicts 0);
  // linear weights need a positive finite sum, as check_stored() asks.
  if (config_->rule == HRule::Hedge) out.put_f64s(g_);
  else out.put_weights(g_, g_.size(), false);
}

void IntervalWeights::check_stored(const std::string& what) const {
  // NaN and +∞ are the learner's to refuse (Learner::load), once the whole state is read.
  if (std::any_of(g_.begin(), g_.end(), unsound)) return;
  if (config_->rule == HRule::Hedge) return;  // −∞ is a weight of 0, any number below +∞ a weight
  const std::string problem = weight_vector_problem(g_.data(), g_.size(), false);
  if (!problem.empty()) throw InputError("checkpoint: " + what + " " + problem);
}

double IntervalWeights::combine(std::int64_t t, const double* instance_f) const {
  const std::size_t L = config_->n_levels;
  double total = 0.0, weighted = 0.0;
  if (config_->rule == HRule::Hedge) {
    double top = -HUGE_VAL;
    for (std::size_t j = 0; j < L; ++j)
      if (active(j, t)) top = std::max(top, g_[j]);
    if (top == -HUGE_VAL) return 0.0;  // every active instance at weight 0 (h_init_slot = after_first)
    for (std::size_t j = 0; j < L; ++j) {
      if (!active(j, t)) continue;
      const double h = std::exp(g_[j] - top);
      total += h;
      weighted += h * instance_f[j];
    }
    return weighted / total;
  }
  // Reference code: inactive levels predict 0 but keep their weight in the denominator.
  for (std::size_t j = 0; j < L; ++j) {
    total += g_[j];
    weighted += g_[j] * instance_f[j];
  }
  const double score = weighted / total;
  if (config_->task == Task::Classification) return score > 0 ? 1.0 : (score < 0 ? -1.0 : 0.0);
  return score;
}

void IntervalWeights::update(std::int64_t t, const double* instance_f, double prediction, double y) {
  const std::size_t L = config_->n_levels;
  if (config_->rule == HRule::Hedge) {
    // g_I += η_I·(C(ŷ) − C(f̂_I)): an instance that beats the ensemble gains weight (the sign of
    // eq. (31) corrected; literal_sign flips it for tests).
    const double ensemble_loss = loss_value(config_->loss, prediction, y);
    const double sign = config_->literal_sign ? -1.0 : 1.0;
    for (std::size_t j = 0; j < L; ++j) {
      if (!active(j, t)) continue;
      g_[j] += sign * config_->level_rate[j] *
               (ensemble_loss - loss_value(config_->loss, instance_f[j], y));
    }
    return;
  }
  // The released code: min-max normalised instance errors (0/1 mistakes for classification),
  // base η of the newest active level, floor 1e−10, renormalisation (§4.9).
  const bool classification = config_->task == Task::Classification;
  double hi = -HUGE_VAL, lo = HUGE_VAL;
  std::size_t newest = 0;
  double error[64] = {};  // L ≤ 62 levels; no allocation on the per-step path
  for (std::size_t j = 0; j < L; ++j) {
    if (!active(j, t)) continue;
    newest = j;
    const double f = instance_f[j];
    error[j] = classification ? (y * f < 0 ? 1.0 : 0.0) : (f - y) * (f - y);
    hi = std::max(hi, error[j]);
    lo = std::min(lo, error[j]);
  }
  constexpr double kFloor = 1e-10, kRenormAbove = 1e12;
  const double base = config_->level_rate[newest];
  double top = 0.0;
  for (std::size_t j = 0; j < L; ++j) {
    if (!active(j, t)) continue;
    const double rho = (error[j] - 0.5 * (hi + lo) + kFloor) / (0.5 * (hi - lo) + kFloor);
    g_[j] = g_[j] * std::pow(base, rho) + kFloor;
    top = std::max(top, g_[j]);
  }
  for (int pass = top > kRenormAbove ? 0 : 1; pass < 2; ++pass) {
    double total = 0.0;
    for (std::size_t j = 0; j < L; ++j) total += g_[j];
    for (std::size_t j = 0; j < L; ++j) g_[j] /= total;
  }
}

}  // namespace omkl::detail
