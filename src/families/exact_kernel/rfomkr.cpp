/// @file rfomkr.cpp
/// @brief Rfomkr (rfomkr.h).
#include "families/exact_kernel/rfomkr.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "features/rf_ensemble.h"
#include "core/rate_schedule.h"
#include "omkl/error.h"

namespace omkl::detail {

// ---------------------------------------------------------------------------------------------
// RFOMKR (spec/graph-aided.md §4.3)

namespace {
constexpr const char* kRfomkrTag = "omkl.exact_kernel.rfomkr/1";
}  // namespace

Rfomkr::Rfomkr(RfomkrConfig config, const AlgoContext& context)
    : config_(std::move(config)), n_features_(context.n_features), replicates_(context.replicates) {
  const std::size_t N = config_.dictionary.size();
  if (N == 0) throw ConfigError("algorithm '" + config_.name + "': no kernels");
  const std::size_t twoD = 2 * config_.n_rff;
  reps_.resize(replicates_.size());
  for (Replicate& rep : reps_) {
    rep.V.resize(N);
    rep.theta.assign(N * twoD, 0.0);
    rep.log_w.assign(N, -std::log(static_cast<double>(N)));
  }
  // Same draws as make_rf_ensemble_backend: common random numbers with Raker and the
  // graph-aided methods of the same (seed, replicate).
  const std::size_t size = config_.n_rff * n_features_;
  for_each_frequency_matrix(config_, context,
                            [&](std::size_t r, std::size_t k, const double* V) { reps_[r].V[k].assign(V, V + size); });
  z_.assign(N * twoD, 0.0);
  f_.assign(N, 0.0);
}

double Rfomkr::weight(std::size_t r, std::size_t k) const { return std::exp(reps_[r].log_w[k]); }

const std::vector<double>& Rfomkr::frequencies(std::size_t r, std::size_t k) const {
  return reps_[r].V[k];
}

double Rfomkr::evaluate(std::size_t r, const double* x) {
  const Replicate& rep = reps_[r];
  const std::size_t N = config_.dictionary.size(), twoD = 2 * config_.n_rff;
  double weighted = 0.0, total = 0.0;
  const double top = config_.normalize ? *std::max_element(rep.log_w.begin(), rep.log_w.end()) : 0.0;
  for (std::size_t k = 0; k < N; ++k) {
    double* z = z_.data() + k * twoD;
    feature_map(rep.V[k].data(), config_.n_rff, n_features_, x, config_.feature_scale, z);
    const double* theta = rep.theta.data() + k * twoD;
    double f = 0.0;
    for (std::size_t i = 0; i < twoD; ++i) f += theta[i] * z[i];
    f_[k] = f;
    // Reference (§3 R20): Σ_k w_k f_k with the raw weights (1/N times the Hedge factors), which
    // only shrink; paper: the normalised combination (max-shifted, so nothing underflows).
    const double w = std::exp(rep.log_w[k] - top);
    weighted += w * f;
    total += w;
  }
  return config_.normalize ? weighted / total : weighted;
}

void Rfomkr::predict(const double* x, double* predictions) {
  for (std::size_t r = 0; r < reps_.size(); ++r) predictions[r] = evaluate(r, x);
}

void Rfomkr::step(const double* x, double y, double* predictions) {
  ++t_;
  const double eta = scheduled_rate(config_.eta, config_.inv_sqrt_t, t_);
  const double log_beta = std::log(config_.beta);
  const std::size_t N = config_.dictionary.size(), twoD = 2 * config_.n_rff;
  for (std::size_t r = 0; r < reps_.size(); ++r) {
    predictions[r] = evaluate(r, x);
    Replicate& rep = reps_[r];
    for (std::size_t k = 0; k < N; ++k) {
      const double e = f_[k] - y;
      const double g = eta * 2.0 * e;  // θ ← θ − η_t·2(f − y)z, no ridge
      double* theta = rep.theta.data() + k * twoD;
      const double* z = z_.data() + k * twoD;
      for (std::size_t i = 0; i < twoD; ++i) theta[i] -= g * z[i];
      rep.log_w[k] += log_beta * e * e;  // w ← w·β^{(f − y)²}
    }
  }
}

void Rfomkr::save_state(StateWriter& out) const {
  out.put_tag(kRfomkrTag);
  out.put_string(config_.name);
  out.put_u64(t_);
  out.put_u64(reps_.size());
  for (const auto& rep : reps_) {
    out.put_f64s(rep.theta);
    out.put_f64s(rep.log_w);
  }
}

void Rfomkr::load_state(StateReader& in) {
  in.expect_tag(kRfomkrTag);
  const std::string name = in.get_string();
  if (name != config_.name)
    throw InputError("RFOMKR state was written by '" + name + "', cannot load into '" + config_.name + "'");
  t_ = in.get_u64();
  const std::uint64_t R = in.get_u64();
  if (R != reps_.size())
    throw InputError("RFOMKR state has " + std::to_string(R) + " replicates, expected " +
                     std::to_string(reps_.size()));
  for (auto& rep : reps_) {
    std::vector<double> theta = in.get_f64s(), log_w = in.get_f64s();
    if (theta.size() != rep.theta.size() || log_w.size() != rep.log_w.size())
      throw InputError("RFOMKR state: wrong dictionary size or D");
    rep.theta = std::move(theta);
    rep.log_w = std::move(log_w);
  }
}

}  // namespace omkl::detail
