/// @file study.cpp
/// @brief Monte Carlo study runner: (algorithm, replicate) cells on a thread pool, and their
/// aggregation into the study's results. The cell cache and the output files are study_io.cpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "core/algorithm_base.h"
#include "core/decimal.h"
#include "core/env_switch.h"
#include "core/error_context.h"
#include "core/parallel.h"
#include "core/state_io.h"
#include "cpu/simd_level.h"
#include "features/rf_backend.h"
#include "omkl/error.h"
#include "omkl/study.h"
#include "random/rng.h"
#include "study/regret.h"
#include "study/replicate_run.h"
#include "study/scoring.h"
#include "study/study_io.h"
#include "study/time_match.h"

namespace omkl {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

using detail::ReplicateRun;
using detail::aggregate;
using detail::curve_points;
using detail::score_replicates;

// The study keeps every replicate's result and curve (and regret) until it aggregates them:
// a seed count whose results alone exceed this machine's memory is refused before anything is
// allocated for it (it would otherwise fail, or be killed, after allocating gigabytes).
void check_result_memory(const StudyConfig& config, std::size_t n_points) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;  // unknown: nothing to compare with
  const double physical = static_cast<double>(pages) * static_cast<double>(page);
  const double per_run = static_cast<double>(sizeof(ReplicateRun) + 4 * sizeof(std::size_t)) +
                         static_cast<double>(n_points * sizeof(double)) * (config.regret ? 2.0 : 1.0);
  const double needed = per_run * static_cast<double>(config.n_seeds) * static_cast<double>(config.algorithms.size());
  if (needed > physical) {
    std::ostringstream msg;
    msg << "study: --seeds " << config.n_seeds << " with " << config.algorithms.size()
        << " algorithm(s) would keep about " << needed / 1e9 << " GB of per-replicate results, more than this "
        << "machine's " << physical / 1e9 << " GB of memory; use fewer --seeds (or fewer curve points)";
    throw ConfigError(msg.str());
  }
}

using Params = std::vector<std::pair<std::string, std::string>>;

// Replicates of a cell may run in lockstep in one algorithm: on the GPU (or where the config
// asks for the GPU's schedule on the CPU). With a shuffled stream, only an algorithm that takes
// every replicate's own stream in one call (Algorithm::replicated_streams()) does.
bool lockstep_backend(const StudyConfig& cfg) { return cfg.backend != BackendKind::Cpu || cfg.lockstep_on_cpu; }

// The stream's rows in `order`.
Dataset permuted(const Dataset& data, const std::vector<std::size_t>& order) {
  Dataset out = data;
  for (std::size_t t = 0; t < order.size(); ++t) {
    std::copy(data.row(order[t]), data.row(order[t]) + data.n_features, out.x.begin() + static_cast<std::ptrdiff_t>(t * data.n_features));
    out.y[t] = data.y[order[t]];
  }
  out.groups.clear();
  return out;
}

// Preset defaults under the study's own (StudyConfig::defaults wins for a key both give).
Params soft_defaults(const Preset* preset, const StudyConfig& config) {
  Params out = preset ? preset->defaults : Params{};
  for (const auto& kv : config.defaults) {
    bool replaced = false;
    for (auto& existing : out)
      if (existing.first == kv.first) {
        existing.second = kv.second;
        replaced = true;
      }
    if (!replaced) out.push_back(kv);
  }
  return out;
}

std::unique_ptr<detail::Algorithm> build(const AlgorithmSpec& spec, const Preset* preset,
                                         const StudyConfig& config, const Dataset& data,
                                         std::vector<std::uint64_t> replicates) {
  detail::AlgoContext context;
  context.n_features = data.n_features;
  context.task = data.task;
  context.profile = config.profile;
  context.seed = config.base_seed;
  context.replicates = std::move(replicates);
  context.horizon = data.n_samples;
  context.backend = config.backend;
  context.n_clients = data.n_clients;
  context.track_regret_regularizer = config.regret_include_reg && data.n_clients > 0;
  context.device_contexts = config.device_contexts;
  // A lockstep (GPU) run holds every seed in one algorithm on one study thread; the per-seed
  // host work of a step can then use the other cores.
  if (lockstep_backend(config) && context.replicates.size() > 1)
    context.host_threads = config.threads ? config.threads : std::max(1u, std::thread::hardware_concurrency());
  return detail::make_algorithm(spec.name, spec.params, soft_defaults(preset, config), context);
}

