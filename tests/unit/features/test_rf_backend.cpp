#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "families/bandit/resident_bandit.h"
#include "families/bandit/resident_support.h"
#include "families/federated/resident_em_kofl.h"
#include "families/federated/resident_federation.h"
#include "families/federated/resident_perfedavg.h"
#include "features/random_features.h"
#include "features/rf_backend.h"
#include "omkl/algorithm.h"
#include "omkl/config.h"
#include "omkl/error.h"
#include "omkl/learner.h"

using namespace omkl;
using namespace omkl::detail;

namespace {

std::unique_ptr<RfBackend> backend_with_features(BackendKind kind, std::size_t R, std::size_t S,
                                                 bool single_precision = false) {
  RfProblem p;
  p.single_precision = single_precision;
  p.n_replicates = R;
  p.n_kernels = 3;
  p.n_rff = 9;
  p.n_features = 4;
  for (std::size_t s = 0; s < S; ++s) p.slot_kernel.push_back(s % 3);
  p.feature_scale = 1.0 / 3.0;
  auto b = make_rf_backend(kind, p);
  RandomStream rng(8, 0, RngPurpose::Misc);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < 3; ++k) {
      const auto V = draw_frequencies(KernelSpec::gaussian(0.5 + k), 9, 4, RfKind::Rf, rng);
      b->set_frequencies(r, k, V.data());
    }
  return b;
}

}  // namespace

TEST(RfBackendTest, SelectedStepsMatchScheduledSteps) {
  // Every slot selected with the scheduled rate and shrink = one advance() step.
  auto a = backend_with_features(BackendKind::Cpu, 2, 5);
  auto b = backend_with_features(BackendKind::Cpu, 2, 5);
  std::vector<SlotSchedule> schedules(5);
  for (std::size_t s = 0; s < 5; ++s) {
    schedules[s].eta = 0.1 * (s + 1);
    schedules[s].lambda = 0.01;
  }
  RandomStream rng(3, 0, RngPurpose::Misc);
  for (std::int64_t t = 1; t <= 40; ++t) {
    double x[4];
    for (double& v : x) v = rng.normal();
    const double y = rng.uniform();
    std::vector<double> f(10), n2(10), fs(10), n2s(10);
    a->advance(x, &y, 1, t, schedules, f.data(), n2.data());
    std::vector<PairStep> pairs;
    for (std::uint32_t r = 0; r < 2; ++r)
      for (std::uint32_t s = 0; s < 5; ++s)
        pairs.push_back({r, s, schedules[s].step_scale * schedules[s].eta,
                         1.0 - schedules[s].shrink_scale * schedules[s].eta * schedules[s].lambda});
    b->step_selected(x, y, pairs.data(), pairs.size(), fs.data(), n2s.data());
    for (std::size_t i = 0; i < 10; ++i) {
      ASSERT_NEAR(fs[i], f[i], 1e-12) << "t " << t << " pair " << i;
      ASSERT_NEAR(n2s[i], n2[i], 1e-12);
    }
  }
}

TEST(RfBackendTest, SelectedStepsTouchOnlyTheNamedSlots) {
  auto b = backend_with_features(BackendKind::Cpu, 1, 3);
  const double x[4] = {0.1, 0.2, -0.3, 0.4};
  const PairStep learn{0, 1, 0.5, 1.0};
  double f = 0;
  b->step_selected(x, 1.0, &learn, 1, &f, nullptr);
  std::vector<double> theta(18);
  for (std::uint32_t s : {0u, 2u}) {
    b->get_theta(0, s, theta.data());
    for (double v : theta) EXPECT_EQ(v, 0.0) << "slot " << s;
  }
  b->get_theta(0, 1, theta.data());
  double n2 = 0;
  for (double v : theta) n2 += v * v;
  // From θ = 0 with the squared loss: θ = −0.5·2(0 − 1)·z and ‖z‖ = 1, so ‖θ‖ = 1.
  EXPECT_NEAR(n2, 1.0, 1e-12);
  const PairStep look{0, 1, 0.0, 1.0};
  std::vector<double> before = theta;
  b->step_selected(x, 1.0, &look, 1, &f, nullptr);
  EXPECT_NEAR(f, 1.0, 1e-12) << "the updated model interpolates the sample";
  b->get_theta(0, 1, theta.data());
  EXPECT_EQ(theta, before) << "rate 0, shrink 1 only predicts";
}

