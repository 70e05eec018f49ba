#include <gtest/gtest.h>

#include <cmath>

#include "common/test_helpers.h"
#include "core/interval_weights.h"
#include "core/intervals.h"
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

// Independent, deliberately naive AdaRaker with every parameter at its profile default
// (spec/raker.md §4.1–4.4 for the paper profile; §4.9 and Appendix A for the reference one;
// Appendix D). The frequency matrices are the library's draws, as in test_raker.cpp.
std::vector<double> naive_ada_raker(const Dataset& data, const Dictionary& dict, std::size_t D, Profile profile) {
  const bool ref = profile == Profile::Reference, cls = data.task == Task::Classification;
  const std::size_t d = data.n_features, P = dict.size(), T = data.n_samples;
  const double lambda = cls ? (ref ? 0.0005 : 0.005) : 0.01;
  const double eta0 = ref ? (cls ? 1.0 : 0.1) : 10.0, cap = ref ? (cls ? 0.5 : 0.05) : 0.5;
  const double scale = ref ? 1.0 : 1.0 / std::sqrt(double(D));
  const double step_scale = ref && !cls ? 0.1 : 1.0, shrink_scale = ref ? (cls ? 1.0 : 0.1) : 2.0;
  auto loss = [&](double f, double y) { return cls ? std::log1p(std::exp(-y * f)) : (y - f) * (y - f); };
  auto dloss = [&](double f, double y) { return cls ? -y / (1 + std::exp(y * f)) : 2 * (f - y); };
  std::vector<std::vector<double>> V(P);
  for (std::size_t p = 0; p < P; ++p) {
    RandomStream rng(3, 0, RngPurpose::Frequencies, p);
    V[p] = draw_frequencies(dict[p], D, d, ref ? RfKind::OrfMatlab : RfKind::Orf, rng);
  }
  std::size_t L = 0;
  while ((std::size_t{1} << L) <= T) ++L;  // ⌊log2 T⌋ + 1 levels
  std::vector<double> eta(L);              // η_I = min(cap, η_0/√len), len = |I| = 2^j (R: 2|I|)
  for (std::size_t j = 0; j < L; ++j) eta[j] = std::min(cap, eta0 / std::sqrt(std::pow(2.0, ref ? j + 1.0 : j)));
  // Per level: θ_p, kernel weights (log w in P, u in R), instance weight (log h in P, g in R).
  std::vector<std::vector<std::vector<double>>> theta(L, std::vector<std::vector<double>>(P, std::vector<double>(2 * D, 0.0)));
  std::vector<std::vector<double>> kw(L, std::vector<double>(P, ref ? 1.0 / P : -std::log(double(P))));
  std::vector<double> h(L, ref ? 1.0 : 0.0), out;
  for (std::size_t i = 0; i < T; ++i) {
    const auto t = static_cast<std::int64_t>(i + 1);
    const double y = data.y[i];
    auto active = [&](std::size_t j) { return ref ? (j == 0 || t > (std::int64_t{1} << j)) : t >= (std::int64_t{1} << j); };
    auto starts = [&](std::size_t j) {
      return active(j) && (ref ? (t - 1) % (std::int64_t{1} << j) == 0 : t % (std::int64_t{1} << j) == 0);
    };
    std::vector<std::vector<double>> z(P, std::vector<double>(2 * D));
    for (std::size_t p = 0; p < P; ++p)
      for (std::size_t k = 0; k < D; ++k) {
        double a = 0;
        for (std::size_t m = 0; m < d; ++m) a += V[p][k * d + m] * data.x[i * d + m];
        z[p][k] = scale * std::sin(a);
        z[p][D + k] = scale * std::cos(a);
      }
    std::vector<double> F(L, 0.0);
    std::vector<std::vector<double>> f(L, std::vector<double>(P, 0.0)), n2 = f;
    for (std::size_t j = 0; j < L; ++j) {
      if (!active(j)) continue;
      if (starts(j) && !ref) {  // P: a fresh instance, weight η_I
        for (auto& th : theta[j]) std::fill(th.begin(), th.end(), 0.0);
        std::fill(kw[j].begin(), kw[j].end(), -std::log(double(P)));
        h[j] = std::log(eta[j]);
      } else if (starts(j)) {  // R: the persistent learner's weight restarts at η_k
        h[j] = eta[j];
      }
      const double top = *std::max_element(kw[j].begin(), kw[j].end());
      double num = 0, den = 0;
      for (std::size_t p = 0; p < P; ++p) {
        for (std::size_t k = 0; k < 2 * D; ++k) {
          f[j][p] += theta[j][p][k] * z[p][k];
          n2[j][p] += theta[j][p][k] * theta[j][p][k];
        }
        const double w = ref ? kw[j][p] : std::exp(kw[j][p] - top);
        num += w * f[j][p];
        den += w;
      }
      F[j] = num / den;
    }
    double pred = 0, den = 0;
    if (!ref) {  // eq. (33) with log-domain h over the active instances; g += η_I (C(ŷ) − C(f̂_I))
      double top = -HUGE_VAL;
      for (std::size_t j = 0; j < L; ++j)
        if (active(j)) top = std::max(top, h[j]);
      for (std::size_t j = 0; j < L; ++j)
        if (active(j)) {
          pred += std::exp(h[j] - top) * F[j];
          den += std::exp(h[j] - top);
        }
      pred /= den;
      for (std::size_t j = 0; j < L; ++j)
        if (active(j)) h[j] += eta[j] * (loss(pred, y) - loss(F[j], y));
    } else {  // §4.9: all K weights in the denominator, min-max meta update, renormalised
      for (std::size_t j = 0; j < L; ++j) {
        pred += h[j] * F[j];
        den += h[j];
      }
      pred /= den;
      if (cls) pred = pred > 0 ? 1.0 : (pred < 0 ? -1.0 : 0.0);
      double hi = -HUGE_VAL, lo = HUGE_VAL, top = 0, sum = 0;
      std::vector<double> e(L, 0.0);
      std::size_t newest = 0;
      for (std::size_t j = 0; j < L; ++j)
        if (active(j)) {
          newest = j;
          e[j] = cls ? (y * F[j] < 0 ? 1.0 : 0.0) : (F[j] - y) * (F[j] - y);
          hi = std::max(hi, e[j]);
          lo = std::min(lo, e[j]);
        }
      for (std::size_t j = 0; j < L; ++j)
        if (active(j)) {
          h[j] = h[j] * std::pow(eta[newest], (e[j] - (hi + lo) / 2 + 1e-10) / ((hi - lo) / 2 + 1e-10)) + 1e-10;
          top = std::max(top, h[j]);
        }
      if (top > 1e12) {
        for (double v : h) sum += v;
        for (double& v : h) v /= sum;
        sum = 0;
      }
      for (double v : h) sum += v;
      for (double& v : h) v /= sum;
    }
    out.push_back(pred);
    for (std::size_t j = 0; j < L; ++j) {  // each active instance's Raker step, rate η_I
      if (!active(j)) continue;
      if (!ref) {
        for (std::size_t p = 0; p < P; ++p) kw[j][p] -= 0.5 * (loss(f[j][p], y) + lambda * n2[j][p]);
      } else if (cls) {
        double s = 0;
        for (double v : kw[j]) s += v;
        for (std::size_t p = 0; p < P; ++p) kw[j][p] = kw[j][p] / s * (y * f[j][p] < 0 ? 0.5 : 1.0) + 1e-4;
      } else {
        double hi = -HUGE_VAL, lo = HUGE_VAL, top = 0, s = 0;
        for (double fp : f[j]) {
          hi = std::max(hi, (y - fp) * (y - fp));
          lo = std::min(lo, (y - fp) * (y - fp));
        }
        for (std::size_t p = 0; p < P; ++p) {
          const double e = (y - f[j][p]) * (y - f[j][p]);
          kw[j][p] = kw[j][p] * std::pow(0.5, (e - (hi + lo) / 2 + 1e-12) / ((hi - lo) / 2 + 1e-12)) + 1e-12;
          top = std::max(top, kw[j][p]);
        }
        if (top > 1e10) {
          for (double v : kw[j]) s += v;
          for (double& v : kw[j]) v /= s;
        }
      }
      for (std::size_t p = 0; p < P; ++p)
        for (std::size_t k = 0; k < 2 * D; ++k)
          theta[j][p][k] = (1 - shrink_scale * eta[j] * lambda) * theta[j][p][k] -
                           step_scale * eta[j] * dloss(f[j][p], y) * z[p][k];
    }
  }
  return out;
}

}  // namespace