// Runs `replicates` of one algorithm through the whole stream in lockstep. `prepared`, when
// given, is that algorithm already built for exactly these replicates. With a shuffled stream
// each replicate sees its own order: one replicate runs on its permuted copy of the stream,
// several through step_block_replicated(); both are scored against the data in that order.
std::vector<ReplicateRun> run_replicates(const AlgorithmSpec& spec, const Preset* preset,
                                         const StudyConfig& config, const Dataset& data,
                                         const std::vector<std::uint64_t>& replicates,
                                         const std::vector<std::size_t>& points,
                                         std::unique_ptr<detail::Algorithm> prepared,
                                         const std::vector<double>* regret_residual2) {
  auto algorithm = prepared ? std::move(prepared) : build(spec, preset, config, data, replicates);
  const std::size_t R = replicates.size(), T = data.n_samples, d = data.n_features;
  // Each replicate's order depends on its own seed alone: drawn on the study's threads.
  std::vector<std::vector<std::size_t>> orders(config.shuffle ? R : 0);
  detail::parallel_for(orders.size(), config.threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) orders[i] = detail::stream_order(T, config.base_seed, replicates[i]);
  });
  const bool replicated = config.shuffle && R > 1;
  if (replicated && !algorithm->replicated_streams())
    throw Error("study: algorithm '" + spec.name + "' runs its replicates on one shared stream, not shuffled ones");
  const Dataset shuffled = config.shuffle && !replicated ? permuted(data, orders[0]) : Dataset{};
  const Dataset& stream = config.shuffle && !replicated ? shuffled : data;

  std::vector<double> predictions(T * R);
  // With regret, one step at a time where the regulariser term is read after every update (the
  // graph family's λ‖Σ w θ‖², spec/graph-aided.md §4.5); on a federated stream only with
  // regret.include_reg (λ‖θ̄‖², spec/federated.md §4.7, which eq. (11) reads too): without it the
  // federated regrets have no such term, whatever the algorithm.
  const bool per_step = (data.n_clients > 0 ? config.regret_include_reg : regret_residual2 != nullptr) &&
                        !std::isnan(algorithm->regret_regularizer(0));
  std::vector<double> regularizer;
  if (per_step) regularizer.resize(T * R);
  const auto read_regularizer = [&](std::size_t t) {
    for (std::size_t r = 0; r < R; ++r) regularizer[t * R + r] = algorithm->regret_regularizer(r);
  };
  const auto start = std::chrono::steady_clock::now();
  if (replicated) {
    // Blocks of steps with every replicate's row of the stream, 16 MB of row indices at a time
    // (4 bytes a step and replicate: a device walk keeps the stream in device memory and
    // uploads only these); per step where the regret reads the regulariser.
    if (T > std::numeric_limits<std::uint32_t>::max())
      throw ConfigError("study: a shuffled study in lockstep indexes the stream's rows with 32 bits; this stream has " +
                        std::to_string(T) + " rows");
    const std::size_t block = per_step ? 1 : std::max<std::size_t>(1, (std::size_t{1} << 22) / R);
    std::vector<std::uint32_t> rows(std::min(block, T) * R);
    for (std::size_t t0 = 0; t0 < T; t0 += block) {
      const std::size_t n = std::min(block, T - t0);
      // The host's share of a GPU walk (16.6 M indices in all at 1 000 repetitions of a
      // 16 599-row stream): on the study's threads, by steps.
      detail::parallel_for(n, config.threads, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i)
          for (std::size_t r = 0; r < R; ++r) rows[i * R + r] = static_cast<std::uint32_t>(orders[r][t0 + i]);
      });
      detail::StreamRows stream_rows;
      stream_rows.x = data.x.data();
      stream_rows.y = data.y.data();
      stream_rows.n_rows = T;
      stream_rows.n_features = d;
      stream_rows.rows = rows.data();
      stream_rows.n_steps = n;
      algorithm->step_block_replicated(stream_rows, predictions.data() + t0 * R);
      if (per_step) read_regularizer(t0);
    }
  } else if (!per_step) {
    algorithm->step_block(stream.x.data(), stream.y.data(), T, d, predictions.data());
  } else {
    for (std::size_t t = 0; t < T; ++t) {
      algorithm->step(stream.row(t), stream.y[t], predictions.data() + t * R);
      read_regularizer(t);
    }
  }
  // The loop, and the construction the papers time with it (the graph family's graph and
  // dominating set, spec/graph-aided.md §1.7).
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() + algorithm->offline_seconds();
  return score_replicates(*algorithm, predictions, regularizer, seconds, data, points, regret_residual2,
                          detail::study_metric(config, data.task), config.shuffle ? &orders : nullptr);
}

