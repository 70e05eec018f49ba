/// CUDA parity tests: the CUDA backend against the CPU backend on fresh random inputs. They are
/// compiled in every build and skip themselves where no GPU (or no CUDA build) is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "common/bandit_cases.h"
#include "common/scoped_env.h"
#include "common/test_helpers.h"
#include "core/state_io.h"
#include "families/bandit/bandit.h"
#include "families/graph_aided/graph_aided.h"
#include "features/random_features.h"
#include "features/rf_ensemble.h"
#include "features/rf_backend.h"
#include "omkl/error.h"
#include "omkl/study.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::ScopedEnv;
using omkl::test::run_blocks;
using omkl::test::run_steps;
using omkl::test::with_param;

namespace {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_available()) GTEST_SKIP() << "no usable CUDA device (or a CPU-only build)";
  }
};

double relative_error(double a, double b) { return std::fabs(a - b) / std::max(1.0, std::fabs(b)); }

// Both trajectory layouts: one warp per slot (default) and one per (replicate, kernel) group.
// The default ("lean": the default layout, the per-slot kernel's lean step where a pass allows
// it), then each layout forced with the generic step.
constexpr const char* kTrajectoryLayouts[] = {"lean", "per_slot", "per_kernel"};

struct ParityCase {
  std::size_t R, P, D, d, slots_per_kernel;
  LossKind loss;
  bool single;
};

void check_backend_parity(const ParityCase& c, std::uint64_t seed) {
  RfProblem problem;
  problem.n_replicates = c.R;
  problem.n_kernels = c.P;
  problem.n_rff = c.D;
  problem.n_features = c.d;
  for (std::size_t s = 0; s < c.P * c.slots_per_kernel; ++s) problem.slot_kernel.push_back(s % c.P);
  problem.feature_scale = 1.0 / std::sqrt(static_cast<double>(c.D));
  problem.loss = c.loss;
  problem.need_norm2 = true;
  auto cpu = make_rf_backend(BackendKind::Cpu, problem);
  problem.single_precision = c.single;
  auto gpu = make_rf_backend(BackendKind::Cuda, problem);
  RandomStream rng(seed, 0, RngPurpose::Misc);
  for (std::size_t r = 0; r < c.R; ++r)
    for (std::size_t p = 0; p < c.P; ++p) {
      const auto V = draw_frequencies(KernelSpec::gaussian(0.3 + 0.5 * p), c.D, c.d, RfKind::Rf, rng);
      cpu->set_frequencies(r, p, V.data());
      gpu->set_frequencies(r, p, V.data());
    }
  std::vector<SlotSchedule> schedules(problem.n_slots());
  for (std::size_t s = 0; s < schedules.size(); ++s) {
    schedules[s].eta = 0.05 + 0.4 * rng.uniform();
    schedules[s].inv_sqrt_t = s % 3 == 1;
    schedules[s].lambda = 0.01;
    schedules[s].active_from = 1 + static_cast<std::int64_t>(s % 4) * 7;
    schedules[s].reset_period = s % 5 == 2 ? 16 : 0;
  }
  const std::size_t T = 257;
  std::vector<double> x(T * c.d), y(T);
  for (auto& v : x) v = rng.normal();
  for (auto& v : y) v = c.loss == LossKind::Logistic ? (rng.uniform() < 0.5 ? -1.0 : 1.0) : rng.uniform();
  const std::size_t n = T * c.R * problem.n_slots();
  std::vector<double> f_cpu(n), f_gpu(n, NAN), n2_cpu(n), n2_gpu(n, NAN);
  // Two calls of uneven length, as algorithms issue them.
  cpu->advance(x.data(), y.data(), 100, 1, schedules, f_cpu.data(), n2_cpu.data());
  cpu->advance(x.data() + 100 * c.d, y.data() + 100, T - 100, 101, schedules,
               f_cpu.data() + 100 * c.R * problem.n_slots(), n2_cpu.data() + 100 * c.R * problem.n_slots());
  gpu->advance(x.data(), y.data(), 100, 1, schedules, f_gpu.data(), n2_gpu.data());
  gpu->advance(x.data() + 100 * c.d, y.data() + 100, T - 100, 101, schedules,
               f_gpu.data() + 100 * c.R * problem.n_slots(), n2_gpu.data() + 100 * c.R * problem.n_slots());
  const double tol = c.single ? 1e-4 : 1e-9;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(std::isfinite(f_gpu[i])) << "unwritten output " << i;
    ASSERT_LE(relative_error(f_gpu[i], f_cpu[i]), tol) << "f at " << i;
    ASSERT_LE(relative_error(n2_gpu[i], n2_cpu[i]), tol) << "norm2 at " << i;
  }
  std::vector<double> th_cpu(2 * c.D), th_gpu(2 * c.D);
  std::vector<double> all_gpu(c.R * problem.n_slots() * 2 * c.D);
  gpu->get_all_theta(all_gpu.data());  // one transfer: every slot as get_theta() gives it
  for (std::size_t r = 0; r < c.R; ++r)
    for (std::size_t s = 0; s < problem.n_slots(); ++s) {
      cpu->get_theta(r, s, th_cpu.data());
      gpu->get_theta(r, s, th_gpu.data());
      for (std::size_t i = 0; i < 2 * c.D; ++i) ASSERT_LE(relative_error(th_gpu[i], th_cpu[i]), tol);
      for (std::size_t i = 0; i < 2 * c.D; ++i)
        ASSERT_EQ(all_gpu[(r * problem.n_slots() + s) * 2 * c.D + i], th_gpu[i]) << "get_all_theta " << r << " " << s;
    }
  std::vector<double> p_cpu(c.R * problem.n_slots()), p_gpu(p_cpu.size());
  cpu->predict(x.data(), T + 1, schedules, p_cpu.data());
  gpu->predict(x.data(), T + 1, schedules, p_gpu.data());
  for (std::size_t i = 0; i < p_cpu.size(); ++i) ASSERT_LE(relative_error(p_gpu[i], p_cpu[i]), tol);
}

}  // namespace

// Runs `check` under every trajectory layout and both ways the per-slot kernel gets its
// projections: computed in the kernel (default where d <= 32) and from a cuBLAS GEMM per window.
template <typename Check>
void for_each_trajectory_path(Check&& check) {
  for (const char* projections : {"fused", "gemm"})
    for (const char* layout : kTrajectoryLayouts) {
      SCOPED_TRACE(std::string(layout) + " " + projections);
      ScopedEnv env("OMKL_CUDA_TRAJECTORIES", layout);
      ScopedEnv path("OMKL_CUDA_PROJECTIONS", projections);
      check();
    }
}

TEST_F(CudaTest, BackendMatchesCpuInDouble) {
  for_each_trajectory_path([] {
    check_backend_parity({3, 2, 50, 7, 2, LossKind::Squared, false}, 1);
    check_backend_parity({1, 1, 1, 1, 1, LossKind::Squared, false}, 2);     // N = 1, D = 1
    check_backend_parity({2, 3, 33, 5, 3, LossKind::Logistic, false}, 3);   // D not a multiple of 32
    check_backend_parity({1, 4, 100, 13, 1, LossKind::Hinge, false}, 4);  // V's rows too big: GEMM
    check_backend_parity({2, 2, 40, 35, 1, LossKind::Squared, false}, 11);  // d > 32: GEMM
    // Groups of several slots, uneven across kernels' activity and resets.
    check_backend_parity({2, 3, 50, 6, 7, LossKind::Squared, false}, 7);
    check_backend_parity({1, 2, 20, 3, 16, LossKind::Logistic, false}, 8);  // the most one warp takes
    check_backend_parity({1, 2, 20, 3, 17, LossKind::Logistic, false}, 10);  // more: per slot
  });
}

TEST_F(CudaTest, BackendMatchesCpuInFloat) {
  for_each_trajectory_path([] {
    check_backend_parity({3, 2, 50, 7, 2, LossKind::Squared, true}, 5);
    check_backend_parity({2, 3, 17, 4, 1, LossKind::Logistic, true}, 6);
    check_backend_parity({2, 3, 50, 6, 7, LossKind::Squared, true}, 9);
  });
}

