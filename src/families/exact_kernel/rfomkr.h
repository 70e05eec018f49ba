/// @file rfomkr.h
/// @brief RFOMKR, the graph journal's random-feature OMKR baseline (spec/graph-aided.md §4.3),
/// kept beside OMKR, whose rules it shares.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "features/random_features.h"

namespace omkl::detail {

struct RfomkrConfig : RfFeatures {
  std::string name;
  double eta = 0.1;
  bool inv_sqrt_t = true;         ///< η_t = eta/√t
  double beta = 0.5;              ///< Hedge discount
  bool normalize = false;         ///< ŷ = Σ w f / Σ w (paper) instead of Σ w f (reference, §3 R20)
};

/// RFOMKR (spec/graph-aided.md §4.3): N random-feature learners, θ_k ← θ_k − η_t·2(f_k − y)z_k
/// (no ridge), w_k ← w_k·β^{(f_k − y)²} from w_k = 1/N, prediction Σ_k w_k f_k (reference: never
/// renormalised) or Σ w f / Σ w. Frequencies come from the same streams as the other
/// random-feature algorithms (RandomStream(seed, replicate, Frequencies, k)), so a study's
/// repetition r shares its Ψ_k with Raker and the graph-aided methods (§4). CPU, double.
class Rfomkr final : public Algorithm {
 public:
  Rfomkr(RfomkrConfig config, const AlgoContext& context);

  std::size_t n_replicates() const override { return replicates_.size(); }
  void step(const double* x, double y, double* predictions) override;
  void predict(const double* x, double* predictions) override;
  void save_state(StateWriter& out) const override;
  void load_state(StateReader& in) override;

  const RfomkrConfig& config() const { return config_; }
  /// w_k of replicate r (starts at 1/N).
  double weight(std::size_t r, std::size_t k) const;
  /// Frequency matrix of (r, k), n_rff × n_features row-major.
  const std::vector<double>& frequencies(std::size_t r, std::size_t k) const;
  std::uint64_t steps() const { return t_; }

 private:
  double evaluate(std::size_t r, const double* x);  // fills f_ and z_ for replicate r

  struct Replicate {
    std::vector<std::vector<double>> V;  // per kernel
    std::vector<double> theta;           // N × 2D
    std::vector<double> log_w;           // ln w_k
  };
  RfomkrConfig config_;
  std::size_t n_features_;
  std::vector<std::uint64_t> replicates_;
  std::vector<Replicate> reps_;
  std::uint64_t t_ = 0;
  std::vector<double> z_, f_;  // scratch: N × 2D features, N predictions
};

}  // namespace omkl::detail
