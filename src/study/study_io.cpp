/// @file study_io.cpp
/// @brief The cell cache and the study's output files (study_io.h).
#include "study/study_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>

#include "core/env_switch.h"
#include "core/state_io.h"
#include "data/parse_number.h"
#include "omkl/error.h"
#include "omkl/config.h"

namespace omkl {

using json = nlohmann::json;

namespace detail {

std::uint64_t data_checksum(const Dataset& data) {
  std::string bytes(reinterpret_cast<const char*>(data.x.data()), data.x.size() * sizeof(double));
  bytes.append(reinterpret_cast<const char*>(data.y.data()), data.y.size() * sizeof(double));
  return fnv1a64(bytes);
}

// Which numbers a cell of this build computes: raised whenever an algorithm's results change
// for the same inputs (a fix, a spec's reading), so that a cache written by an earlier build is
// recomputed instead of reused. 2: the bandit family's tie rule and IOKS's absolute-loss G̃ and
// G₁ default, and OFSKL's own frequency stream (2026-11-26). 3: on a federated stream the batch
// regret adds no graph learner's regulariser without --regret-include-reg (2026-11-26). 4: the
// bandit family's logs count each kernel's mistakes (2026-11-26). 5: a GPU block's graph walk sums
// in the tree order by default (OMKL_WALK_SUMS=auto; 2026-11-27). 6: the SFG learners' time
// includes their offline graph construction (spec/graph-aided.md §1.7), and cells record
// seconds_std and client_seconds_per_client (2026-11-27).
constexpr int kResultsEpoch = 6;

// One CSV field, quoted (RFC 4180: a quote doubled): a spec has commas, and so has the federated
// regret's benchmark ("gauss:0.1 (random-feature ridge, D = 500)").
inline std::string csv_field(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

json cell_key(const AlgorithmSpec& spec, const StudyConfig& config, const Dataset& data,
              std::uint64_t checksum) {
  json key{{"dataset", data.name},       {"n_samples", data.n_samples},
              {"n_features", data.n_features}, {"data_checksum", std::to_string(checksum)},
              {"spec", spec.to_string()},   {"profile", to_string(config.profile)},
              {"preset", config.preset},    {"seeds", config.n_seeds},
              {"base_seed", config.base_seed}, {"backend", to_string(config.backend)},
              {"curve_points", config.curve_points}, {"regret", config.regret},
              {"n_clients", data.n_clients},
              {"metric", config.metric},
              {"shuffle", config.shuffle},
              {"defaults", config.defaults},
              {"regret_features", config.regret && data.n_clients &&
                                          config.regret_comparator != RegretComparator::Exact
                                      ? config.regret_features
                                      : 0},
              {"results_epoch", kResultsEpoch}};
  if (config.regret_include_reg) key["regret_include_reg"] = true;  // absent: the keys before the option
  if (config.spread == Spread::Population) key["std"] = "population";  // absent: sample, as before it
  if (config.regret && data.n_clients && config.regret_comparator == RegretComparator::Exact)
    key["regret_comparator"] = "exact";  // absent: random features, as before it
  // Absent: the papers' comparator, as before the options.
  if (config.regret && config.regret_lambda != kDefaultRegretLambda) key["regret_lambda"] = config.regret_lambda;
  if (config.regret && !config.regret_dict.empty()) key["regret_dict"] = config.regret_dict;
  // The contents of the files a `table:FILE` parameter names (rate tables, a divergence table):
  // an edited table must not reuse the cell (absent without tables, as before them).
  json tables = json::object();
  const auto add_table = [&tables](const std::string& value) {
    if (value.rfind("table:", 0) != 0) return;
    const std::string path = value.substr(6);
    try {
      tables[path] = std::to_string(fnv1a64(read_whole_file(path)));
    } catch (const InputError&) {
      // unreadable: the algorithm's build names the file
    }
  };
  for (const auto& kv : spec.params) add_table(kv.second);
  for (const auto& kv : config.defaults) add_table(kv.second);
  if (!tables.empty()) key["tables"] = tables;
  // A cell run on another path (OMKL_CPU_SIMD, OMKL_CUDA_*, …) is not reused: its numbers and its
  // time are that path's. Without switches the key has no such entry.
  const auto switches = path_switches_set();
  if (!switches.empty()) key["path_switches"] = path_switches_json(switches);
  return key;
}

json path_switches_json(const std::vector<std::pair<std::string, std::string>>& switches) {
  json set = json::object();
  for (const auto& [name, value] : switches) set[name] = value;
  return set;
}

json result_to_json(const AlgorithmResult& r) {
  json params = json::object();
  for (const auto& kv : r.params) params[kv.first] = kv.second;
  json resolved = json::array();  // an array of pairs: the order the algorithm read them in
  for (const auto& kv : r.resolved_params) resolved.push_back(json::array({kv.first, kv.second}));
  auto number = [](double v) { return std::isfinite(v) ? json(v) : json(nullptr); };
  json per_seed = json::array();
  for (double v : r.final_per_seed) per_seed.push_back(number(v));
  json out{{"algo", r.algo},
              {"spec", r.spec},
              {"params", params},
              {"resolved_params", resolved},
              {"metric", r.metric},
              {"final_mean", number(r.final_mean)},
              {"final_std", number(r.final_std)},
              {"seconds_mean", r.seconds_mean},
              {"kernel_updates_mean", r.kernel_updates_mean},
              {"seeds", r.seeds},
              {"diverged", r.diverged},
              {"final_per_seed", per_seed}};
  if (r.n_clients) {
    out["n_clients"] = r.n_clients;
    out["final_std_clients"] = number(r.final_std_clients);
    if (!r.regret_mean.empty()) {
      out["regret_batch"] = number(r.regret_mean.back());
      out["regret_batch_std_clients"] = number(r.regret_std_clients);
    }
    if (std::isfinite(r.regret_eq11_mean)) {
      out["regret_eq11"] = r.regret_eq11_mean;
      out["regret_eq11_std_clients"] = number(r.regret_eq11_std_clients);
    }
  }
  if (r.uplink_per_client_step > 0 || r.downlink_per_client_step > 0) {
    out["uplink_floats_per_client_step"] = r.uplink_per_client_step;
    out["downlink_floats_per_client_step"] = r.downlink_per_client_step;
    out["max_uplink_floats"] = r.max_uplink;
  }
  if (std::isfinite(r.client_seconds_per_client)) out["client_seconds_per_client"] = r.client_seconds_per_client;
  if (std::isfinite(r.seconds_std)) out["seconds_std"] = r.seconds_std;
  if (!r.grid.empty()) out["grid"] = r.grid;
  return out;
}

AlgorithmResult result_from_cell(const json& cell) {
  AlgorithmResult r;
  const json& j = cell.at("result");
  r.algo = j.at("algo");
  r.spec = j.at("spec");
  for (auto it = j.at("params").begin(); it != j.at("params").end(); ++it)
    r.params.emplace_back(it.key(), it.value().get<std::string>());
  if (j.contains("resolved_params"))  // cells cached before it was recorded have none
    for (const auto& kv : j.at("resolved_params")) r.resolved_params.emplace_back(kv.at(0), kv.at(1));
  r.metric = j.at("metric");
  auto number = [](const json& v) { return v.is_null() ? NAN : v.get<double>(); };
  r.final_mean = number(j.at("final_mean"));
  r.final_std = number(j.at("final_std"));
  r.seconds_mean = j.at("seconds_mean");
  r.seconds_std = j.value("seconds_std", NAN);  // absent: not recorded
  r.kernel_updates_mean = j.value("kernel_updates_mean", 0.0);
  r.seeds = j.at("seeds");
  r.diverged = j.at("diverged");
  for (const auto& v : j.at("final_per_seed")) r.final_per_seed.push_back(number(v));
  r.n_clients = j.value("n_clients", std::size_t{0});
  if (j.contains("final_std_clients")) r.final_std_clients = number(j.at("final_std_clients"));
  if (j.contains("regret_batch_std_clients")) r.regret_std_clients = number(j.at("regret_batch_std_clients"));
  if (j.contains("regret_eq11")) {
    r.regret_eq11_mean = number(j.at("regret_eq11"));
    r.regret_eq11_std_clients = number(j.at("regret_eq11_std_clients"));
  }
  r.client_seconds_per_client = j.value("client_seconds_per_client", NAN);  // absent: not timed apart
  r.uplink_per_client_step = j.value("uplink_floats_per_client_step", 0.0);
  r.downlink_per_client_step = j.value("downlink_floats_per_client_step", 0.0);
  r.max_uplink = j.value("max_uplink_floats", 0.0);
  r.curve_t = cell.at("curve_t").get<std::vector<std::size_t>>();
  for (const auto& v : cell.at("curve_mean")) r.curve_mean.push_back(number(v));
  for (const auto& v : cell.at("curve_std")) r.curve_std.push_back(number(v));
  if (cell.contains("regret_mean")) {
    for (const auto& v : cell.at("regret_mean")) r.regret_mean.push_back(number(v));
    for (const auto& v : cell.at("regret_std")) r.regret_std.push_back(number(v));
  }
  if (cell.contains("logs"))
    for (const auto& one : cell.at("logs")) {
      std::vector<std::pair<std::string, std::vector<double>>> logs;
      for (auto it = one.begin(); it != one.end(); ++it) logs.emplace_back(it.key(), it.value().get<std::vector<double>>());
      r.logs.push_back(std::move(logs));
    }
  r.reused = true;
  return r;
}

namespace {
json logs_to_json(const AlgorithmResult& r) {
  json replicates = json::array();
  for (const auto& logs : r.logs) {
    json one = json::object();
    for (const auto& [name, values] : logs) one[name] = values;
    replicates.push_back(one);
  }
  return replicates;
}
}  // namespace

json cell_to_json(const json& key, const AlgorithmResult& r) {
  auto numbers = [](const std::vector<double>& v) {
    json a = json::array();
    for (double x : v) a.push_back(std::isfinite(x) ? json(x) : json(nullptr));
    return a;
  };
  json cell{{"key", key}, {"result", result_to_json(r)}, {"curve_t", r.curve_t},
            {"curve_mean", numbers(r.curve_mean)}, {"curve_std", numbers(r.curve_std)}};
  if (!r.logs.empty()) cell["logs"] = logs_to_json(r);
  if (!r.regret_mean.empty()) {
    cell["regret_mean"] = numbers(r.regret_mean);
    cell["regret_std"] = numbers(r.regret_std);
  }
  return cell;
}

}  // namespace detail

std::vector<GridBest> grid_bests(const StudyResult& result) {
  std::vector<GridBest> grids;
  for (const AlgorithmResult& r : result.results) {
    if (r.grid.empty()) continue;
    auto at = std::find_if(grids.begin(), grids.end(), [&](const GridBest& g) { return g.grid == r.grid; });
    if (at == grids.end()) {
      GridBest first;
      first.grid = r.grid;
      grids.push_back(first);
      at = grids.end() - 1;
    }
    ++at->configurations;
    if (std::isfinite(r.final_mean) && !(r.final_mean >= at->best_final_mean)) {  // NaN best: the first finite
      at->best_spec = r.spec;
      at->best_final_mean = r.final_mean;
      at->metric = r.metric;
    }
  }
  return grids;
}

StudyOutputs format_study_outputs(const StudyResult& result) {
  StudyOutputs out;
  json results = json::array();
  for (const auto& r : result.results) results.push_back(detail::result_to_json(r));
  json summary{{"dataset", result.dataset}, {"n_samples", result.n_samples},
                     {"n_features", result.n_features}, {"backend", result.backend},
                     {"device", result.device},     {"profile", result.profile},
                     {"preset", result.preset},     {"std", result.spread},
                     {"results", results}};
  json grids = json::array();
  for (const GridBest& g : grid_bests(result)) {
    json entry{{"grid", g.grid}, {"configurations", g.configurations}};
    entry["best_spec"] = g.best_spec.empty() ? json(nullptr) : json(g.best_spec);
    entry["best_final_mean"] = std::isfinite(g.best_final_mean) ? json(g.best_final_mean) : json(nullptr);
    grids.push_back(entry);
  }
  if (!grids.empty()) summary["grids"] = grids;
  if (!result.regret_benchmark.empty()) summary["regret_benchmark"] = result.regret_benchmark;
  if (result.regret_include_reg) summary["regret_include_reg"] = true;
  if (result.processes > 1) summary["processes"] = result.processes;
  if (result.backend == "cuda") summary["device_setup_seconds"] = result.device_setup_seconds;
  if (!result.path_switches.empty()) summary["path_switches"] = detail::path_switches_json(result.path_switches);
  if (!result.time_match.reference.empty()) {
    json entries = json::array();
    for (const auto& e : result.time_match.entries) {
      json entry{{"given", e.given}, {"spec", e.spec}, {"seconds_per_round", e.seconds_per_round}};
      if (!e.parameter.empty()) entry[e.parameter] = e.value;
      if (!e.note.empty()) entry["note"] = e.note;
      entries.push_back(entry);
    }
    summary["time_match"] = json{{"reference", result.time_match.reference},
                                 {"reference_seconds_per_round", result.time_match.reference_seconds_per_round},
                                 {"probe_rows", result.time_match.probe_rows},
                                 {"algorithms", entries}};
  }
  summary["omkl_version"] = OMKL_VERSION_STRING;
  for (const auto& [key, value] : result.provenance) summary[key] = value;
  out.summary_json = summary.dump(2) + "\n";

  std::ostringstream csv;
  csv.precision(17);
  csv << "algo,spec,metric,t,mean,std\n";
  for (const auto& r : result.results)
    for (std::size_t k = 0; k < r.curve_t.size(); ++k)
      csv << r.algo << "," << detail::csv_field(r.spec) << "," << r.metric << "," << r.curve_t[k] << ","
          << r.curve_mean[k] << "," << r.curve_std[k] << "\n";
  out.curves_csv = csv.str();
  // The algorithms' end-of-run logs, per seed (spec/bandit.md §8.6), where any has them.
  json logs = json::array();
  for (const auto& r : result.results)
    if (!r.logs.empty()) logs.push_back(json{{"algo", r.algo}, {"spec", r.spec}, {"replicates", detail::logs_to_json(r)}});
  if (!logs.empty()) out.logs_json = logs.dump(1) + "\n";
  if (result.regret_benchmark.empty()) return out;
  std::ostringstream regret;
  regret.precision(17);
  regret << "algo,spec,benchmark,t,mean,std\n";
  for (const auto& r : result.results)
    for (std::size_t k = 0; k < r.regret_mean.size(); ++k)
      regret << r.algo << "," << detail::csv_field(r.spec) << "," << detail::csv_field(result.regret_benchmark) << ","
             << r.curve_t[k] << "," << r.regret_mean[k] << "," << r.regret_std[k] << "\n";
  out.regret_csv = regret.str();
  return out;
}

namespace detail {

// The files a study writes into its folder (write_study_outputs), summary.json last.
constexpr const char* kStudyFiles[] = {"curves.csv", "logs.json", "regret.csv", "summary.json"};

void check_study_folder(const std::string& option, const std::string& dir, bool with_cells) {
  if (dir.empty()) return;
  check_output_path(option, dir, /*directory=*/true);
  // In a folder that exists, what the study will write there: the cell cache and its files.
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return;
  if (with_cells) check_output_path(option, (std::filesystem::path(dir) / "cells").string(), /*directory=*/true);
  for (const char* file : kStudyFiles)
    check_output_path(option, (std::filesystem::path(dir) / file).string(), /*directory=*/false);
}

}  // namespace detail

void write_study_outputs(const StudyResult& result, const std::string& dir) {
  if (dir.empty()) throw ConfigError("write_study_outputs: no folder given");
  detail::check_study_folder("write_study_outputs: folder", dir, /*with_cells=*/false);
  const StudyOutputs out = format_study_outputs(result);
  detail::create_folders(dir);
  // All or none, summary.json last: a folder with a new summary.json has every file of its run.
  std::vector<std::pair<std::string, std::string>> files;
  const auto add = [&](const char* name, const std::string& text) {
    if (!text.empty()) files.emplace_back((std::filesystem::path(dir) / name).string(), text);
  };
  add("curves.csv", out.curves_csv);
  add("logs.json", out.logs_json);
  add("regret.csv", out.regret_csv);
  add("summary.json", out.summary_json);
  detail::write_files_atomic(files);
  // A folder reused by a run without regret or logs must not keep an earlier run's (the Python
  // package and --plot would read them as this run's).
  for (const auto& [name, text] : {std::pair<const char*, const std::string&>{"logs.json", out.logs_json},
                                   {"regret.csv", out.regret_csv}}) {
    std::error_code ignored;
    if (text.empty()) std::filesystem::remove(std::filesystem::path(dir) / name, ignored);
  }
}

}  // namespace omkl
