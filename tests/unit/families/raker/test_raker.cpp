#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <algorithm>

#include "common/test_helpers.h"
#include "features/random_features.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::context_for;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

// Independent, deliberately naive Raker (spec/raker.md §3.2 and Appendix A), used as the
// reference for the library's implementation.
std::vector<double> naive_raker(const Dataset& data, const Dictionary& dict, std::size_t D,
                                double eta, double lambda, Profile profile, std::uint64_t seed,
                                std::uint64_t replicate) {
  const std::size_t d = data.n_features, P = dict.size();
  const bool reference = profile == Profile::Reference;
  const bool cls = data.task == Task::Classification;
  std::vector<std::vector<double>> V(P), theta(P, std::vector<double>(2 * D, 0.0));
  for (std::size_t p = 0; p < P; ++p) {
    RandomStream rng(seed, replicate, RngPurpose::Frequencies, p);
    V[p] = draw_frequencies(dict[p], D, d, reference ? RfKind::OrfMatlab : RfKind::Orf, rng);
  }
  std::vector<double> logw(P, -std::log(double(P))), u(P, 1.0 / P), out;
  const double scale = reference ? 1.0 : 1.0 / std::sqrt(double(D));
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    const double y = data.y[t];
    std::vector<double> f(P), n2(P);
    std::vector<std::vector<double>> z(P, std::vector<double>(2 * D));
    for (std::size_t p = 0; p < P; ++p) {
      for (std::size_t i = 0; i < D; ++i) {
        double a = 0;
        for (std::size_t k = 0; k < d; ++k) a += V[p][i * d + k] * data.x[t * d + k];
        z[p][i] = scale * std::sin(a);
        z[p][D + i] = scale * std::cos(a);
      }
      f[p] = n2[p] = 0;
      for (std::size_t i = 0; i < 2 * D; ++i) {
        f[p] += theta[p][i] * z[p][i];
        n2[p] += theta[p][i] * theta[p][i];
      }
    }
    double pred = 0, total = 0;
    for (std::size_t p = 0; p < P; ++p) {
      const double w = reference ? u[p] : std::exp(logw[p]);
      pred += w * f[p];
      total += w;
    }
    out.push_back(pred / total);
    for (std::size_t p = 0; p < P; ++p) {
      const double g = cls ? -y / (1 + std::exp(y * f[p])) : 2 * (f[p] - y);
      const double shrink = reference ? 1 - (cls ? 1.0 : 0.1) * eta * lambda : 1 - 2 * eta * lambda;
      const double step = reference && !cls ? eta / 10 : eta;
      for (std::size_t i = 0; i < 2 * D; ++i) theta[p][i] = shrink * theta[p][i] - step * g * z[p][i];
    }
    if (!reference) {
      for (std::size_t p = 0; p < P; ++p) {
        const double c = cls ? std::log1p(std::exp(-y * f[p])) : (y - f[p]) * (y - f[p]);
        logw[p] -= 0.5 * (c + lambda * n2[p]);
      }
    } else if (!cls) {
      double hi = -1, lo = 1e300;
      for (double fp : f) {
        hi = std::max(hi, (y - fp) * (y - fp));
        lo = std::min(lo, (y - fp) * (y - fp));
      }
      double top = 0;
      for (std::size_t p = 0; p < P; ++p) {
        const double e = (y - f[p]) * (y - f[p]);
        const double rho = (e - (hi + lo) / 2 + 1e-12) / ((hi - lo) / 2 + 1e-12);
        u[p] = u[p] * std::pow(0.5, rho) + 1e-12;
        top = std::max(top, u[p]);
      }
      if (top > 1e10) {
        double s = 0;
        for (double v : u) s += v;
        for (double& v : u) v /= s;
      }
    } else {
      double s = 0;
      for (double v : u) s += v;
      for (std::size_t p = 0; p < P; ++p) u[p] = u[p] / s * (y * f[p] < 0 ? 0.5 : 1.0) + 1e-4;
    }
  }
  return out;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], tol * std::max(1.0, std::fabs(b[i]))) << "step " << i;
}

}  // namespace

TEST(RakerTest, MatchesANaiveImplementationInBothProfilesAndTasks) {
  for (Task task : {Task::Regression, Task::Classification}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      const Dataset data = random_stream(300, 4, task);
      auto algo = make("raker", context_for(data, profile), {{"D", "7"}, {"eta", "0.3"}, {"lambda", "0.02"}});
      const auto got = run_steps(*algo, data);
      const auto want = naive_raker(data, parse_dictionary("jmlr19-rf"), 7, 0.3, 0.02, profile, 3, 0);
      expect_close(got, want, 1e-10);
    }
  }
}