namespace {

// Raker's common pass (squared loss, constant η, no resets, every slot active), on
// which OMKL_CUDA_TRAJECTORIES=lean gives the per-slot kernel its lean step: per-slot
// predictions from advance() and group predictions from advance_fused(), against the CPU and
// against the generic step, over both projection paths. Returns whether some prediction
// differs from the generic step's in its last bits (see the test).
bool check_lean_step(std::size_t R, std::size_t P, std::size_t D, std::size_t d, bool single, double loss_scale,
                     std::uint64_t seed) {
  RfProblem problem;
  problem.n_replicates = R;
  problem.n_kernels = P;
  problem.n_rff = D;
  problem.n_features = d;
  for (std::size_t s = 0; s < P; ++s) problem.slot_kernel.push_back(static_cast<std::uint32_t>(s));
  problem.feature_scale = 1.0 / std::sqrt(static_cast<double>(D));
  problem.loss = LossKind::Squared;
  problem.need_norm2 = true;
  RandomStream rng(seed, 0, RngPurpose::Misc);
  std::vector<std::vector<double>> V;
  for (std::size_t i = 0; i < R * P; ++i)
    V.push_back(draw_frequencies(KernelSpec::gaussian(0.3 + 0.5 * (i % P)), D, d, RfKind::Rf, rng));
  std::vector<SlotSchedule> schedules(P);
  for (auto& sc : schedules) {
    sc.eta = 0.05 + 0.4 * rng.uniform();
    sc.lambda = 0.01;  // a shrink ≠ 1 on every step
  }
  const std::size_t T = 300;
  std::vector<double> x(T * d), y(T);
  for (auto& v : x) v = rng.normal();
  for (auto& v : y) v = rng.uniform();
  // The pass qualifies, so the lean step (and not the generic fallback) is what runs.
  EXPECT_TRUE(lean_step_applies(schedules, 1, LossKind::Squared, true));
  FusedWeights weights;
  weights.group_size = P;
  weights.initial = -std::log(static_cast<double>(P));
  weights.lambda = 0.01;  // ‖θ‖² in the weights' loss, as Raker's default has it
  weights.loss_scale = loss_scale;
  struct Outputs {
    std::vector<double> f, norm2, group_f, theta, log_w;
  };
  const auto run = [&](BackendKind kind, const char* trajectories) {
    ScopedEnv env("OMKL_CUDA_TRAJECTORIES", trajectories);
    RfProblem shape = problem;
    shape.single_precision = single && kind == BackendKind::Cuda;
    Outputs out;
    // The CPU backend keeps no fused weights (supports_fused_weights()): its reference for them
    // is computed below from its per-slot predictions and norms.
    for (bool fused : {false, true}) {
      if (fused && kind == BackendKind::Cpu) continue;
      auto backend = make_rf_backend(kind, shape);
      for (std::size_t i = 0; i < R * P; ++i) backend->set_frequencies(i / P, i % P, V[i].data());
      // Two calls of uneven length: the second starts at t0 = 101.
      if (fused) {
        out.group_f.assign(T * R, NAN);
        backend->advance_fused(x.data(), y.data(), 100, 1, schedules, weights, out.group_f.data());
        backend->advance_fused(x.data() + 100 * d, y.data() + 100, T - 100, 101, schedules, weights,
                               out.group_f.data() + 100 * R);
        out.log_w.assign(R * P, NAN);
        for (std::size_t r = 0; r < R; ++r) backend->get_log_weights(r, out.log_w.data() + r * P);
      } else {
        out.f.assign(T * R * P, NAN);
        out.norm2.assign(T * R * P, NAN);
        backend->advance(x.data(), y.data(), 100, 1, schedules, out.f.data(), out.norm2.data());
        backend->advance(x.data() + 100 * d, y.data() + 100, T - 100, 101, schedules, out.f.data() + 100 * R * P,
                         out.norm2.data() + 100 * R * P);
        out.theta.assign(R * P * 2 * D, NAN);
        backend->get_all_theta(out.theta.data());
      }
    }
    return out;
  };
  Outputs cpu = run(BackendKind::Cpu, "");
  // The fused weights as the host keeps them (FusedWeights, rf_backend.h): per slot a = initial,
  // then after each step a ← a − rate·(C(f, y) + λ‖θ‖²)/scale with ‖θ‖² before the update; each
  // step's group prediction Σ softmax(a)·f with the log-weights before the step.
  cpu.group_f.assign(T * R, 0.0);
  cpu.log_w.assign(R * P, weights.initial);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t r = 0; r < R; ++r) {
      double* a = cpu.log_w.data() + r * P;
      const double* f = cpu.f.data() + (t * R + r) * P;
      const double* n2 = cpu.norm2.data() + (t * R + r) * P;
      const double top = *std::max_element(a, a + P);
      double total = 0.0, weighted = 0.0;
      for (std::size_t p = 0; p < P; ++p) {
        total += std::exp(a[p] - top);
        weighted += std::exp(a[p] - top) * f[p];
      }
      cpu.group_f[t * R + r] = weighted / total;
      for (std::size_t p = 0; p < P; ++p)
        a[p] -= weights.rate * ((y[t] - f[p]) * (y[t] - f[p]) + weights.lambda * n2[p]) / weights.loss_scale;
    }
  const Outputs generic = run(BackendKind::Cuda, "per_slot");
  const Outputs lean = run(BackendKind::Cuda, "lean");
  const auto expect_near = [](const std::vector<double>& got, const std::vector<double>& want, double tol,
                              const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (std::size_t i = 0; i < got.size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[i])) << what << ": unwritten at " << i;
      ASSERT_LE(relative_error(got[i], want[i]), tol) << what << " at " << i;
    }
  };
  const auto expect_outputs_near = [&](const Outputs& want, double tol, const std::string& against) {
    SCOPED_TRACE("lean step against " + against);
    expect_near(lean.f, want.f, tol, "f");
    expect_near(lean.norm2, want.norm2, tol, "‖θ‖²");
    expect_near(lean.group_f, want.group_f, tol, "group f");
    expect_near(lean.theta, want.theta, tol, "θ");
    expect_near(lean.log_w, want.log_w, tol, "log-weights");
  };
  expect_outputs_near(cpu, single ? 1e-4 : 1e-9, "the CPU");
  // Against the generic step the only difference in double is the sincos (sincos_fma against
  // the library's, both within ≈ 1 ulp), so the two stay far closer than to the CPU's order.
  // In float both take sincosf, and the tolerance is the float one.
  expect_outputs_near(generic, single ? 1e-4 : 1e-12, "the generic step");
  return lean.f != generic.f;
}

}  // namespace

TEST_F(CudaTest, LeanTrajectoryStepMatchesTheGenericStepAndTheCpu) {
  for (const char* projections : {"fused", "gemm"}) {
    SCOPED_TRACE(projections);
    ScopedEnv path("OMKL_CUDA_PROJECTIONS", projections);
    bool lean_ran = check_lean_step(3, 4, 50, 7, false, 1.0, 21);
    lean_ran |= check_lean_step(2, 3, 33, 5, false, 2.5, 22);  // D not a multiple of 32; a loss scale
    lean_ran |= check_lean_step(1, 1, 1, 1, false, 1.0, 23);   // N = 1, D = 1
    lean_ran |= check_lean_step(2, 5, 100, 9, false, 1.0, 24);  // J = 4 (d = 9: V's rows fit for fused projections)
    // That the lean step ran, not the generic one it falls back to: in double its features come
    // from sincos_fma(), whose last bits differ from the library sincos's on some of these
    // 10⁵ angles, so some prediction differs from the generic step's in its last bits.
    EXPECT_TRUE(lean_ran) << "the lean step did not run (or its sincos is the library's)";
    check_lean_step(3, 4, 50, 7, true, 1.0, 25);
  }
}

TEST_F(CudaTest, AlgorithmsMatchTheCpuBackend) {
  for (const char* layout : kTrajectoryLayouts) {
    ScopedEnv env("OMKL_CUDA_TRAJECTORIES", layout);
    for (Task task : {Task::Regression, Task::Classification}) {
      for (Profile profile : {Profile::Paper, Profile::Reference}) {
        for (const char* name : {"raker", "adaraker", "rf-ogd"}) {
          const Dataset data = random_stream(500, 6, task, 11);
          auto cpu_ctx = context_for(data, profile, {0, 1, 4});
          auto gpu_ctx = cpu_ctx;
          gpu_ctx.backend = BackendKind::Cuda;
          auto cpu = make(name, cpu_ctx, {{"D", "37"}});
          auto gpu = make(name, gpu_ctx, {{"D", "37"}});
          std::vector<double> a(data.n_samples * 3), b(data.n_samples * 3, NAN);
          cpu->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, a.data());
          gpu->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, b.data());
          for (std::size_t i = 0; i < a.size(); ++i) {
            // The reference AdaRaker classifier outputs signs: a flip would be a real difference.
            ASSERT_LE(relative_error(b[i], a[i]), 1e-9)
                << layout << " " << name << " " << to_string(profile) << " " << i;
          }
        }
      }
    }
  }
}

