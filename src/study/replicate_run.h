/// @file replicate_run.h
/// @brief What one replicate of one algorithm produced in a study — the unit that the study
/// aggregates over seeds and that the processes of a sharded study send to rank 0 — and its
/// exact binary form (doubles as their bits, so a gathered study equals a one-process one).
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/algorithm_base.h"
#include "core/state_io.h"

namespace omkl::detail {

struct ReplicateRun {
  double final_metric = 0.0;
  double seconds = 0.0;
  double kernel_updates = 0.0;
  bool diverged = false;
  std::vector<double> curve;   ///< metric at the curve points
  std::vector<double> regret;  ///< cumulative regret at the curve points (StudyConfig::regret)
  // Federated streams: the std across clients of the per-client metric, and what was sent.
  double client_std = 0.0;
  CommunicationCount communication;
  // The client regret of eq. (11), mean and std across clients (NaN where undefined).
  double regret_eq11 = NAN, regret_eq11_std = NAN;
  // Federated streams with a regret comparator: the std across clients of their cumulative regret.
  double regret_batch_std = NAN;
  // Federated streams on a host path: the loop's client-side seconds ÷ K (spec/federated.md §4.6);
  // NaN where the server's side is not timed apart.
  double client_seconds = NAN;
  // Algorithm::final_logs() of this replicate (logs.json).
  std::vector<std::pair<std::string, std::vector<double>>> logs;
};

inline void write_run(StateWriter& out, const ReplicateRun& run) {
  out.put_f64(run.final_metric);
  out.put_f64(run.seconds);
  out.put_f64(run.kernel_updates);
  out.put_u64(run.diverged ? 1 : 0);
  out.put_f64s(run.curve);
  out.put_f64s(run.regret);
  out.put_f64(run.client_std);
  out.put_f64(run.communication.uplink_floats);
  out.put_f64(run.communication.downlink_floats);
  out.put_f64(run.communication.max_uplink);
  out.put_f64(run.communication.client_steps);
  out.put_f64(run.regret_eq11);
  out.put_f64(run.regret_eq11_std);
  out.put_f64(run.regret_batch_std);
  out.put_f64(run.client_seconds);
  out.put_u64(run.logs.size());
  for (const auto& [name, values] : run.logs) {
    out.put_string(name);
    out.put_f64s(values);
  }
}

inline ReplicateRun read_run(StateReader& in) {
  ReplicateRun run;
  run.final_metric = in.get_f64();
  run.seconds = in.get_f64();
  run.kernel_updates = in.get_f64();
  run.diverged = in.get_u64() != 0;
  run.curve = in.get_f64s();
  run.regret = in.get_f64s();
  run.client_std = in.get_f64();
  run.communication.uplink_floats = in.get_f64();
  run.communication.downlink_floats = in.get_f64();
  run.communication.max_uplink = in.get_f64();
  run.communication.client_steps = in.get_f64();
  run.regret_eq11 = in.get_f64();
  run.regret_eq11_std = in.get_f64();
  run.regret_batch_std = in.get_f64();
  run.client_seconds = in.get_f64();
  const std::uint64_t n_logs = in.get_u64();
  in.require_values(n_logs, 16);
  for (std::uint64_t i = 0; i < n_logs; ++i) {
    std::string name = in.get_string();
    run.logs.emplace_back(std::move(name), in.get_f64s());
  }
  return run;
}

}  // namespace omkl::detail
