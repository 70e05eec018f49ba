/// @file interval_weights.h
/// @brief The adaptive ensemble over geometric covering intervals shared by AdaRaker and
/// AdaMKL (spec/raker.md §4): interval placement, per-level rates η_I, and the instance
/// weights h with their two rules. The instances themselves (Raker, OMKL) are the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/algorithm_base.h"
#include "core/intervals.h"
#include "core/loss.h"

namespace omkl::detail {

enum class HRule {
  Hedge,   ///< log-domain h, h = η_I at an interval start, g += η_I·(C(ŷ) − C(f̂_I)) (§4.4)
  Matlab,  ///< the released code's meta update (§4.9)
};

struct IntervalConfig {
  Placement placement = Placement::Daniely;
  HRule rule = HRule::Hedge;
  bool fresh = true;          ///< new instance per interval (paper) or one per level (reference)
  bool literal_sign = false;  ///< eq. (31) as printed (a test switch, §4.4)
  /// h_init_slot = after_first (hedge rule): eq. (31)'s literal index — a new instance has weight
  /// 0 at its first step s_I (its loss there ignored) and η_I from s_I + 1 (§4.4, Appendix table
  /// row 14); the default at_start gives it η_I at s_I.
  bool h_after_first = false;
  std::size_t n_levels = 1;
  std::vector<double> level_rate;  ///< η_I per level
  Task task = Task::Regression;
  LossKind loss = LossKind::Squared;  ///< data loss in r (hedge rule)
};

/// Reads placement, restart_state, h_rule, h_sign, eta0, eta_cap and levels with the profile
/// defaults of spec/raker.md Appendix D, and computes the level rates.
IntervalConfig read_interval_config(ParamReader& params, const AlgoContext& context, LossKind loss);

/// Instance weights of one replicate.
class IntervalWeights {
 public:
  IntervalWeights() = default;
  explicit IntervalWeights(const IntervalConfig* config);

  bool active(std::size_t level, std::int64_t t) const {
    return level_active(config_->placement, static_cast<int>(level), t);
  }
  bool starts(std::size_t level, std::int64_t t) const {
    return level_starts(config_->placement, static_cast<int>(level), t);
  }
  /// Sets the starting weight of every level whose interval starts at t.
  void begin_step(std::int64_t t);
  /// Ensemble prediction from the instance predictions (0 for inactive levels; 0 where every
  /// active instance has weight 0, which h_init_slot = after_first makes possible).
  double combine(std::int64_t t, const double* instance_f) const;
  /// Instance-weight update after y is revealed.
  void update(std::int64_t t, const double* instance_f, double prediction, double y);

  std::vector<double>& raw() { return g_; }
  const std::vector<double>& raw() const { return g_; }
  /// Writes the weights; linear ones no run leaves count in out.non_finite() (put_weights()).
  void save(StateWriter& out) const;
  /// Refuses values no run leaves (weights read from a checkpoint): InputError "checkpoint:
  /// WHAT ...". The reference rule's weights are ≥ 0 with a positive sum (Hedge log-weights
  /// may be anything below +∞). NaN and +∞ are left to Learner::load, which refuses them.
  void check_stored(const std::string& what) const;

 private:
  const IntervalConfig* config_ = nullptr;
  std::vector<double> g_;  // log h (hedge) or g (matlab), per level
};

}  // namespace omkl::detail
