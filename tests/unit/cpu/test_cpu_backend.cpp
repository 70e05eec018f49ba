#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/test_helpers.h"
#include "features/rf_backend.h"
#include "cpu/cpu_rf_backend.h"
#include "cpu/fast_sincos.h"
#include "omkl/error.h"

using omkl::test::available_simd_levels;
using omkl::test::bits;
using namespace omkl;
using namespace omkl::detail;
using namespace omkl::detail::cpu;

namespace {


// A small problem with everything the backend must honour: D not a multiple of 4, kernels
// with several slots, with one slot (the fused single-slot path) and with none, late starts,
// resets, both step schedules.
struct Problem {
  RfProblem problem;
  std::vector<SlotSchedule> schedules;
  std::vector<std::vector<double>> frequencies;  // per (replicate, kernel)
  std::vector<double> x, y;
  std::size_t n_samples = 0;
};

Problem make_problem(std::size_t R = 2, std::size_t D = 7, std::size_t d = 3, std::size_t T = 60,
                 LossKind loss = LossKind::Squared) {
  Problem s;
  s.problem.n_replicates = R;
  s.problem.n_kernels = 4;
  s.problem.n_rff = D;
  s.problem.n_features = d;
  s.problem.slot_kernel = {0, 1, 0, 0, 2};  // kernel 3 has no slot
  s.problem.feature_scale = 1.0 / std::sqrt(static_cast<double>(D));
  s.problem.loss = loss;
  s.problem.need_norm2 = true;
  SlotSchedule base;
  base.eta = 0.3;
  base.lambda = 0.02;
  s.schedules.assign(5, base);
  s.schedules[1].inv_sqrt_t = true;
  s.schedules[2].active_from = 9;
  s.schedules[3].reset_period = 13;
  s.schedules[3].shrink_scale = 0.1;
  s.schedules[3].step_scale = 0.1;
  s.schedules[4].active_from = 5;
  s.schedules[4].reset_period = 11;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < s.problem.n_kernels; ++k) {
      std::vector<double> V(D * d);
      for (double& v : V) v = normal(rng) * (1.0 + 3.0 * k);
      s.frequencies.push_back(V);
    }
  s.n_samples = T;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  s.x.resize(T * d);
  s.y.resize(T);
  for (double& v : s.x) v = unit(rng);
  for (double& v : s.y) v = loss == LossKind::Squared ? unit(rng) : (unit(rng) < 0.5 ? -1.0 : 1.0);
  return s;
}

std::unique_ptr<RfBackend> make_backend(const Problem& s, SimdLevel level) {
  auto backend = make_cpu_rf_backend(s.problem, level);
  for (std::size_t r = 0; r < s.problem.n_replicates; ++r)
    for (std::size_t k = 0; k < s.problem.n_kernels; ++k)
      backend->set_frequencies(r, k, s.frequencies[r * s.problem.n_kernels + k].data());
  return backend;
}

struct Trace {
  std::vector<double> f, norm2;
};

// Advances through the stream in the given block lengths (0 = the rest).
Trace run(RfBackend& backend, const Problem& s, const std::vector<std::size_t>& blocks) {
  const std::size_t RS = s.problem.n_replicates * s.problem.n_slots(), d = s.problem.n_features;
  Trace out;
  out.f.assign(s.n_samples * RS, -1.0);
  out.norm2.assign(s.n_samples * RS, -1.0);
  std::size_t begin = 0;
  for (std::size_t i = 0; begin < s.n_samples; ++i) {
    std::size_t len = i < blocks.size() && blocks[i] ? blocks[i] : s.n_samples - begin;
    len = std::min(len, s.n_samples - begin);
    backend.advance(s.x.data() + begin * d, s.y.data() + begin, len,
                    static_cast<std::int64_t>(begin) + 1, s.schedules, out.f.data() + begin * RS,
                    out.norm2.data() + begin * RS);
    begin += len;
  }
  return out;
}

