#include "core/kernel_weights.h"

#include <algorithm>
#include <cmath>

#include "omkl/error.h"

namespace omkl::detail {

WeightRule parse_weight_rule(const std::string& text) {
  if (text == "exp_eta") return WeightRule::ExpEta;
  if (text == "pow_beta") return WeightRule::PowBeta;
  if (text == "minmax") return WeightRule::MinMax;
  if (text == "mistake") return WeightRule::Mistake;
  throw ConfigError("unknown weight rule '" + text + "' (expected exp_eta, pow_beta, minmax, mistake)");
}

WeightLoss parse_weight_loss(const std::string& text) {
  if (text == "regularized_pre") return WeightLoss::RegularizedPre;
  if (text == "data_only") return WeightLoss::DataOnly;
  throw ConfigError("unknown weight loss '" + text + "' (expected regularized_pre, data_only)");
}

namespace {
bool log_domain(WeightRule rule) { return rule == WeightRule::ExpEta || rule == WeightRule::PowBeta; }
}  // namespace

void KernelWeights::reset(std::size_t n_kernels, const WeightConfig* config) {
  config_ = config;
  const double uniform = log_domain(config->rule) ? -std::log(static_cast<double>(n_kernels))
                                                  : 1.0 / static_cast<double>(n_kernels);
  values_.assign(n_kernels, uniform);
}

void KernelWeights::save(StateWriter& out) const {
  out.put_weights(values_, values_.size(), log_domain(config_->rule));
}

void KernelWeights::check_stored(const std::string& what) const {
  // NaN and +∞ are the learner's to refuse (Learner::load: no state holding them loads), once the
  // whole state is read; these are the rules of the numbers that are left.
  if (std::any_of(values_.begin(), values_.end(), unsound)) return;
  const std::string problem = weight_vector_problem(values_.data(), values_.size(), log_domain(config_->rule));
  if (!problem.empty()) throw InputError("checkpoint: " + what + " " + problem);
}

void KernelWeights::normalized(double* out) const {
  const std::size_t n = values_.size();
  double total = 0.0;
  if (log_domain(config_->rule)) {
    const double top = *std::max_element(values_.begin(), values_.end());
    for (std::size_t p = 0; p < n; ++p) total += (out[p] = exp_or_zero(values_[p] - top));
  } else {
    for (std::size_t p = 0; p < n; ++p) total += (out[p] = values_[p]);
  }
  for (std::size_t p = 0; p < n; ++p) out[p] /= total;
}

double KernelWeights::combine(const double* f) const {
  const std::size_t n = values_.size();
  double total = 0.0, weighted = 0.0;
  if (log_domain(config_->rule)) {
    const double top = *std::max_element(values_.begin(), values_.end());
    for (std::size_t p = 0; p < n; ++p) {
      const double w = exp_or_zero(values_[p] - top);
      total += w;
      weighted += w * f[p];
    }
  } else {
    for (std::size_t p = 0; p < n; ++p) {
      total += values_[p];
      weighted += values_[p] * f[p];
    }
  }
  return weighted / total;
}

void KernelWeights::update(const double* f, const double* norm2, double y, double rate_scale) {
  const WeightConfig& c = *config_;
  const std::size_t n = values_.size();
  switch (c.rule) {
    case WeightRule::ExpEta:
    case WeightRule::PowBeta: {
      const double rate = rate_scale * (c.rule == WeightRule::ExpEta ? c.eta_w : -std::log(c.beta));
      for (std::size_t p = 0; p < n; ++p) {
        double loss = loss_value(c.loss, f[p], y);
        if (c.weight_loss == WeightLoss::RegularizedPre) loss += c.lambda * norm2[p];
        values_[p] -= c.loss_scale == 1.0 ? rate * loss : rate * loss / c.loss_scale;
      }
      break;
    }
    case WeightRule::MinMax: {
      double hi = -HUGE_VAL, lo = HUGE_VAL;
      for (std::size_t p = 0; p < n; ++p) {
        const double e = (y - f[p]) * (y - f[p]);
        hi = std::max(hi, e);
        lo = std::min(lo, e);
      }
      const double mid = 0.5 * (hi + lo), half = 0.5 * (hi - lo);
      double top = 0.0;
      for (std::size_t p = 0; p < n; ++p) {
        const double e = (y - f[p]) * (y - f[p]);
        const double rho = (e - mid + c.minmax_floor) / (half + c.minmax_floor);
        values_[p] = values_[p] * std::pow(c.beta, rho) + c.minmax_floor;
        top = std::max(top, values_[p]);
      }
      if (top > c.minmax_renorm_above) {
        double total = 0.0;
        for (double v : values_) total += v;
        for (double& v : values_) v /= total;
      }
      break;
    }
    case WeightRule::Mistake: {
      double total = 0.0;
      for (double v : values_) total += v;
      for (std::size_t p = 0; p < n; ++p) {
        const bool mistake = y * f[p] < 0.0;
        values_[p] = values_[p] / total * (mistake ? c.beta : 1.0) + c.mistake_floor;
      }
      break;
    }
  }
}

}  // namespace omkl::detail