// Auto: CUDA where a device is present, else the CPU.
BackendKind concrete_backend(BackendKind backend) {
  if (backend != BackendKind::Auto) return backend;
  return detail::cuda_available() ? BackendKind::Cuda : BackendKind::Cpu;
}

std::string device_name(BackendKind backend) {
  if (backend == BackendKind::Cpu) {
    const unsigned n = std::thread::hardware_concurrency();
    // The SIMD level says which kernels ran (timings differ; Avx512 and Avx2Fma results do not).
    return "cpu (" + std::to_string(n) + " hardware threads, " + detail::cpu::to_string(detail::cpu::default_simd_level()) + ")";
  }
  // Which GPU produced the timings: its name, compute capability, memory and driver.
  return detail::cuda_device_description();
}

// One algorithm configuration of the study.
struct Cell {
  AlgorithmSpec spec;
  json key;
  fs::path file;  // its cache file (empty without out_dir)
  bool randomized = true;
  bool done = false;  // found finished in the cache: `reused` holds its result
  AlgorithmResult reused;
  std::vector<std::pair<std::string, std::string>> reported;  // the algorithm's reported_params()
  std::vector<std::pair<std::string, std::string>> resolved;  // every parameter it used
  bool federation = false;  // run as a server and clients over the study's processes
  bool lockstep = false;    // all replicates in one task (lockstep_backend(), replicated_streams())
  bool on_device = false;   // its steps are device-resident walks (walks_on_device())
  bool distributable = false;  // its server and clients can run in separate processes
  // Built while validating and handed to the cell's first task where it holds that task's
  // replicates, so validation costs no second construction: one replicate's build, or for the
  // first lockstep cell all the seeds' (prepare_cells()). The other lockstep cells build their
  // seeds when their task starts, so that a study holds the running cells' state, not every
  // cell's (on a GPU, R × S × 2D θ and the frequency matrices each).
  std::unique_ptr<detail::Algorithm> prepared;
};

// A unit of work: replicates first .. first + count − 1 of one cell, in lockstep.
struct WorkItem {
  std::size_t cell, first, count;
};

// Builds every algorithm once up front (a typo must fail before hours of work) and finds the
// cells that a previous run already finished.
std::vector<Cell> prepare_cells(const StudyConfig& cfg, const Preset* preset, const Dataset& data,
                                const fs::path& cell_dir) {
  const std::uint64_t checksum = detail::data_checksum(data);
  std::vector<std::uint64_t> all_replicates;
  for (std::uint64_t r = 0; r < cfg.n_seeds; ++r) all_replicates.push_back(r);
  // The first lockstep cell to run keeps its all-seed build for its task; the others are
  // validated on one replicate's and build their seeds when their task starts, so that a study
  // holds the state of the cells that run, not of every cell (on a GPU: R × S × 2D θ and the
  // frequency matrices each). A study of one algorithm (as `omkl bench` runs) builds it once.
  bool keep_all_seeds = cfg.n_seeds > 1;
  std::vector<Cell> cells;
  for (const auto& spec : cfg.algorithms) {
    Cell cell{spec, detail::cell_key(spec, cfg, data, checksum), {}, true, false, {}, {}, {}, false, false, false, false,
              nullptr};
    if (!cell_dir.empty()) {
      cell.file = cell_dir / (std::to_string(detail::fnv1a64(cell.key.dump())) + ".json");
      std::ifstream in(cell.file);
      if (in) {
        try {
          json stored = json::parse(in);
          if (stored.at("key") == cell.key) {
            cell.reused = detail::result_from_cell(stored);
            cell.done = true;
          }
        } catch (const json::exception&) {
          // A damaged cache entry (unparsable, or missing a field) is recomputed, never trusted.
          // Only the reader's own errors: anything else (no memory, a bug) is not a damaged file.
        }
      }
    }
    // Built once here even where the cache holds it: a typo must fail before hours of work.
    // On a shared stream on the GPU (its common case) the first cell is built for all seeds
    // straight away, and again for one where it turns out not to batch them.
    const bool all_first = keep_all_seeds && !cell.done && lockstep_backend(cfg) && !cfg.shuffle;
    cell.prepared = build(spec, preset, cfg, data, all_first ? all_replicates : std::vector<std::uint64_t>{0});
    {
      // None of this depends on the replicates the build holds.
      const detail::Algorithm& built = *cell.prepared;
      if (lockstep_backend(cfg)) {
        // Lockstep where the algorithm batches its replicates on the backend and, on a shuffled
        // stream, takes per-replicate streams.
        cell.lockstep = built.batches_replicates() && (!cfg.shuffle || built.replicated_streams());
        cell.on_device = built.walks_on_device();
      }
      cell.distributable = built.distributable();
      // With a shuffled stream every replicate differs, deterministic algorithms included.
      cell.randomized = built.randomized() || cfg.shuffle;
      cell.reported = built.reported_params();
      cell.resolved = built.resolved_params();
      // One configuration named twice would run twice and report two identical series: by its
      // parameters as built, so that a default written out ("raker" beside "raker:D=50") or a
      // grid value that repeats another --algo counts as the same configuration.
      for (const Cell& earlier : cells)
        if (earlier.spec.name == spec.name && earlier.resolved == cell.resolved)
          throw ConfigError("study: '" + earlier.spec.to_string() + "' and '" + spec.to_string() +
                            "' are one configuration (every parameter the same once defaults are filled in): "
                            "give each configuration once");
      // Only the federated algorithms keep λ‖θ̄_{k,t}‖² (and eq. (11)'s comparators with λ‖θ_i‖²).
      if (cfg.regret_include_reg && (std::isnan(built.regret_regularizer(0)) || built.client_kernel_losses(0).empty()))
        throw ConfigError("--regret-include-reg: algorithm '" + spec.name +
                          "' has no λ‖θ̄‖² term to add (spec/federated.md §4.7 defines it for pof-mkl, ofskl, "
                          "ofmkl-avg, vm-kofl and em-kofl)");
      if (cfg.regret && data.n_clients == 0 && std::isnan(built.regret_regularizer(0)))
        throw ConfigError("--regret: algorithm '" + spec.name +
                          "' does not define the regret's regulariser term λ‖Σ w θ‖² (spec/graph-aided.md "
                          "§4.5 defines it for omkl-gf, omkl-sfg, omkl-sfg-r and the sfg-mkl variants)");
    }
    if (cell.done) {
      cell.prepared.reset();
    } else if (cell.lockstep && cfg.n_seeds > 1) {
      if (!keep_all_seeds) cell.prepared.reset();  // its task builds all the seeds
      else if (!all_first) cell.prepared = build(spec, preset, cfg, data, all_replicates);
      keep_all_seeds = false;
    } else if (all_first) {
      cell.prepared = build(spec, preset, cfg, data, {0});  // one replicate per task: the first task's
    }
    cells.push_back(std::move(cell));
  }
  return cells;
}