// AdaRaker on the device advances windows of preferred_fused_window() steps (256 here) and runs
// its host instance-weight pass for window w while the device advances w + 1, alternating two
// buffers: a stream of 36 windows, the last a partial, must still match the CPU step for step.
TEST_F(CudaTest, AdaRakerOverlappedWindowsMatchTheCpu) {
  const Dataset data = random_stream(9000, 3, Task::Regression, 12);
  auto cpu_ctx = context_for(data, Profile::Paper, {0, 1, 4});
  auto gpu_ctx = cpu_ctx;
  gpu_ctx.backend = BackendKind::Cuda;
  auto cpu = make("adaraker", cpu_ctx, {{"D", "17"}});
  auto gpu = make("adaraker", gpu_ctx, {{"D", "17"}});
  std::vector<double> a(data.n_samples * 3), b(data.n_samples * 3, NAN);
  cpu->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, a.data());
  gpu->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, b.data());
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_LE(relative_error(b[i], a[i]), 1e-9) << i;
}

namespace {

// OMKL_CUDA_WALK_PAIRS: how a resident walk shares a step's pairs among the block's warps.
constexpr const char* kWalkPairModes[] = {"warp", "auto"};
// OMKL_CUDA_WALK_PLAN (a team program's plan and learn by thread 0, or by the whole block),
// OMKL_CUDA_WALK_THREADS (threads of a replicate's block) and OMKL_WALK_SUMS (nullptr: unset):
// thread 0's plan first, the reference of the others; the same shapes in index order, then the
// defaults (block, `auto` threads and sums: the tree order) last.
struct WalkShape {
  const char* plan;
  const char* threads;
  const char* sums;
};
constexpr WalkShape kWalkShapes[] = {{"thread", "128", "ordered"}, {"block", "128", "ordered"},
                                     {"block", "512", "ordered"},  {"thread", "auto", "ordered"},
                                     {"block", "auto", "ordered"}, {"block", "auto", nullptr}};

// Selects the CUDA backend's step_selected path for the scope (generic: through get/set_theta;
// native: one launch per step). The variable is read when a backend is created.
class SelectedPath : public ScopedEnv {
 public:
  explicit SelectedPath(const char* mode) : ScopedEnv("OMKL_CUDA_STEP_SELECTED", mode) {}
};

void check_step_selected_parity(bool single, std::uint64_t seed) {
  RfProblem problem;
  problem.n_replicates = 3;
  problem.n_kernels = 4;
  problem.n_rff = 33;  // not a multiple of 32
  problem.n_features = 5;
  for (std::uint32_t s = 0; s < 4; ++s) problem.slot_kernel.push_back(s);
  problem.feature_scale = 1.0 / std::sqrt(33.0);
  problem.loss = LossKind::Squared;
  problem.need_norm2 = true;
  auto cpu = make_rf_backend(BackendKind::Cpu, problem);
  problem.single_precision = single;
  auto gpu = make_rf_backend(BackendKind::Cuda, problem);
  RandomStream rng(seed, 0, RngPurpose::Misc);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t k = 0; k < 4; ++k) {
      const auto V = draw_frequencies(KernelSpec::gaussian(0.4 + 0.3 * k), 33, 5, RfKind::Rf, rng);
      cpu->set_frequencies(r, k, V.data());
      gpu->set_frequencies(r, k, V.data());
    }
  const double tol = single ? 1e-4 : 1e-9;
  auto check_theta = [&] {
    std::vector<double> a(66), b(66);
    for (std::size_t r = 0; r < 3; ++r)
      for (std::size_t s = 0; s < 4; ++s) {
        cpu->get_theta(r, s, a.data());
        gpu->get_theta(r, s, b.data());
        for (std::size_t i = 0; i < a.size(); ++i) ASSERT_LE(relative_error(b[i], a[i]), tol);
      }
  };
  std::vector<PairStep> pairs;
  for (int step = 0; step < 200; ++step) {
    if (step == 100) check_theta();  // other work on the backend between steps
    std::vector<double> x(5);
    for (double& v : x) v = rng.normal();
    const double y = rng.uniform();
    pairs.clear();
    for (std::uint32_t r = 0; r < 3; ++r)
      for (std::uint32_t s = 0; s < 4; ++s) {
        if (rng.uniform() < 0.4) continue;  // a random subset, as a graph step selects
        PairStep pair;
        pair.replicate = r;
        pair.slot = s;
        if (rng.uniform() < 0.8) {  // else predict only
          pair.rate = 0.5 * rng.uniform();
          pair.shrink = 1.0 - 0.01 * rng.uniform();
        }
        pairs.push_back(pair);
      }
    std::vector<double> f_cpu(pairs.size()), n2_cpu(pairs.size()), f_gpu(pairs.size(), NAN), n2_gpu(pairs.size(), NAN);
    cpu->step_selected(x.data(), y, pairs.data(), pairs.size(), f_cpu.data(), n2_cpu.data());
    gpu->step_selected(x.data(), y, pairs.data(), pairs.size(), f_gpu.data(), n2_gpu.data());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      ASSERT_LE(relative_error(f_gpu[i], f_cpu[i]), tol) << "step " << step << " pair " << i;
      ASSERT_LE(relative_error(n2_gpu[i], n2_cpu[i]), tol) << "step " << step << " pair " << i;
    }
  }
  check_theta();
}

}  // namespace

TEST_F(CudaTest, StepSelectedMatchesCpu) {
  for (const char* mode : {"generic", "native"}) {
    SCOPED_TRACE(mode);
    SelectedPath path(mode);
    check_step_selected_parity(false, 21);
    check_step_selected_parity(true, 22);
  }
}

TEST_F(CudaTest, GraphAidedAlgorithmsMatchTheCpuBackend) {
  const Dataset data = random_stream(300, 4, Task::Regression, 13);
  for (const char* mode : {"generic", "native"}) {
    SelectedPath path(mode);
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
        auto cpu_ctx = context_for(data, profile, {0, 2});
        auto gpu_ctx = cpu_ctx;
        gpu_ctx.backend = BackendKind::Cuda;
        // The per-step paths (step_path=auto would walk resident on the GPU: tested below).
        const std::vector<std::pair<std::string, std::string>> params = {
            {"D", "37"}, {"switch_step", "100"}, {"step_path", "host"}};
        auto cpu = make(name, cpu_ctx, params);
        auto gpu = make(name, gpu_ctx, params);
        const auto a = run_steps(*cpu, data);
        const auto b = run_steps(*gpu, data);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i)
          ASSERT_LE(relative_error(b[i], a[i]), 1e-9) << name << " " << mode << " " << to_string(profile) << " " << i;
      }
    }
  }
}

namespace {

// The host path's predictions and, per step and replicate, the vertex (SFG / SFG-R) or selective
// node (GF) it drew (GraphAidedTrace::node).
struct TracedSteps {
  std::vector<double> predictions;
  std::vector<std::size_t> nodes;
};
TracedSteps run_traced_steps(omkl::detail::Algorithm& algorithm, const Dataset& data) {
  const std::size_t R = algorithm.n_replicates();
  TracedSteps out;
  out.predictions.resize(data.n_samples * R);
  out.nodes.resize(data.n_samples * R);
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    algorithm.step(data.row(t), data.y[t], out.predictions.data() + t * R);
    for (std::size_t r = 0; r < R; ++r) out.nodes[t * R + r] = omkl::detail::graph_aided_trace(algorithm, r)->node;
  }
  return out;
}

}  // namespace