TEST(RakerTest, DefaultsAreTheJournalsSettings) {
  // spec/raker.md §7.2 / Appendix D: λ = 0.01 for regression and 0.005 for classification, in
  // both profiles, and the default dictionary jmlr19-rf: Gaussians σ ∈ {0.1, 1, 10}.
  const Dictionary rf = parse_dictionary("jmlr19-rf");
  ASSERT_EQ(rf.size(), 3u);
  const double sigmas[3] = {0.1, 1.0, 10.0};
  for (std::size_t p = 0; p < 3; ++p) {
    EXPECT_EQ(rf[p].family, KernelFamily::Gaussian);
    EXPECT_DOUBLE_EQ(rf[p].sigma, sigmas[p]);
  }
  for (const Task task : {Task::Regression, Task::Classification}) {
    const Dataset data = random_stream(200, 3, task);
    const std::string lambda = task == Task::Regression ? "0.01" : "0.005";
    for (const Profile profile : {Profile::Paper, Profile::Reference}) {
      SCOPED_TRACE(to_string(task) + " " + to_string(profile));
      const auto by_default = run_steps(*make("raker", context_for(data, profile), {{"D", "5"}}), data);
      const auto given = run_steps(*make("raker", context_for(data, profile), {{"D", "5"}, {"lambda", lambda}, {"dict", "gauss:0.1+gauss:1+gauss:10"}}), data);
      const auto other = run_steps(*make("raker", context_for(data, profile), {{"D", "5"}, {"lambda", "0.02"}}), data);
      EXPECT_EQ(by_default, given);
      EXPECT_NE(by_default, other);
    }
  }
}

TEST(RakerTest, TheBanditPapersConfigurationIsItsSection73) {
  // spec/bandit.md §7.3, the configuration bench/reproduce_bandit.py runs (raker_spec()): i.i.d.
  // frequencies, z = D^{−1/2}[sin; cos], ŷ = Σ p_i θ_iᵀz_i with the previous round's p,
  // L_i += (ℓ(θ_iᵀz_i, y) + μ‖θ_i‖²)/ℓ_scale with θ before the step, θ ← (1 − 2ημ)θ − ηℓ'z, p =
  // softmax(−ηL) — one η for both. Logistic: μ = 0.005, ℓ_scale = 2; η = 5/√T; oks-6. With
  // shared_omega, as the authors' script: one N(0, I) matrix Ω, r = Ωx once, kernel i's angles r/σ_i.
  for (const bool shared : {false, true}) {
    SCOPED_TRACE(shared ? "shared_omega" : "one Ω per kernel");
    const std::size_t T = 100, D = 8, d = 3;
    const Dataset data = random_stream(T, d, Task::Classification);
    const Dictionary dict = parse_dictionary("oks-6");
    const std::size_t P = dict.size();
    const double eta = 5.0 / std::sqrt(double(T)), mu = 0.005, scale = 2.0;
    char spec[256];
    std::snprintf(spec, sizeof spec, "%.17g", eta);
    const std::vector<std::pair<std::string, std::string>> params = {
        {"dict", "oks-6"}, {"rf", "rf"}, {"feature_scale", "inv_sqrt_D"}, {"D", "8"}, {"eta", spec}, {"eta_w", spec},
        {"lambda", "0.005"}, {"loss_scale", "2"}, {"weight_rule", "exp_eta"}, {"step_scale", "1"}, {"shrink_scale", "2"},
        {"first_error_is_one", "false"}, {"loss", "logistic"}, {"shared_omega", shared ? "true" : "false"}};
    const auto got = run_steps(*make("raker", context_for(data), params), data);
    std::vector<std::vector<double>> V(P), theta(P, std::vector<double>(2 * D, 0.0));
    for (std::size_t i = 0; i < P; ++i) {
      // Shared: every kernel reads Ω itself (the unit-bandwidth draw of stream 0) and divides by σ_i.
      RandomStream rng(3, 0, RngPurpose::Frequencies, shared ? 0 : i);
      V[i] = draw_frequencies(shared ? KernelSpec::gaussian(1.0) : dict[i], D, d, RfKind::Rf, rng);
    }
    if (shared) {
      for (std::size_t i = 1; i < P; ++i) ASSERT_EQ(V[i], V[0]);
    }
    std::vector<double> L(P, 0.0), p(P, 1.0 / double(P));
    for (std::size_t t = 0; t < T; ++t) {
      const double y = data.y[t];
      double prediction = 0.0;
      for (std::size_t i = 0; i < P; ++i) {
        std::vector<double> z(2 * D);
        for (std::size_t j = 0; j < D; ++j) {
          double a = 0.0;
          for (std::size_t k = 0; k < d; ++k) a += V[i][j * d + k] * data.row(t)[k];
          if (shared) a /= dict[i].sigma;
          z[j] = std::sin(a) / std::sqrt(double(D));
          z[D + j] = std::cos(a) / std::sqrt(double(D));
        }
        double f = 0.0, n2 = 0.0;
        for (std::size_t j = 0; j < 2 * D; ++j) {
          f += theta[i][j] * z[j];
          n2 += theta[i][j] * theta[i][j];
        }
        prediction += p[i] * f;
        L[i] += (std::log1p(std::exp(-y * f)) + mu * n2) / scale;
        const double g = -y / (1.0 + std::exp(y * f));
        for (std::size_t j = 0; j < 2 * D; ++j) theta[i][j] = (1.0 - 2.0 * eta * mu) * theta[i][j] - eta * g * z[j];
      }
      ASSERT_NEAR(got[t], prediction, 1e-12 * std::max(1.0, std::fabs(prediction))) << "t = " << t + 1;
      const double lowest = *std::min_element(L.begin(), L.end());
      double total = 0.0;
      for (std::size_t i = 0; i < P; ++i) total += (p[i] = std::exp(-eta * (L[i] - lowest)));
      for (double& v : p) v /= total;
    }
  }
}