TEST(RfBackendTest, AllThetaIsEverySlotReplicateMajor) {
  const std::size_t R = 2, S = 5, n = 18;
  auto b = backend_with_features(BackendKind::Cpu, R, S);
  RandomStream rng(9, 0, RngPurpose::Misc);
  std::vector<double> all(R * S * n);
  for (double& v : all) v = 2.0 * rng.uniform() - 1.0;
  b->set_all_theta(all.data());
  std::vector<double> one(n);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t s = 0; s < S; ++s) {
      b->get_theta(r, s, one.data());
      EXPECT_EQ(one, std::vector<double>(all.begin() + static_cast<std::ptrdiff_t>((r * S + s) * n),
                                         all.begin() + static_cast<std::ptrdiff_t>((r * S + s + 1) * n)))
          << "replicate " << r << " slot " << s;
      for (double& v : one) v = -v;  // and back through set_theta
      b->set_theta(r, s, one.data());
    }
  std::vector<double> back(R * S * n);
  b->get_all_theta(back.data());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(back[i], -all[i]) << i;
}

// step_selected_rows() (eM-KOFL's clients of a round, each stepping its own copies) gives every
// row exactly its own step_selected() call's numbers and θ: rows on disjoint slots (taken pair
// position by position), and rows that share a slot or list their pairs out of order (taken
// one by one, in row order), in double and with the float map.
TEST(RfBackendTest, StepSelectedRowsEqualsOneCallPerRow) {
  const std::size_t R = 2, S = 6, n = 18, d = 4, rows = 3;
  for (const bool single : {false, true})
    for (const bool disjoint : {true, false}) {
      auto together = backend_with_features(BackendKind::Cpu, R, S, single);
      auto alone = backend_with_features(BackendKind::Cpu, R, S, single);
      RandomStream rng(21, disjoint, RngPurpose::Misc);
      std::vector<double> theta(R * S * n);
      for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
      together->set_all_theta(theta.data());
      alone->set_all_theta(theta.data());
      // Row k steps slots 2k and 2k + 1 (kernels 2k mod 3, 2k + 1 mod 3) of both replicates, in
      // ascending kernel order; without `disjoint`, row 2 steps slots 1 and 5, so that slot 1
      // comes first in row 2 and second in row 0: taken position by position, row 2's step on it
      // would come before row 0's.
      std::vector<PairStep> pairs;
      for (std::size_t k = 0; k < rows; ++k)
        for (std::uint32_t r = 0; r < R; ++r) {
          std::uint32_t a = static_cast<std::uint32_t>(2 * k), b = a + 1;
          if (!disjoint && k == 2) {
            a = 1;
            b = 5;
          }
          const bool ascending = (a % 3) < (b % 3);
          for (std::uint32_t slot : ascending ? std::vector<std::uint32_t>{a, b} : std::vector<std::uint32_t>{b, a}) {
            PairStep p;
            p.replicate = r;
            p.slot = slot;
            p.rate = 0.05 * (slot + 1);
            p.shrink = 0.999;
            pairs.push_back(p);
          }
        }
      const std::size_t per_row = pairs.size() / rows;
      std::vector<double> x(rows * d), y(rows);
      for (double& v : x) v = rng.normal();
      for (double& v : y) v = rng.uniform();
      std::vector<double> f(pairs.size()), n2(pairs.size()), f1(pairs.size()), n21(pairs.size());
      together->step_selected_rows(x.data(), y.data(), rows, pairs.data(), per_row, f.data(), n2.data());
      for (std::size_t k = 0; k < rows; ++k)
        alone->step_selected(x.data() + k * d, y[k], pairs.data() + k * per_row, per_row, f1.data() + k * per_row,
                             n21.data() + k * per_row);
      EXPECT_EQ(f, f1) << (single ? "float " : "double ") << (disjoint ? "disjoint" : "shared");
      EXPECT_EQ(n2, n21) << (single ? "float " : "double ") << (disjoint ? "disjoint" : "shared");
      std::vector<double> after(theta.size()), after1(theta.size());
      together->get_all_theta(after.data());
      alone->get_all_theta(after1.data());
      EXPECT_EQ(after, after1) << (single ? "float " : "double ") << (disjoint ? "disjoint" : "shared");
      EXPECT_NE(after, theta);
    }
}