// step_path = resident on the GPU (kernels/resident_walk.cuh running resident_graph.h's program):
// the host path within floating point, in blocks of steps as a study runs them and one step at a
// time. In double against the CPU backend's host path. In float against the GPU's native per-step
// path, which runs the same float arithmetic on the device (within 2e-10 on an H200; the generic
// path sums features on the host and drifts from the device's float as the CPU's does), and
// against the CPU's float host path for as long as the two host paths draw the same nodes: float
// sums in another order on the two backends, so the kernel weights differ in their last bits, and
// a draw against their cumulative sum can land on the other side of a boundary, after which the
// two runs learn different kernels. On an H200 omkl-sfg (paper) drew another vertex at step 363 of
// this stream with ξ = η, and with ξ = 0.3 at step 170 (a 3 % change of that step's prediction),
// omkl-sfg-r (paper) at step 178; the other eight float configurations drew alike for all 400
// steps. In double all ten stayed within 4e-16 of the CPU for all 400 steps.
TEST_F(CudaTest, ResidentGraphWalkEqualsTheHostPath) {
  const Dataset data = random_stream(400, 5, Task::Regression, 17);
  constexpr std::size_t kFloatSameDrawsAtLeast = 100;
  for (Profile profile : {Profile::Paper, Profile::Reference}) {
    for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r", "sfg-mkl", "sfg-mkl-r"}) {
      for (const char* precision : {"double", "float"}) {
        const bool single = std::string(precision) == "float";
        auto cpu_ctx = context_for(data, profile, {0, 2, 5});
        auto gpu_ctx = cpu_ctx;
        gpu_ctx.backend = BackendKind::Cuda;
        std::vector<std::pair<std::string, std::string>> params = {
            {"D", "37"}, {"switch_step", "150"}, {"precision", precision}};
        // The exploration rate apart from η (GraphTables::explore): ξ, or GF's η_e.
        params.emplace_back(std::string(name) == "omkl-gf" ? "eta_e" : "xi", "0.3");
        auto cpu = make(name, cpu_ctx, with_param(params, "step_path", "host"));
        auto gpu_host = [&] {
          SelectedPath native("native");  // whatever OMKL_CUDA_STEP_SELECTED the suite runs under
          return make(name, gpu_ctx, with_param(params, "step_path", "host"));
        }();
        const TracedSteps cpu_traced = run_traced_steps(*cpu, data);
        const TracedSteps gpu_traced = run_traced_steps(*gpu_host, data);
        const auto& cpu_steps = cpu_traced.predictions;
        const auto& gpu_host_steps = gpu_traced.predictions;
        // Float: the steps before the first whose draw differs between the backends' host paths
        // (the resident walk equals the GPU's host path, checked below); in double every draw
        // must agree.
        std::size_t same_draws = data.n_samples;
        for (std::size_t i = 0; i < cpu_traced.nodes.size(); ++i)
          if (cpu_traced.nodes[i] != gpu_traced.nodes[i]) {
            same_draws = i / gpu_host->n_replicates();
            break;
          }
        if (single) {
          // A float draw parting this early would be no rounding but a fault of one backend.
          ASSERT_GE(same_draws, kFloatSameDrawsAtLeast) << name << " float " << to_string(profile);
          if (same_draws < data.n_samples)
            std::cout << name << " float " << to_string(profile) << ": the backends' draws part at step " << same_draws
                      << " of " << data.n_samples << "\n";
        } else {
          ASSERT_EQ(same_draws, data.n_samples) << name << " double " << to_string(profile);
        }
        // The plan and learn by thread 0, then by the whole block in index order (a team: the
        // same arithmetic in the same order, so the same numbers up to nvcc's contraction of
        // a·b + c), in blocks of 128 and 512 threads (a warp per pair either way: the same
        // sums); last the default block, whose tree-order sums round differently (within 1e-12
        // here while the draws agree).
        std::vector<double> by_thread;
        for (const WalkShape& shape : kWalkShapes) {
          ScopedEnv walk_plan("OMKL_CUDA_WALK_PLAN", shape.plan);
          ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", shape.threads);
          ScopedEnv walk_sums("OMKL_WALK_SUMS", shape.sums);
          auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
          // One step per walk for the first 100 samples, then blocks of 97.
          auto got = run_blocks(*gpu, data, 1, 0, 100);
          const auto rest = run_blocks(*gpu, data, 97, 100);
          got.insert(got.end(), rest.begin(), rest.end());
          const std::size_t R = gpu->n_replicates();
          const std::string what = std::string(name) + " " + precision + " " + to_string(profile) + " plan by " +
                                   shape.plan + ", " + shape.threads + " threads, " +
                                   (shape.sums ? shape.sums : "default") + " sums";
          const auto& reference = single ? gpu_host_steps : cpu_steps;
          const double tolerance = single ? 1e-6 : 1e-9;
          for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_LE(relative_error(got[i], reference[i]), tolerance) << what << " step " << i / R;
          if (single)
            for (std::size_t i = 0; i < same_draws * R; ++i)
              ASSERT_LE(relative_error(got[i], cpu_steps[i]), 2e-3) << what << " float against the CPU step " << i / R;
          EXPECT_EQ(gpu->kernel_updates(), gpu_host->kernel_updates()) << what;
          if (by_thread.empty()) {
            by_thread = got;
            continue;
          }
          for (std::size_t i = 0; i < got.size(); ++i)
            ASSERT_LE(relative_error(got[i], by_thread[i]), 1e-12) << what << " against the plan by thread 0, step " << i / R;
        }
      }
    }
  }
}

// The graph program's plan and learn by the whole block (OMKL_CUDA_WALK_PLAN=block, 256 threads)
// against thread 0's, both in index order (OMKL_WALK_SUMS=ordered): the same numbers, over
// OMKL-GF's regenerations, SFG's draws and SFG-R's refinements. With OMKL_WALK_SUMS=tree (the
// first warp's shuffled sums, maxima and draws, core/team_reductions.h), the block's walk against
// the host's lanes in the same tree order (the same draws; the features round differently), the
// default (auto) block walk the same bits as tree, and the thread plan refused tree and taking
// the index order under auto. Short, so that compute-sanitizer's synccheck, memcheck and
// racecheck can run it (bench/gpu_session.sh).
TEST_F(CudaTest, ResidentGraphTeamPlanEqualsThreadPlan) {
  const Dataset data = random_stream(120, 4, Task::Regression, 29);
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    auto ctx = context_for(data, Profile::Reference, {0, 4});
    ctx.backend = BackendKind::Cuda;
    const std::vector<std::pair<std::string, std::string>> params = {
        {"D", "9"}, {"M", "3"}, {"switch_step", "60"}, {"step_path", "resident"},
        {"dict", "gauss:0.3+gauss:0.5+gauss:0.7+gauss:1+gauss:1.4+gauss:2+gauss:3+gauss:4+lap:0.5+lap:1+lap:2+lap:4"}};
    ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", "256");
    std::vector<double> by_thread;
    for (const char* plan : {"thread", "block"}) {
      ScopedEnv walk_plan("OMKL_CUDA_WALK_PLAN", plan);
      ScopedEnv ordered_sums("OMKL_WALK_SUMS", "ordered");
      auto gpu = make(name, ctx, params);
      const auto got = run_blocks(*gpu, data, 25);
      if (by_thread.empty()) {
        by_thread = got;
        continue;
      }
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(relative_error(got[i], by_thread[i]), 1e-12) << name << " step " << i / 2;
    }
    const auto by_default = [&](const char* plan) {
      ScopedEnv walk_plan("OMKL_CUDA_WALK_PLAN", plan);
      ScopedEnv auto_sums("OMKL_WALK_SUMS", nullptr);
      auto gpu = make(name, ctx, params);
      return run_blocks(*gpu, data, 25);
    };
    // (Thread 0 has no tree order on the device: this shows that auto takes it there unrefused.)
    EXPECT_EQ(by_default("thread"), by_thread) << name << ": auto sums on thread 0 are the index order";
    const auto block_default = by_default("block");
    ScopedEnv tree_sums("OMKL_WALK_SUMS", "tree");
    auto cpu_ctx = ctx;
    cpu_ctx.backend = BackendKind::Cpu;
    const auto on_lanes = [&] {
      ScopedEnv lanes("OMKL_HOST_WALK_LANES", "3");
      auto cpu = make(name, cpu_ctx, params);
      return run_blocks(*cpu, data, 25);
    }();
    auto gpu = make(name, ctx, params);
    const auto got = run_blocks(*gpu, data, 25);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], on_lanes[i]), 1e-9) << name << " tree sums, step " << i / 2;
    EXPECT_EQ(block_default, got) << name << ": auto sums on a block are the tree order";
    ScopedEnv thread_plan("OMKL_CUDA_WALK_PLAN", "thread");
    auto refused = make(name, ctx, params);
    try {
      run_blocks(*refused, data, 25);
      ADD_FAILURE() << name << ": tree sums with thread 0's plan were taken";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("OMKL_CUDA_WALK_PLAN=block"), std::string::npos) << e.what();
    }
  }
}

