/// @file bench_command.cpp
/// @brief `omkl bench`: throughput of algorithms on a stream, as a table and as JSON.
///
/// Each measurement is a study without output files, repeated; the median is reported.
/// "loop" time is the online loop only (what seconds_mean measures); "wall" is end to end,
/// including learner construction (frequency draws) and, on the GPU, every transfer — but not
/// the GPU context creation (the process's first CUDA call, a stream, a cuBLAS handle): that is
/// made once before the first measurement, reported on its own line, and reused by every study.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "core/env_switch.h"
#include "core/state_io.h"
#include "omkl/config.h"
#include "omkl/error.h"
#include "study/study_io.h"

namespace omkl::cli {

CLI::App* register_bench(CLI::App& app, BenchOptions& o) {
  auto* bench = app.add_subcommand("bench", "throughput benchmark (µs per sample per seed, seed-steps/s)");
  add_common_options(*bench, o.common, false);
  bench->add_option("--seeds", o.seed_counts, "replicate counts to measure, e.g. --seeds 1 20 100")
      ->capture_default_str()
      ->check(kPositiveCount);
  bench->add_option("--repeat", o.repeat,
                    "repetitions per measurement (median reported), at most " + std::to_string(kMaxBenchRepeat))
      ->capture_default_str()
      ->check(kPositiveCount);
  bench->add_option("--json", o.json_out,
                    "also write the measurements here as JSON ('-': to standard output, the table then on stderr)");
  return bench;
}

namespace {

int run_bench_checked(const BenchOptions& o) {
  if (o.repeat > kMaxBenchRepeat)
    throw ConfigError("--repeat " + std::to_string(o.repeat) + ": at most " + std::to_string(kMaxBenchRepeat) +
                      " repetitions per measurement (their median is reported)");
  if (o.common.data == "-")
    throw ConfigError("--data -: standard input is read live by `omkl run` and `omkl predict` only; omkl bench measures a whole "
                      "stream (a file)");
  // JSON to standard output ("-", /dev/stdout, the file `>` sends it to) moves the table to stderr,
  // so that the JSON is the whole of what stdout receives.
  const bool json_to_stdout = names_standard_output(o.json_out);
  std::FILE* const report = json_to_stdout ? stderr : stdout;
  if (!json_to_stdout) {
    check_output_path("--json", o.json_out, false);  // before the measurements, not after
    check_distinct_paths({{"--data", o.common.data}}, {{"--json", o.json_out}});
  }
  const Dataset data = load_data(o.common);
  const auto specs = parse_algos(o.common, {"raker:dict=jmlr23-76"});
  const BackendKind backend = resolve_backend(o.common.backend);
  const std::size_t threads =
      o.common.threads ? o.common.threads : std::max(1u, std::thread::hardware_concurrency());
  if (o.repeat == 0) throw ConfigError("--repeat must be at least 1");
  for (std::size_t seeds : o.seed_counts)
    if (seeds == 0) throw ConfigError("--seeds values must be at least 1");
  // The GPU contexts first: the check below builds on them, and the time of their creation is
  // reported on its own.
  double context_seconds = 0.0;
  const std::shared_ptr<DeviceContexts> contexts =
      backend == BackendKind::Cuda ? make_device_contexts(&context_seconds) : nullptr;
  const auto study_config = [&](const AlgorithmSpec& spec, std::size_t seeds) {
    StudyConfig config;
    config.algorithms = {spec};
    config.n_seeds = seeds;
    config.base_seed = o.common.seed;
    config.profile = parse_profile(o.common.profile);
    config.preset = o.common.preset;
    config.backend = backend;
    config.threads = threads;
    config.device_contexts = contexts;
    return config;
  };
  // A bad spec or parameter, or a seed count whose results would not fit in memory, fails before
  // the header, not after the first measurements.
  const std::size_t most_seeds = *std::max_element(o.seed_counts.begin(), o.seed_counts.end());
  for (const auto& spec : specs) check_study_algorithms(study_config(spec, most_seeds), data);
  nlohmann::json rows = nlohmann::json::array();
  fmt::print(report, "bench on {} (T = {}, d = {}), backend {}, {} thread(s), {} build\n", data.name,
             data.n_samples, data.n_features, to_string(backend), threads,
             OMKL_WITH_CUDA ? "CUDA" : "CPU-only");
  // A number measured on an opt-in path says so, here and in the JSON.
  const auto switches = detail::path_switches_set();
  if (!switches.empty()) {
    std::string set;
    for (const auto& [name, value] : switches) set += " " + name + "=" + value;
    fmt::print(report, "path switches:{}\n", set);
  }
  if (contexts) fmt::print(report, "GPU context creation (once, not in the times below): {:.4f} s\n", context_seconds);
  fmt::print(report, "{:<40} {:>6} {:>14} {:>14} {:>14} {:>14} {:>12}\n", "algorithm", "seeds", "us/sample/seed",
             "seed-steps/s", "kernel-upd/s", "wall s", "final");
  for (const auto& spec : specs) {
    for (std::size_t seeds : o.seed_counts) {
      std::vector<double> loop, wall;
      double final_mean = 0.0, updates_per_replicate = 0.0;
      for (std::size_t k = 0; k < o.repeat; ++k) {
        const StudyConfig config = study_config(spec, seeds);
        const auto start = std::chrono::steady_clock::now();
        const StudyResult result = run_study(config, data);
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        loop.push_back(result.results[0].seconds_mean);
        final_mean = result.results[0].final_mean;
        updates_per_replicate = result.results[0].kernel_updates_mean;
      }
      std::sort(loop.begin(), loop.end());
      std::sort(wall.begin(), wall.end());
      const double loop_median = loop[loop.size() / 2], wall_median = wall[wall.size() / 2];
      const double us_per_sample_seed = loop_median / static_cast<double>(data.n_samples) * 1e6;
      const double seed_steps_per_s = static_cast<double>(seeds * data.n_samples) / wall_median;
      // End to end, like seed-steps/s; "n/a" for algorithms that do not count θ updates.
      const double updates_per_s = updates_per_replicate * static_cast<double>(seeds) / wall_median;
      fmt::print(report, "{:<40} {:>6} {:>14.3f} {:>14.4g} {:>14} {:>14.4f} {:>12.5g}\n", spec.to_string().substr(0, 40),
                 seeds, us_per_sample_seed, seed_steps_per_s,
                 updates_per_replicate > 0 ? fmt::format("{:.4g}", updates_per_s) : std::string("n/a"),
                 wall_median, final_mean);
      rows.push_back({{"algo", spec.to_string()}, {"seeds", seeds}, {"threads", threads},
                      {"backend", to_string(backend)}, {"us_per_sample_per_seed", us_per_sample_seed},
                      {"seed_steps_per_second", seed_steps_per_s}, {"wall_seconds", wall_median},
                      {"kernel_updates_per_second", updates_per_replicate > 0 ? nlohmann::json(updates_per_s) : nlohmann::json(nullptr)},
                      {"loop_seconds_per_replicate", loop_median}, {"final_mean", final_mean}});
    }
  }
  if (!o.json_out.empty()) {
    nlohmann::json doc{{"dataset", data.name}, {"n_samples", data.n_samples},
                             {"n_features", data.n_features}, {"backend", to_string(backend)},
                             {"threads", threads}, {"results", rows}};
    if (contexts) doc["context_creation_seconds"] = context_seconds;
    if (!switches.empty()) doc["path_switches"] = detail::path_switches_json(switches);
    const std::string text = doc.dump(2) + "\n";
    if (!json_to_stdout) {
      detail::write_file_atomic(o.json_out, text);
    } else if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) {
      throw Error(std::string("standard output: write failed: ") + std::strerror(errno));
    }
  }
  return 0;
}

}  // namespace

int run_bench(const BenchOptions& o) {
  try {
    return run_bench_checked(o);
  } catch (const ConfigError& e) {
    // Each measurement is a study: the library's study checks say "study:", which here is this bench.
    const std::string message = e.what();
    if (message.rfind("study: ", 0) == 0) throw ConfigError("bench: " + message.substr(7));
    throw;
  }
}

}  // namespace omkl::cli