TEST(RakerTest, SingleKernelEqualsKernelOgdWithTheRandomFeatureKernel) {
  // spec/raker.md Appendix C item 4: θ_t = Σ α_τ z(x_τ) with α following exact-kernel OGD.
  const Dataset data = random_stream(200, 3, Task::Regression);
  const double eta = 0.2, lambda = 0.01;
  const std::size_t D = 10, d = 3;
  auto algo = make("rf-ogd", context_for(data), {{"D", "10"}, {"eta", "0.2"}, {"dict", "gauss:0.5"}});
  const auto got = run_steps(*algo, data);
  RandomStream rng(3, 0, RngPurpose::Frequencies, 0);
  const auto V = draw_frequencies(KernelSpec::gaussian(0.5), D, d, RfKind::Orf, rng);
  std::vector<std::vector<double>> z(data.n_samples, std::vector<double>(2 * D));
  for (std::size_t t = 0; t < data.n_samples; ++t)
    feature_map(V.data(), D, d, data.row(t), 1.0 / std::sqrt(double(D)), z[t].data());
  std::vector<double> alpha;
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double f = 0;
    for (std::size_t s = 0; s < t; ++s) {
      double k = 0;
      for (std::size_t i = 0; i < 2 * D; ++i) k += z[t][i] * z[s][i];
      f += alpha[s] * k;
    }
    ASSERT_NEAR(got[t], f, 1e-10) << t;
    for (double& a : alpha) a *= 1 - 2 * eta * lambda;
    alpha.push_back(-2 * eta * (f - data.y[t]));
  }
}

TEST(RakerTest, BlocksAndSingleStepsAreBitIdentical) {
  for (const char* name : {"raker", "adaraker"}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      const Dataset data = random_stream(700, 5, Task::Regression);
      auto stepped = make(name, context_for(data, profile), {{"D", "6"}});
      const auto a = run_steps(*stepped, data);
      auto blocked = make(name, context_for(data, profile), {{"D", "6"}});
      std::vector<double> b(data.n_samples);
      // Uneven blocks, across the backend's internal window.
      std::size_t begin = 0;
      for (std::size_t len : {1u, 2u, 300u, 97u, 300u}) {
        blocked->step_block(data.row(begin), data.y.data() + begin, len, data.n_features, b.data() + begin);
        begin += len;
      }
      ASSERT_EQ(begin, data.n_samples);
      for (std::size_t t = 0; t < a.size(); ++t) ASSERT_EQ(a[t], b[t]) << name << " step " << t;
    }
  }
}

TEST(RakerTest, LockstepReplicatesEqualSeparateRuns) {
  for (const char* name : {"raker", "adaraker"}) {
    const Dataset data = random_stream(400, 3, Task::Regression);
    auto together = make(name, context_for(data, Profile::Paper, {0, 1, 2}), {{"D", "5"}});
    const auto all = run_steps(*together, data);
    for (std::uint64_t r = 0; r < 3; ++r) {
      auto alone = make(name, context_for(data, Profile::Paper, {r}), {{"D", "5"}});
      const auto one = run_steps(*alone, data);
      for (std::size_t t = 0; t < data.n_samples; ++t) ASSERT_EQ(all[t * 3 + r], one[t]) << name << " r" << r;
    }
    EXPECT_NE(all[100 * 3 + 0], all[100 * 3 + 1]) << "replicates draw different features";
  }
}