// OMKL_WALK_STATE=local on the GPU: each block walks a copy of its replicate's state in shared
// memory (kernels/resident_walk.cuh's kLocal shapes) and copies it back. Only where the state lies
// changes, so the predictions and checkpoint are the arena walk's bit for bit, for every family,
// at 128 threads and at 512, in float too; a shape without the local copy (thread 0's plan, a
// block per pair) walks in the arena, bit for bit the same; and a block's walk equals the CPU
// backend's local walk within floating point. Short, so that compute-sanitizer can run it.
TEST_F(CudaTest, ResidentGraphLocalStateEqualsTheArena) {
  const Dataset data = random_stream(120, 4, Task::Regression, 31);
  for (const char* name : {"omkl-gf", "omkl-sfg", "omkl-sfg-r"}) {
    for (const char* precision : {"double", "float"}) {
      auto ctx = context_for(data, Profile::Reference, {0, 4, 7});
      ctx.backend = BackendKind::Cuda;
      const std::vector<std::pair<std::string, std::string>> params = {
          {"D", "9"}, {"M", "3"}, {"switch_step", "60"}, {"step_path", "resident"}, {"precision", precision},
          {"dict", "gauss:0.3+gauss:0.5+gauss:0.7+gauss:1+gauss:1.4+gauss:2+gauss:3+gauss:4+lap:0.5+lap:1+lap:2+lap:4"}};
      const std::string what = std::string(name) + " in " + precision;
      for (const char* threads : {"128", "512"}) {
        ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", threads);
        const auto walk = [&](const char* where, std::string* state) {
          ScopedEnv walk_state("OMKL_WALK_STATE", where);
          auto gpu = make(name, ctx, params);
          auto predictions = run_blocks(*gpu, data, 25);
          StateWriter writer;
          gpu->save_state(writer);
          *state = writer.bytes();
          return predictions;
        };
        std::string arena_state, local_state;
        const auto in_arena = walk("arena", &arena_state);
        EXPECT_EQ(walk("local", &local_state), in_arena) << what << " on " << threads << " threads";
        EXPECT_EQ(local_state, arena_state) << what << " on " << threads << " threads";
      }
      for (const auto& [shape, value] : std::vector<std::pair<const char*, const char*>>{
               {"OMKL_CUDA_WALK_PLAN", "thread"}, {"OMKL_CUDA_WALK_PAIRS", "auto"}}) {
        ScopedEnv other_shape(shape, value);
        ScopedEnv ordered("OMKL_WALK_SUMS", "ordered");  // thread 0 has only the index order
        const auto walk = [&](const char* where) {
          ScopedEnv walk_state("OMKL_WALK_STATE", where);
          auto gpu = make(name, ctx, params);
          return run_blocks(*gpu, data, 25);
        };
        EXPECT_EQ(walk("local"), walk("arena")) << what << " with " << shape << "=" << value;
      }
      if (std::string(precision) == "float") continue;
      ScopedEnv walk_state("OMKL_WALK_STATE", "local");
      ScopedEnv tree_sums("OMKL_WALK_SUMS", "tree");
      auto cpu_ctx = ctx;
      cpu_ctx.backend = BackendKind::Cpu;
      auto cpu = make(name, cpu_ctx, params);
      const auto on_host = run_blocks(*cpu, data, 25);
      auto gpu = make(name, ctx, params);
      const auto got = run_blocks(*gpu, data, 25);
      for (std::size_t i = 0; i < got.size(); ++i)
        ASSERT_LE(relative_error(got[i], on_host[i]), 1e-9) << what << " against the CPU, step " << i / 3;
    }
  }
}

// step_path = resident for the random-feature bandit algorithms on the GPU (resident_bandit.h's
// program in kernels/resident_walk.cuh): the host path's draws (the same selected counts) and
// predictions within floating point, in blocks of rounds.
TEST_F(CudaTest, ResidentBanditCasesMatchTheCpuOnEveryLog) {
  // spec/bandit.md §9: the GPU's results equal the CPU's to ≤ 1e−9 relative on every logged
  // metric. Every rule, loss and mode of the host driver's tests (bandit_cases(): the logistic
  // loss in both §4.4 modes, the absolute loss, the clean bisection, independent Ω, the kernel
  // expansions), three repetitions: predictions, p and the per-kernel losses within 1e−9, the
  // selection counts and mistakes exactly.
  for (const omkl::test::BanditCase& c : omkl::test::bandit_cases()) {
    const Dataset data = omkl::test::bandit_case_stream(150, c.task);
    auto cpu_ctx = context_for(data, Profile::Paper, {0, 2, 5});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    auto cpu = make(c.name, cpu_ctx, with_param(c.params, "step_path", "host"));
    auto gpu = make(c.name, gpu_ctx, with_param(c.params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 40);
    const std::string label = std::string(c.name) + (c.task == Task::Classification ? " classifying" : "") +
                              (c.params.size() > 2 ? " " + c.params.back().first + "=" + c.params.back().second : "");
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_LE(relative_error(got[i], expected[i]), 1e-9) << label << " " << i;
    for (std::size_t r = 0; r < 3; ++r) {
      const BanditLog want = bandit_log(*cpu, r), have = bandit_log(*gpu, r);
      EXPECT_EQ(have.selected, want.selected) << label;
      EXPECT_EQ(have.kernel_mistakes, want.kernel_mistakes) << label;
      for (std::size_t i = 0; i < want.p.size(); ++i) {
        EXPECT_LE(relative_error(have.p[i], want.p[i]), 1e-9) << label << " p_" << i;
        EXPECT_LE(relative_error(have.kernel_loss[i], want.kernel_loss[i]), 1e-9) << label << " loss_" << i;
      }
    }
  }
}

TEST_F(CudaTest, ResidentBanditWalkEqualsTheHostPath) {
  Dataset data = random_stream(300, 4, Task::Regression, 23);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  // One pair a round: a warp forms it, or with OMKL_CUDA_WALK_PAIRS=auto the whole block, of 128
  // or 512 threads (OMKL_CUDA_WALK_THREADS).
  for (const char* pairs_mode : kWalkPairModes)
  for (const char* threads : {"128", "512"})
  for (const char* name : {"rf-oks", "rf-oks++", "rf-ioks"}) {
    ScopedEnv walk_pairs("OMKL_CUDA_WALK_PAIRS", pairs_mode);
    ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", threads);
    auto cpu_ctx = context_for(data, Profile::Paper, {0, 2, 5});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    const std::vector<std::pair<std::string, std::string>> params = {{"D", "40"},
                                                                     {"dict", "gauss:0.5+gauss:1+gauss:2+gauss:4"}};
    auto cpu = make(name, cpu_ctx, with_param(params, "step_path", "host"));
    auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 50);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), 1e-9) << name << " " << pairs_mode << " " << threads << " " << i;
    for (std::size_t r = 0; r < 3; ++r)
      EXPECT_EQ(bandit_log(*gpu, r).selected, bandit_log(*cpu, r).selected) << name << " " << pairs_mode << " " << threads;
  }
  // The kernel expansions (resident_support.h): the support pool in device memory, a set
  // summed by the whole thread block (of 128 or 512 threads); checkpoints read the sets back.
  for (const char* threads : {"128", "512"})
  for (const char* name : {"oks", "oks++", "ioks"}) {
    ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", threads);
    auto cpu_ctx = context_for(data, Profile::Paper, {0, 2, 5});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    const std::vector<std::pair<std::string, std::string>> params = {
        {"dict", "gauss:0.5+lap:1+cauchy:2+gauss:4+lap_l2:1.5"}};
    auto cpu = make(name, cpu_ctx, with_param(params, "step_path", "host"));
    auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 70);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), 1e-9) << name << " " << threads << " threads " << i;
    for (std::size_t r = 0; r < 3; ++r)
      EXPECT_EQ(bandit_log(*gpu, r).selected, bandit_log(*cpu, r).selected) << name << " " << threads << " threads";
    StateWriter a, b;
    cpu->save_state(a);
    gpu->save_state(b);
    EXPECT_EQ(a.bytes().size(), b.bytes().size()) << name;  // the same support sets, read back
  }
}

// The random-feature bandit's Ω_i/σ_i drawn by the GPU backend itself
// (OMKL_CUDA_BANDIT_DRAWS=device: bandit_omega_recipes(), whose host evaluation
// BanditOmegaTest.RecipesGiveEachKernelsScaledOmega checks on the CPU) instead of uploaded from
// the host: the same matrices, so the same predictions and state bit for bit. Independent
// matrices and a checkpoint's Ω still go up from the host, with the same numbers.
TEST_F(CudaTest, BanditDeviceDrawnOmegaEqualsTheHostUpload) {
  Dataset data = random_stream(240, 4, Task::Regression, 29);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  auto ctx = context_for(data, Profile::Paper, {0, 2, 5});
  ctx.backend = BackendKind::Cuda;
  for (const char* name : {"rf-oks", "rf-oks++", "rf-ioks"})
  for (const char* independent : {"false", "true"}) {
    const std::vector<std::pair<std::string, std::string>> params = {
        {"D", "40"}, {"dict", "gauss:0.5+gauss:1+gauss:2+gauss:4"}, {"step_path", "resident"},
        {"independent_omega", independent}};
    const std::string where = std::string(name) + " independent_omega=" + independent;
    std::vector<double> uploaded, drawn;
    StateWriter uploaded_state, drawn_state, halfway;
    {
      ScopedEnv draws("OMKL_CUDA_BANDIT_DRAWS", "host");
      auto a = make(name, ctx, params);
      uploaded = run_blocks(*a, data, 60);
      a->save_state(uploaded_state);
    }
    {
      ScopedEnv draws("OMKL_CUDA_BANDIT_DRAWS", "device");
      auto b = make(name, ctx, params);
      const auto first = run_blocks(*b, data, 60, 0, 120);
      b->save_state(halfway);
      const auto rest = run_blocks(*b, data, 60, 120);
      drawn = first;
      drawn.insert(drawn.end(), rest.begin(), rest.end());
      b->save_state(drawn_state);
      // A checkpoint's Ω goes up from the host even where the backend could draw.
      auto c = make(name, ctx, params);
      StateReader in(halfway.bytes());
      c->load_state(in);
      const auto resumed = run_blocks(*c, data, 60, 120);
      EXPECT_EQ(resumed, rest) << where << ": resumed from a checkpoint";
    }
    EXPECT_EQ(drawn, uploaded) << where;
    EXPECT_EQ(drawn_state.bytes(), uploaded_state.bytes()) << where;
  }
}

