/// @file resident_bandit.h
/// @brief The random-feature bandit algorithms (RF-OKS, RF-OKS++, RF-IOKS; spec/bandit.md §6) as
/// a device-resident program (core/resident_walk.h): per repetition and round, the kernel drawn
/// from the rule's p with the repetition's counter stream (plan), the drawn kernel's features
/// and prediction (the walk's one pair), then the rule's update of p and its step λ, and the
/// box-projected step of the drawn kernel's weights (learn sets the pair's rate and box). The
/// rules' arithmetic is rule_kernels.h, the code the host rules run; the features are the walk's:
/// z = D^{-1/2}[sin; cos] of (Ω/σ_i)x, with θ holding the host's w = [cos part; sin part] swapped.
///
/// BanditStateData is every repetition's state in one arena, loaded from and stored back to the
/// host path's objects around each walk, so checkpoints, predict() and the logs read it as the
/// host path keeps it. The kernelized algorithms (OKS, OKS++, IOKS on support sets) run the same
/// rule with their own evaluation and update (resident_support.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/host_device.h"
#include "core/loss.h"
#include "core/resident_walk.h"
#include "core/state_device_walk.h"
#include "families/bandit/rule_kernels.h"
#include "features/rf_backend.h"
#include "random/stream_position.h"

namespace omkl::detail {

/// What every repetition shares.
struct BanditTables {
  RuleConstants rule;
  LossKind loss = LossKind::Squared;
  double box = 0.0;  ///< U/√D under the box projection, 0 without projection
  int classification = 0;  ///< labels ±1: the logs count each kernel's mistakes too
};

/// The protocol's 0/1 mistake (§2.3): ŷ = +1 if F ≥ 0 (ties go to +1), else −1; as
/// bandit_metric_convention() scores the study.
OMKL_HD double bandit_mistake(double F, double y) { return (F >= 0.0 ? 1.0 : -1.0) != y ? 1.0 : 0.0; }

/// Every repetition's state, R-strided (K per repetition for the arrays).
struct BanditStates {
  StreamPosition* rng = nullptr;
  double* p = nullptr;
  double* q = nullptr;
  double* sums = nullptr;
  double* eta = nullptr;
  double* rho = nullptr;
  double* C = nullptr;        ///< one per repetition
  double* V = nullptr;        ///< one per repetition
  double* scratch = nullptr;  ///< 2K
  double* selected = nullptr;     ///< §8.6 logs: rounds each kernel was drawn
  double* kernel_loss = nullptr;  ///< and the loss it suffered
  double* kernel_mistakes = nullptr;  ///< and, classifying, the mistakes it made
  std::uint32_t* drawn = nullptr;  ///< this round's kernel
  std::uint8_t* failed = nullptr;  ///< IOKS's bisection did not converge
  // Kernel expansions only (resident_support.h), per (repetition, kernel) unless noted:
  std::uint32_t* count = nullptr;  ///< support-set entries
  double* scale = nullptr;         ///< the lazy scale s_i
  double* norm = nullptr;          ///< ‖f_i‖ as the recursion tracks it
  std::uint8_t* folded = nullptr;  ///< the scale was folded into the coefficients during the walk
  std::uint64_t* used = nullptr;   ///< per repetition: rows of its pool in use
  double* fold = nullptr;          ///< per repetition: this round's fold factor, where
  std::uint8_t* fold_now = nullptr;  ///< per repetition: this round folds
};

template <typename Philox>
struct BanditProgram {
  // A round evaluates and updates only the drawn kernel: one pair, which the GPU driver gives the
  // whole thread block (core/resident_walk.h, FewPairs).
  static constexpr bool kFewPairs = true;
  BanditTables tables;
  BanditStates states;

  OMKL_HD RuleState rule_state(std::size_t r) const {
    const std::size_t K = tables.rule.K;
    RuleState st;
    st.p = states.p + r * K;
    st.q = states.q + r * K;
    st.sums = states.sums + r * K;
    st.eta = states.eta + r * K;
    st.rho = states.rho + r * K;
    st.C = states.C + r;
    st.V = states.V + r;
    st.scratch = states.scratch + r * 2 * K;
    return st;
  }