// precision=float cannot walk resident on the CPU: the walk's host driver computes in double,
// so the float map would be ignored for whole blocks and used for the samples around them.
// step_path=resident is refused with the reason; auto and host take the host path.
TEST(RfBackendTest, FloatConfigurationsDoNotWalkResidentOnTheCpu) {
  omkl::LearnerContext context;
  context.n_features = 4;
  context.horizon = 400;
  context.n_clients = 4;
  for (const std::string& spec : std::vector<std::string>{"pof-mkl:clients=4,D=8,M=2,dict=gauss2:0.5+gauss2:2",
                                                          "vm-kofl:D=8,dict=gauss2:0.5+gauss2:2",
                                                          "em-kofl:clients=4,D=8,dict=gauss2:0.5+gauss2:2",
                                                          "omkl-sfg:D=8,M=2,dict=gauss:0.5+gauss:1+gauss:2"}) {
    try {
      omkl::make_learner(omkl::parse_algorithm_spec(spec + ",precision=float,step_path=resident"), context);
      ADD_FAILURE() << spec << ": a float resident walk on the CPU must be refused";
    } catch (const omkl::ConfigError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("precision=float"), std::string::npos) << message;
      EXPECT_NE(message.find("step_path"), std::string::npos) << message;
    }
    for (const char* path : {"auto", "host"})
      EXPECT_NO_THROW(omkl::make_learner(
          omkl::parse_algorithm_spec(spec + ",precision=float,step_path=" + std::string(path)), context))
          << spec << " " << path;
    EXPECT_NO_THROW(omkl::make_learner(omkl::parse_algorithm_spec(spec + ",step_path=resident"), context)) << spec;
  }
}

// predict_rows() (a federated round's clients against one θ) gives each row exactly what
// predict() gives it: one slot per kernel (the fused pass) and several (features, then the
// slots), inactive slots, angles past the fast range, the float map.
TEST(RfBackendTest, PredictRowsEqualsPredictRowByRow) {
  const std::size_t R = 2, n = 18, d = 4, rows = 6;
  for (const bool single : {false, true})
    for (const std::size_t S : {std::size_t{3}, std::size_t{5}}) {
      auto b = backend_with_features(BackendKind::Cpu, R, S, single);
      RandomStream rng(11, S, RngPurpose::Misc);
      std::vector<double> theta(R * S * n);
      for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
      b->set_all_theta(theta.data());
      std::vector<SlotSchedule> schedules(S);
      schedules[1].active_from = 10;  // inactive at t = 5: reported as 0
      std::vector<double> x(rows * d);
      for (double& v : x) v = rng.normal();
      for (std::size_t j = 0; j < d; ++j) x[3 * d + j] *= 400.0;  // past every fast range
      std::vector<double> together(rows * R * S, -1.0), alone(R * S);
      b->predict_rows(x.data(), rows, 5, schedules, together.data());
      for (std::size_t row = 0; row < rows; ++row) {
        b->predict(x.data() + row * d, 5, schedules, alone.data());
        for (std::size_t i = 0; i < R * S; ++i)
          EXPECT_EQ(together[row * R * S + i], alone[i]) << "S " << S << (single ? " float" : "") << " row " << row << " i " << i;
        EXPECT_EQ(alone[1], 0.0);
        EXPECT_NE(alone[0], 0.0);
      }
    }
}