// The resident walks on the GPU with every replicate on its own permutation of the stream (a
// shuffled study in lockstep, step_block_replicated()): each replicate's predictions are those of
// its one-replicate CPU host-path run on its own stream, within floating point.
TEST_F(CudaTest, ReplicatedStreamsEqualSeparateCpuRuns) {
  Dataset data = random_stream(240, 4, Task::Regression, 31);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  const std::vector<std::uint64_t> replicates = {0, 3, 8};
  const auto orders = omkl::test::shuffled_orders(data.n_samples, replicates.size());
  const std::vector<Dataset> streams = omkl::test::shuffled_streams(data, replicates.size());
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases = {
      {"rf-oks++", {{"D", "40"}, {"dict", "gauss:0.5+gauss:1+gauss:2+gauss:4"}}},
      {"rf-ioks", {{"D", "40"}, {"dict", "gauss:0.5+gauss:1+gauss:2+gauss:4"}}},
      {"oks++", {{"dict", "gauss:0.5+lap:1+gauss:4"}}},
      {"omkl-sfg-r", {{"D", "37"}, {"switch_step", "150"}}}};
  for (const char* pairs_mode : kWalkPairModes)
  for (const auto& [name, params] : cases) {
    ScopedEnv walk_pairs("OMKL_CUDA_WALK_PAIRS", pairs_mode);
    auto gpu_ctx = context_for(data, Profile::Paper, replicates);
    gpu_ctx.backend = BackendKind::Cuda;
    auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
    const auto got = omkl::test::run_replicated_blocks(*gpu, data, orders, 70);
    for (std::size_t r = 0; r < replicates.size(); ++r) {
      auto cpu = make(name, context_for(data, Profile::Paper, {replicates[r]}), with_param(params, "step_path", "host"));
      const auto expected = run_steps(*cpu, streams[r]);
      for (std::size_t t = 0; t < data.n_samples; ++t)
        ASSERT_LE(relative_error(got[t * replicates.size() + r], expected[t]), 1e-9)
            << name << " " << pairs_mode << " r=" << r << " t=" << t;
    }
  }
}

// A walk by rows keeps the stream in device memory from one walk to the next (ResidentArena's
// bound stream): a stream changed in place between two walks — the same address, other numbers —
// is uploaded again, so the GPU learner's predictions stay those of the CPU's host walk over the
// same blocks (double), and in float those of one-replicate GPU runs on each permuted stream
// (the same launch shape, so the same float arithmetic).
TEST_F(CudaTest, AStreamChangedBetweenWalksByRowsIsUploadedAgain) {
  Dataset data = random_stream(160, 4, Task::Regression, 43);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  const std::vector<std::uint64_t> replicates = {1, 5};
  const auto orders = omkl::test::shuffled_orders(data.n_samples, replicates.size());
  // Both halves of the run on one buffer: the second half's rows negated in place first.
  const auto run_halves = [&](detail::Algorithm& algorithm, const std::vector<std::vector<std::size_t>>& by) {
    Dataset work = data;
    std::vector<double> out = omkl::test::run_replicated_blocks(algorithm, work, by, 40, 0, 80);
    for (double& v : work.x) v = -v;
    const auto second = omkl::test::run_replicated_blocks(algorithm, work, by, 40, 80, 160);
    out.insert(out.end(), second.begin(), second.end());
    return out;
  };
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases = {
      {"rf-oks++", {{"D", "30"}, {"dict", "gauss:0.5+gauss:1+gauss:4"}}},
      {"omkl-sfg", {{"D", "30"}}}};
  for (const auto& [name, params] : cases) {
    auto cpu_ctx = context_for(data, Profile::Paper, replicates);
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    auto cpu = make(name, cpu_ctx, with_param(params, "step_path", "resident"));
    auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_halves(*cpu, orders), got = run_halves(*gpu, orders);
    ASSERT_EQ(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), 1e-9) << name << " " << i;
  }
  ScopedEnv threads("OMKL_CUDA_WALK_THREADS", "128");
  const std::vector<std::pair<std::string, std::string>> params = {{"D", "30"}, {"precision", "float"}};
  auto gpu_ctx = context_for(data, Profile::Paper, replicates);
  gpu_ctx.backend = BackendKind::Cuda;
  auto together = make("omkl-gf", gpu_ctx, with_param(params, "step_path", "resident"));
  const auto got = run_halves(*together, orders);
  for (std::size_t r = 0; r < replicates.size(); ++r) {
    auto alone_ctx = context_for(data, Profile::Paper, {replicates[r]});
    alone_ctx.backend = BackendKind::Cuda;
    auto alone = make("omkl-gf", alone_ctx, with_param(params, "step_path", "resident"));
    const std::vector<std::vector<std::size_t>> own = {orders[r]};
    const auto expected = run_halves(*alone, own);
    for (std::size_t t = 0; t < data.n_samples; ++t)
      ASSERT_LE(relative_error(got[t * replicates.size() + r], expected[t]), 1e-6) << "float r=" << r << " t=" << t;
  }
}

// step_path = resident for the server-side-kernel federations on the GPU (resident_federation.cu:
// a block per draw walks whole rounds): the CPU host path's predictions within floating point
// and the same uploads (message counts); precision=float within the float tolerance of the CPU
// backend's float mode.
TEST_F(CudaTest, ResidentFederationWalkEqualsTheHostPath) {
  const Dataset data = omkl::test::federated_stream(4, 60, 3, 29);
  for (const char* precision : {"double", "float"})
  for (const char* name : {"pof-mkl", "vm-kofl", "ofmkl-avg"}) {
    auto cpu_ctx = omkl::test::federated_context(data, Profile::Paper, {0, 3});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    std::vector<std::pair<std::string, std::string>> params = {
        {"D", "7"}, {"dict", "gauss2:0.5+gauss2:2+gauss2:8"}, {"precision", precision}};
    if (std::string(name) == "pof-mkl") params.emplace_back("M", "2");
    auto cpu = make(name, cpu_ctx, with_param(params, "step_path", "host"));
    auto gpu = make(name, gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 40);
    const double tolerance = std::string(precision) == "float" ? 1e-4 : 1e-9;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), tolerance) << name << " " << precision << " " << i;
    EXPECT_EQ(gpu->communication().uplink_floats, cpu->communication().uplink_floats) << name;
  }
}

// step_path = resident for eM-KOFL on the GPU (resident_em_kofl.h's program on the per-step
// seam, the round's averaging by the whole thread block): the CPU host path's predictions within
// floating point, in blocks that cut rounds, and the same message counts; precision=float
// against the CPU host path's float mode.
TEST_F(CudaTest, ResidentEmKoflWalkEqualsTheHostPath) {
  const Dataset data = omkl::test::federated_stream(4, 70, 3, 41);
  for (const char* pairs_mode : kWalkPairModes)
  for (const char* precision : {"double", "float"}) {
    ScopedEnv walk_pairs("OMKL_CUDA_WALK_PAIRS", pairs_mode);
    auto cpu_ctx = omkl::test::federated_context(data, Profile::Paper, {0, 3});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    const std::vector<std::pair<std::string, std::string>> params = {{"D", "7"},
                                                                     {"dict", "gauss2:0.5+gauss2:2+gauss2:8"},
                                                                     {"explore", "0.2"},
                                                                     {"precision", precision}};
    auto cpu = make("em-kofl", cpu_ctx, with_param(params, "step_path", "host"));
    auto gpu = make("em-kofl", gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 45);
    const double tolerance = std::string(precision) == "float" ? 1e-4 : 1e-9;
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), tolerance) << precision << " " << pairs_mode << " " << i;
    EXPECT_EQ(gpu->communication().uplink_floats, cpu->communication().uplink_floats) << precision;
  }
}

// A pool of GPU contexts given to successive studies: the contexts are made once (by
// make_device_contexts(), timed), the studies report no further set-up, and their numbers are
// those of a study that makes its own.
TEST_F(CudaTest, StudiesReuseTheirDeviceContexts) {
  const Dataset data = random_stream(200, 4, Task::Regression, 43);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("raker:D=16"), parse_algorithm_spec("omkl-sfg:D=16,M=3")};
  config.n_seeds = 3;
  config.backend = BackendKind::Cuda;
  const StudyResult own = run_study(config, data);
  EXPECT_GT(own.device_setup_seconds, 0.0);
  // summary.json's device names the GPU (ARCHITECTURE.md's output contract: which device ran).
  EXPECT_EQ(own.device.rfind("cuda: ", 0), 0u) << own.device;
  EXPECT_NE(own.device.find("sm_"), std::string::npos) << own.device;
  double seconds = 0.0;
  config.device_contexts = make_device_contexts(&seconds);
  ASSERT_NE(config.device_contexts, nullptr);
  EXPECT_GT(seconds, 0.0);
  // The first study may still make a context beside the pool's (the pool's first use); the
  // second makes none. (Validation now holds one cell's one-replicate build at a time.)
  double after_first = 0.0;
  for (int k = 0; k < 2; ++k) {
    const StudyResult pooled = run_study(config, data);
    if (k == 0) after_first = device_context_seconds(*config.device_contexts);
    else EXPECT_EQ(pooled.device_setup_seconds, 0.0);
    for (std::size_t a = 0; a < own.results.size(); ++a)
      EXPECT_EQ(pooled.results[a].final_per_seed, own.results[a].final_per_seed) << a;
  }
  EXPECT_EQ(device_context_seconds(*config.device_contexts), after_first);
}