// The work left: the CPU runs one replicate per task so threads share it evenly; a lockstep
// cell (the CUDA backend's) is one task of all its replicates. Deterministic algorithms run once.
std::vector<WorkItem> plan_tasks(const std::vector<Cell>& cells, const StudyConfig& cfg) {
  std::vector<WorkItem> tasks;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (cells[c].done || cells[c].federation) continue;
    const std::size_t n = cells[c].randomized ? cfg.n_seeds : 1;
    if (!cells[c].lockstep)
      for (std::size_t r = 0; r < n; ++r) tasks.push_back(WorkItem{c, r, 1});
    else
      tasks.push_back(WorkItem{c, 0, n});
  }
  return tasks;
}

// Runs the tasks on a pool of threads (one where a task runs in lockstep), each cell's replicates into
// runs[cell]. The first failure stops the others from starting work and is rethrown.
// (`tasks` is this process's share of a sharded study.)
void run_tasks(const std::vector<WorkItem>& tasks, std::vector<Cell>& cells, const Preset* preset,
               const StudyConfig& cfg, const Dataset& data, const std::vector<std::size_t>& points,
               const std::vector<double>& regret_residual2, std::vector<std::vector<ReplicateRun>>& runs) {
  std::size_t total_replicates = 0;
  for (const WorkItem& task : tasks) total_replicates += task.count;

  std::size_t n_threads = cfg.threads ? cfg.threads : std::max(1u, std::thread::hardware_concurrency());
  // Lockstep tasks alone: one at a time (the GPU's, each lending the host threads to its
  // replicates' host work) — unless every one is a device-resident walk, which needs no host
  // threads: those run side by side, each on a stream of its own (the configurations of a grid
  // at once). Beside one-replicate tasks, the pool runs both.
  const auto is = [&](auto property) {
    return std::all_of(tasks.begin(), tasks.end(), [&](const WorkItem& task) { return property(cells[task.cell]); });
  };
  if (is([](const Cell& c) { return c.lockstep; }) && !is([](const Cell& c) { return c.on_device; })) n_threads = 1;
  n_threads = std::max<std::size_t>(1, std::min(n_threads, tasks.size()));
  std::atomic<std::size_t> next{0}, finished{0};
  std::mutex error_mutex, progress_mutex;
  std::exception_ptr error;
  auto worker = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (error) return;
      }
      const WorkItem& task = tasks[i];
      try {
        std::vector<std::uint64_t> replicates(task.count);
        for (std::size_t k = 0; k < task.count; ++k) replicates[k] = task.first + k;
        // Tasks are claimed once, so the cell's prepared algorithm moves to exactly one task.
        std::unique_ptr<detail::Algorithm> prepared;
        if (task.first == 0 && cells[task.cell].prepared &&
            cells[task.cell].prepared->n_replicates() == task.count)
          prepared = std::move(cells[task.cell].prepared);
        std::vector<ReplicateRun> out;
        try {
          out = run_replicates(cells[task.cell].spec, preset, cfg, data, replicates, points, std::move(prepared),
                               cfg.regret ? &regret_residual2 : nullptr);
        } catch (...) {  // which task: enough to rerun the replicate that failed on its own
          detail::rethrow_with_context("study: algorithm '" + cells[task.cell].spec.to_string() + "', " +
                                       (task.count == 1 ? "replicate " + std::to_string(task.first)
                                                        : "replicates " + std::to_string(task.first) + "–" +
                                                              std::to_string(task.first + task.count - 1)) +
                                       ": ");
        }
        for (std::size_t k = 0; k < task.count; ++k) runs[task.cell][task.first + k] = std::move(out[k]);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        return;
      }
      const std::size_t done = finished.fetch_add(task.count) + task.count;
      if (cfg.progress) {
        std::lock_guard<std::mutex> lock(progress_mutex);
        cfg.progress(done, total_replicates);
      }
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < n_threads; ++k) pool.emplace_back(worker);
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// ---- several processes (StudyConfig::communicator) -------------------------------------------
// Rank 0 reads the cache and says which cells are done; every rank then runs its share: the
// federated cells as one server/clients run over all processes, the other replicates dealt out
// task by task (task i to rank i mod P); rank 0 gathers the replicate results, aggregates them
// exactly as one process does and writes the outputs.

