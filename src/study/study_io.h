/// @file study_io.h
/// @brief What a study writes and reads back: the cell cache (one JSON file per finished
/// algorithm configuration, keyed by everything its numbers depend on, so a re-run reuses it)
/// and the output contract's summary.json / curves.csv / regret.csv (write_study_outputs(),
/// declared in omkl/study.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "omkl/study.h"

namespace omkl::detail {

/// The stream's name in messages: Dataset::name, or "<dataset>" for a stream built in memory
/// without one.
inline std::string stream_name(const Dataset& data) { return data.name.empty() ? "<dataset>" : data.name; }

/// Before any work, that a study can write into `dir` (StudyConfig::out_dir; nothing where it is
/// empty): a folder, or one that can be made, and in one that exists, its output files no
/// folders and (`with_cells`) its cell cache a folder (check_output_path()). ConfigError
/// "OPTION PATH: why".
void check_study_folder(const std::string& option, const std::string& dir, bool with_cells = true);

/// FNV-1a of the stream's bytes (features then targets): part of a cell's key.
std::uint64_t data_checksum(const Dataset& data);
/// Everything a cell's numbers depend on besides the code: data, spec, profile, preset, seeds,
/// backend, curve points, regret.
nlohmann::json cell_key(const AlgorithmSpec& spec, const StudyConfig& config, const Dataset& data,
                        std::uint64_t checksum);
/// Path switches (core/env_switch.h's path_switches_set()) as the JSON object that summary.json,
/// a cell's key and `omkl bench --json` record: {name: value}.
nlohmann::json path_switches_json(const std::vector<std::pair<std::string, std::string>>& switches);
/// One result as summary.json lists it (non-finite numbers as null).
nlohmann::json result_to_json(const AlgorithmResult& r);
/// A cache file's contents: key, result and curves.
nlohmann::json cell_to_json(const nlohmann::json& key, const AlgorithmResult& r);
/// The result stored in a cache file (marked reused). Throws on a malformed cell.
AlgorithmResult result_from_cell(const nlohmann::json& cell);

}  // namespace omkl::detail