// A GPU study whose cells do not all batch their seeds (a host-only kernel expansion beside
// Raker and OMKL-SFG), and a shuffled one, run one-seed tasks on several threads, each with a
// CUDA backend of its own at once: every seed's result must be the CPU study's. OMKL-SFG on its
// per-step path (one-seed tasks when shuffled) and as the default resident walk (lockstep).
TEST_F(CudaTest, ConcurrentCellsOfAGpuStudyMatchTheCpu) {
  const Dataset data = random_stream(240, 4, Task::Regression, 53);
  for (const char* sfg : {"omkl-sfg:D=16,M=3,step_path=host", "omkl-sfg:D=16,M=3"})
  for (bool shuffle : {false, true}) {
    StudyConfig config;
    config.algorithms = {parse_algorithm_spec("raker:D=16"), parse_algorithm_spec(sfg), parse_algorithm_spec("kogd")};
    config.n_seeds = 4;
    config.threads = 4;
    config.shuffle = shuffle;
    const StudyResult cpu = run_study(config, data);
    config.backend = BackendKind::Cuda;
    const StudyResult gpu = run_study(config, data);
    ASSERT_EQ(gpu.results.size(), cpu.results.size());
    for (std::size_t a = 0; a < cpu.results.size(); ++a) {
      ASSERT_EQ(gpu.results[a].final_per_seed.size(), cpu.results[a].final_per_seed.size());
      for (std::size_t r = 0; r < cpu.results[a].final_per_seed.size(); ++r)
        EXPECT_LE(relative_error(gpu.results[a].final_per_seed[r], cpu.results[a].final_per_seed[r]), 1e-9)
            << config.algorithms[a].name << " seed " << r << (shuffle ? " (shuffled)" : "") << " " << sfg;
    }
  }
}

// step_path = resident for PerFedAvg on the GPU (resident_perfedavg.h: a replicate's network in
// one thread block, each layer's outputs shared by its threads): the CPU host path's predictions
// within floating point (fused multiply-adds on the device), in blocks that cut rounds.
TEST_F(CudaTest, ResidentPerFedAvgWalkEqualsTheHostPath) {
  const Dataset data = omkl::test::federated_stream(4, 70, 3, 47);
  auto cpu_ctx = omkl::test::federated_context(data, Profile::Paper, {0, 3});
  auto gpu_ctx = cpu_ctx;
  gpu_ctx.backend = BackendKind::Cuda;
  for (const char* threads : {"128", "512"})  // the block's sums over 4 or 16 warps
  for (const char* layers : {"0", "2"}) {
    ScopedEnv walk_threads("OMKL_CUDA_WALK_THREADS", threads);
    const std::vector<std::pair<std::string, std::string>> params = {{"width", "8"}, {"hidden_layers", layers}};
    auto cpu = make("perfedavg", cpu_ctx, with_param(params, "step_path", "host"));
    auto gpu = make("perfedavg", gpu_ctx, with_param(params, "step_path", "resident"));
    const auto expected = run_steps(*cpu, data);
    const auto got = run_blocks(*gpu, data, 45);
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_LE(relative_error(got[i], expected[i]), 1e-9) << layers << " layers, " << threads << " threads, " << i;
  }
}