TEST(RfBackendTest, SlotsAreGroupedByKernelInAscendingOrder) {
  RfProblem problem;
  problem.n_kernels = 4;
  problem.slot_kernel = {0, 1, 0, 0, 2};  // kernel 3 has no slot
  const SlotsByKernel g = slots_by_kernel(problem);
  EXPECT_EQ(g.offsets, (std::vector<std::uint32_t>{0, 3, 4, 5, 5}));
  EXPECT_EQ(g.slots, (std::vector<std::uint32_t>{0, 2, 3, 1, 4}));
  EXPECT_EQ(g.largest, 3u);
  // AdaRaker's layout: slot = level × P + kernel.
  problem.n_kernels = 3;
  problem.slot_kernel = {0, 1, 2, 0, 1, 2};
  const SlotsByKernel levels = slots_by_kernel(problem);
  EXPECT_EQ(levels.slots, (std::vector<std::uint32_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(levels.largest, 2u);
  problem.slot_kernel = {0, 3};
  EXPECT_THROW(slots_by_kernel(problem), Error);
  EXPECT_THROW(make_rf_backend(BackendKind::Cpu, problem), Error) << "the CPU backend checks it too";
}

TEST(RfBackendTest, CpuBackendLeavesTheDrawsToTheHostWithoutBuildingRecipes) {
  // The host draws faster than the recipe's per-unit form, so the CPU backend declines, and
  // the recipes (R × P of them for a large study) are never built for it.
  auto b = backend_with_features(BackendKind::Cpu, 2, 3);
  bool built = false;
  const bool drawn = b->draw_frequencies([&] {
    built = true;
    return std::vector<MatrixRecipe>{};
  });
  EXPECT_FALSE(drawn);
  EXPECT_FALSE(built);
}

// precision=float on the CPU backend, through whole algorithms (the ones that take the
// parameter: Raker's single slot per kernel, AdaRaker's several, RF-OGD, the graph-aided
// family's selected steps, and the federated family's client predictions, updates and server
// rounds) stays within the float tolerance the CUDA float mode is held to
// (1e-4 relative) of the double run.
TEST(RfBackendTest, FloatFeatureMapOnTheCpuStaysWithinTheFloatTolerance) {
  const std::string dict = "dict=gauss:0.5+gauss:1+gauss:2+lap:1";
  const omkl::Dataset data = omkl::test::random_stream(600, 4, omkl::Task::Regression);
  for (const std::string& spec : std::vector<std::string>{"raker:D=20," + dict, "adaraker:D=20," + dict,
                                                          "rf-ogd:D=20,dict=gauss:1", "omkl-sfg:D=20,M=2," + dict,
                                                          "omkl-gf:D=20,M=2,J=2," + dict,
                                                          "omkl-sfg-r:D=20,M=2,beta_rank=2," + dict,
                                                          "pof-mkl:clients=4,D=20,M=2,dict=gauss2:0.5+gauss2:1+gauss2:2",
                                                          "ofmkl-avg:D=20,dict=gauss2:0.5+gauss2:2",
                                                          "em-kofl:clients=4,D=20,dict=gauss2:0.5+gauss2:2"}) {
    omkl::LearnerContext context;
    context.n_clients = 4;  // the federated algorithms' clients (ofmkl-avg names none itself)
    context.n_features = data.n_features;
    context.horizon = data.n_samples;
    context.seed = 3;
    omkl::Learner plain = omkl::make_learner(omkl::parse_algorithm_spec(spec), context);
    omkl::Learner single = omkl::make_learner(omkl::parse_algorithm_spec(spec + ",precision=float"), context);
    std::vector<double> want(data.n_samples), got(data.n_samples);
    plain.partial_fit_block(data.x.data(), data.y.data(), data.n_samples, want.data());
    single.partial_fit_block(data.x.data(), data.y.data(), data.n_samples, got.data());
    double worst = 0.0;
    for (std::size_t t = 0; t < data.n_samples; ++t)
      worst = std::max(worst, std::fabs(got[t] - want[t]) / std::max(1.0, std::fabs(want[t])));
    EXPECT_LT(worst, 1e-4) << spec;
    EXPECT_GT(worst, 0.0) << spec << ": the float map was not used";
    // A checkpoint of a float-mode learner continues it bit for bit.
    omkl::Learner first = omkl::make_learner(omkl::parse_algorithm_spec(spec + ",precision=float"), context);
    std::vector<double> half(data.n_samples);
    const std::size_t h = data.n_samples / 2, d = data.n_features;
    first.partial_fit_block(data.x.data(), data.y.data(), h, half.data());
    omkl::Learner resumed = omkl::Learner::from_bytes(first.to_bytes());
    resumed.partial_fit_block(data.x.data() + h * d, data.y.data() + h, data.n_samples - h, half.data() + h);
    for (std::size_t t = 0; t < data.n_samples; ++t) ASSERT_EQ(half[t], got[t]) << spec << " t " << t;
  }
}

// The GPU's lean trajectory step (OMKL_CUDA_TRAJECTORIES=lean) takes only passes it computes
// as the generic step does; each condition on its own sends a pass back to the generic step.
TEST(RfBackendTest, LeanStepAppliesOnlyToRakersCommonPass) {
  std::vector<SlotSchedule> raker(3);
  for (auto& s : raker) {
    s.eta = 0.1;
    s.lambda = 0.01;  // a shrink and ‖θ‖² in the weights are part of the common pass
  }
  EXPECT_TRUE(lean_step_applies(raker, 1, LossKind::Squared, true));
  EXPECT_TRUE(lean_step_applies(raker, 500, LossKind::Squared, true));
  EXPECT_TRUE(lean_step_applies({}, 1, LossKind::Squared, true));
  EXPECT_FALSE(lean_step_applies(raker, 1, LossKind::Logistic, true));
  EXPECT_FALSE(lean_step_applies(raker, 1, LossKind::Hinge, true));
  EXPECT_FALSE(lean_step_applies(raker, 1, LossKind::Squared, false));  // predict only
  auto changed = [&](auto&& change) {
    std::vector<SlotSchedule> s = raker;
    change(s[1]);
    return s;
  };
  EXPECT_FALSE(lean_step_applies(changed([](SlotSchedule& s) { s.inv_sqrt_t = true; }), 1, LossKind::Squared, true));
  EXPECT_FALSE(lean_step_applies(changed([](SlotSchedule& s) { s.reset_period = 16; }), 1, LossKind::Squared, true));
  // Active from step 9: not in a pass from t0 = 1, but in one from 9 on.
  const auto late = changed([](SlotSchedule& s) { s.active_from = 9; });
  EXPECT_FALSE(lean_step_applies(late, 1, LossKind::Squared, true));
  EXPECT_FALSE(lean_step_applies(late, 8, LossKind::Squared, true));
  EXPECT_TRUE(lean_step_applies(late, 9, LossKind::Squared, true));
}

// A build without CUDA has src/cuda/no_cuda.cpp's entry points: no device, and every way to one
// refused with the CudaError that names the build (in a CUDA build on a machine without a GPU
// the backend's entry points refuse as well, naming the missing device).
TEST(RfBackendTest, WithoutADeviceEveryWayToOneIsRefused) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is visible";
  EXPECT_THROW(require_cuda_device(), CudaError);
  EXPECT_THROW(backend_with_features(BackendKind::Cuda, 1, 3), CudaError);
  EXPECT_EQ(make_device_contexts(nullptr), nullptr);
  auto cpu = backend_with_features(BackendKind::Auto, 1, 3);
  DeviceLease lease;
  EXPECT_FALSE(cpu->device_lease(lease)) << "auto without a device is the CPU backend";
  if (OMKL_WITH_CUDA) return;  // the device walks below are the real ones there
  try {
    PerFedAvgDeviceWalk walk(nullptr);
    ADD_FAILURE() << "a device walk was made in a build without CUDA";
  } catch (const CudaError& e) {
    EXPECT_NE(std::string(e.what()).find("OMKL_ENABLE_CUDA=ON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(KernelBanditDeviceWalk(nullptr), CudaError);
  EXPECT_THROW(BanditDeviceWalk{lease}, CudaError);
  EXPECT_THROW(EmKoflDeviceWalk{lease}, CudaError);
  EXPECT_THROW(FederationDeviceWalk({}, lease), CudaError);
}
