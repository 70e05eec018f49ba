/// @file time_match.h
/// @brief Time-matched budgets ([OKS] §6.4, Tables 5–7): the bandit paper gives every algorithm
/// the per-round time of a reference (RF-OKS++ with D = 400) by tuning its budget — D for a
/// random-feature algorithm, B for a budgeted support set — until its measured per-round time
/// matches. StudyConfig::time_match runs that search on this machine before the study.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "core/algorithm_base.h"
#include "omkl/study.h"

namespace omkl::detail {

/// The budget in [1, max_value] whose time is closest to `target`, for a time that grows with
/// the budget (measured, so only roughly): doubling from 1 until the time reaches the target,
/// then bisecting to 2 % of the value. `reached` is false when even max_value stays below the
/// target (the algorithm is faster than the reference at every budget tried).
struct BudgetSearch {
  std::size_t value = 1;
  double seconds_per_round = 0.0;
  bool reached = true;
};
BudgetSearch match_budget(const std::function<double(std::size_t)>& seconds_per_round, double target,
                          std::size_t max_value);

/// Builds an algorithm (one replicate) for a spec, as the study does.
using AlgorithmMaker = std::function<std::unique_ptr<Algorithm>(const AlgorithmSpec&)>;

/// Measures `reference` and matches every algorithm of `algorithms` whose spec leaves its budget
/// parameter (D, else B) unset; returns the report and rewrites the matched specs with the value
/// found. Each time is the fastest of three passes over the first `probe_rows` rows (0: all;
/// the algorithm built afresh for each, construction not timed).
TimeMatchReport match_time_budgets(std::vector<AlgorithmSpec>& algorithms, const AlgorithmSpec& reference,
                                   const AlgorithmMaker& make, const Dataset& data, std::size_t probe_rows);

}  // namespace omkl::detail