// Straightforward reference of one replicate with std::sin/std::cos (as the CPU backend was
// before the fast kernels), from the same frequencies.
Trace reference(const Problem& s, std::size_t r) {
  const auto& p = s.problem;
  const std::size_t D = p.n_rff, d = p.n_features, S = p.n_slots();
  std::vector<std::vector<double>> theta(S, std::vector<double>(2 * D, 0.0));
  Trace out;
  for (std::size_t t = 1; t <= s.n_samples; ++t) {
    const double* x = s.x.data() + (t - 1) * d;
    for (std::size_t slot = 0; slot < S; ++slot) {
      const SlotSchedule& sc = s.schedules[slot];
      if (static_cast<std::int64_t>(t) < sc.active_from) {
        out.f.push_back(0.0);
        out.norm2.push_back(0.0);
        continue;
      }
      if (schedule_resets(sc, static_cast<std::int64_t>(t))) theta[slot].assign(2 * D, 0.0);
      const std::vector<double>& V = s.frequencies[r * p.n_kernels + p.slot_kernel[slot]];
      std::vector<double> z(2 * D);
      for (std::size_t i = 0; i < D; ++i) {
        double a = 0.0;
        for (std::size_t k = 0; k < d; ++k) a += x[k] * V[i * d + k];
        z[i] = p.feature_scale * std::sin(a);
        z[D + i] = p.feature_scale * std::cos(a);
      }
      double f = 0.0, n2 = 0.0;
      for (std::size_t i = 0; i < 2 * D; ++i) {
        f += theta[slot][i] * z[i];
        n2 += theta[slot][i] * theta[slot][i];
      }
      out.f.push_back(f);
      out.norm2.push_back(n2);
      const double eta = sc.inv_sqrt_t ? sc.eta / std::sqrt(static_cast<double>(t)) : sc.eta;
      const double shrink = 1.0 - sc.shrink_scale * eta * sc.lambda;
      const double gain = sc.step_scale * eta * loss_derivative(p.loss, f, s.y[t - 1]);
      for (std::size_t i = 0; i < 2 * D; ++i) theta[slot][i] = shrink * theta[slot][i] - gain * z[i];
    }
  }
  return out;
}

}  // namespace

TEST(CpuBackendTest, MatchesAStraightforwardStdSinCosReference) {
  for (LossKind loss : {LossKind::Squared, LossKind::Logistic}) {
    const Problem s = make_problem(2, 7, 3, 80, loss);
    const std::size_t S = s.problem.n_slots(), R = s.problem.n_replicates;
    for (SimdLevel level : available_simd_levels()) {
      auto backend = make_backend(s, level);
      EXPECT_EQ(cpu_backend_simd_level(*backend), level);
      const Trace got = run(*backend, s, {});
      for (std::size_t r = 0; r < R; ++r) {
        const Trace want = reference(s, r);
        for (std::size_t t = 0; t < s.n_samples; ++t)
          for (std::size_t slot = 0; slot < S; ++slot) {
            const std::size_t i = (t * R + r) * S + slot;
            ASSERT_NEAR(got.f[i], want.f[t * S + slot], 1e-12 * std::max(1.0, std::fabs(want.f[t * S + slot])))
                << to_string(level) << " r" << r << " t" << t << " slot " << slot;
            ASSERT_NEAR(got.norm2[i], want.norm2[t * S + slot], 1e-12 * std::max(1.0, want.norm2[t * S + slot]))
                << to_string(level) << " r" << r << " t" << t << " slot " << slot;
          }
      }
    }
  }
}

