/// @file synthetic.cpp
/// @brief The switching-kernel synthetic streams of spec/raker.md §6 (Dataset 1 and Dataset 2).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "random/rng.h"
#include "data/synthetic_internal.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace omkl {

namespace {

struct Regime {
  std::size_t last;  // last 1-based sample of the range
  double sigma2;
};

// §6.1: σ² = 1 on [1, 8000] ∪ [18001, 26000], 10 on [8001, 18000] ∪ [26001, 36000].
constexpr Regime kDataset1[] = {{8000, 1.0}, {18000, 10.0}, {26000, 1.0}, {36000, 10.0}};
// §6.2 (Table 1 of the paper).
constexpr Regime kDataset2[] = {{200, 0.01},  {1000, 1.0},  {2000, 10.0}, {2300, 0.01},
                                {3000, 1.0},  {3500, 10.0}, {4300, 0.01}, {5100, 1.0},
                                {5900, 0.01}, {6500, 0.1}};

constexpr std::size_t kDefaultLength1 = 36000;  // §6.1 "Use T = 36 000"
constexpr std::size_t kDefaultLength2 = 6500;

template <std::size_t N>
double lookup(const Regime (&schedule)[N], std::size_t t) {
  for (const Regime& regime : schedule) {
    if (t <= regime.last) return regime.sigma2;
  }
  return schedule[N - 1].sigma2;
}

// Sources are processed in blocks: the squared distances of a block are built one coordinate
// at a time over a feature-major copy of X (a loop the compiler vectorises); each distance is
// still the ascending-k sum, so the values equal those of the plain double loop.
constexpr std::size_t kSourceBlock = 256;
constexpr std::size_t kTargetsPerChunk = 16;

void targets_of_chunk(std::size_t first, std::size_t last, const std::vector<double>& x,
                      const std::vector<double>& x_by_feature, std::size_t n, std::size_t d,
                      const std::vector<double>& alpha, const std::vector<double>& gamma,
                      bool kernel_index_target, std::vector<double>& y) {
  double d2[kSourceBlock];
  for (std::size_t t = first; t < last; ++t) {
    const double* xt = x.data() + t * d;
    double sum = 0.0;
    for (std::size_t begin = 0; begin <= t; begin += kSourceBlock) {
      const std::size_t m = std::min(kSourceBlock, t + 1 - begin);
      std::fill(d2, d2 + m, 0.0);
      for (std::size_t k = 0; k < d; ++k) {
        const double xtk = xt[k];
        const double* column = x_by_feature.data() + k * n + begin;
        for (std::size_t i = 0; i < m; ++i) {
          const double diff = xtk - column[i];
          d2[i] += diff * diff;
        }
      }
      if (kernel_index_target) {
        const double g = gamma[t];
        for (std::size_t i = 0; i < m; ++i) sum += alpha[begin + i] * std::exp(-g * d2[i]);
      } else {
        for (std::size_t i = 0; i < m; ++i) {
          sum += alpha[begin + i] * std::exp(-gamma[begin + i] * d2[i]);
        }
      }
    }
    y[t] = sum;
  }
}

}  // namespace

namespace detail {

double synthetic_sigma2(SyntheticKind kind, std::size_t t) {
  return kind == SyntheticKind::Dataset1 ? lookup(kDataset1, t) : lookup(kDataset2, t);
}

std::vector<double> synthetic_targets(const std::vector<double>& x, std::size_t n, std::size_t d,
                                      const std::vector<double>& alpha,
                                      const std::vector<double>& gamma, bool kernel_index_target,
                                      unsigned n_threads) {
  std::vector<double> x_by_feature(n * d);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t k = 0; k < d; ++k) x_by_feature[k * n + t] = x[t * d + k];
  }
  std::vector<double> y(n, 0.0);
  const std::size_t n_chunks = (n + kTargetsPerChunk - 1) / kTargetsPerChunk;
  // Dynamic hand-out of chunks, the most expensive (largest t) first, for load balance. Which
  // thread takes a chunk does not matter: every y_t is one thread's fixed-order sum.
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (;;) {
      const std::size_t taken = next.fetch_add(1, std::memory_order_relaxed);
      if (taken >= n_chunks) return;
      const std::size_t chunk = n_chunks - 1 - taken;
      const std::size_t first = chunk * kTargetsPerChunk;
      targets_of_chunk(first, std::min(n, first + kTargetsPerChunk), x, x_by_feature, n, d,
                       alpha, gamma, kernel_index_target, y);
    }
  };
  const std::size_t wanted = std::min<std::size_t>(std::max(1u, n_threads), n_chunks);
  std::vector<std::thread> helpers;
  for (std::size_t i = 1; i < wanted; ++i) {
    try {
      helpers.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // fewer threads: same result, the calling thread does the rest
    }
  }
  worker();
  for (std::thread& helper : helpers) helper.join();
  return y;
}

}  // namespace detail

Dataset make_synthetic(const SyntheticOptions& options) {
  if (options.n_features == 0) throw ConfigError("synthetic: n_features must be positive");
  if (!std::isfinite(options.sigma_alpha) || options.sigma_alpha < 0.0) {
    throw ConfigError("synthetic: sigma_alpha must be finite and non-negative, got " +
                      std::to_string(options.sigma_alpha));
  }
  const bool first = options.kind == SyntheticKind::Dataset1;
  const std::size_t n =
      options.n_samples != 0 ? options.n_samples : (first ? kDefaultLength1 : kDefaultLength2);
  const std::size_t d = options.n_features;
  // The stream is held in memory: n rows of d features and a target, as doubles.
  if (n > std::numeric_limits<std::size_t>::max() / sizeof(double) / (d + 1))
    throw ConfigError("synthetic: a stream of " + std::to_string(n) + " rows of " + std::to_string(d) +
                      " features is larger than any memory");

  Dataset data;
  data.name = first ? "synthetic-dataset1" : "synthetic-dataset2";
  data.n_samples = n;
  data.n_features = d;
  data.task = Task::Regression;
  data.x.resize(n * d);

  // Draw order (part of the reproducibility contract): for t = 1..T, the d entries of x_t,
  // then e_t; one stream per kind, so the two datasets never share draws.
  detail::RandomStream stream(options.seed, 0, detail::RngPurpose::Synthetic, first ? 1 : 2);
  std::vector<double> alpha(n);
  std::vector<double> gamma(n);
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t k = 0; k < d; ++k) data.x[t * d + k] = stream.normal();
    alpha[t] = 1.0 + options.sigma_alpha * stream.normal();
    gamma[t] = 1.0 / (2.0 * detail::synthetic_sigma2(options.kind, t + 1));
  }

  data.y = detail::synthetic_targets(data.x, n, d, alpha, gamma, options.kernel_index_target,
                                     std::thread::hardware_concurrency());
  // §6.3: y is generated from the raw x, then X (per feature) and y are min-max normalised
  // over the whole stream.
  if (options.normalize) normalize(data, Normalization::MinMaxAll);
  return data;
}

}  // namespace omkl