TEST_F(CudaTest, UnknownPathSwitchIsAConfigError) {
  RfProblem problem;
  problem.n_replicates = 1;
  problem.n_kernels = 1;
  problem.n_rff = 4;
  problem.n_features = 2;
  problem.slot_kernel = {0};
  {
    SelectedPath path("bogus");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  {
    ScopedEnv layout("OMKL_CUDA_TRAJECTORIES", "per_warp");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  {
    ScopedEnv projections("OMKL_CUDA_PROJECTIONS", "cublas");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  {
    ScopedEnv draws("OMKL_CUDA_DRAWS", "curand");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  {
    ScopedEnv threads("OMKL_CUDA_WALK_THREADS", "1024");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  {
    ScopedEnv pairs("OMKL_CUDA_WALK_PAIRS", "per_block");
    EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), ConfigError);
  }
  EXPECT_NO_THROW(make_rf_backend(BackendKind::Cuda, problem));
}

TEST(CudaAvailabilityTest, CudaBackendWithoutDeviceFailsClearly) {
  if (cuda_available()) GTEST_SKIP() << "a GPU is present";
  RfProblem problem;
  problem.slot_kernel = {0};
  EXPECT_THROW(make_rf_backend(BackendKind::Cuda, problem), CudaError);
  EXPECT_NO_THROW(make_rf_backend(BackendKind::Auto, problem)) << "auto falls back to the CPU";
  // The resident walks without an RfBackend say the same when they are made (a study's
  // validation), not at their first walk.
  EXPECT_THROW(require_cuda_device(), CudaError);
  Dataset data = random_stream(8, 3, Task::Regression, 3);
  auto ctx = context_for(data);
  ctx.backend = BackendKind::Cuda;
  EXPECT_THROW(make("oks++", ctx, {{"step_path", "resident"}}), CudaError);
  EXPECT_THROW(make("rf-oks++", ctx, {{"step_path", "resident"}, {"D", "8"}}), CudaError);
  EXPECT_NO_THROW(make("oks++", ctx, {{"step_path", "host"}})) << "the host path needs no device";
  data.n_clients = 2;
  ctx.n_clients = 2;
  EXPECT_THROW(make("perfedavg", ctx, {{"step_path", "resident"}, {"width", "3"}}), CudaError);
}

TEST_F(CudaTest, CheckpointsAndPredictWorkOnTheDevicePath) {
  // The paper profile keeps the kernel weights on the device (fused path): predict() and
  // save/restore must pull and push them exactly.
  for (const char* layout : kTrajectoryLayouts) {
    ScopedEnv env("OMKL_CUDA_TRAJECTORIES", layout);
    for (const char* name : {"raker", "adaraker"}) {
      const Dataset data = random_stream(300, 4, Task::Regression, 5);
      auto ctx = context_for(data, Profile::Paper, {0, 3});
      ctx.backend = BackendKind::Cuda;
      auto full = make(name, ctx, {{"D", "20"}});
      std::vector<double> want(data.n_samples * 2), ahead(2);
      for (std::size_t t = 0; t < data.n_samples; ++t) {
        full->predict(data.row(t), ahead.data());
        full->step(data.row(t), data.y[t], want.data() + 2 * t);
        for (int r = 0; r < 2; ++r)
          ASSERT_LE(relative_error(ahead[r], want[2 * t + r]), 1e-12) << layout << " " << name << " " << t;
      }
      auto first = make(name, ctx, {{"D", "20"}});
      std::vector<double> scratch(2 * 150);
      first->step_block(data.x.data(), data.y.data(), 150, data.n_features, scratch.data());
      StateWriter out;
      first->save_state(out);
      auto second = make(name, ctx, {{"D", "20"}});
      StateReader in(out.bytes());
      second->load_state(in);
      std::vector<double> rest(2 * (data.n_samples - 150));
      second->step_block(data.row(150), data.y.data() + 150, data.n_samples - 150, data.n_features, rest.data());
      for (std::size_t i = 0; i < rest.size(); ++i)
        ASSERT_LE(relative_error(rest[i], want[300 + i]), 1e-12) << layout << " " << name << " " << i;
    }
  }
}

// OMKL_CUDA_DRAWS=device: the backend draws the counter-mode matrices on the device (cuRAND's
// Philox, features/frequency_recipe.h): they must be the host's draws bit for bit, for every law
// and construction, odd sizes, several replicates, in double and float backends, and with every
// kernel on one stream (shared_omega).
TEST_F(CudaTest, DeviceDrawsEqualTheHostDraws) {
  ScopedEnv draws("OMKL_CUDA_DRAWS", "device");
  const Dictionary dictionary = {KernelSpec::gaussian(0.7), KernelSpec::laplacian(2.0), KernelSpec::cauchy(1.5),
                                 KernelSpec::isotropic_laplacian(0.9),
                                 KernelSpec::gaussian(3.0)};
  for (RfKind kind : {RfKind::Rf, RfKind::Orf, RfKind::OrfMatlab}) {
    for (auto [D, d] : std::vector<std::pair<std::size_t, std::size_t>>{{1, 1}, {7, 3}, {2, 5}, {50, 17}, {33, 40}}) {
      for (auto [single, shared] : std::vector<std::pair<bool, bool>>{{false, false}, {true, false}, {false, true}}) {
        AlgoContext ctx;
        ctx.seed = 21;
        ctx.replicates = {0, 5, 2};
        ctx.n_features = d;
        RfProblem problem;
        problem.n_replicates = ctx.replicates.size();
        problem.n_kernels = dictionary.size();
        problem.n_rff = D;
        problem.n_features = d;
        problem.slot_kernel = {0, 1, 2, 3};
        problem.single_precision = single;
        auto gpu = make_rf_backend(BackendKind::Cuda, problem);
        RfFeatures features;
        features.dictionary = dictionary;
        features.rf_kind = kind;
        features.shared_omega = shared;  // every kernel on stream 0 (the recipes need not share a family)
        ASSERT_TRUE(gpu->draw_frequencies([&] { return frequency_recipes(features, ctx); }));
        std::vector<double> got(D * d);
        for (std::size_t r = 0; r < problem.n_replicates; ++r) {
          for (std::size_t k = 0; k < dictionary.size(); ++k) {
            RandomStream rng(ctx.seed, ctx.replicates[r], RngPurpose::Frequencies, shared ? 0 : k);
            const std::vector<double> want = draw_frequencies(dictionary[k], D, d, kind, rng);
            gpu->get_frequencies(r, k, got.data());
            ASSERT_EQ(got, want) << to_string(kind) << " D=" << D << " d=" << d << " replicate " << r
                                 << " kernel " << k << (single ? " float" : " double") << (shared ? " shared" : "");
          }
        }
      }
    }
  }
}

// End to end: the algorithms built on device-drawn matrices (the default) predict as on the
// CPU, and so do they on host-drawn ones uploaded (OMKL_CUDA_DRAWS=host). OMKL-SFG on its
// per-step path and as the default resident walk.
TEST_F(CudaTest, AlgorithmsOnDeviceDrawnFrequenciesMatchTheCpu) {
  const Dataset data = random_stream(400, 5, Task::Regression, 13);
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases = {
      {"raker", {{"D", "23"}}},
      {"adaraker", {{"D", "23"}}},
      {"omkl-sfg", {{"D", "23"}, {"switch_step", "100"}}},
      {"omkl-sfg", {{"D", "23"}, {"switch_step", "100"}, {"step_path", "host"}}}};
  for (const char* draw_mode : {"device", "host"})
  for (const auto& [name, params] : cases) {
    ScopedEnv draws("OMKL_CUDA_DRAWS", draw_mode);
    auto cpu_ctx = context_for(data, Profile::Paper, {0, 1, 4});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    auto cpu = make(name, cpu_ctx, params);
    auto gpu = make(name, gpu_ctx, params);
    const auto a = run_steps(*cpu, data);
    const auto b = run_blocks(*gpu, data, 64);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_LE(relative_error(b[i], a[i]), 1e-9) << name << " " << params.size() << " " << draw_mode << " " << i;
  }
}

// The server's round on the device (round_kernels.cu, one warp per slot's group of updates)
// against the CPU backend's aggregate_round(): θ of every slot and the norms after the round, on
// random θ, frequencies and updates in random order, in both precisions and D not a multiple
// of 32.
TEST_F(CudaTest, NativeAggregateRoundMatchesTheCpuBackend) {
  ScopedEnv round("OMKL_CUDA_ROUND", "native");
  for (bool single : {false, true}) {
    RfProblem problem;
    problem.n_replicates = 3;
    problem.n_kernels = 4;
    problem.n_rff = 45;
    problem.n_features = 6;
    problem.slot_kernel = {0, 1, 2, 3, 1};
    problem.feature_scale = 1.0 / std::sqrt(45.0);
    auto cpu = make_rf_backend(BackendKind::Cpu, problem);
    problem.single_precision = single;
    auto gpu = make_rf_backend(BackendKind::Cuda, problem);
    const std::size_t R = 3, S = 5, D = 45, d = 6, n_clients = 7;
    RandomStream rng(31, 0, RngPurpose::Misc);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < 4; ++k) {
        const auto V = draw_frequencies(KernelSpec::gaussian(0.4 + 0.6 * k), D, d, RfKind::Rf, rng);
        cpu->set_frequencies(r, k, V.data());
        gpu->set_frequencies(r, k, V.data());
      }
    std::vector<double> theta(2 * D), x(n_clients * d);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t s = 0; s < S; ++s) {
        for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
        cpu->set_theta(r, s, theta.data());
        gpu->set_theta(r, s, theta.data());
      }
    for (double& v : x) v = 3.0 * rng.uniform() - 1.5;
    std::vector<ClientUpdate> updates;
    for (int i = 0; i < 60; ++i)
      updates.push_back({static_cast<std::uint32_t>(rng.below(R)), static_cast<std::uint32_t>(rng.below(S)),
                         static_cast<std::uint32_t>(rng.below(n_clients)), 2.0 * rng.uniform() - 1.0, 0.1 * rng.uniform()});
    // Two rounds, one of each upload form (upload_form.h), the second on the first's θ.
    for (UploadForm form : {UploadForm::Delta, UploadForm::Theta}) {
      std::vector<double> n_cpu(R * S), n_gpu(R * S, -1.0);
      cpu->aggregate_round(x.data(), n_clients, updates.data(), updates.size(), 0.25, form, n_cpu.data());
      gpu->aggregate_round(x.data(), n_clients, updates.data(), updates.size(), 0.25, form, n_gpu.data());
      const double tol = single ? 1e-4 : 1e-12;
      std::vector<double> a(2 * D), b(2 * D);
      for (std::size_t r = 0; r < R; ++r)
        for (std::size_t s = 0; s < S; ++s) {
          cpu->get_theta(r, s, a.data());
          gpu->get_theta(r, s, b.data());
          for (std::size_t j = 0; j < 2 * D; ++j)
            ASSERT_LE(relative_error(b[j], a[j]), tol) << r << " " << s << " " << j << " form " << int(form);
          ASSERT_LE(relative_error(n_gpu[r * S + s], n_cpu[r * S + s]), tol);
        }
    }
  }
}

// The federated family on the device (spec/federated.md §6): predictions of every client step
// and the server's aggregated θ through the CUDA backend against the CPU backend: on the host
// path with the generic round (θ and frequencies through get/set) and the native one (the
// default), one sample at a time; and with the defaults (step_path=auto) in blocks of samples,
// as a study hands them over, which the GPU walks resident (whole rounds; a block's partial
// round on the host path).
TEST_F(CudaTest, FederatedAlgorithmsMatchTheCpuBackend) {
  const Dataset data = omkl::test::federated_stream(4, 40, 3, 17);
  // POF-MKL with M = 2, and again with ξ < 1: Algorithm 1's ranking and bin probabilities then
  // follow the private weights (with ξ = 1 and the paper's skip_sort_if_uniform the bins are
  // uniform and the weights never matter).
  const std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> cases = {
      {"pof-mkl", {{"M", "2"}}},
      {"pof-mkl", {{"M", "2"}, {"xi", "0.5"}}},
      {"vm-kofl", {}},
      {"ofmkl-avg", {}},
      {"em-kofl", {}}};
  for (const char* mode : {"generic", "native", "auto"})
  for (const char* precision : {"double", "float"})
  for (const auto& [algo, extra] : cases) {
    const bool host_path = std::string(mode) != "auto";
    ScopedEnv round("OMKL_CUDA_ROUND", host_path ? mode : "native");
    auto cpu_ctx = omkl::test::federated_context(data, Profile::Paper, {0, 3});
    auto gpu_ctx = cpu_ctx;
    gpu_ctx.backend = BackendKind::Cuda;
    std::vector<std::pair<std::string, std::string>> params = {
        {"D", "7"}, {"dict", "gauss2:0.5+gauss2:2+gauss2:8"}, {"precision", precision}};
    params.insert(params.end(), extra.begin(), extra.end());
    if (host_path) params.emplace_back("step_path", "host");
    std::string name = algo;
    for (const auto& [key, value] : extra) name += " " + key + "=" + value;
    auto cpu = make(algo, cpu_ctx, params);
    auto gpu = make(algo, gpu_ctx, params);
    const auto a = run_steps(*cpu, data);
    const auto b = host_path ? run_steps(*gpu, data) : run_blocks(*gpu, data, 37);
    ASSERT_EQ(a.size(), b.size());
    const double tolerance = std::string(precision) == "float" ? 1e-4 : 1e-9;
    for (std::size_t i = 0; i < a.size(); ++i)
      ASSERT_LE(relative_error(b[i], a[i]), tolerance) << name << " " << mode << " " << precision << " " << i;
  }
}