TEST(RakerTest, PredictDoesNotChangeTheState) {
  const Dataset data = random_stream(100, 3, Task::Regression);
  auto a = make("raker", context_for(data), {{"D", "5"}});
  auto b = make("raker", context_for(data), {{"D", "5"}});
  std::vector<double> pa(1), pb(1);
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double before = 0;
    a->predict(data.row(t), &before);
    a->step(data.row(t), data.y[t], pa.data());
    b->step(data.row(t), data.y[t], pb.data());
    ASSERT_EQ(before, pa[0]) << "predict() returns what the next step predicts";
    ASSERT_EQ(pa[0], pb[0]);
  }
}

TEST(RakerTest, SaveAndRestoreContinueBitIdentically) {
  for (const char* name : {"raker", "adaraker", "rf-ogd"}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      const Dataset data = random_stream(400, 4, Task::Regression);
      auto full = make(name, context_for(data, profile), {{"D", "6"}});
      const auto want = run_steps(*full, data);
      auto first = make(name, context_for(data, profile), {{"D", "6"}});
      run_steps(*first, data, 0, 173);
      StateWriter out;
      first->save_state(out);
      auto second = make(name, context_for(data, profile), {{"D", "6"}});
      StateReader in(out.bytes());
      second->load_state(in);
      EXPECT_TRUE(in.at_end());
      const auto rest = run_steps(*second, data, 173);
      for (std::size_t t = 173; t < data.n_samples; ++t) ASSERT_EQ(rest[t - 173], want[t]) << name << " " << t;
      // The study's "updates per sample" counts the restored steps too (the count is not stored).
      EXPECT_EQ(second->kernel_updates(), full->kernel_updates()) << name;
      EXPECT_GT(full->kernel_updates(), 0u) << name;
    }
  }
}

TEST(RakerTest, LearnsASmoothFunction) {
  const Dataset data = random_stream(3000, 3, Task::Regression);
  auto algo = make("raker", context_for(data), {{"D", "30"}, {"eta", "0.5"}});
  const auto pred = run_steps(*algo, data);
  // Over the last 500 samples the prequential error must be well below the target's variance
  // (what the best constant predictor achieves); measured: about half of it.
  double mean = 0, variance = 0, late = 0;
  for (std::size_t t = 2500; t < 3000; ++t) mean += data.y[t] / 500;
  for (std::size_t t = 2500; t < 3000; ++t) {
    variance += (data.y[t] - mean) * (data.y[t] - mean) / 500;
    late += (pred[t] - data.y[t]) * (pred[t] - data.y[t]) / 500;
  }
  EXPECT_LT(late, 0.6 * variance);
}

TEST(RakerTest, RejectsInvalidParameters) {
  const Dataset data = random_stream(10, 2, Task::Regression);
  EXPECT_THROW(make("raker", context_for(data), {{"D", "0"}}), ConfigError);
  EXPECT_THROW(make("raker", context_for(data), {{"eta", "-1"}}), ConfigError);
  EXPECT_THROW(make("raker", context_for(data), {{"dict", "linear"}}), ConfigError);
  EXPECT_THROW(make("raker", context_for(data), {{"bogus", "1"}}), ConfigError);
  EXPECT_THROW(make("rf-ogd", context_for(data), {{"dict", "gauss:1+gauss:2"}}), ConfigError);
  // One Ω scaled by 1/σ_i is each kernel's law only within a family; NumPy's replay has no shared draw.
  EXPECT_THROW(make("raker", context_for(data), {{"dict", "gauss:1+lap:2"}, {"shared_omega", "true"}}), ConfigError);
  EXPECT_THROW(make("raker", context_for(data), {{"rf", "rf"}, {"rng", "numpy_legacy"}, {"shared_omega", "true"}}),
               ConfigError);
  EXPECT_NO_THROW(make("raker", context_for(data), {{"dict", "lap:1+lap:2"}, {"shared_omega", "true"}}));
  auto unknown_length = context_for(data);
  unknown_length.horizon = 0;
  EXPECT_THROW(make("raker", unknown_length), ConfigError) << "1/√T needs T";
  EXPECT_NO_THROW(make("raker", unknown_length, {{"eta", "0.1"}}));
}