constexpr int kCacheTag = 201, kRunsTag = 202;

void share_cache_decisions(std::vector<Cell>& cells, Communicator& comm) {
  if (comm.rank() == 0) {
    std::vector<std::uint64_t> done;
    for (const Cell& cell : cells) done.push_back(cell.done ? 1 : 0);
    detail::StateWriter out;
    out.put_u64s(done);
    for (int p = 1; p < comm.size(); ++p) comm.send(p, kCacheTag, out.bytes());
    return;
  }
  detail::StateReader in(comm.receive(0, kCacheTag, 0.0), "rank 0's cache decisions", detail::StateOrigin::Message);
  const auto done = in.get_u64s();
  if (done.size() != cells.size()) throw Error("study: the processes were given different algorithms");
  for (std::size_t c = 0; c < cells.size(); ++c) {
    cells[c].done = done[c] != 0;
    if (cells[c].done) cells[c].prepared.reset();
  }
}

// A federated cell with every seed in lockstep, the server on rank 0 and the clients on the
// other ranks; rank 0 gets the replicate results.
std::vector<ReplicateRun> run_federation(const Cell& cell, const Preset* preset, const StudyConfig& cfg,
                                         const Dataset& data, const std::vector<std::size_t>& points,
                                         Communicator& comm) {
  std::vector<std::uint64_t> replicates(cfg.n_seeds);
  for (std::size_t r = 0; r < cfg.n_seeds; ++r) replicates[r] = r;
  auto algorithm = build(cell.spec, preset, cfg, data, replicates);
  std::vector<double> predictions(data.n_samples * replicates.size());
  const auto start = std::chrono::steady_clock::now();
  algorithm->run_distributed(data.x.data(), data.y.data(), data.n_samples, data.n_features, predictions.data(),
                             comm, cfg.message_timeout_s);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (comm.rank() != 0) return {};
  return score_replicates(*algorithm, predictions, {}, seconds, data, points, nullptr, detail::study_metric(cfg, data.task));
}

