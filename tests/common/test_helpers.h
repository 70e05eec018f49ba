/// @file test_helpers.h
/// @brief Small synthetic streams and factories shared by the unit tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
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

// Runs f, which must throw an E, and returns its message; a test failure (and "") when f throws
// something else or nothing.
template <typename E = std::exception>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    // One handler (not catch E, then std::exception: the two are the same type by default).
    if (dynamic_cast<const E*>(&e) != nullptr) return e.what();
    ADD_FAILURE() << "another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "nothing was thrown";
  return "";
}

inline std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}


/// Whether two vectors hold the same doubles, bit for bit.
inline bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

/// "" when `got` has `want`'s size and each value lies within tolerance·max(1, |want|) of
/// want's; else where the first does not, for failure messages.
inline std::string first_apart(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  if (got.size() != want.size()) return std::to_string(got.size()) + " values against " + std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(std::fabs(got[i] - want[i]) <= tolerance * std::max(1.0, std::fabs(want[i])))) {
      std::ostringstream s;
      s.precision(17);
      s << "at " << i << ": " << got[i] << " against " << want[i];
      return s.str();
    }
  return "";
}

/// Where two vectors first differ, for failure messages.
inline std::string first_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return "sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) {
      std::ostringstream s;
      s.precision(17);
      s << "first difference at " << i << ": " << a[i] << " vs " << b[i];
      return s.str();
    }
  return "identical";
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

/// random_stream's regression rows with inputs in [−1, 1]^d and targets in [0, 1], as the
/// bandit protocol scales them (spec/bandit.md §8).
inline Dataset bandit_stream(std::size_t n, std::size_t d, std::uint64_t seed = 5) {
  Dataset data = random_stream(n, d, Task::Regression, seed);
  for (double& v : data.x) v = 2.0 * v - 1.0;
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

/// got within 1e-10 of expected, relative to max(1, |expected|): two paths that compute the same
/// numbers in another order (a resident walk against the host path).
inline void expect_close(double expected, double got, const std::string& where) {
  EXPECT_NEAR(got, expected, 1e-10 * std::max(1.0, std::fabs(expected))) << where;
}

/// n_orders permutations of n_rows rows (order k from the stream (seed, k)): the per-replicate
/// orders of a shuffled study.
inline std::vector<std::vector<std::size_t>> shuffled_orders(std::size_t n_rows, std::size_t n_orders,
                                                             std::uint64_t seed = 11) {
  std::vector<std::vector<std::size_t>> out;
  for (std::size_t k = 0; k < n_orders; ++k) {
    detail::RandomStream rng(seed, k, detail::RngPurpose::Misc, 77);
    std::vector<std::size_t> order(n_rows);
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
    out.push_back(std::move(order));
  }
  return out;
}

/// `data` in each of shuffled_orders()' orders: the per-replicate streams of a shuffled study.
inline std::vector<Dataset> shuffled_streams(const Dataset& data, std::size_t n_orders, std::uint64_t seed = 11) {
  std::vector<Dataset> out;
  for (const std::vector<std::size_t>& order : shuffled_orders(data.n_samples, n_orders, seed)) {
    Dataset s = data;
    for (std::size_t t = 0; t < order.size(); ++t) {
      std::copy(data.row(order[t]), data.row(order[t]) + data.n_features, s.x.begin() + static_cast<std::ptrdiff_t>(t * data.n_features));
      s.y[t] = data.y[order[t]];
    }
    out.push_back(std::move(s));
  }
  return out;
}

/// Replicate r on `data` in orders[r] (orders of all of data's rows), steps [begin, end) (end 0:
/// the last) in blocks of `block` steps through step_block_replicated(), as a study hands them
/// over; returns R predictions per step.
inline std::vector<double> run_replicated_blocks(detail::Algorithm& algorithm, const Dataset& data,
                                                 const std::vector<std::vector<std::size_t>>& orders,
                                                 std::size_t block, std::size_t begin = 0, std::size_t end = 0) {
  const std::size_t R = algorithm.n_replicates(), T = data.n_samples;
  if (end == 0) end = T;
  std::vector<double> out((end - begin) * R);
  std::vector<std::uint32_t> rows;
  for (std::size_t t = begin; t < end; t += block) {
    const std::size_t n = std::min(block, end - t);
    rows.assign(n * R, 0);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t r = 0; r < R; ++r) rows[i * R + r] = static_cast<std::uint32_t>(orders.at(r).at(t + i));
    detail::StreamRows stream_rows;
    stream_rows.x = data.x.data();
    stream_rows.y = data.y.data();
    stream_rows.n_rows = T;
    stream_rows.n_features = data.n_features;
    stream_rows.rows = rows.data();
    stream_rows.n_steps = n;
    algorithm.step_block_replicated(stream_rows, out.data() + (t - begin) * R);
  }
  return out;
}

/// A federated stream of `rounds` rounds of n_clients samples (random_stream(), d features),
/// and the context of an algorithm on it.
inline Dataset federated_stream(std::size_t n_clients, std::size_t rounds, std::size_t d, std::uint64_t seed) {
  Dataset data = random_stream(n_clients * rounds, d, Task::Regression, seed);
  data.n_clients = n_clients;
  return data;
}
inline detail::AlgoContext federated_context(const Dataset& data, Profile profile,
                                             std::vector<std::uint64_t> replicates) {
  detail::AlgoContext c = context_for(data, profile, std::move(replicates));
  c.n_clients = data.n_clients;
  return c;
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