TEST(RakerTest, GraphJournalConfigurationMatchesItsDefinition) {
  // spec/graph-aided.md §4.4: θ ← θ − η_t[2(f − y)z + 2λθ]; ℓ = (f − y)² + λ‖θ_new‖²;
  // w ← w·exp(−η_t ℓ) with η_t = 0.1/√t for both.
  const Dataset data = random_stream(250, 3, Task::Regression);
  const std::size_t D = 6, d = 3;
  const double lambda = 1e-3;
  const Dictionary dict = parse_dictionary("gauss:0.5+gauss:2+lap:1");
  auto algo = make("raker", context_for(data),
                   {{"dict", "gauss:0.5+gauss:2+lap:1"}, {"D", "6"}, {"rf", "rf"}, {"lambda", "0.001"},
                    {"eta", "0.1"}, {"eta_schedule", "inv_sqrt_t"}, {"eta_w", "0.1"},
                    {"eta_w_schedule", "inv_sqrt_t"}, {"weight_theta", "post"}});
  const auto got = run_steps(*algo, data);
  std::vector<std::vector<double>> V(3), theta(3, std::vector<double>(2 * D, 0.0));
  for (std::size_t p = 0; p < 3; ++p) {
    RandomStream rng(3, 0, RngPurpose::Frequencies, p);
    V[p] = draw_frequencies(dict[p], D, d, RfKind::Rf, rng);
  }
  std::vector<double> logw(3, 0.0);
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    const double eta = 0.1 / std::sqrt(double(t + 1)), y = data.y[t];
    std::vector<double> f(3);
    std::vector<std::vector<double>> z(3, std::vector<double>(2 * D));
    double num = 0, den = 0, top = *std::max_element(logw.begin(), logw.end());
    for (std::size_t p = 0; p < 3; ++p) {
      feature_map(V[p].data(), D, d, data.row(t), 1.0 / std::sqrt(double(D)), z[p].data());
      f[p] = 0;
      for (std::size_t i = 0; i < 2 * D; ++i) f[p] += theta[p][i] * z[p][i];
      num += std::exp(logw[p] - top) * f[p];
      den += std::exp(logw[p] - top);
    }
    ASSERT_NEAR(got[t], num / den, 1e-10) << "t " << t;
    for (std::size_t p = 0; p < 3; ++p) {
      double n2 = 0;
      for (std::size_t i = 0; i < 2 * D; ++i) {
        theta[p][i] -= eta * (2 * (f[p] - y) * z[p][i] + 2 * lambda * theta[p][i]);
        n2 += theta[p][i] * theta[p][i];
      }
      logw[p] -= eta * ((f[p] - y) * (f[p] - y) + lambda * n2);
    }
  }
}

TEST(RakerTest, ReferenceCumulativeBandwidthsAreTheProductsOfTheDictionarys) {
  // spec/bandit.md §7.3 (A17): bandwidth_mode=reference_cumulative runs kernel i with
  // σ_1·…·σ_i — oks-6's {0.25, 0.5, 1, 2, 4, 8} become {0.25, 0.125, 0.125, 0.25, 1, 8}: the
  // same numbers, bit for bit, as that dictionary written out; and not those of the correct one.
  const Dataset data = random_stream(60, 3, Task::Regression, 5);
  const auto c = context_for(data, Profile::Paper, {0, 1});
  const auto run = [&](std::vector<std::pair<std::string, std::string>> params) {
    params.emplace_back("D", "6");
    auto a = make("raker", c, params);
    return run_steps(*a, data);
  };
  const auto cumulative = run({{"dict", "oks-6"}, {"bandwidth_mode", "reference_cumulative"}});
  const auto written = run({{"dict", "gauss:0.25+gauss:0.125+gauss:0.125+gauss:0.25+gauss:1+gauss:8"}});
  const auto correct = run({{"dict", "oks-6"}});
  ASSERT_EQ(cumulative.size(), written.size());
  for (std::size_t i = 0; i < written.size(); ++i) ASSERT_EQ(omkl::test::bits(cumulative[i]), omkl::test::bits(written[i])) << i;
  EXPECT_NE(cumulative, correct);
  // The bandit spec's name for the switch (§7.3, raker_bandwidth_mode) is the same parameter.
  EXPECT_EQ(run({{"dict", "oks-6"}, {"raker_bandwidth_mode", "reference_cumulative"}}), cumulative);
  EXPECT_NE(omkl::test::config_error_message("raker", c, {{"dict", "gauss:1+lap:1"}, {"bandwidth_mode", "reference_cumulative"}})
                .find("Gaussian"),
            std::string::npos);
}