// Ranks ≠ 0 send the replicate results of their tasks; rank 0 puts them in place.
void gather_runs(const std::vector<WorkItem>& tasks, std::vector<std::vector<ReplicateRun>>& runs,
                 Communicator& comm) {
  const std::size_t P = static_cast<std::size_t>(comm.size());
  if (comm.rank() != 0) {
    detail::StateWriter out;
    for (std::size_t i = static_cast<std::size_t>(comm.rank()); i < tasks.size(); i += P)
      for (std::size_t k = 0; k < tasks[i].count; ++k) detail::write_run(out, runs[tasks[i].cell][tasks[i].first + k]);
    comm.send(0, kRunsTag, out.bytes());
    return;
  }
  for (std::size_t p = 1; p < P; ++p) {
    detail::StateReader in(comm.receive(static_cast<int>(p), kRunsTag, 0.0), "results of rank " + std::to_string(p),
                           detail::StateOrigin::Message);
    for (std::size_t i = p; i < tasks.size(); i += P)
      for (std::size_t k = 0; k < tasks[i].count; ++k) runs[tasks[i].cell][tasks[i].first + k] = detail::read_run(in);
    if (!in.at_end()) throw Error("study: rank " + std::to_string(p) + " sent more results than it ran");
  }
}

// The regret comparator's dictionary: the study's, else the papers' (§4.5; §4.7 on a federated
// stream). A ConfigError names --regret-dict.
Dictionary regret_dictionary(const StudyConfig& cfg, const Dataset& data) {
  if (cfg.regret_dict.empty()) return parse_dictionary(data.n_clients > 0 ? "fed-51" : "jmlr23-76");
  Dictionary dictionary;
  try {
    dictionary = parse_dictionary(cfg.regret_dict);
  } catch (const Error& e) {
    throw ConfigError(std::string("study: --regret-dict: ") + e.what());
  }
  // The federated random-feature comparator draws features for every kernel.
  if (data.n_clients > 0 && cfg.regret_comparator == RegretComparator::RandomFeatures)
    for (const KernelSpec& k : dictionary)
      if (!k.shift_invariant())
        throw ConfigError("study: --regret-dict: " + k.name() + " has no random features, which the random-feature "
                          "comparator needs (--regret-comparator exact fits it exactly)");
  return dictionary;
}

// The stream as run_study() reads it: its shape consistent (a Dataset filled by hand may not be),
// every number finite (as Learner requires of its samples: a NaN would make its replicates
// look "diverged"), a federated one whole rounds. InputError naming the stream.
void check_study_data(const Dataset& data) {
  const std::string name = detail::stream_name(data);
  if (data.n_samples == 0) throw InputError(name + ": empty stream");
  if (data.n_features == 0) throw InputError(name + ": no features");
  if (data.x.size() / data.n_features != data.n_samples || data.x.size() % data.n_features != 0 ||
      data.y.size() != data.n_samples)
    throw InputError(name + ": x holds " + std::to_string(data.x.size()) + " values and y " +
                     std::to_string(data.y.size()) + " for " + std::to_string(data.n_samples) + " samples of " +
                     std::to_string(data.n_features) + " features (x needs n_samples × n_features, y n_samples)");
  for (std::size_t i = 0; i < data.x.size(); ++i)
    if (!std::isfinite(data.x[i]))
      throw InputError(name + ": sample " + std::to_string(i / data.n_features + 1) + ", feature " +
                       std::to_string(i % data.n_features + 1) + " is " + std::to_string(data.x[i]) +
                       " (features must be finite)");
  for (std::size_t t = 0; t < data.n_samples; ++t)
    if (!std::isfinite(data.y[t]))
      throw InputError(name + ": sample " + std::to_string(t + 1) + ": target " + std::to_string(data.y[t]) +
                       " is not finite");
  if (data.n_clients > 0 && data.n_samples % data.n_clients != 0)
    throw InputError(name + ": " + std::to_string(data.n_samples) + " samples are no whole rounds of its " +
                     std::to_string(data.n_clients) + " federated clients");
}

}  // namespace

void check_study_algorithms(const StudyConfig& config, const Dataset& data) {
  const Preset* preset = config.preset.empty() ? nullptr : &find_preset(config.preset);
  StudyConfig cfg = config;
  cfg.backend = concrete_backend(cfg.backend);
  if (data.n_samples > 0) check_result_memory(cfg, curve_points(data.n_samples, cfg.curve_points).size());
  for (const AlgorithmSpec& spec : cfg.algorithms) build(spec, preset, cfg, data, {0});
}