TEST(CpuBackendTest, BlocksAndSingleStepsAreBitIdentical) {
  const Problem s = make_problem(2, 7, 3, 90);
  for (SimdLevel level : available_simd_levels()) {
    auto one = make_backend(s, level);
    const Trace a = run(*one, s, std::vector<std::size_t>(s.n_samples, 1));
    auto blocked = make_backend(s, level);
    const Trace b = run(*blocked, s, {2, 31, 1, 40, 0});
    for (std::size_t i = 0; i < a.f.size(); ++i) {
      ASSERT_EQ(bits(a.f[i]), bits(b.f[i])) << to_string(level) << " entry " << i;
      ASSERT_EQ(bits(a.norm2[i]), bits(b.norm2[i])) << to_string(level) << " entry " << i;
    }
    // Without norms requested the predictions are the same bits.
    auto no_norm = make_backend(s, level);
    const std::size_t RS = s.problem.n_replicates * s.problem.n_slots();
    std::vector<double> f(s.n_samples * RS);
    no_norm->advance(s.x.data(), s.y.data(), s.n_samples, 1, s.schedules, f.data(), nullptr);
    for (std::size_t i = 0; i < f.size(); ++i) ASSERT_EQ(bits(f[i]), bits(a.f[i])) << i;
  }
}

TEST(CpuBackendTest, ReplicatesDoNotDependOnEachOther) {
  const Problem both = make_problem(2, 6, 4, 50);
  for (SimdLevel level : available_simd_levels()) {
    auto together = make_backend(both, level);
    const Trace all = run(*together, both, {17, 0});
    const std::size_t S = both.problem.n_slots();
    for (std::size_t r = 0; r < 2; ++r) {
      Problem alone = both;
      alone.problem.n_replicates = 1;
      const std::size_t P = both.problem.n_kernels;
      alone.frequencies.assign(both.frequencies.begin() + r * P, both.frequencies.begin() + (r + 1) * P);
      auto single = make_backend(alone, level);
      const Trace one = run(*single, alone, {});
      for (std::size_t t = 0; t < both.n_samples; ++t)
        for (std::size_t slot = 0; slot < S; ++slot)
          ASSERT_EQ(bits(all.f[(t * 2 + r) * S + slot]), bits(one.f[t * S + slot])) << to_string(level);
    }
  }
}

TEST(CpuBackendTest, PredictReturnsWhatTheNextStepReports) {
  const Problem s = make_problem(2, 5, 3, 40);
  const std::size_t RS = s.problem.n_replicates * s.problem.n_slots(), d = s.problem.n_features;
  for (SimdLevel level : available_simd_levels()) {
    auto backend = make_backend(s, level);
    std::vector<double> predicted(RS), f(RS), n2(RS);
    for (std::size_t t = 0; t < s.n_samples; ++t) {
      const std::int64_t time = static_cast<std::int64_t>(t) + 1;
      backend->predict(s.x.data() + t * d, time, s.schedules, predicted.data());
      backend->advance(s.x.data() + t * d, s.y.data() + t, 1, time, s.schedules, f.data(), n2.data());
      for (std::size_t i = 0; i < RS; ++i) ASSERT_EQ(bits(predicted[i]), bits(f[i])) << to_string(level) << " t" << t;
    }
  }
}

