/// @file round_aggregation.h
/// @brief The server side of one federated round (RfBackend::aggregate_round(), spec/federated.md
/// §1.3 S8, §6.2 item 4) as host/device code: for each (replicate, slot) group of client updates,
/// θ ← θ − scale·Σ_c g_c with g_c = (a_c·feature_scale)·u(x_c) + b_c·θ_before, the sum over the
/// group's updates in the order given (each g_c as server_term() receives it: upload_form.h).
/// Every feature's sum is independent of the others', so a group splits over lanes with no
/// reduction between them and the arithmetic of one feature is the same whatever the lane count:
/// the GPU (one warp per group, kernels/round_kernels.cu) and the host driver below (RfBackend's
/// generic aggregate_round()) compute it alike. A fixed-order segmented reduction: no atomics, so
/// the θ of a round does not depend on scheduling.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/host_device.h"
#include "core/resident_walk.h"
#include "features/upload_form.h"

namespace omkl::detail {

/// One client's update as a group reads it (ClientUpdate without its replicate and slot).
struct RoundUpdate {
  std::uint32_t client = 0;
  double a = 0.0;
  double b = 0.0;
};

/// The updates [first, last) of the sorted list belong to (replicate, slot), whose kernel is
/// `kernel`.
struct RoundGroup {
  std::uint32_t replicate = 0, slot = 0, kernel = 0, first = 0, last = 0;
};

/// A lane's share of one slot's round: features j = lane, lane + n_lanes, … < D. V is the slot's
/// kernel's D × d matrix, x the round's samples (n_clients × d), theta the slot's 2D values;
/// `updates` has count() and operator()(i) → RoundUpdate, the updates in the order they add up;
/// `form` what the clients sent (server_term()).
template <typename Real, typename Updates>
OMKL_HD void aggregate_slot(const Real* V, const Real* x, std::size_t d, Real* theta, std::size_t D,
                            const Updates& updates, double feature_scale, double round_scale, UploadForm form,
                            unsigned lane, unsigned n_lanes) {
  const std::uint32_t n = updates.count();
  for (std::size_t j = lane; j < D; j += n_lanes) {
    const Real theta_s = theta[j], theta_c = theta[D + j];
    Real acc_s = Real(0), acc_c = Real(0);
    for (std::uint32_t i = 0; i < n; ++i) {
      const RoundUpdate c = updates(i);
      const Real* xc = x + static_cast<std::size_t>(c.client) * d;
      Real angle = Real(0);
      for (std::size_t k = 0; k < d; ++k) angle += V[j * d + k] * xc[k];
      Real s, co;
      resident_sincos(angle, s, co);
      const Real a = static_cast<Real>(c.a * feature_scale), b = static_cast<Real>(c.b);
      acc_s += server_term(theta_s, a * s + b * theta_s, form);
      acc_c += server_term(theta_c, a * co + b * theta_c, form);
    }
    const Real scale = static_cast<Real>(round_scale);
    theta[j] = theta_s - scale * acc_s;
    theta[D + j] = theta_c - scale * acc_c;
  }
}

/// The updates [first, last) of a sorted list (group_round_updates()).
struct UpdateRange {
  const RoundUpdate* updates;
  std::uint32_t first, last;
  OMKL_HD std::uint32_t count() const { return last - first; }
  OMKL_HD RoundUpdate operator()(std::uint32_t i) const { return updates[first + i]; }
};

/// aggregate_slot() over one group of the sorted list.
template <typename Real>
OMKL_HD void aggregate_group(const Real* V, const Real* x, std::size_t d, Real* theta, std::size_t D,
                             const RoundUpdate* updates, std::uint32_t first, std::uint32_t last, double feature_scale,
                             double round_scale, UploadForm form, unsigned lane, unsigned n_lanes) {
  aggregate_slot(V, x, d, theta, D, UpdateRange{updates, first, last}, feature_scale, round_scale, form, lane,
                 n_lanes);
}

/// The updates sorted by (replicate, slot), stably (call order within a group), and the groups.
/// `valid(i)` range-checks update i first (the caller throws); key(i) = replicate·S + slot.
template <typename Update, typename SlotKernel>
void group_round_updates(const Update* updates, std::size_t n_updates, std::size_t n_slots, SlotKernel&& slot_kernel,
                         std::vector<RoundUpdate>& sorted, std::vector<RoundGroup>& groups) {
  std::vector<std::uint32_t> order(n_updates);
  for (std::size_t i = 0; i < n_updates; ++i) order[i] = static_cast<std::uint32_t>(i);
  const auto key = [&](std::uint32_t i) { return std::uint64_t{updates[i].replicate} * n_slots + updates[i].slot; };
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
  sorted.resize(n_updates);
  groups.clear();
  for (std::size_t i = 0; i < n_updates; ++i) {
    const Update& u = updates[order[i]];
    sorted[i] = {u.client, u.a, u.b};
    if (i == 0 || key(order[i]) != key(order[i - 1]))
      groups.push_back({u.replicate, u.slot, static_cast<std::uint32_t>(slot_kernel(u.slot)), static_cast<std::uint32_t>(i),
                        static_cast<std::uint32_t>(i)});
    groups.back().last = static_cast<std::uint32_t>(i + 1);
  }
}

}  // namespace omkl::detail