  /// bandit.cpp's play_round() up to the evaluation: I ~ p.
  OMKL_HD std::size_t plan(std::size_t r, std::int64_t /*t*/, ResidentPair* pairs) {
    const std::size_t K = tables.rule.K;
    const std::uint32_t I =
        static_cast<std::uint32_t>(bandit_draw(states.p + r * K, K, states.rng[r].template uniform<Philox>()));
    states.drawn[r] = I;
    pairs[0].slot = I;
    pairs[0].kernel = I;
    pairs[0].rate = 0.0;  // set by learn() from the rule's λ
    pairs[0].shrink = 1.0;
    pairs[0].box = 0.0;
    return 1;
  }

  /// play_round() after the evaluation F = f_I(x): the loss, the rule's observe() and the logs.
  /// Returns the rule's λ; `derivative` is ℓ'(F, y) and `pI` the drawn kernel's p before the
  /// rule moved it.
  OMKL_HD double observe(std::size_t r, double F, double y, double& derivative, double& pI) {
    const std::size_t K = tables.rule.K, I = states.drawn[r];
    const double loss = loss_value(tables.loss, F, y);
    derivative = loss_derivative(tables.loss, F, y);
    pI = states.p[r * K + I];
    bool failed = false;
    const double lambda = rule_observe(tables.rule, rule_state(r), I, F, y, loss, derivative, failed);
    if (failed) states.failed[r] = 1;
    states.selected[r * K + I] += 1.0;
    states.kernel_loss[r * K + I] += loss;
    if (tables.classification) states.kernel_mistakes[r * K + I] += bandit_mistake(F, y);
    return lambda;
  }

  /// The rest of play_round() for random features: observe(), then f_I's step −λ·ℓ'/p_I.
  OMKL_HD double learn(std::size_t r, std::int64_t /*t*/, double y, const double* f, const double* /*norm2*/,
                       ResidentPair* pairs) {
    const double F = f[0];
    double derivative = 0.0, pI = 1.0;
    const double lambda = observe(r, F, y, derivative, pI);
    // θ ← θ − (λ/p_I)·ℓ'(F, y)·z, the host's w ← w + (−λ·ℓ'/p_I)·z.
    pairs[0].rate = lambda / pI;
    pairs[0].box = tables.box;
    return F;
  }
};

/// Every repetition's state in one arena of 64-bit words; view(base) points BanditStates into a
/// copy of it.
class BanditStateData {
 public:
  /// With `expansions`, also the support sets' counters (the kernelized algorithms).
  BanditStateData(std::size_t n_kernels, std::size_t n_replicates, bool expansions = false);
  BanditStates view(void* base) const;
  BanditStates view() { return view(bytes_.data()); }
  void* data() { return bytes_.data(); }
  std::size_t size_bytes() const { return bytes_.size() * sizeof(std::uint64_t); }

 private:
  std::size_t K_, R_;
  std::vector<std::uint64_t> bytes_;
  std::size_t rng_, p_, q_, sums_, eta_, rho_, C_, V_, scratch_, selected_, kernel_loss_, kernel_mistakes_, drawn_,
      failed_;
  std::size_t count_ = 0, scale_ = 0, norm_ = 0, folded_ = 0, used_ = 0, fold_ = 0, fold_now_ = 0;
  bool expansions_ = false;
};

/// The program on the GPU (core/state_device_walk.h, instantiated in resident_bandit.cu, or
/// src/cuda/no_cuda.cpp without CUDA): the
/// state uploaded and read back around each walk, θ and V a CUDA RfBackend's (device_lease()).
using BanditDeviceWalk = StateDeviceWalk<BanditProgram, BanditTables, BanditStateData>;
extern template class StateDeviceWalk<BanditProgram, BanditTables, BanditStateData>;

}  // namespace omkl::detail