TEST(CpuBackendTest, ThetaAndFrequenciesRoundTripWithoutPadding) {
  const Problem s = make_problem(1, 5, 2, 30);  // D = 5 is stored padded to 8
  for (SimdLevel level : available_simd_levels()) {
    auto backend = make_backend(s, level);
    run(*backend, s, {});
    for (std::size_t k = 0; k < s.problem.n_kernels; ++k) {
      std::vector<double> V(s.problem.n_rff * s.problem.n_features);
      backend->get_frequencies(0, k, V.data());
      EXPECT_EQ(V, s.frequencies[k]);
    }
    std::vector<double> theta(2 * s.problem.n_rff + 1, 42.0);
    backend->get_theta(0, 0, theta.data());
    EXPECT_EQ(theta.back(), 42.0) << "wrote more than 2D values";
    // A restored copy continues bit-identically (what checkpoints rely on).
    auto copy = make_backend(s, level);
    for (std::size_t slot = 0; slot < s.problem.n_slots(); ++slot) {
      backend->get_theta(0, slot, theta.data());
      copy->set_theta(0, slot, theta.data());
    }
    const std::size_t S = s.problem.n_slots();
    std::vector<double> fa(S), fb(S), na(S), nb(S);
    const std::int64_t t = static_cast<std::int64_t>(s.n_samples) + 1;
    backend->advance(s.x.data(), s.y.data(), 1, t, s.schedules, fa.data(), na.data());
    copy->advance(s.x.data(), s.y.data(), 1, t, s.schedules, fb.data(), nb.data());
    for (std::size_t i = 0; i < S; ++i) {
      EXPECT_EQ(bits(fa[i]), bits(fb[i]));
      EXPECT_EQ(bits(na[i]), bits(nb[i]));
    }
  }
}

TEST(CpuBackendTest, HugeAnglesGoThroughTheStdFallback) {
  // One feature with x = 1 (and a second with x = 0), so every angle is exactly a frequency
  // and the reference can use std::sin/std::cos of the very same doubles. The frequencies
  // span the fast range of both kernels and beyond it.
  RfProblem problem;
  problem.n_kernels = 1;
  problem.n_rff = 10;
  problem.n_features = 2;
  problem.slot_kernel = {0};
  problem.feature_scale = 1.0;
  const std::vector<double> angles{0.3, -2e3, 7e7, -3e8, 1.2e9, 5e13, -4e14, 9e15, -2e17, 1e300};
  std::vector<double> V;
  for (double a : angles) {
    V.push_back(a);
    V.push_back(12345.0);  // multiplied by x₁ = 0
  }
  std::vector<double> theta(20);
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = 1.0 + 0.1 * static_cast<double>(i);
  double want = 0.0;
  for (std::size_t i = 0; i < angles.size(); ++i)
    want += theta[i] * std::sin(angles[i]) + theta[10 + i] * std::cos(angles[i]);
  const double x[2] = {1.0, 0.0};
  SlotSchedule schedule;
  schedule.eta = 0.1;
  for (SimdLevel level : available_simd_levels()) {
    auto backend = make_cpu_rf_backend(problem, level);
    backend->set_frequencies(0, 0, V.data());
    backend->set_theta(0, 0, theta.data());
    double f = 0.0;
    backend->predict(x, 1, {schedule}, &f);
    EXPECT_NEAR(f, want, 1e-14 * 20) << to_string(level);
    // The same through advance(), which reports f before updating.
    double g = 0.0, n2 = 0.0;
    backend->advance(x, &want, 1, 1, {schedule}, &g, &n2);
    EXPECT_EQ(bits(f), bits(g)) << to_string(level);
  }
}

TEST(CpuBackendTest, NonFiniteInputsGiveNonFinitePredictionsWithoutCrashing) {
  const Problem s = make_problem(1, 6, 2, 4);
  for (SimdLevel level : available_simd_levels()) {
    auto backend = make_backend(s, level);
    std::vector<double> theta(2 * s.problem.n_rff, 0.5);
    backend->set_theta(0, 0, theta.data());
    const double x[2] = {std::numeric_limits<double>::quiet_NaN(), 1.0};
    std::vector<double> f(s.problem.n_slots());
    backend->predict(x, 20, s.schedules, f.data());
    EXPECT_TRUE(std::isnan(f[0])) << to_string(level);
    const double inf_x[2] = {std::numeric_limits<double>::infinity(), 1.0};
    backend->predict(inf_x, 20, s.schedules, f.data());
    EXPECT_TRUE(std::isnan(f[0])) << to_string(level);
  }
}

