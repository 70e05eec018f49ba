/// @file test_helpers.h
/// @brief Small synthetic streams and factories shared by the unit tests.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/algorithm_base.h"
#include "cpu/simd_level.h"
#include "random/rng.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl::test {

/// The bit pattern of a double: for tests that compare results bit for bit.
/// The CPU SIMD levels this machine can run, lowest first.
inline std::vector<detail::cpu::SimdLevel> available_simd_levels() {
  using detail::cpu::SimdLevel;
  std::vector<SimdLevel> out;
  for (SimdLevel level : {SimdLevel::Portable, SimdLevel::Avx2Fma, SimdLevel::Avx512})
    if (detail::cpu::simd_level_available(level)) out.push_back(level);
  return out;
}

inline std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}


/// A smooth random regression stream in [0,1] (or ±1 labels), made from a counter-based RNG.
inline Dataset random_stream(std::size_t n, std::size_t d, Task task, std::uint64_t seed = 7) {
  detail::RandomStream rng(seed, 0, detail::RngPurpose::Misc, 99);
  Dataset data;
  data.name = "random";
  data.n_samples = n;
  data.n_features = d;
  data.task = task;
  data.x.resize(n * d);
  data.y.resize(n);
  for (std::size_t t = 0; t < n; ++t) {
    double s = 0.0;
    for (std::size_t k = 0; k < d; ++k) {
      const double v = rng.uniform();
      data.x[t * d + k] = v;
      s += std::sin(3.0 * v + static_cast<double>(k));
    }
    const double target = 0.5 + 0.25 * std::sin(s) + 0.05 * (rng.uniform() - 0.5);
    data.y[t] = task == Task::Regression ? target : (target > 0.5 ? 1.0 : -1.0);
  }
  return data;
}

inline detail::AlgoContext context_for(const Dataset& data, Profile profile = Profile::Paper,
                                       std::vector<std::uint64_t> replicates = {0},
                                       std::uint64_t seed = 3) {
  detail::AlgoContext c;
  c.n_features = data.n_features;
  c.task = data.task;
  c.profile = profile;
  c.seed = seed;
  c.replicates = std::move(replicates);
  c.horizon = data.n_samples;
  return c;
}

inline std::unique_ptr<detail::Algorithm> make(
    const std::string& name, const detail::AlgoContext& context,
    std::vector<std::pair<std::string, std::string>> params = {}) {
  return detail::make_algorithm(name, params, {}, context);
}

/// Runs the whole stream one step at a time; returns R predictions per step.
inline std::vector<double> run_steps(detail::Algorithm& algorithm, const Dataset& data,
                                     std::size_t begin = 0, std::size_t end = 0) {
  if (end == 0) end = data.n_samples;
  const std::size_t R = algorithm.n_replicates();
  std::vector<double> out((end - begin) * R);
  for (std::size_t t = begin; t < end; ++t) algorithm.step(data.row(t), data.y[t], out.data() + (t - begin) * R);
  return out;
}

/// The stream's rows [begin, end) (end 0: all) in blocks of `block` rows through step_block(),
/// as a study hands them over; returns R predictions per row.
inline std::vector<double> run_blocks(detail::Algorithm& algorithm, const Dataset& data, std::size_t block,
                                      std::size_t begin = 0, std::size_t end = 0) {
  if (end == 0) end = data.n_samples;
  const std::size_t R = algorithm.n_replicates();
  std::vector<double> out((end - begin) * R);
  for (std::size_t t = begin; t < end; t += block) {
    const std::size_t n = std::min(block, end - t);
    algorithm.step_block(data.row(t), data.y.data() + t, n, data.n_features, out.data() + (t - begin) * R);
  }
  return out;
}

/// `params` with one more (key, value).
inline std::vector<std::pair<std::string, std::string>> with_param(
    std::vector<std::pair<std::string, std::string>> params, const std::string& key, const std::string& value) {
  params.emplace_back(key, value);
  return params;
}

/// The message of the ConfigError that creating `name` throws, "" when it throws none (other
/// exceptions propagate and fail the test).
inline std::string config_error_message(const std::string& name, const detail::AlgoContext& context,
                                        std::vector<std::pair<std::string, std::string>> params) {
  try {
    make(name, context, std::move(params));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace omkl::test