TEST(IntervalsTest, DanielyPlacementCoversTimeGeometrically) {
  // spec/raker.md Appendix C item 6.
  const std::int64_t T = 4096;
  std::vector<std::int64_t> created(13, 0);
  for (std::int64_t t = 1; t <= T; ++t) {
    int n_active = 0;
    for (int j = 0; j < 13; ++j) {
      if (level_active(Placement::Daniely, j, t)) ++n_active;
      if (level_starts(Placement::Daniely, j, t)) ++created[j];
    }
    ASSERT_EQ(n_active, floor_log2(t) + 1) << "t = " << t;
  }
  std::int64_t total = 0;
  for (int j = 0; j < 13; ++j) {
    EXPECT_EQ(created[j], T >> j) << "level " << j << " tiles [2^j, T] with ⌊T/2^j⌋ intervals";
    total += created[j];
  }
  EXPECT_EQ(total, 8191);
  // The worked example of §4.1: at t = 8 all four levels start.
  for (int j = 0; j <= 3; ++j) EXPECT_TRUE(level_starts(Placement::Daniely, j, 8));
  EXPECT_FALSE(level_starts(Placement::Daniely, 2, 7));
}

TEST(IntervalsTest, MatlabPlacementIsZeroBased) {
  for (std::int64_t t = 2; t <= 1000; ++t) {
    int n_active = 0;
    for (int j = 0; j < 12; ++j) n_active += level_active(Placement::Matlab, j, t);
    ASSERT_EQ(n_active, floor_log2(t - 1) + 1) << "n(t) = ⌊log2(t − 1)⌋ + 1";
  }
  EXPECT_TRUE(level_active(Placement::Matlab, 0, 1));
  EXPECT_FALSE(level_active(Placement::Matlab, 1, 2));
  EXPECT_TRUE(level_active(Placement::Matlab, 1, 3));
  EXPECT_TRUE(level_starts(Placement::Matlab, 2, 5));
  EXPECT_TRUE(level_starts(Placement::Matlab, 2, 9));
  EXPECT_FALSE(level_starts(Placement::Matlab, 2, 8));
}