TEST(CpuBackendTest, PortableAndAvx2KernelsAgreeClosely) {
  if (!cpu_has_avx2_fma()) GTEST_SKIP() << "this CPU has no AVX2+FMA";
  const Problem s = make_problem(2, 50, 5, 200);
  auto portable = make_backend(s, SimdLevel::Portable);
  auto avx2 = make_backend(s, SimdLevel::Avx2Fma);
  const Trace a = run(*portable, s, {}), b = run(*avx2, s, {});
  for (std::size_t i = 0; i < a.f.size(); ++i)
    ASSERT_NEAR(a.f[i], b.f[i], 1e-12 * std::max(1.0, std::fabs(a.f[i]))) << i;
}

TEST(CpuBackendTest, RejectsBadIndices) {
  Problem s = make_problem(1, 4, 2, 2);
  auto backend = make_backend(s, default_simd_level());
  std::vector<double> buffer(64);
  EXPECT_THROW(backend->set_frequencies(1, 0, buffer.data()), Error);
  EXPECT_THROW(backend->get_theta(0, 9, buffer.data()), Error);
  EXPECT_THROW(backend->predict(buffer.data(), 1, {}, buffer.data()), Error);
}

// precision=float: the float feature map stays within the float tolerance the CUDA backend's
// float mode is held to (1e-4 relative) of the double reference, on every path (several slots,
// one slot, late starts, resets), with blocks and single steps still bit-identical.
TEST(CpuBackendTest, FloatFeatureMapIsWithinTheFloatTolerance) {
  // D = 21, 18, 3: padded to 24 (three blocks of 8), 20 (two and a half) and 4 (half a block).
  for (const std::size_t D : {21u, 18u, 3u})
  for (const SimdLevel level : available_simd_levels()) {
    SCOPED_TRACE("D = " + std::to_string(D));
    Problem s = make_problem(2, D, 4, 150);  // angles up to ≈ 10·4·3: the float map
    s.problem.single_precision = true;
    auto single = make_backend(s, level);
    const Trace a = run(*single, s, {});
    for (std::size_t r = 0; r < s.problem.n_replicates; ++r) {
      const Trace ref = reference(s, r);
      const std::size_t S = s.problem.n_slots();
      double worst = 0.0;
      for (std::size_t t = 0; t < s.n_samples; ++t)
        for (std::size_t slot = 0; slot < S; ++slot) {
          const double got = a.f[(t * s.problem.n_replicates + r) * S + slot], want = ref.f[t * S + slot];
          worst = std::max(worst, std::fabs(got - want) / std::max(1.0, std::fabs(want)));
        }
      EXPECT_LT(worst, 1e-4) << to_string(level) << " replicate " << r;
      EXPECT_GT(worst, 1e-12) << "the float map was not used";
    }
    auto stepped = make_backend(s, level);
    const Trace b = run(*stepped, s, std::vector<std::size_t>(s.n_samples, 1));
    for (std::size_t i = 0; i < a.f.size(); ++i) {
      ASSERT_EQ(bits(a.f[i]), bits(b.f[i])) << to_string(level) << " entry " << i;
      ASSERT_EQ(bits(a.norm2[i]), bits(b.norm2[i])) << to_string(level) << " entry " << i;
    }
    // predict() reports what the next step does.
    std::vector<double> f(s.problem.n_replicates * s.problem.n_slots());
    single->predict(s.x.data(), static_cast<std::int64_t>(s.n_samples) + 1, s.schedules, f.data());
    for (double v : f) EXPECT_TRUE(std::isfinite(v));
  }
}

// Angles beyond the float map's range take the double path: with every kernel's frequencies
// that large, precision=float gives the double backend's numbers bit for bit.
TEST(CpuBackendTest, FloatModeUsesTheDoublePathForLargeAngles) {
  for (const SimdLevel level : available_simd_levels()) {
    Problem s = make_problem(1, 9, 3, 40);
    for (auto& V : s.frequencies)
      for (double& v : V) v = v * 50.0 + (v >= 0 ? 3000.0 : -3000.0);  // Σ x_k · 3000 > 256
    auto plain = make_backend(s, level);
    const Trace want = run(*plain, s, {});
    s.problem.single_precision = true;
    auto single = make_backend(s, level);
    const Trace got = run(*single, s, {});
    for (std::size_t i = 0; i < want.f.size(); ++i) ASSERT_EQ(bits(got.f[i]), bits(want.f[i])) << to_string(level) << i;
  }
}

