/// @file scoring.cpp
/// @brief Replicate scores and their aggregation over seeds (scoring.h).
#include "study/scoring.h"

#include <algorithm>
#include <cmath>

#include "core/loss.h"
#include "core/parallel.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl::detail {

std::vector<std::size_t> curve_points(std::size_t n_samples, std::size_t n_points) {
  std::vector<std::size_t> t;
  n_points = std::max<std::size_t>(1, std::min(n_points, n_samples));
  for (std::size_t k = 1; k <= n_points; ++k) {
    const std::size_t v = (k * n_samples + n_points - 1) / n_points;
    if (t.empty() || v != t.back()) t.push_back(v);
  }
  return t;
}

std::vector<std::size_t> stream_order(std::size_t n_samples, std::uint64_t seed, std::uint64_t replicate) {
  std::vector<std::size_t> order(n_samples);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  RandomStream rng(seed, replicate, RngPurpose::Permutation, 0x5u);
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

std::string study_metric(const StudyConfig& config, Task task) {
  if (config.metric.empty()) return loss_metric("", task);
  if (config.metric != "mse" && config.metric != "mae" && config.metric != "error_rate")
    throw ConfigError("study: unknown metric '" + config.metric + "' (mse, mae or error_rate)");
  // A mistake is sign(f) ≠ y: on targets other than ±1 (0/1 labels, a regression target) the
  // rate would be made up.
  if (config.metric == "error_rate" && task != Task::Classification)
    throw ConfigError(std::string("study: the metric error_rate (set by --loss logistic) needs labels ±1; ") + kLabelsHint);
  return config.metric;
}

double step_error(const std::string& metric, double prediction, double y, const detail::MetricConvention& convention) {
  if (metric == "mse") return (y - prediction) * (y - prediction);
  if (metric == "mae") return std::fabs(y - prediction);
  return detail::classification_mistake(prediction, y, convention);
}

void mean_std(const std::vector<double>& v, double& mean, double& std_dev, Spread spread) {
  if (v.empty()) {
    mean = std_dev = NAN;
    return;
  }
  double s = 0.0;
  for (double x : v) s += x;
  mean = s / static_cast<double>(v.size());
  double q = 0.0;
  for (double x : v) q += (x - mean) * (x - mean);
  // The sample standard deviation (0 for a single value) or the population one.
  if (spread == Spread::Population) std_dev = std::sqrt(q / static_cast<double>(v.size()));
  else std_dev = v.size() > 1 ? std::sqrt(q / static_cast<double>(v.size() - 1)) : 0.0;
}

std::vector<ReplicateRun> score_replicates(const detail::Algorithm& algorithm, const std::vector<double>& predictions,
                                           const std::vector<double>& regularizer, double seconds,
                                           const Dataset& data, const std::vector<std::size_t>& points,
                                           const std::vector<double>* regret_residual2, const std::string& metric,
                                           const std::vector<std::vector<std::size_t>>* orders) {
  const detail::MetricConvention convention = algorithm.metric_convention();
  const bool first_is_one = convention.first_error_is_one;
  const std::size_t R = algorithm.n_replicates(), T = data.n_samples;
  std::vector<ReplicateRun> runs(R);
  const double updates = static_cast<double>(algorithm.kernel_updates()) / static_cast<double>(R);
  // What a federated algorithm sent, shared out evenly over the replicates it ran in lockstep.
  detail::CommunicationCount sent = algorithm.communication();
  sent.uplink_floats /= static_cast<double>(R);
  sent.downlink_floats /= static_cast<double>(R);
  sent.client_steps /= static_cast<double>(R);
  const std::size_t K = data.n_clients;
  // §4.6: the loop's time less the server's side, per client (the offline part, 0 here, aside).
  const double server = algorithm.server_seconds();
  const double client_seconds = K && std::isfinite(server)
                                    ? (seconds - algorithm.offline_seconds() - server) / static_cast<double>(R * K)
                                    : NAN;
  const auto order_of = [orders](std::size_t r) { return orders ? (*orders).at(r).data() : nullptr; };
  // Step t's row of the data in a replicate's order (none: the stream's).
  const auto row_of = [](const std::size_t* order, std::size_t t) { return order ? order[t] : t; };
  // Every replicate's per-step errors, curve and per-client totals: replicates are independent
  // and each sums in step order, so they are split over threads (a GPU study scores 1 000
  // lockstep repetitions here) with the same numbers whatever the split.
  std::vector<std::vector<double>> client_totals(R, std::vector<double>(K));
  detail::parallel_for(R, 0, [&](std::size_t r0, std::size_t r1) {
    for (std::size_t r = r0; r < r1; ++r) {
      ReplicateRun& run = runs[r];
      const std::size_t* order = order_of(r);
      std::vector<double>& client_total = client_totals[r];
      double total = 0.0;
      std::size_t next = 0;
      for (std::size_t t = 0; t < T; ++t) {
        const double p = predictions[t * R + r];
        if (!std::isfinite(p)) run.diverged = true;
        const double e = (t == 0 && first_is_one) ? 1.0 : step_error(metric, p, data.y[row_of(order, t)], convention);
        total += e;
        if (K) client_total[t % K] += e;
        if (next < points.size() && points[next] == t + 1) {
          run.curve.push_back(total / static_cast<double>(t + 1));
          ++next;
        }
      }
      run.final_metric = total / static_cast<double>(T);
    }
  });
  // The rest asks the algorithm (logs, comparators), one replicate at a time.
  std::vector<double> client_regret(K);  // scratch: each client's batch regret
  for (std::size_t r = 0; r < R; ++r) {
    ReplicateRun& run = runs[r];
    const std::size_t* order = order_of(r);
    const auto row = [&](std::size_t t) { return row_of(order, t); };
    run.seconds = seconds / static_cast<double>(R);
    run.client_seconds = client_seconds;
    run.kernel_updates = updates;
    run.communication = sent;
    run.logs = algorithm.final_logs(r);
    const std::vector<double>& client_total = client_totals[r];
    if (K) {
      // Population std across the clients of each client's metric over its T / K samples.
      const double per_client = static_cast<double>(T / K);
      double mean = 0.0, sq = 0.0;
      for (double c : client_total) mean += c / per_client;
      mean /= static_cast<double>(K);
      for (double c : client_total) sq += (c / per_client - mean) * (c / per_client - mean);
      run.client_std = std::sqrt(sq / static_cast<double>(K));
      // eq. (11): Σ_t (ŷ − y)² − min_i Σ_t (f_i − y)², per client (regression streams); with
      // regret.include_reg (a regulariser read at every step) Σ_t λ‖θ̄_{k,t}‖² on the algorithm's
      // side, and the algorithm's comparators carry their λ‖θ_{i,t}‖².
      const std::vector<double> comparators = algorithm.client_kernel_losses(r);
      if (!comparators.empty() && data.task == Task::Regression && !first_is_one) {
        const std::size_t N = comparators.size() / K;
        std::vector<double> regret(client_total);
        if (!regularizer.empty())
          for (std::size_t t = 0; t < T; ++t) regret[t % K] += regularizer[t * R + r];
        for (std::size_t k = 0; k < K; ++k)
          regret[k] -= *std::min_element(comparators.begin() + static_cast<std::ptrdiff_t>(k * N),
                                         comparators.begin() + static_cast<std::ptrdiff_t>((k + 1) * N));
        double m = 0.0, v = 0.0;
        for (double g : regret) m += g / static_cast<double>(K);
        for (double g : regret) v += (g - m) * (g - m) / static_cast<double>(K);
        run.regret_eq11 = m;
        run.regret_eq11_std = std::sqrt(v);
      }
    }
    if (regret_residual2) {
      // r_t = (ŷ_t − y_t)² − m_t (+ λ‖Σ_k w_k θ_k‖² where the algorithm defines it, §4.5), summed;
      // on a federated stream the mean over clients (÷ K) and the spread of the clients' totals.
      double regret = 0.0;
      std::size_t point = 0;
      std::fill(client_regret.begin(), client_regret.end(), 0.0);
      const double per = K ? 1.0 / static_cast<double>(K) : 1.0;
      for (std::size_t t = 0; t < T; ++t) {
        const double e = predictions[t * R + r] - data.y[row(t)];
        const double increment = e * e - (*regret_residual2)[row(t)] + (regularizer.empty() ? 0.0 : regularizer[t * R + r]);
        regret += increment;
        if (K) client_regret[t % K] += increment;
        if (point < points.size() && points[point] == t + 1) {
          run.regret.push_back(regret * per);
          ++point;
        }
      }
      if (K) {
        double m = 0.0, v = 0.0;
        for (double c : client_regret) m += c / static_cast<double>(K);
        for (double c : client_regret) v += (c - m) * (c - m) / static_cast<double>(K);
        run.regret_batch_std = std::sqrt(v);
      }
    }
    if (!std::isfinite(run.final_metric)) run.diverged = true;
  }
  return runs;
}

AlgorithmResult aggregate(const AlgorithmSpec& spec, bool randomized,
                          const std::vector<std::pair<std::string, std::string>>& reported,
                          const std::vector<ReplicateRun>& cell_runs, const StudyConfig& cfg, const Dataset& data,
                          const std::vector<std::size_t>& points) {
  AlgorithmResult r;
  r.algo = spec.name;
  r.spec = spec.to_string();
  r.params = spec.params;
  for (const auto& kv : reported)
    if (!spec.find(kv.first)) r.params.push_back(kv);
  r.metric = study_metric(cfg, data.task);
  r.seeds = cfg.n_seeds;
  r.curve_t = points;
  // Deterministic algorithms ran once; every seed has that same result.
  std::vector<ReplicateRun> all = cell_runs;
  if (!randomized) all.assign(cfg.n_seeds, cell_runs[0]);
  for (const auto& run : all)
    if (!run.logs.empty()) r.logs.push_back(run.logs);
  std::vector<double> finals, seconds;
  for (const auto& run : all) {
    r.final_per_seed.push_back(run.diverged ? NAN : run.final_metric);
    seconds.push_back(run.seconds);
    r.kernel_updates_mean += run.kernel_updates / static_cast<double>(all.size());
    if (run.diverged) ++r.diverged;
    else finals.push_back(run.final_metric);
  }
  double ignored;
  mean_std(finals, r.final_mean, r.final_std, cfg.spread);
  mean_std(seconds, r.seconds_mean, r.seconds_std, cfg.spread);
  if (data.n_clients) {
    r.n_clients = data.n_clients;
    std::vector<double> client_std;
    for (const auto& run : all)
      if (!run.diverged) client_std.push_back(run.client_std);
    mean_std(client_std, r.final_std_clients, ignored);
    std::vector<double> regret, regret_std;
    for (const auto& run : all)
      if (!run.diverged && std::isfinite(run.regret_eq11)) {
        regret.push_back(run.regret_eq11);
        regret_std.push_back(run.regret_eq11_std);
      }
    if (!regret.empty()) {
      mean_std(regret, r.regret_eq11_mean, ignored);
      mean_std(regret_std, r.regret_eq11_std_clients, ignored);
    }
    if (cfg.regret) {
      std::vector<double> spread;
      for (const auto& run : all)
        if (!run.diverged) spread.push_back(run.regret_batch_std);
      mean_std(spread, r.regret_std_clients, ignored);
    }
  }
  double client_steps = 0.0;
  for (const auto& run : all) {
    client_steps += run.communication.client_steps;
    r.uplink_per_client_step += run.communication.uplink_floats;
    r.downlink_per_client_step += run.communication.downlink_floats;
    r.max_uplink = std::max(r.max_uplink, run.communication.max_uplink);
  }
  if (client_steps > 0) {
    r.uplink_per_client_step /= client_steps;
    r.downlink_per_client_step /= client_steps;
  }
  std::vector<double> client_seconds;
  for (const auto& run : all)
    if (std::isfinite(run.client_seconds)) client_seconds.push_back(run.client_seconds);
  if (client_seconds.size() == all.size() && !all.empty()) mean_std(client_seconds, r.client_seconds_per_client, ignored);
  for (std::size_t k = 0; k < points.size(); ++k) {
    std::vector<double> v;
    for (const auto& run : all)
      if (!run.diverged) v.push_back(run.curve[k]);
    double m, s;
    mean_std(v, m, s, cfg.spread);
    r.curve_mean.push_back(m);
    r.curve_std.push_back(s);
    if (!cfg.regret) continue;
    std::vector<double> g;
    for (const auto& run : all)
      if (!run.diverged) g.push_back(run.regret[k]);
    mean_std(g, m, s, cfg.spread);
    r.regret_mean.push_back(m);
    r.regret_std.push_back(s);
  }
  return r;
}

}  // namespace omkl::detail