TEST(AdaRakerTest, OnePersistentLevelIsRaker) {
  const Dataset data = random_stream(300, 3, Task::Regression);
  auto ada = make("adaraker", context_for(data),
                  {{"levels", "1"}, {"restart_state", "persistent"}, {"eta0", "0.3"}, {"D", "6"}});
  auto raker = make("raker", context_for(data), {{"eta", "0.3"}, {"D", "6"}});
  const auto a = run_steps(*ada, data), r = run_steps(*raker, data);
  for (std::size_t t = 0; t < a.size(); ++t) ASSERT_NEAR(a[t], r[t], 1e-14) << t;
}

TEST(AdaRakerTest, TheInstanceWeightStepEtaIIsRakersWeightStep) {
  // spec/raker.md §4.2 `instance_weight_step = eta_I`: an instance's kernel weights step by its
  // own η_I instead of the fixed η_w = 0.5. One persistent level is Raker with η_w = η_I.
  using Params = std::vector<std::pair<std::string, std::string>>;
  const Dataset data = random_stream(300, 3, Task::Regression);
  const Params level{{"levels", "1"}, {"restart_state", "persistent"}, {"eta0", "0.3"}, {"D", "6"}};
  auto ada = make("adaraker", context_for(data), omkl::test::with_param(level, "instance_weight_step", "eta_I"));
  auto raker = make("raker", context_for(data), {{"eta", "0.3"}, {"eta_w", "0.3"}, {"D", "6"}});
  auto fixed = make("adaraker", context_for(data), level);
  const auto a = run_steps(*ada, data), r = run_steps(*raker, data), f = run_steps(*fixed, data);
  double largest_gap = 0.0;
  for (std::size_t t = 0; t < a.size(); ++t) {
    ASSERT_NEAR(a[t], r[t], 1e-14) << t;
    largest_gap = std::max(largest_gap, std::fabs(a[t] - f[t]));
  }
  EXPECT_GT(largest_gap, 1e-6) << "the default step is not η_I";
}

TEST(AdaRakerTest, MatchesANaiveImplementation) {
  // Default parameters, so the profile defaults (λ, η_0, caps, interval lengths) are checked too.
  // T = 1500: levels 0..10, so some η_I fall below the cap in both profiles (P: j ≥ 9; R: j ≥ 2).
  for (Task task : {Task::Regression, Task::Classification}) {
    for (Profile profile : {Profile::Paper, Profile::Reference}) {
      SCOPED_TRACE(to_string(task) + " " + to_string(profile));
      const Dataset data = random_stream(1500, 3, task);
      auto algo = make("adaraker", context_for(data, profile), {{"D", "4"}});
      const auto got = run_steps(*algo, data);
      const auto want = naive_ada_raker(data, parse_dictionary("jmlr19-rf"), 4, profile);
      ASSERT_EQ(got.size(), want.size());
      for (std::size_t t = 0; t < got.size(); ++t)
        ASSERT_NEAR(got[t], want[t], 1e-12 * std::max(1.0, std::fabs(want[t]))) << "t = " << t + 1;
    }
  }
}