TEST(CpuBackendTest, FloatModeThetaAndFrequenciesRoundTripWithoutPadding) {
  Problem s = make_problem(1, 13, 3, 10);
  s.problem.single_precision = true;
  auto backend = make_backend(s, default_simd_level());
  run(*backend, s, {});
  std::vector<double> V(13 * 3), theta(26);
  backend->get_frequencies(0, 1, V.data());
  EXPECT_EQ(V, s.frequencies[1]);
  backend->get_theta(0, 0, theta.data());
  auto copy = make_backend(s, default_simd_level());
  copy->set_theta(0, 0, theta.data());
  std::vector<double> back(26);
  copy->get_theta(0, 0, back.data());
  EXPECT_EQ(back, theta);
}

namespace {

// A random selection of pairs for one step: every replicate picks a few slots (kernel 0 has
// three slots, so some kernels carry several pairs), replicates share kernels, the list is not
// in (replicate, kernel) order, and some pairs only predict (rate 0, shrink 1).
std::vector<PairStep> random_pairs(const Problem& s, std::mt19937_64& rng) {
  std::vector<PairStep> pairs;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const std::size_t S = s.problem.n_slots();
  for (std::size_t r = s.problem.n_replicates; r-- > 0;) {
    for (std::size_t slot = S; slot-- > 0;) {
      if (unit(rng) < 0.35) continue;
      PairStep pair;
      pair.replicate = static_cast<std::uint32_t>(r);
      pair.slot = static_cast<std::uint32_t>(slot);
      if (unit(rng) < 0.25) {
        pair.rate = 0.0;
        pair.shrink = 1.0;
      } else {
        pair.rate = 0.05 + 0.5 * unit(rng);
        pair.shrink = 1.0 - 0.02 * unit(rng);
      }
      pairs.push_back(pair);
    }
  }
  std::shuffle(pairs.begin(), pairs.end(), rng);
  return pairs;
}

double rel_error(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

}  // namespace

TEST(CpuBackendTest, StepSelectedMatchesTheBaseImplementation) {
  // Slot maps: several slots on kernel 0 (features shared within a group), and one slot per
  // kernel as the graph-aided algorithms use (pairs kept in call order).
  const std::vector<std::vector<std::uint32_t>> slot_maps{{0, 1, 0, 0, 2}, {3, 1, 0, 2}};
  for (LossKind loss : {LossKind::Squared, LossKind::Logistic})
    for (std::size_t D : {7, 50})
      for (const auto& slot_map : slot_maps)
      for (SimdLevel level : available_simd_levels()) {
        Problem s = make_problem(3, D, 5, 80, loss);
        s.problem.slot_kernel = slot_map;
        auto native = make_backend(s, level);
        auto twin = make_backend(s, level);
        std::mt19937_64 rng(11 + D);
        const std::size_t d = s.problem.n_features;
        double worst = 0.0;
        for (std::size_t t = 0; t < s.n_samples; ++t) {
          const std::vector<PairStep> pairs = random_pairs(s, rng);
          std::vector<double> fa(pairs.size(), -1.0), fb(pairs.size(), -2.0);
          std::vector<double> na(pairs.size(), -1.0), nb(pairs.size(), -2.0);
          native->step_selected(s.x.data() + t * d, s.y[t], pairs.data(), pairs.size(), fa.data(), na.data());
          twin->RfBackend::step_selected(s.x.data() + t * d, s.y[t], pairs.data(), pairs.size(), fb.data(),
                                         nb.data());
          for (std::size_t i = 0; i < pairs.size(); ++i) {
            worst = std::max({worst, rel_error(fa[i], fb[i]), rel_error(na[i], nb[i])});
            ASSERT_LE(rel_error(fa[i], fb[i]), 1e-12) << to_string(level) << " t=" << t << " pair " << i;
            ASSERT_LE(rel_error(na[i], nb[i]), 1e-12) << to_string(level) << " t=" << t << " pair " << i;
          }
        }
        std::vector<double> ta(2 * D), tb(2 * D);
        for (std::size_t r = 0; r < s.problem.n_replicates; ++r)
          for (std::size_t slot = 0; slot < s.problem.n_slots(); ++slot) {
            native->get_theta(r, slot, ta.data());
            twin->get_theta(r, slot, tb.data());
            for (std::size_t j = 0; j < 2 * D; ++j) ASSERT_LE(rel_error(ta[j], tb[j]), 1e-12) << j;
          }
        // The comparison must not be vacuous: θ moved and f is not identically 0.
        native->get_theta(0, 0, ta.data());
        double moved = 0.0;
        for (double v : ta) moved += std::fabs(v);
        EXPECT_GT(moved, 0.1) << to_string(level);
        EXPECT_GT(worst, 0.0) << "the native path should not be the base implementation";
      }
}

TEST(CpuBackendTest, StepSelectedIsDeterministicAndReplicatesAreIndependent) {
  const Problem s = make_problem(3, 50, 5, 40);
  const std::size_t d = s.problem.n_features, S = s.problem.n_slots();
  for (SimdLevel level : available_simd_levels()) {
    auto all = make_backend(s, level);
    auto alone = make_backend(s, level);
    std::mt19937_64 rng(3);
    for (std::size_t t = 0; t < s.n_samples; ++t) {
      std::vector<PairStep> pairs = random_pairs(s, rng);
      std::vector<PairStep> mine;  // replicate 1's pairs, in reverse order
      std::vector<std::size_t> where;
      for (std::size_t i = pairs.size(); i-- > 0;)
        if (pairs[i].replicate == 1) {
          mine.push_back(pairs[i]);
          where.push_back(i);
        }
      // A predict-only call with the same selection gives exactly the f of the update call.
      std::vector<PairStep> predict_only = pairs;
      for (PairStep& pair : predict_only) {
        pair.rate = 0.0;
        pair.shrink = 1.0;
      }
      const double* x = s.x.data() + t * d;
      std::vector<double> fp(pairs.size()), fa(pairs.size()), na(pairs.size());
      all->step_selected(x, s.y[t], predict_only.data(), predict_only.size(), fp.data(), nullptr);
      all->step_selected(x, s.y[t], pairs.data(), pairs.size(), fa.data(), na.data());
      for (std::size_t i = 0; i < pairs.size(); ++i) ASSERT_EQ(bits(fp[i]), bits(fa[i])) << t;
      std::vector<double> fb(mine.size()), nb(mine.size());
      alone->step_selected(x, s.y[t], mine.data(), mine.size(), fb.data(), nb.data());
      for (std::size_t i = 0; i < mine.size(); ++i) {
        ASSERT_EQ(bits(fb[i]), bits(fa[where[i]])) << t;
        ASSERT_EQ(bits(nb[i]), bits(na[where[i]])) << t;
      }
    }
    std::vector<double> ta(2 * s.problem.n_rff), tb(2 * s.problem.n_rff);
    for (std::size_t slot = 0; slot < S; ++slot) {
      all->get_theta(1, slot, ta.data());
      alone->get_theta(1, slot, tb.data());
      for (std::size_t j = 0; j < ta.size(); ++j) ASSERT_EQ(bits(ta[j]), bits(tb[j]));
    }
  }
}

TEST(CpuBackendTest, StepSelectedHandlesHugeAnglesAndBadPairs) {
  // Angles beyond the fast range take the std::sin/std::cos fallback, as in advance().
  RfProblem problem;
  problem.n_kernels = 1;
  problem.n_rff = 6;
  problem.n_features = 1;
  problem.slot_kernel = {0, 0};
  const std::vector<double> V{0.3, -2e3, 7e7, 5e13, -2e17, 1e300};
  std::vector<double> theta(12);
  for (std::size_t i = 0; i < theta.size(); ++i) theta[i] = 1.0 + 0.1 * static_cast<double>(i);
  double want = 0.0;
  for (std::size_t i = 0; i < V.size(); ++i) want += theta[i] * std::sin(V[i]) + theta[6 + i] * std::cos(V[i]);
  const double x = 1.0;
  for (SimdLevel level : available_simd_levels()) {
    auto backend = make_cpu_rf_backend(problem, level);
    backend->set_frequencies(0, 0, V.data());
    backend->set_theta(0, 1, theta.data());
    PairStep pairs[2];
    pairs[0].slot = 1;
    pairs[1].slot = 0;
    double f[2] = {-1.0, -1.0};
    backend->step_selected(&x, 0.0, pairs, 2, f, nullptr);
    EXPECT_NEAR(f[0], want, 1e-14 * 12) << to_string(level);
    EXPECT_EQ(f[1], 0.0);
    pairs[1].replicate = 1;
    EXPECT_THROW(backend->step_selected(&x, 0.0, pairs, 2, f, nullptr), Error);
    pairs[1].replicate = 0;
    pairs[1].slot = 2;
    EXPECT_THROW(backend->step_selected(&x, 0.0, pairs, 2, f, nullptr), Error);
  }
}

TEST(CpuBackendTest, Avx512KernelsGiveTheAvx2Bits) {
  if (!simd_level_available(SimdLevel::Avx512)) GTEST_SKIP() << "this CPU has no AVX-512F";
  // D = 50 and 7 (padded 52 and 8: odd and even counts of 4-lane vectors, so groups of every
  // size), double and float maps, blocks and single steps, and the selected-pairs path.
  for (const bool single : {false, true})
    for (const std::size_t D : {50u, 7u}) {
      Problem s = make_problem(2, D, 5, 120);
      s.problem.single_precision = single;
      auto avx2 = make_backend(s, SimdLevel::Avx2Fma);
      auto avx512 = make_backend(s, SimdLevel::Avx512);
      ASSERT_EQ(cpu_backend_simd_level(*avx512), SimdLevel::Avx512);
      const Trace a = run(*avx2, s, {}), b = run(*avx512, s, {5, 1, 0});
      for (std::size_t i = 0; i < a.f.size(); ++i) {
        ASSERT_EQ(bits(a.f[i]), bits(b.f[i])) << "D " << D << " float " << single << " entry " << i;
        ASSERT_EQ(bits(a.norm2[i]), bits(b.norm2[i])) << "D " << D << " float " << single << " entry " << i;
      }
      std::mt19937_64 rng(3);
      for (std::size_t t = 0; t < 20; ++t) {
        const std::vector<PairStep> pairs = random_pairs(s, rng);
        std::vector<double> fa(pairs.size()), fb(pairs.size()), na(pairs.size()), nb(pairs.size());
        const double* x = s.x.data() + t * s.problem.n_features;
        avx2->step_selected(x, s.y[t], pairs.data(), pairs.size(), fa.data(), na.data());
        avx512->step_selected(x, s.y[t], pairs.data(), pairs.size(), fb.data(), nb.data());
        for (std::size_t i = 0; i < pairs.size(); ++i) {
          ASSERT_EQ(bits(fa[i]), bits(fb[i])) << "step_selected t " << t;
          ASSERT_EQ(bits(na[i]), bits(nb[i])) << "step_selected t " << t;
        }
      }
    }
}
