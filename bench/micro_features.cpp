/// @file micro_features.cpp
/// @brief Micro-benchmarks of the CPU feature map and backend step (Google Benchmark).
///
/// The problem size is the `omkl bench` default: the 76-kernel dictionary with D = 50, so one
/// sample needs P·D = 3800 angles (sin and cos of each), on d = 5 features (airfoil).
///  - SinCos/*: the 3800 sin/cos pairs alone: std::sin + std::cos, the portable fast kernel, the
///    AVX2+FMA kernel (skipped where the CPU lacks it);
///  - BackendAdvance/*: one CPU backend step of Raker's shape (S = P slots, ‖θ‖² requested),
///    advancing blocks of 256 samples, per instruction-set level;
///  - FrequencyDraws/*: the 76 frequency matrices of one replicate (D = 50) on Naval's d = 17
///    features, i.i.d. (rf: 51 normal and 25 Cauchy matrices) and orthogonal (orf: the Gaussian
///    kernels' QR blocks), on one thread: construction's host cost per replicate.
/// Arguments are drawn like the projections of airfoil: mostly |a| < 1e4, a tail to 1e8.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "features/random_features.h"
#include "features/rf_backend.h"
#include "cpu/cpu_rf_backend.h"
#include "cpu/fast_sincos.h"

namespace {

using omkl::detail::RfProblem;
using omkl::detail::SlotSchedule;
using omkl::detail::cpu::SimdLevel;

constexpr std::size_t kKernels = 76, kRff = 50, kFeatures = 5;

std::vector<double> airfoil_like_angles(std::size_t n) {
  std::mt19937_64 rng(42);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-4.0, 8.0);  // log10 |a|
  std::vector<double> a(n);
  for (auto& v : a) v = std::copysign(std::pow(10.0, uniform(rng)), normal(rng));
  return a;
}

void SinCosStd(benchmark::State& state) {
  const auto a = airfoil_like_angles(kKernels * kRff);
  std::vector<double> s(a.size()), c(a.size());
  for (auto _ : state) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      s[i] = std::sin(a[i]);
      c[i] = std::cos(a[i]);
    }
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * a.size()));
}
BENCHMARK(SinCosStd);

void SinCosFast(benchmark::State& state, SimdLevel level) {
  if (!omkl::detail::cpu::simd_level_available(level)) {
    state.SkipWithError("this CPU lacks this SIMD level");
    return;
  }
  const auto a = airfoil_like_angles(kKernels * kRff);
  std::vector<double> s(a.size()), c(a.size());
  for (auto _ : state) {
    omkl::detail::cpu::fast_sincos(level, a.data(), s.data(), c.data(), a.size());
    benchmark::DoNotOptimize(s.data());
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * a.size()));
}
BENCHMARK_CAPTURE(SinCosFast, portable, SimdLevel::Portable);
BENCHMARK_CAPTURE(SinCosFast, avx2_fma, SimdLevel::Avx2Fma);
BENCHMARK_CAPTURE(SinCosFast, avx512, SimdLevel::Avx512);

void BackendAdvance(benchmark::State& state, SimdLevel level) {
  if (!omkl::detail::cpu::simd_level_available(level)) {
    state.SkipWithError("this CPU lacks this SIMD level");
    return;
  }
  RfProblem problem;
  problem.n_kernels = kKernels;
  problem.n_rff = kRff;
  problem.n_features = kFeatures;
  problem.feature_scale = 1.0 / std::sqrt(static_cast<double>(kRff));
  problem.need_norm2 = true;
  for (std::size_t p = 0; p < kKernels; ++p) problem.slot_kernel.push_back(static_cast<std::uint32_t>(p));
  auto backend = omkl::detail::cpu::make_cpu_rf_backend(problem, level);

  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> V(kRff * kFeatures);
  for (std::size_t p = 0; p < kKernels; ++p) {
    const double inv_sigma = std::pow(10.0, 2.0 - 4.0 * static_cast<double>(p) / kKernels);
    for (auto& v : V) v = normal(rng) * inv_sigma;
    backend->set_frequencies(0, p, V.data());
  }
  constexpr std::size_t kBlock = 256;
  std::vector<double> x(kBlock * kFeatures), y(kBlock), f(kBlock * kKernels), n2(kBlock * kKernels);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (auto& v : x) v = uniform(rng) * 100.0;
  for (auto& v : y) v = uniform(rng);
  SlotSchedule schedule;
  schedule.eta = 0.01;
  schedule.lambda = 0.01;
  const std::vector<SlotSchedule> schedules(kKernels, schedule);
  std::int64_t t = 1;
  for (auto _ : state) {
    backend->advance(x.data(), y.data(), kBlock, t, schedules, f.data(), n2.data());
    t += kBlock;
    benchmark::DoNotOptimize(f.data());
  }
  // One item = one sample (all kernels): items/s = samples per second for one replicate.
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kBlock));
}
BENCHMARK_CAPTURE(BackendAdvance, portable, SimdLevel::Portable)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BackendAdvance, avx2_fma, SimdLevel::Avx2Fma)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BackendAdvance, avx512, SimdLevel::Avx512)->Unit(benchmark::kMicrosecond);

void FrequencyDraws(benchmark::State& state, omkl::detail::RfKind kind) {
  using namespace omkl::detail;
  const omkl::Dictionary dictionary = omkl::parse_dictionary("jmlr23-76");
  constexpr std::size_t kNavalFeatures = 17;
  std::uint64_t replicate = 0;
  for (auto _ : state) {
    for (std::size_t k = 0; k < dictionary.size(); ++k) {
      RandomStream rng(1, replicate, RngPurpose::Frequencies, k);
      auto V = draw_frequencies(dictionary[k], kRff, kNavalFeatures, kind, rng);
      benchmark::DoNotOptimize(V.data());
    }
    ++replicate;
  }
  // One item = one matrix.
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * dictionary.size()));
}
BENCHMARK_CAPTURE(FrequencyDraws, rf, omkl::detail::RfKind::Rf)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(FrequencyDraws, orf, omkl::detail::RfKind::Orf)->Unit(benchmark::kMicrosecond);

}  // namespace