TEST(AdaRakerTest, FreshInstancesMakeTheEnsemblePredictZeroAtPowersOfTwo) {
  // §4.3: at t = 2^k every active level starts a new, untrained instance.
  const Dataset data = random_stream(600, 3, Task::Regression);
  auto ada = make("adaraker", context_for(data), {{"D", "6"}});
  const auto pred = run_steps(*ada, data);
  for (std::size_t t = 1; t <= data.n_samples; t *= 2) EXPECT_EQ(pred[t - 1], 0.0) << "t = " << t;
  EXPECT_NE(pred[2], 0.0);
  EXPECT_NE(pred[299], 0.0);
}

TEST(AdaRakerTest, CorrectedSignBeatsTheLiteralSignOfEquation31) {
  // The literal sign of eq. (31) raises the weight of instances that lose to the ensemble
  // (spec/raker.md §4.4, Appendix C item 7): on a learnable stream it must do worse.
  const Dataset data = random_stream(4000, 3, Task::Regression);
  auto mse = [&](const char* sign) {
    auto ada = make("adaraker", context_for(data),
                    {{"D", "10"}, {"restart_state", "persistent"}, {"h_sign", sign}});
    const auto pred = run_steps(*ada, data);
    double s = 0;
    for (std::size_t t = 0; t < pred.size(); ++t) s += (pred[t] - data.y[t]) * (pred[t] - data.y[t]);
    return s / pred.size();
  };
  EXPECT_LT(mse("corrected"), mse("literal"));
}

TEST(AdaRakerTest, ReferenceClassificationOutputsSigns) {
  const Dataset data = random_stream(300, 3, Task::Classification);
  auto ada = make("adaraker", context_for(data, Profile::Reference), {{"D", "6"}});
  EXPECT_TRUE(ada->metric_convention().first_error_is_one);
  const auto pred = run_steps(*ada, data);
  EXPECT_EQ(pred[0], 0.0);
  for (double p : pred) ASSERT_TRUE(p == 1.0 || p == -1.0 || p == 0.0) << p;
}

TEST(AdaRakerTest, RejectsInconsistentOptions) {
  const Dataset data = random_stream(10, 2, Task::Regression);
  EXPECT_THROW(make("adaraker", context_for(data), {{"placement", "matlab_0based"}, {"restart_state", "fresh"}}),
               ConfigError);
  EXPECT_THROW(make("adaraker", context_for(data), {{"levels", "0"}}), ConfigError);
  EXPECT_THROW(make("adaraker", context_for(data), {{"eta0", "0"}}), ConfigError);
  auto unknown_length = context_for(data, Profile::Reference);
  unknown_length.horizon = 0;
  EXPECT_THROW(make("adaraker", unknown_length), ConfigError);
}

namespace {

// Hedge instance weights over Daniely's intervals, one level per rate.
IntervalConfig daniely_hedge(std::vector<double> level_rate) {
  IntervalConfig config;
  config.placement = Placement::Daniely;
  config.rule = HRule::Hedge;
  config.n_levels = level_rate.size();
  config.level_rate = std::move(level_rate);
  return config;
}

}  // namespace

// spec/raker.md Appendix C item 7: of two instances over the same interval, the one with the
// smaller loss every step ends with the larger weight — and with the smaller under h_sign =
// literal, eq. (31) as printed. Daniely placement, three levels: level 1's [4, 5] and level 2's
// [4, 7] start together at t = 4 (level 0 restarts every step); equal rates, so after t = 5 their
// log-weights differ by η·Σ_{t=4,5} (C(f_2) − C(f_1)), whatever the ensemble's loss.
TEST(IntervalWeightsTest, TheInstanceWithTheSmallerLossGainsTheWeight) {
  for (bool literal : {false, true}) {
    SCOPED_TRACE(literal ? "h_sign=literal" : "h_sign=corrected");
    IntervalConfig config = daniely_hedge({0.5, 0.5, 0.5});
    config.literal_sign = literal;
    IntervalWeights weights(&config);
    const double y = 1.0, f[3] = {0.0, 0.9, 3.0};  // level 1 near y at every step, level 2 far
    double prediction = 0.0;
    for (std::int64_t t = 1; t <= 5; ++t) {
      weights.begin_step(t);
      prediction = weights.combine(t, f);
      weights.update(t, f, prediction, y);
    }
    const double gap = 0.5 * 2.0 * ((3.0 - y) * (3.0 - y) - (0.9 - y) * (0.9 - y));  // 3.99
    const double g1 = weights.raw()[1], g2 = weights.raw()[2];
    EXPECT_NEAR(g1 - g2, literal ? -gap : gap, 1e-12);
    if (literal) EXPECT_LT(g1, g2);
    else EXPECT_GT(g1, g2);
  }
}