StudyResult run_study(const StudyConfig& config, const Dataset& data) {
  check_study_data(data);
  if (config.n_seeds == 0) throw ConfigError("study: n_seeds (--seeds) must be at least 1");
  const Preset* preset = config.preset.empty() ? nullptr : &find_preset(config.preset);
  StudyConfig cfg = config;
  // None given: the preset's own (its tables' algorithms).
  if (cfg.algorithms.empty() && preset) {
    // The tables of the study's loss (set_study_loss: the last "loss" default), if it has its own.
    std::string loss;
    for (const auto& [key, value] : cfg.defaults)
      if (key == "loss") loss = value;
    for (const std::string& text : preset_algorithms(*preset, loss)) cfg.algorithms.push_back(parse_algorithm_spec(text));
  }
  if (cfg.algorithms.empty()) throw ConfigError("study: no algorithm given (algorithms, --algo)");
  cfg.backend = concrete_backend(cfg.backend);
  cfg.shuffle = cfg.shuffle || (preset && preset->shuffle);
  if (cfg.spread == Spread::Default) cfg.spread = preset ? preset->spread : Spread::Sample;
  if (cfg.regret_comparator == RegretComparator::Auto)  // read only on a federated stream
    cfg.regret_comparator = data.n_samples <= detail::kAutoExactMaxSamples ? RegretComparator::Exact
                                                                           : RegretComparator::RandomFeatures;
  if (cfg.shuffle && data.n_clients > 0)
    throw ConfigError("study: a federated stream's order is its protocol; it cannot also be shuffled per replicate");
  if (cfg.regret_include_reg && data.n_clients == 0)
    throw ConfigError("study: --regret-include-reg is the federated regrets' option (spec/federated.md §4.7); " +
                      data.name + " is not a federated stream (the graph journal's regret always includes its "
                      "regulariser)");
  if (!(cfg.regret_lambda > 0) || !std::isfinite(cfg.regret_lambda))
    throw ConfigError("study: the regret comparator's λ (--regret-lambda) must be a finite number > 0");
  if (!cfg.regret && (cfg.regret_lambda != kDefaultRegretLambda || !cfg.regret_dict.empty()))
    throw ConfigError("study: --regret-lambda and --regret-dict set the regret's comparator; they need --regret");
  if (cfg.regret) regret_dictionary(cfg, data);  // a bad dictionary fails before any work
  detail::study_metric(cfg, data.task);  // an unknown metric fails before any work
  // And a folder the outputs cannot go to, on the process that writes them (rank 0).
  if (!cfg.communicator || cfg.communicator->size() <= 1 || cfg.communicator->rank() == 0)
    detail::check_study_folder("study: out_dir (--out)", cfg.out_dir);

  StudyResult result;
  result.dataset = data.name;
  result.n_samples = data.n_samples;
  result.n_features = data.n_features;
  result.backend = to_string(cfg.backend);
  result.device = device_name(cfg.backend);
  // The GPU contexts: made once for the whole study (or taken from the caller's pool), their
  // creation reported apart from the algorithms' times.
  if (cfg.backend == BackendKind::Cuda && !cfg.device_contexts) cfg.device_contexts = make_device_contexts();
  const double setup_before = config.device_contexts ? device_context_seconds(*config.device_contexts) : 0.0;
  const auto device_setup = [&] {
    return cfg.device_contexts ? device_context_seconds(*cfg.device_contexts) - setup_before : 0.0;
  };
  result.profile = to_string(cfg.profile);
  result.preset = cfg.preset;
  result.spread = to_string(cfg.spread);
  result.provenance = cfg.provenance;
  result.path_switches = detail::path_switches_set();
  result.regret_include_reg = cfg.regret_include_reg;

  // 0. The time-matched mode's budgets, measured here, before anything else runs.
  if (!cfg.time_match.empty()) {
    if (cfg.communicator && cfg.communicator->size() > 1)
      throw ConfigError("study: the time-matched mode runs in one process (each would measure its own budgets)");
    const AlgorithmSpec reference = parse_algorithm_spec(cfg.time_match);
    result.time_match = detail::match_time_budgets(
        cfg.algorithms, reference, [&](const AlgorithmSpec& spec) { return build(spec, preset, cfg, data, {0}); },
        data, cfg.time_match_rows);
  }

  // 1. Validate: curve points, memory for the results, every algorithm built once.
  const auto points = curve_points(data.n_samples, cfg.curve_points);
  check_result_memory(cfg, points.size());
  const fs::path cell_dir = cfg.out_dir.empty() ? fs::path() : fs::path(cfg.out_dir) / "cells";
  // With several processes only rank 0 reads (and later writes) the cache; it tells the others.
  Communicator* comm = cfg.communicator && cfg.communicator->size() > 1 ? cfg.communicator.get() : nullptr;
  std::vector<Cell> cells = prepare_cells(cfg, preset, data, comm && comm->rank() != 0 ? fs::path() : cell_dir);

  // 2. The regret's comparator (§4.5), once the algorithms are known to define the regret:
  // by default the notebook's λ = 1e-3 on the 76-kernel journal dictionary; on a federated
  // stream the POF-MKL paper's batch comparator over its 51 Gaussians (§4.7).
  std::vector<double> regret_residual2;
  if (cfg.regret) {
    const Dictionary dictionary = regret_dictionary(cfg, data);
    const double lambda = cfg.regret_lambda;
    // The label names a λ other than the papers' (the default's label is the one it always had).
    const std::string with_lambda = lambda == kDefaultRegretLambda ? "" : ", λ = " + detail::shortest_decimal(lambda);
    if (data.n_clients > 0 && cfg.regret_comparator == RegretComparator::Exact) {
      detail::RegretBenchmark benchmark = detail::federated_kernel_ridge(data, dictionary, lambda);
      result.regret_benchmark = benchmark.kernel + " (kernel ridge" + with_lambda + ")";
      regret_residual2 = std::move(benchmark.residual2);
    } else if (data.n_clients > 0) {
      const std::size_t D = cfg.regret_features;
      if (D == 0) throw ConfigError("study: the regret comparator needs at least one random feature");
      detail::RegretBenchmark benchmark = detail::federated_ridge_comparator(data, dictionary, lambda, D);
      result.regret_benchmark =
          benchmark.kernel + " (random-feature ridge, D = " + std::to_string(D) + with_lambda + ")";
      regret_residual2 = std::move(benchmark.residual2);
    } else {
      detail::RegretBenchmark benchmark = detail::batch_kernel_ridge(data, dictionary, lambda);
      result.regret_benchmark = benchmark.kernel + (with_lambda.empty() ? "" : " (" + with_lambda.substr(2) + ")");
      regret_residual2 = std::move(benchmark.residual2);
    }
  }

  // 3. Run what the cache does not hold: on several processes, each its share.
  if (comm) {
    share_cache_decisions(cells, *comm);
    for (Cell& cell : cells)
      if (!cell.done && data.n_clients > 0 && !cfg.regret && !cfg.regret_include_reg && cell.distributable) {
        cell.federation = true;
        cell.prepared.reset();
      }
  }
  const std::vector<WorkItem> tasks = plan_tasks(cells, cfg);
  std::vector<WorkItem> mine;
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (!comm || i % static_cast<std::size_t>(comm->size()) == static_cast<std::size_t>(comm->rank()))
      mine.push_back(tasks[i]);
  std::vector<std::vector<ReplicateRun>> runs(cells.size());
  for (std::size_t c = 0; c < cells.size(); ++c) runs[c].resize(cells[c].randomized ? cfg.n_seeds : 1);
  run_tasks(mine, cells, preset, cfg, data, points, regret_residual2, runs);
  if (comm) {
    for (std::size_t c = 0; c < cells.size(); ++c)
      if (cells[c].federation) {
        std::vector<ReplicateRun> federation;
        try {
          federation = run_federation(cells[c], preset, cfg, data, points, *comm);
        } catch (...) {
          detail::rethrow_with_context("study: algorithm '" + cells[c].spec.to_string() + "' (server and clients on " +
                                       std::to_string(comm->size()) + " processes): ");
        }
        if (comm->rank() == 0) runs[c] = std::move(federation);
      }
    gather_runs(tasks, runs, *comm);
    if (comm->rank() != 0) return result;  // rank 0 writes the outputs
    result.processes = static_cast<std::size_t>(comm->size());
  }
  result.device_setup_seconds = device_setup();

  // 4. Aggregate over the seeds, cache each new cell, write the outputs. Only now, with every
  // replicate finished, does anything appear in out_dir.
  if (!cell_dir.empty()) detail::create_folders(cell_dir.string());
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (cells[c].done) {
      result.results.push_back(cells[c].reused);
      result.results.back().grid = cells[c].spec.grid;  // a family of this study's, not the cache's
      continue;
    }
    AlgorithmResult r = aggregate(cells[c].spec, cells[c].randomized, cells[c].reported, runs[c], cfg, data, points);
    r.resolved_params = cells[c].resolved;
    if (!cells[c].file.empty())
      detail::write_file_atomic(cells[c].file.string(), detail::cell_to_json(cells[c].key, r).dump());
    r.grid = cells[c].spec.grid;  // after the cache: a cell is one configuration, whatever grid names it
    result.results.push_back(std::move(r));
  }
  if (!cfg.out_dir.empty()) write_study_outputs(result, cfg.out_dir);
  return result;
}

}  // namespace omkl
