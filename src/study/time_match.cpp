#include "study/time_match.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "families/exact_kernel/support_set.h"
#include "features/rf_ensemble.h"
#include "omkl/error.h"

namespace omkl::detail {

BudgetSearch match_budget(const std::function<double(std::size_t)>& seconds_per_round, double target,
                          std::size_t max_value) {
  if (max_value == 0) throw ConfigError("time match: no budget to search");
  if (!(target > 0)) throw ConfigError("time match: the reference's time per round is not positive");
  // Doubling: below = the largest value whose time is under the target, above = the first
  // value whose time reaches it.
  std::size_t below = 0, above = 1;
  double below_time = 0.0, above_time = seconds_per_round(1);
  while (above_time < target) {
    if (above == max_value) return {above, above_time, false};
    below = above;
    below_time = above_time;
    above = std::min(max_value, 2 * above);
    above_time = seconds_per_round(above);
  }
  if (below == 0) return {above, above_time, true};
  // Bisection to 2 % of the value (a per-round time is not measured finer than that).
  while (above - below > std::max<std::size_t>(1, below / 50)) {
    const std::size_t mid = below + (above - below) / 2;
    const double t = seconds_per_round(mid);
    if (t < target) {
      below = mid;
      below_time = t;
    } else {
      above = mid;
      above_time = t;
    }
  }
  if (target - below_time < above_time - target) return {below, below_time, true};
  return {above, above_time, true};
}

namespace {

double seconds_per_round(const AlgorithmSpec& spec, const AlgorithmMaker& make, const Dataset& data,
                         std::size_t rows) {
  double best = INFINITY;
  std::vector<double> predictions(rows);
  for (int pass = 0; pass < 3; ++pass) {
    std::unique_ptr<Algorithm> algorithm = make(spec);
    const auto start = std::chrono::steady_clock::now();
    algorithm->step_block(data.x.data(), data.y.data(), rows, data.n_features, predictions.data());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best / static_cast<double>(rows);
}

// The budget parameter an algorithm reads (D, else B), or empty.
std::string budget_parameter(const AlgorithmSpec& spec, const AlgorithmMaker& make) {
  const auto resolved = make(spec)->resolved_params();
  for (const char* name : {"D", "B"})
    for (const auto& [key, value] : resolved)
      if (key == name) return name;
  return {};
}

}  // namespace

TimeMatchReport match_time_budgets(std::vector<AlgorithmSpec>& algorithms, const AlgorithmSpec& reference,
                                   const AlgorithmMaker& make, const Dataset& data, std::size_t probe_rows) {
  if (data.n_clients > 0) throw ConfigError("time match: not for a federated stream (its rounds are its protocol)");
  const std::size_t rows = probe_rows == 0 ? data.n_samples : std::min(probe_rows, data.n_samples);
  TimeMatchReport report;
  report.reference = reference.to_string();
  report.reference_seconds_per_round = seconds_per_round(reference, make, data, rows);
  report.probe_rows = rows;
  for (AlgorithmSpec& spec : algorithms) {
    TimeMatchEntry entry;
    entry.given = spec.to_string();
    const std::string parameter = budget_parameter(spec, make);
    if (parameter.empty() || spec.find(parameter)) {
      // Nothing to tune, or the user fixed it: measured as given.
      entry.note = parameter.empty() ? "no budget parameter (D or B): run as given"
                                     : parameter + " given in the spec: run as given";
      entry.seconds_per_round = seconds_per_round(spec, make, data, rows);
    } else {
      // The parameters' own upper bounds (B also by the stream: a budget past T keeps every sample).
      const std::size_t max_value =
          parameter == "D" ? static_cast<std::size_t>(kMaxRandomFeatures)
                           : std::clamp<std::size_t>(data.n_samples, 1, static_cast<std::size_t>(kMaxSupportBudget));
      const BudgetSearch found = match_budget(
          [&](std::size_t value) {
            AlgorithmSpec candidate = spec;
            candidate.set(parameter, std::to_string(value));
            return seconds_per_round(candidate, make, data, rows);
          },
          report.reference_seconds_per_round, max_value);
      spec.set(parameter, std::to_string(found.value));
      entry.parameter = parameter;
      entry.value = found.value;
      entry.seconds_per_round = found.seconds_per_round;
      if (!found.reached)
        entry.note = "faster than the reference at every " + parameter + " up to " + std::to_string(max_value);
    }
    entry.spec = spec.to_string();
    report.entries.push_back(std::move(entry));
  }
  return report;
}

}  // namespace omkl::detail