TEST(IntervalWeightsTest, AfterFirstGivesANewInstanceWeightZeroAtItsFirstStep) {
  // spec/raker.md §4.4, h_init_slot = after_first: eq. (31)'s literal index. Daniely placement:
  // level 0 = [t, t], level 1 = [2, 3], [4, 5], …, level 2 = [4, 7], … An instance weighs 0 at
  // its first step and η_I from the next; a one-step interval never weighs anything, and a step
  // where every active instance weighs 0 predicts 0. at_start weighs each from its first step.
  IntervalConfig config = daniely_hedge({0.5, 0.25, 0.125});
  config.h_after_first = true;
  IntervalConfig at_start = config;
  at_start.h_after_first = false;
  IntervalWeights late(&config), early(&at_start);
  const double f[3] = {1.0, 2.0, 4.0};
  std::vector<double> combined;
  for (std::int64_t t = 1; t <= 5; ++t) {
    late.begin_step(t);
    early.begin_step(t);
    combined.push_back(late.combine(t, f));
    if (t == 1) EXPECT_EQ(early.combine(t, f), 1.0) << "at_start: level 0 weighs from t = 1";
    late.update(t, f, combined.back(), 1.5);
    early.update(t, f, early.combine(t, f), 1.5);
  }
  EXPECT_EQ(combined[0], 0.0);  // t = 1: level 0 alone, at its first step
  EXPECT_EQ(combined[1], 0.0);  // t = 2: levels 0 and 1 both at their first step
  EXPECT_EQ(combined[2], 2.0);  // t = 3: level 1 at η_1 (its t = 2 loss ignored), level 0 new
  EXPECT_EQ(combined[3], 0.0);  // t = 4: level 1's and 2's new intervals, level 0's
  // t = 5: levels 1 and 2 at η_1 and η_2, fresh: (η_1·2 + η_2·4)/(η_1 + η_2).
  EXPECT_DOUBLE_EQ(combined[4], (0.25 * 2.0 + 0.125 * 4.0) / (0.25 + 0.125));
}

TEST(AdaRakerTest, HInitSlotIsAParameterOfTheHedgeRule) {
  const Dataset data = random_stream(40, 3, Task::Regression, 7);
  const auto c = context_for(data);
  auto late = make("adaraker", c, {{"D", "4"}, {"h_init_slot", "after_first"}});
  auto early = make("adaraker", c, {{"D", "4"}});
  const auto a = run_steps(*late, data), b = run_steps(*early, data);
  EXPECT_EQ(a[0], 0.0) << "t = 1: the only instance weighs 0";
  EXPECT_NE(a, b);
  for (double v : a) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NE(omkl::test::config_error_message("adaraker", c, {{"h_init_slot", "after_first"}, {"h_rule", "matlab"}})
                .find("h_rule=hedge"),
            std::string::npos);
}

TEST(AdaRakerTest, OptionsThatWouldChangeNothingAreRefused) {
  const Dataset data = random_stream(40, 3, Task::Regression, 7);
  const auto c = context_for(data);
  // η_I as the weight step: only the exp_eta rule has one (the reference profile's minmax has β).
  EXPECT_NO_THROW(make("adaraker", c, {{"D", "4"}, {"instance_weight_step", "eta_I"}}));
  EXPECT_NE(omkl::test::config_error_message("adaraker", c, {{"instance_weight_step", "eta_I"}, {"weight_rule", "minmax"}})
                .find("'instance_weight_step'"),
            std::string::npos);
  // The updated θ in the ridge term: there is none with weight_loss=data_only.
  EXPECT_NE(omkl::test::config_error_message("raker", c, {{"weight_theta", "post"}, {"weight_loss", "data_only"}})
                .find("'weight_theta'"),
            std::string::npos);
  EXPECT_NO_THROW(make("raker", c, {{"D", "4"}, {"weight_theta", "post"}}));
}
