/// @file scoring.h
/// @brief From predictions to a study's numbers: each replicate's metric, curve, regret and
/// federated measures (score_replicates), and their mean and spread over the seeds (aggregate);
/// and the order in which a shuffled study shows a replicate the stream (stream_order).
/// Pure functions of the predictions, the stream and the algorithm's reported counters, so a
/// study gathered from several processes scores exactly as one process does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/algorithm_base.h"
#include "omkl/study.h"
#include "study/replicate_run.h"

namespace omkl::detail {

/// The 1-based times of at most n_points curve points, evenly spread, ending at n_samples.
std::vector<std::size_t> curve_points(std::size_t n_samples, std::size_t n_points);

/// The study's metric: StudyConfig::metric, or by task — "mse" (regression) or "error_rate"
/// (classification). ConfigError for an unknown name.
std::string study_metric(const StudyConfig& config, Task task);

/// Per-step error of `metric`: squared error ("mse"), absolute error ("mae") or the 0/1 mistake
/// ("error_rate": classification_mistake() under the algorithm's convention).
double step_error(const std::string& metric, double prediction, double y, const detail::MetricConvention& convention);

/// Mean and standard deviation, the sample one (n − 1; 0 for one value) or the population one
/// (n) as `spread` says; NaN for none.
void mean_std(const std::vector<double>& v, double& mean, double& std_dev, Spread spread = Spread::Sample);

/// Replicate r's order of an n-sample stream in a shuffled study (StudyConfig::shuffle): row
/// order[t] is its step t. Fisher–Yates from the stream (base seed, r, Permutation),
/// independent of every other draw.
std::vector<std::size_t> stream_order(std::size_t n_samples, std::uint64_t seed, std::uint64_t replicate);

/// The outcome of each replicate of a run from its predictions (n × R) and, with a regret
/// comparator (`regret_residual2`), the regulariser term after every step (`regularizer`,
/// n × R, or empty for none): final `metric` (study_metric()), curve, regret, the federated measures.
/// With `orders`, replicate r's step t was row (*orders)[r][t] of `data` (a shuffled study), and
/// its targets and regret comparator are read in that order.
std::vector<ReplicateRun> score_replicates(const Algorithm& algorithm, const std::vector<double>& predictions,
                                           const std::vector<double>& regularizer, double seconds,
                                           const Dataset& data, const std::vector<std::size_t>& points,
                                           const std::vector<double>* regret_residual2, const std::string& metric,
                                           const std::vector<std::vector<std::size_t>>* orders = nullptr);

/// Mean and std over the seeds of one algorithm's replicates (a deterministic algorithm ran
/// once and counts for every seed); `reported` are the algorithm's reported_params().
AlgorithmResult aggregate(const AlgorithmSpec& spec, bool randomized,
                          const std::vector<std::pair<std::string, std::string>>& reported,
                          const std::vector<ReplicateRun>& cell_runs, const StudyConfig& cfg, const Dataset& data,
                          const std::vector<std::size_t>& points);

}  // namespace omkl::detail
