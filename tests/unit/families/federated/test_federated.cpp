// The federated family (spec/federated.md): Algorithm 1, the upload budget, POF-MKL and its
// baselines against direct computations, unbiasedness of the importance-weighted server step,
// the shared θ trajectory of §3.3, communication counts, checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include "common/test_helpers.h"
#include "families/federated/federated.h"
#include "families/federated/federated_config.h"
#include "families/federated/resident_em_kofl.h"
#include "families/federated/kernel_selection.h"
#include "families/federated/mlp.h"
#include "features/random_features.h"
#include "omkl/error.h"
#include "omkl/kernel_spec.h"
#include "omkl/study.h"
#include "study/regret.h"
#include "study/study_io.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::bits;
using omkl::test::config_error_message;
using omkl::test::make;
using omkl::test::random_stream;
using omkl::test::run_steps;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

const std::string kDict4 = "gauss2:0.5+gauss2:1+gauss2:2+gauss2:4";

// A federated stream: K clients × T rounds of a smooth regression target.
Dataset federated_stream(std::size_t K, std::size_t T, std::size_t d = 3, std::uint64_t seed = 11) {
  Dataset data = random_stream(K * T, d, Task::Regression, seed);
  data.n_clients = K;
  return data;
}

AlgoContext fed_context(const Dataset& data, std::vector<std::uint64_t> replicates = {0},
                        Profile profile = Profile::Paper) {
  AlgoContext c = omkl::test::context_for(data, profile, std::move(replicates));
  c.n_clients = data.n_clients;
  return c;
}

std::string param(const Algorithm& a, const std::string& key) {
  for (const auto& kv : a.reported_params())
    if (kv.first == key) return kv.second;
  return "";
}

// z_i(x) from the frequencies every federated learner draws: stream (seed, replicate, kernel).
std::vector<double> rf_features(const KernelSpec& kernel, std::size_t D, const double* x, std::size_t d,
                             std::uint64_t seed, std::uint64_t replicate, std::size_t i) {
  RandomStream rng(seed, replicate, RngPurpose::Frequencies, i);
  const auto V = draw_frequencies(kernel, D, d, RfKind::Rf, rng);
  std::vector<double> z(2 * D);
  feature_map(V.data(), D, d, x, 1.0 / std::sqrt(double(D)), z.data());
  return z;
}

}  // namespace

// ---- Algorithm 1 -----------------------------------------------------------------------------

TEST(KernelSelectionTest, BinsPartitionTheKernelsAndQIsAPmf) {
  const std::size_t N = 51;
  std::vector<double> log_w(N);
  RandomStream rng(5, 0, RngPurpose::Misc, 1);
  for (double& a : log_w) a = -3.0 * rng.uniform();
  for (std::size_t M : {1, 2, 7, 25, 50, 51}) {
    for (double xi : {0.05, 0.5, 1.0}) {
      KernelSelection sel;
      select_kernels(log_w.data(), N, M, xi, true, 0.4, sel);
      const std::size_t m = (N + M - 1) / M;
      ASSERT_EQ(sel.n_bins, m);
      // The ranking is a permutation, heaviest first; bins are its consecutive blocks.
      std::vector<std::uint32_t> sorted = sel.ranking;
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t i = 0; i < N; ++i) ASSERT_EQ(sorted[i], i);
      for (std::size_t i = 1; i < N; ++i) EXPECT_GE(log_w[sel.ranking[i - 1]], log_w[sel.ranking[i]]);
      const double total = std::accumulate(sel.q.begin(), sel.q.end(), 0.0);
      EXPECT_NEAR(total, 1.0, 1e-12) << "M = " << M << ", xi = " << xi;
      for (double q : sel.q) EXPECT_GE(q, xi / double(m) - 1e-15);
      const std::size_t size = sel.bin + 1 < m ? M : N - (m - 1) * M;
      EXPECT_EQ(sel.kernels.size(), size);
      EXPECT_EQ(sel.probability, sel.q[sel.bin]);
      if (xi == 1.0)
        for (double q : sel.q) EXPECT_NEAR(q, 1.0 / double(m), 1e-15);
    }
  }
}

TEST(KernelSelectionTest, HandComputedDrawAndTieRule) {
  // w = (1, e⁻¹, e⁻², 1): ranking 3, 0 (tie: descending index), 1, 2; bins {3, 0}, {1, 2}.
  const double log_w[4] = {0.0, -1.0, -2.0, 0.0};
  KernelSelection sel;
  const double u1 = 2.0, u2 = std::exp(-1.0) + std::exp(-2.0);
  const double q1 = 0.5 * u1 / (u1 + u2) + 0.25;
  select_kernels(log_w, 4, 2, 0.5, true, q1 - 1e-9, sel);
  EXPECT_EQ(sel.ranking, (std::vector<std::uint32_t>{3, 0, 1, 2}));
  ASSERT_EQ(sel.q.size(), 2u);
  EXPECT_NEAR(sel.q[0], q1, 1e-15);
  EXPECT_EQ(sel.bin, 0u);
  EXPECT_EQ(sel.kernels, (std::vector<std::uint32_t>{3, 0}));
  select_kernels(log_w, 4, 2, 0.5, true, q1 + 1e-9, sel);
  EXPECT_EQ(sel.bin, 1u);
  EXPECT_EQ(sel.kernels, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_NEAR(sel.probability, 1.0 - q1, 1e-15);
  // At t = 1 every weight is equal: the ranking is N − 1, …, 0 (§1.4 tie rule).
  const std::vector<double> equal(51, 0.0);
  select_kernels(equal.data(), 51, 25, 1.0, true, 0.99, sel);
  for (std::size_t i = 0; i < 51; ++i) EXPECT_EQ(sel.ranking[i], 50 - i);
  EXPECT_EQ(sel.kernels, (std::vector<std::uint32_t>{0}));  // the singleton last bin
  // A draw past the cumulative sum (rounding) takes the last bin (§7 C7).
  select_kernels(equal.data(), 51, 1, 1.0, true, 1.0, sel);
  EXPECT_EQ(sel.bin, 50u);
  // Unsorted bins (skip_sort_if_uniform): index order.
  select_kernels(log_w, 4, 2, 1.0, false, 0.1, sel);
  EXPECT_EQ(sel.kernels, (std::vector<std::uint32_t>{0, 1}));
}

// ---- budget, D, parameters -------------------------------------------------------------------

TEST(FederatedTest, DFollowsMAndTheUploadCap) {
  const Dataset data = federated_stream(3, 4, 15);
  const AlgoContext c = fed_context(data);
  // §2.2: D(M) = min(100, ⌊1000 / 2M⌋); the baselines' uploads add their loss scalars.
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "1"}}), "D"), "100");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "25"}}), "D"), "20");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "51"}}), "D"), "9");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "10"}}), "D"), "50");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "17"}}), "D"), "29");
  EXPECT_EQ(param(*make("vm-kofl", c), "D"), "9");
  EXPECT_EQ(param(*make("ofmkl-avg", c), "D"), "9");
  EXPECT_EQ(param(*make("em-kofl", c), "D"), "100");
  EXPECT_EQ(param(*make("ofskl", c), "D"), "100");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "25"}}), "M"), "25");
  // max_D (§2.2, §4.9): the client's largest D; below the upload rule's D it binds, above it the
  // cap ⌊1000/2M⌋ still does.
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "1"}, {"max_D", "50"}}), "D"), "50");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "1"}, {"max_D", "600"}}), "D"), "500");
  EXPECT_EQ(param(*make("pof-mkl", c, {{"M", "25"}, {"max_D", "600"}}), "D"), "20");
  EXPECT_NE(config_error_message("pof-mkl", c, {{"max_D", "0"}}).find("'max_D'"), std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"max_D", "50"}, {"D", "60"}}).find("exceeds max_D = 50"), std::string::npos);
}

TEST(FederatedTest, TheFed51GridAndItsTwoBandwidthConventions) {
  // §4.4: σ_i = 10^((2i − 52)/25), i = 1 … 51. The authors draw ρ ~ N(0, σ⁻¹I), so κ(δ) =
  // exp(−‖δ‖²/(2σ)); the textbook reading N(0, σ⁻²I) gives exp(−‖δ‖²/(2σ²)). At ‖δ‖² = 0.01:
  const double a[2] = {0.1, 0.0}, b[2] = {0.0, 0.0};
  const Dictionary author = parse_dictionary("fed-51"), textbook = parse_dictionary("fed-51-textbook");
  ASSERT_EQ(author.size(), 51u);
  ASSERT_EQ(textbook.size(), 51u);
  EXPECT_NEAR(author[0].evaluate(a, b, 2), std::exp(-0.01 / (2 * 0.01)), 1e-15);   // σ = 10⁻²
  EXPECT_NEAR(author[25].evaluate(a, b, 2), std::exp(-0.01 / 2), 1e-15);           // σ = 1
  EXPECT_NEAR(author[50].evaluate(a, b, 2), std::exp(-0.01 / 200), 1e-15);         // σ = 10²
  EXPECT_NEAR(textbook[0].evaluate(a, b, 2), std::exp(-0.01 / (2 * 1e-4)), 1e-30);
  EXPECT_NEAR(textbook[50].evaluate(a, b, 2), std::exp(-0.01 / (2 * 1e4)), 1e-15);
  // POF-MKL's rbf_convention picks between the two grids, bit for bit.
  const Dataset data = federated_stream(3, 6, 3);
  const AlgoContext c = fed_context(data);
  const auto textbook_run = run_steps(*make("pof-mkl", c, {{"M", "1"}, {"rbf_convention", "textbook"}}), data);
  EXPECT_EQ(textbook_run, run_steps(*make("pof-mkl", c, {{"M", "1"}, {"dict", "fed-51-textbook"}}), data));
  EXPECT_NE(textbook_run, run_steps(*make("pof-mkl", c, {{"M", "1"}}), data));
  EXPECT_EQ(run_steps(*make("pof-mkl", c, {{"M", "1"}}), data),
            run_steps(*make("pof-mkl", c, {{"M", "1"}, {"dict", "fed-51"}}), data));
}

TEST(FederatedTest, BadConfigurationsAreRefusedNamingTheParameter) {
  const Dataset data = federated_stream(3, 4);
  const AlgoContext c = fed_context(data);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"M", "0"}}).find("'M'"), std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"M", "52"}}).find("[1, 51]"), std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"M", "25"}, {"D", "21"}}).find("max_upload"), std::string::npos);
  EXPECT_NE(config_error_message("vm-kofl", c, {{"max_upload", "50"}}).find("max_upload"), std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"xi", "0"}}).find("'xi'"), std::string::npos);
  EXPECT_NE(config_error_message("vm-kofl", c, {{"upload", "gradient"}}).find("'upload'"), std::string::npos);
  // Not a federated stream, and no clients given.
  AlgoContext plain = c;
  plain.n_clients = 0;
  EXPECT_NE(config_error_message("pof-mkl", plain, {}).find("not federated"), std::string::npos);
  // A stream that is not whole rounds (clients given on a stream not dealt to clients).
  EXPECT_NE(config_error_message("pof-mkl", plain, {{"clients", "5"}}).find("whole rounds"), std::string::npos);
  // A clients= other than the stream's would deal its rows anew (§4.3: row t·K + k is client k's).
  EXPECT_NE(config_error_message("pof-mkl", c, {{"clients", "4"}}).find("dealt to 3 clients"), std::string::npos);
  EXPECT_NO_THROW(make("pof-mkl", c, {{"clients", "3"}}));
  AlgoContext classification = c;
  classification.task = Task::Classification;
  EXPECT_NE(config_error_message("pof-mkl", classification, {}).find("regression"), std::string::npos);
}

// ---- POF-MKL against a direct computation ------------------------------------------------------

TEST(FederatedTest, PofMklWithAllKernelsMatchesADirectComputation) {
  // M = N: p = 1, no randomness (§1.7): FedAvg of per-kernel OGD with personal Hedge weights.
  const std::size_t K = 3, T = 4, d = 3, D = 5;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const Dictionary dict = parse_dictionary(kDict4);
  const std::size_t N = dict.size();
  const double eta = 0.3, eta_k = 0.7, lambda = 0.01;
  auto alg = make("pof-mkl", c,
                  {{"dict", kDict4}, {"M", "4"}, {"D", std::to_string(D)}, {"eta", "0.3"}, {"eta_k", "0.7"},
                   {"lambda", "0.01"}});
  std::vector<std::vector<double>> theta(N, std::vector<double>(2 * D, 0.0));
  std::vector<std::vector<double>> log_w(K, std::vector<double>(N, 0.0));
  for (std::size_t t = 0; t < T; ++t) {
    std::vector<std::vector<double>> acc(N, std::vector<double>(2 * D, 0.0));
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = t * K + k;
      const double* x = data.row(row);
      const double y = data.y[row];
      std::vector<double> f(N);
      std::vector<std::vector<double>> z(N);
      for (std::size_t i = 0; i < N; ++i) {
        z[i] = rf_features(dict[i], D, x, d, c.seed, 0, i);
        f[i] = std::inner_product(theta[i].begin(), theta[i].end(), z[i].begin(), 0.0);
      }
      const double top = *std::max_element(log_w[k].begin(), log_w[k].end());
      double num = 0.0, den = 0.0;
      for (std::size_t i = 0; i < N; ++i) {
        num += std::exp(log_w[k][i] - top) * f[i];
        den += std::exp(log_w[k][i] - top);
      }
      double prediction = 0.0;
      alg->step(x, y, &prediction);
      EXPECT_NEAR(prediction, num / den, 1e-12) << "round " << t << ", client " << k;
      for (std::size_t i = 0; i < N; ++i) {
        const double n2 = std::inner_product(theta[i].begin(), theta[i].end(), theta[i].begin(), 0.0);
        log_w[k][i] -= eta_k * ((f[i] - y) * (f[i] - y) + lambda * n2);
        for (std::size_t j = 0; j < 2 * D; ++j) acc[i][j] += eta * (2.0 * (f[i] - y) * z[i][j] + 2.0 * lambda * theta[i][j]);
      }
    }
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t j = 0; j < 2 * D; ++j) theta[i][j] -= acc[i][j] / double(K);
    for (std::size_t i = 0; i < N; ++i) {
      const auto got = federated_theta(*alg, 0, i);
      for (std::size_t j = 0; j < 2 * D; ++j) EXPECT_NEAR(got[j], theta[i][j], 1e-12) << "θ after round " << t;
    }
    for (std::size_t k = 0; k < K; ++k) {
      const auto got = federated_log_weights(*alg, 0, k);
      for (std::size_t i = 0; i < N; ++i) EXPECT_NEAR(got[i], log_w[k][i], 1e-12);
    }
  }
}

TEST(FederatedTest, ImportanceWeightedServerStepIsUnbiased) {
  // §1.7 / §8.4: over the selection, the mean server step of M = 1 equals the full-gradient
  // FedAvg step (M = N, same frequencies and data). One round from θ = 0, many replicates.
  const std::size_t K = 3, R = 4000, D = 2;
  const Dataset data = federated_stream(K, 1, 2);
  std::vector<std::uint64_t> replicates(R);
  std::iota(replicates.begin(), replicates.end(), 0);
  const AlgoContext c = fed_context(data, replicates);
  const Params common{{"dict", kDict4}, {"D", std::to_string(D)}, {"eta", "0.5"}, {"xi", "1"}};
  Params one = common, all = common;
  one.emplace_back("M", "1");
  all.emplace_back("M", "4");
  auto sampled = make("pof-mkl", c, one);
  auto full = make("pof-mkl", c, all);
  run_steps(*sampled, data);
  run_steps(*full, data);
  // d_r = θ_sampled − θ_full has mean 0 per coordinate; compare with its standard error.
  double worst = 0.0;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 2 * D; ++j) {
      double mean = 0.0, sq = 0.0;
      for (std::size_t r = 0; r < R; ++r) {
        const double diff = federated_theta(*sampled, r, i)[j] - federated_theta(*full, r, i)[j];
        mean += diff;
        sq += diff * diff;
      }
      mean /= double(R);
      const double se = std::sqrt((sq / double(R) - mean * mean) / double(R));
      ASSERT_GT(se, 0.0);
      worst = std::max(worst, std::fabs(mean) / se);
    }
  EXPECT_LT(worst, 4.5) << "largest |mean| / standard error over the 16 coordinates";
}

TEST(FederatedTest, SharedThetaTrajectoryOfPofMklVmKoflAndOfmklAvg) {
  // §3.3 / §8.5: with every kernel uploaded at p = 1, the three differ only in the head.
  const Dataset data = federated_stream(4, 6, 3);
  const AlgoContext c = fed_context(data, {0, 1});
  const Params shared{{"dict", kDict4}, {"D", "6"}};
  Params pof = shared;
  pof.emplace_back("M", "4");
  auto a = make("pof-mkl", c, pof);
  auto b = make("vm-kofl", c, shared);
  auto o = make("ofmkl-avg", c, shared);
  const auto pa = run_steps(*a, data), pb = run_steps(*b, data), po = run_steps(*o, data);
  for (std::size_t r = 0; r < 2; ++r)
    for (std::size_t i = 0; i < 4; ++i) {
      const auto ta = federated_theta(*a, r, i), tb = federated_theta(*b, r, i), to = federated_theta(*o, r, i);
      for (std::size_t j = 0; j < ta.size(); ++j) {
        ASSERT_EQ(bits(ta[j]), bits(tb[j]));
        ASSERT_EQ(bits(ta[j]), bits(to[j]));
      }
    }
  // ... and their predictions differ (the heads do).
  EXPECT_NE(pa, pb);
  EXPECT_NE(pb, po);
}

// §4.9 message.upload: a client sends its step g (upload=delta, the code's message) or its
// θ_{k,t+1} = θ_t − g (upload=theta, the paper's), which the server subtracts from θ_t. The same
// rounds but for rounding: the same bins (draws and weights within rounding), the same floats
// counted up and down, θ and the predictions within a few ulps of θ — and not the same bits, the
// server's θ_t − (θ_t − g) rounding where g alone does not.
TEST(FederatedTest, ThetaUploadsAreTheDeltaUploadsUpToRounding) {
  const Dataset data = federated_stream(4, 25, 3);
  const AlgoContext c = fed_context(data, {0, 1});
  const std::vector<std::pair<std::string, Params>> cases = {{"pof-mkl", {{"dict", kDict4}, {"D", "6"}, {"M", "2"}}},
                                                             {"vm-kofl", {{"dict", kDict4}, {"D", "6"}}}};
  for (const auto& [name, params] : cases) {
    auto a = make(name, c, omkl::test::with_param(params, "upload", "delta"));
    auto b = make(name, c, omkl::test::with_param(params, "upload", "theta"));
    const auto pa = run_steps(*a, data), pb = run_steps(*b, data);
    ASSERT_EQ(pa.size(), pb.size());
    for (std::size_t i = 0; i < pa.size(); ++i) EXPECT_NEAR(pb[i], pa[i], 1e-12) << name << " " << i;
    bool some_bits_differ = false;
    for (std::size_t r = 0; r < 2; ++r)
      for (std::size_t i = 0; i < 4; ++i) {
        const auto ta = federated_theta(*a, r, i), tb = federated_theta(*b, r, i);
        for (std::size_t j = 0; j < ta.size(); ++j) {
          EXPECT_NEAR(tb[j], ta[j], 1e-13) << name << " θ " << r << " " << i << " " << j;
          some_bits_differ |= bits(ta[j]) != bits(tb[j]);
        }
      }
    EXPECT_TRUE(some_bits_differ) << name << ": upload=theta left every bit of θ as upload=delta";
    EXPECT_EQ(a->kernel_updates(), b->kernel_updates()) << name;
    EXPECT_EQ(a->communication().uplink_floats, b->communication().uplink_floats) << name;
    EXPECT_EQ(a->communication().downlink_floats, b->communication().downlink_floats) << name;
  }
}

TEST(FederatedTest, OfmklAvgPredictsTheUniformMeanAndOfsklItsOneKernel) {
  const Dataset data = federated_stream(2, 3, 2);
  const AlgoContext c = fed_context(data);
  auto avg = make("ofmkl-avg", c, {{"dict", kDict4}, {"D", "4"}});
  auto single = make("ofskl", c, {{"D", "4"}});
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double p = 0.0, s = 0.0;
    // Before the step: predict() gives what the step will return.
    double expected_avg = 0.0, expected_single = 0.0;
    avg->predict(data.row(t), &expected_avg);
    single->predict(data.row(t), &expected_single);
    avg->step(data.row(t), data.y[t], &p);
    single->step(data.row(t), data.y[t], &s);
    EXPECT_EQ(bits(p), bits(expected_avg));
    EXPECT_EQ(bits(s), bits(expected_single));
  }
  // θ of the mean head after the first round: f = 0 at θ = 0, so θ_i = −(η/K)Σ_k 2(0 − y_k)z_i(x_k).
  auto fresh = make("ofmkl-avg", c, {{"dict", kDict4}, {"D", "4"}, {"eta", "0.2"}, {"lambda", "0"}});
  for (std::size_t t = 0; t < 2; ++t) {
    double p;
    fresh->step(data.row(t), data.y[t], &p);
    EXPECT_EQ(p, 0.0);
  }
  const Dictionary dict = parse_dictionary(kDict4);
  for (std::size_t i = 0; i < 4; ++i) {
    std::vector<double> expected(8, 0.0);
    for (std::size_t k = 0; k < 2; ++k) {
      const auto z = rf_features(dict[i], 4, data.row(k), 2, c.seed, 0, i);
      for (std::size_t j = 0; j < 8; ++j) expected[j] -= 0.2 * 2.0 * (0.0 - data.y[k]) * z[j] / 2.0;
    }
    const auto got = federated_theta(*fresh, 0, i);
    for (std::size_t j = 0; j < 8; ++j) EXPECT_NEAR(got[j], expected[j], 1e-14);
  }
}

TEST(FederatedTest, SharePrefixAcrossDFalseDrawsEachDFromStreamsOfItsOwn) {
  // §4.4 rf.share_prefix_across_D: by default kernel i's matrix is the first D rows of stream i
  // (so D = 4 and D = 6 share 4 rows); false keys the stream by D too (D·2³² + i). θ after one
  // round of f = 0 is −(η/K)Σ_k 2(0 − y_k)z_i(x_k): the features it holds name the stream.
  const Dataset data = federated_stream(2, 3, 2);
  const AlgoContext c = fed_context(data);
  const Dictionary dict = parse_dictionary(kDict4);
  for (const bool share : {true, false})
    for (const std::size_t D : {4, 6}) {
      auto a = make("ofmkl-avg", c, {{"dict", kDict4}, {"D", std::to_string(D)}, {"eta", "0.2"}, {"lambda", "0"},
                                     {"share_prefix_across_D", share ? "true" : "false"}});
      double p;
      for (std::size_t t = 0; t < 2; ++t) a->step(data.row(t), data.y[t], &p);
      for (std::size_t i = 0; i < 4; ++i) {
        const std::size_t stream = share ? i : (D << 32) + i;
        std::vector<double> expected(2 * D, 0.0);
        for (std::size_t k = 0; k < 2; ++k) {
          const auto z = rf_features(dict[i], D, data.row(k), 2, c.seed, 0, stream);
          for (std::size_t j = 0; j < 2 * D; ++j) expected[j] -= 0.2 * 2.0 * (0.0 - data.y[k]) * z[j] / 2.0;
        }
        const auto got = federated_theta(*a, 0, i);
        for (std::size_t j = 0; j < 2 * D; ++j) ASSERT_NEAR(got[j], expected[j], 1e-14) << share << " D " << D;
      }
    }
}

// ---- communication -----------------------------------------------------------------------------

TEST(FederatedTest, CommunicationIsCountedAndWithinTheCap) {
  const std::size_t K = 4, T = 30;
  const Dataset data = federated_stream(K, T, 15);
  const AlgoContext c = fed_context(data, {0, 1});
  const double client_steps = double(2 * K * T);
  {
    auto a = make("pof-mkl", c, {{"M", "1"}});
    run_steps(*a, data);
    const CommunicationCount n = a->communication();
    EXPECT_EQ(n.client_steps, client_steps);
    EXPECT_EQ(n.uplink_floats, 200.0 * client_steps);          // one kernel of 2D = 200
    EXPECT_EQ(n.downlink_floats, 51 * 200.0 * client_steps);   // every θ
    EXPECT_EQ(n.max_uplink, 200.0);
  }
  {
    // Bins of 25, 25 and the singleton: each client step uploads 2D·|S| = 1000 or 40 floats,
    // as its selection says.
    auto a = make("pof-mkl", c, {{"M", "25"}});
    double expected = 0.0, full_bins = 0.0;
    std::vector<double> out(2);
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      a->step(data.row(t), data.y[t], out.data());
      for (std::size_t r = 0; r < 2; ++r) {
        const std::size_t size = federated_last_selection(*a, r).kernels.size();
        EXPECT_TRUE(size == 25 || size == 1) << size;
        expected += 2.0 * 20.0 * double(size);
        full_bins += size == 25;
      }
    }
    const CommunicationCount n = a->communication();
    EXPECT_EQ(n.uplink_floats, expected);
    EXPECT_GT(full_bins, 0.0);
    EXPECT_LT(full_bins, client_steps);
    EXPECT_EQ(n.max_uplink, 1000.0);
  }
  {
    auto v = make("vm-kofl", c);
    run_steps(*v, data);
    EXPECT_EQ(v->communication().uplink_floats, (51 * 18.0 + 51) * client_steps);  // 969 per step
    auto e = make("em-kofl", c);
    run_steps(*e, data);
    EXPECT_EQ(e->communication().uplink_floats, (200.0 + 51) * client_steps);  // 251 per step
    auto p = make("perfedavg", c);
    run_steps(*p, data);
    EXPECT_EQ(param(*p, "parameters"), "761");  // §3.6: d = 15 → 2 hidden layers of 20
    EXPECT_EQ(p->communication().max_uplink, 761.0);
  }
  // §8 item 2: the cap is asserted where a message is formed — an upload over it is an error
  // naming both numbers, one step's or a resident walk's tally, and leaves the counts alone.
  CommunicationLedger ledger(1000.0);
  ledger.client_step(51 * 200.0, 1000.0);  // at the cap: sent
  for (const auto& over : std::vector<std::function<void()>>{[&] { ledger.client_step(0.0, 1000.5); },
                                                             [&] { ledger.client_steps(3.0, 0.0, 2001.0, 1001.0); }}) {
    try {
      over();
      ADD_FAILURE() << "an upload over the cap was counted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("exceeds the cap of 1000"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(ledger.totals().client_steps, 1.0);
  EXPECT_EQ(ledger.totals().uplink_floats, 1000.0);
  EXPECT_EQ(CommunicationLedger().cap(), 0.0);  // 0: no cap
  EXPECT_NO_THROW(CommunicationLedger().client_step(0.0, 1e9));
}

// ---- the learners learn; replicates and checkpoints --------------------------------------------

TEST(FederatedTest, EveryAlgorithmLearnsTheStream) {
  const std::size_t K = 4, T = 150;
  const Dataset data = federated_stream(K, T, 3);
  const AlgoContext c = fed_context(data);
  double mean = 0.0, var = 0.0, mean_square = 0.0;
  for (double y : data.y) mean += y / double(data.n_samples);
  for (double y : data.y) mean_square += y * y / double(data.n_samples);
  for (double y : data.y) var += (y - mean) * (y - mean) / double(data.n_samples);
  for (const std::string name : {"pof-mkl", "ofskl", "ofmkl-avg", "vm-kofl", "em-kofl", "perfedavg"}) {
    // Four kernels (so POF-MKL's importance-weighted step, η·N/K per client, stays stable).
    Params params{{"dict", kDict4}, {"eta", "0.3"}};
    if (name == "ofskl") params = {{"eta", "0.3"}};
    if (name == "perfedavg") params = {};
    auto a = make(name, c, params);
    const auto p = run_steps(*a, data);
    double early = 0.0, late = 0.0;
    const std::size_t from = data.n_samples / 2;
    for (std::size_t t = 0; t < from; ++t) early += (p[t] - data.y[t]) * (p[t] - data.y[t]);
    for (std::size_t t = from; t < data.n_samples; ++t) late += (p[t] - data.y[t]) * (p[t] - data.y[t]);
    early /= double(from);
    late /= double(data.n_samples - from);
    EXPECT_LT(late, early) << name;
    if (name == "perfedavg") {
      // A network from Glorot weights and zero biases starts far from the targets and learns
      // more slowly than the kernels: much better than its untrained zero output.
      EXPECT_LT(late, 0.25 * mean_square) << name;
    } else {
      // Better than predicting the stream's mean over the second half (the target varies with x).
      EXPECT_LT(late, var) << name << " (late MSE vs the variance of y)";
    }
    for (double v : p) ASSERT_TRUE(std::isfinite(v)) << name;
  }
}

TEST(FederatedTest, ReplicatesInLockstepEqualSeparateRuns) {
  const Dataset data = federated_stream(3, 10, 3);
  for (const char* name : {"pof-mkl", "vm-kofl", "em-kofl", "perfedavg"}) {
    auto both = make(name, fed_context(data, {0, 5}));
    auto only5 = make(name, fed_context(data, {5}));
    const auto pb = run_steps(*both, data), p5 = run_steps(*only5, data);
    for (std::size_t t = 0; t < data.n_samples; ++t) ASSERT_EQ(bits(pb[t * 2 + 1]), bits(p5[t])) << name << " t " << t;
  }
}

TEST(FederatedTest, CheckpointInTheMiddleOfARoundContinuesBitIdentically) {
  const Dataset data = federated_stream(4, 8, 3);
  const std::size_t cut = 13;  // round 4, after client 1
  const std::vector<std::pair<std::string, Params>> cases{{"pof-mkl", {{"M", "2"}}},
                                                          {"vm-kofl", {}},
                                                          {"ofmkl-avg", {}},
                                                          {"em-kofl", {}},
                                                          {"em-kofl", {{"variant", "global_only"}, {"explore", "0.3"}}},
                                                          {"perfedavg", {}}};
  for (const auto& [name, p] : cases) {
    const AlgoContext c = fed_context(data, {0, 1});
    auto whole = make(name, c, p);
    const auto expected = run_steps(*whole, data);
    auto first = make(name, c, p);
    run_steps(*first, data, 0, cut);
    StateWriter out;
    first->save_state(out);
    auto second = make(name, c, p);
    StateReader in(out.bytes());
    second->load_state(in);
    EXPECT_TRUE(in.at_end()) << name;
    const auto rest = run_steps(*second, data, cut, data.n_samples);
    for (std::size_t i = 0; i < rest.size(); ++i)
      ASSERT_EQ(bits(rest[i]), bits(expected[cut * 2 + i])) << name << " value " << i;
  }
}

TEST(FederatedTest, PredictEqualsTheNextStepsPrediction) {
  const Dataset data = federated_stream(3, 6, 3);
  const std::vector<std::pair<std::string, Params>> cases{
      {"pof-mkl", {}}, {"vm-kofl", {}}, {"em-kofl", {}}, {"em-kofl", {{"variant", "global_only"}}},
      {"perfedavg", {}}, {"ofskl", {}}};
  for (const auto& [name, p] : cases) {
    auto a = make(name, fed_context(data, {0, 2}), p);
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      double predicted[2], stepped[2];
      a->predict(data.row(t), predicted);
      a->step(data.row(t), data.y[t], stepped);
      ASSERT_EQ(bits(predicted[0]), bits(stepped[0])) << name << " t " << t;
      ASSERT_EQ(bits(predicted[1]), bits(stepped[1])) << name << " t " << t;
    }
  }
}

TEST(FederatedTest, WideInputsOfTheUjiShape) {
  // UJI is not in the shared data: its 520-input path on generated data of that shape (§4.1).
  const Dataset data = federated_stream(2, 6, 520);
  const AlgoContext c = fed_context(data);
  auto p = make("perfedavg", c);
  EXPECT_EQ(param(*p, "parameters"), "521");  // §3.6: a linear model
  for (const char* name : {"pof-mkl", "vm-kofl", "em-kofl", "perfedavg"}) {
    auto a = make(name, c);
    for (double v : run_steps(*a, data)) ASSERT_TRUE(std::isfinite(v)) << name;
  }
}

namespace {

// A linear PerFedAvg's server model w = [weights; bias] (hidden_layers = 0, personalize = none),
// read through predict(): the bias at 0, each weight at a unit vector less the bias.
std::vector<double> linear_server_model(Algorithm& algorithm, std::size_t d) {
  std::vector<double> w(d + 1), x(d, 0.0);
  algorithm.predict(x.data(), &w[d]);
  for (std::size_t i = 0; i < d; ++i) {
    x.assign(d, 0.0);
    x[i] = 1.0;
    algorithm.predict(x.data(), &w[i]);
    w[i] -= w[d];
  }
  return w;
}

}  // namespace

TEST(PerFedAvgTest, EveryVariantIsItsMamlStepOnALinearModel) {
  // §3.6 steps 3–4: w̃ = w − α∇ℓ(w), client k's w'_k, the server's mean over the clients. The
  // default first-order variant takes w'_k = w − β∇ℓ(w̃); hessian_free and exact take the MAML
  // step w − β(I − α∇²ℓ(w))∇ℓ(w̃), the Hessian-vector product by a central difference or by the
  // R-operator. On a linear model h = wᵀa, a = [x; 1]: ∇ℓ(v) = 2(vᵀa − y)a and ∇²ℓ = 2aaᵀ
  // exactly, so the second-order step is w − β(u − 2α·a(aᵀu)), u = ∇ℓ(w̃). The server's w is
  // read through predict() with personalize = none (linear_server_model()).
  const std::size_t K = 2, T = 4, d = 2;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const double alpha = 0.3, beta = 0.2;
  const Params base{{"hidden_layers", "0"}, {"personalize", "none"}, {"alpha", "0.3"}, {"beta", "0.2"}};
  auto first_order = make("perfedavg", c, base);
  // Glorot-uniform weights within ±√(6/(fan_in + fan_out)) and a zero bias (§3.6 initialisation).
  const std::vector<double> w1 = linear_server_model(*first_order, d);
  EXPECT_EQ(w1[d], 0.0);
  for (std::size_t i = 0; i < d; ++i) EXPECT_LE(std::fabs(w1[i]), std::sqrt(6.0 / double(d + 1)));
  for (const char* variant : {"first_order", "hessian_free", "exact"}) {
    SCOPED_TRACE(variant);
    const bool second_order = std::string(variant) != "first_order";
    auto algo = second_order ? make("perfedavg", c, omkl::test::with_param(base, "variant", variant))
                             : make("perfedavg", c, base);  // the default
    auto reference = make("perfedavg", c, base);
    // The central difference of hessian_free is exact only up to its step's rounding.
    const double tolerance = std::string(variant) == "hessian_free" ? 1e-9 : 1e-12;
    bool differs = false;
    for (std::size_t t = 0; t < T; ++t) {
      const std::vector<double> w = linear_server_model(*algo, d);
      std::vector<double> next(d + 1, 0.0);
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t row = t * K + k;
        std::vector<double> a(data.row(row), data.row(row) + d);
        a.push_back(1.0);
        const double y = data.y[row];
        const auto h = [&](const std::vector<double>& v) { return std::inner_product(v.begin(), v.end(), a.begin(), 0.0); };
        std::vector<double> tilde(d + 1), u(d + 1);
        for (std::size_t j = 0; j <= d; ++j) tilde[j] = w[j] - alpha * 2.0 * (h(w) - y) * a[j];
        for (std::size_t j = 0; j <= d; ++j) u[j] = 2.0 * (h(tilde) - y) * a[j];
        const double au = h(u);
        for (std::size_t j = 0; j <= d; ++j)
          next[j] += (w[j] - beta * (u[j] - (second_order ? 2.0 * alpha * a[j] * au : 0.0))) / double(K);
        double got = 0.0, by_default = 0.0;
        algo->step(data.row(row), y, &got);
        reference->step(data.row(row), y, &by_default);
        EXPECT_NEAR(got, h(w), 1e-12 * (1.0 + std::fabs(got))) << "round " << t;
        differs = differs || got != by_default;
      }
      const std::vector<double> after = linear_server_model(*algo, d);
      for (std::size_t j = 0; j <= d; ++j) EXPECT_NEAR(after[j], next[j], tolerance * (1.0 + std::fabs(next[j]))) << t << "," << j;
    }
    EXPECT_EQ(differs, second_order) << "the Hessian term changes the model";
    if (second_order)
      EXPECT_NE(config_error_message("perfedavg", c, {{"variant", variant}, {"step_path", "resident"}}).find("first-order"),
                std::string::npos);
  }
  EXPECT_NE(config_error_message("perfedavg", c, {{"hf_delta", "0.1"}}).find("hf_delta"), std::string::npos);
  EXPECT_NE(config_error_message("perfedavg", c, {{"variant", "exact"}, {"hf_delta", "0.1"}}).find("hessian_free"),
            std::string::npos);
}

TEST(PerFedAvgTest, DefaultsFollowTheRoundsAndTheArchitectureRule) {
  // §3.6: α = β = 1/√T for T rounds; the most hidden layers of 20 that keep the parameters below
  // 1000 — (d + 1)·20 + (L − 1)·420 + 21, or d + 1 for L = 0: Air's d = 14 gives 741, WEC's
  // d = 48 a linear model of 49 (one layer would be 1001), and the alternative 1 × 19 gives 951.
  const std::size_t K = 2, T = 20;
  const Dataset data = federated_stream(K, T, 3);
  const AlgoContext c = fed_context(data);
  char step[32];
  std::snprintf(step, sizeof step, "%.17g", 1.0 / std::sqrt(20.0));
  EXPECT_EQ(run_steps(*make("perfedavg", c), data), run_steps(*make("perfedavg", c, {{"alpha", step}, {"beta", step}}), data));
  EXPECT_NE(run_steps(*make("perfedavg", c), data), run_steps(*make("perfedavg", c, {{"alpha", "0.2"}, {"beta", "0.2"}}), data));
  const auto parameters = [&](std::size_t d, const Params& p) {
    return param(*make("perfedavg", fed_context(federated_stream(K, 2, d)), p), "parameters");
  };
  EXPECT_EQ(parameters(14, {}), "741");
  EXPECT_EQ(parameters(48, {}), "49");
  EXPECT_EQ(parameters(48, {{"hidden_layers", "1"}, {"width", "19"}}), "951");
}

TEST(PerFedAvgTest, HessianVectorProductMatchesFiniteDifferencesOfTheGradient) {
  // Mlp::hessian_vector (the R-operator) against (∇ℓ(w + hv) − ∇ℓ(w − hv))/2h, whose error is
  // O(h²) away from ReLU's kinks; the Hessian's symmetry uᵀ(Hv) = vᵀ(Hu); a linear model's
  // product 2a(aᵀv) by hand, a = [x; 1].
  for (std::size_t layers : {0u, 1u, 2u}) {
    SCOPED_TRACE(std::to_string(layers) + " hidden layers");
    Mlp net(4, layers, 5);
    const std::size_t P = net.size();
    std::vector<double> w(P), u(P), v(P), hv(P), hu(P), plus(P), minus(P), moved(P);
    RandomStream rng(23, layers, RngPurpose::Misc, 5);
    net.initialize(w.data(), rng);
    for (double& e : w) e += 0.1 * (rng.uniform() - 0.5);
    for (std::size_t j = 0; j < P; ++j) {
      u[j] = rng.uniform() - 0.5;
      v[j] = rng.uniform() - 0.5;
    }
    const double x[4] = {0.3, -0.7, 0.2, 0.9}, y = 0.4;
    const double output = net.hessian_vector(w.data(), x, y, v.data(), hv.data());
    EXPECT_EQ(output, net.forward(w.data(), x));
    const double h = 1e-5;
    for (std::size_t j = 0; j < P; ++j) moved[j] = w[j] + h * v[j];
    net.gradient(moved.data(), x, y, plus.data());
    for (std::size_t j = 0; j < P; ++j) moved[j] = w[j] - h * v[j];
    net.gradient(moved.data(), x, y, minus.data());
    double scale = 0.0;
    for (std::size_t j = 0; j < P; ++j) scale = std::max(scale, std::fabs(hv[j]));
    ASSERT_GT(scale, 0.0);
    for (std::size_t j = 0; j < P; ++j)
      EXPECT_NEAR(hv[j], (plus[j] - minus[j]) / (2 * h), 1e-7 * (1.0 + scale)) << "parameter " << j;
    net.hessian_vector(w.data(), x, y, u.data(), hu.data());
    double u_hv = 0.0, v_hu = 0.0;
    for (std::size_t j = 0; j < P; ++j) {
      u_hv += u[j] * hv[j];
      v_hu += v[j] * hu[j];
    }
    EXPECT_NEAR(u_hv, v_hu, 1e-12 * (1.0 + std::fabs(u_hv)));
    if (layers == 0) {
      const double a[5] = {x[0], x[1], x[2], x[3], 1.0};
      double av = 0.0;
      for (std::size_t j = 0; j < 5; ++j) av += a[j] * v[j];
      for (std::size_t j = 0; j < 5; ++j) EXPECT_NEAR(hv[j], 2.0 * a[j] * av, 1e-15) << "parameter " << j;
    }
  }
}

TEST(PerFedAvgTest, ExactVariantIsTheHessianFreeLimitOnANetwork) {
  // On a ReLU network the gradient is not linear in w, so hessian_free's central difference is
  // the exact product only as hf_delta → 0: the two variants' predictions agree ever more
  // closely as δ shrinks (as δ², until rounding; δ ≥ 1e-2 crosses ReLU kinks here and is off by
  // 0.2), and both differ from the first-order step's.
  const std::size_t K = 3, T = 12, d = 3;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const Params base{{"hidden_layers", "2"}, {"width", "6"}, {"alpha", "0.2"}, {"beta", "0.2"}};
  const std::vector<double> exact = run_steps(*make("perfedavg", c, omkl::test::with_param(base, "variant", "exact")), data);
  const std::vector<double> first = run_steps(*make("perfedavg", c, base), data);
  double previous_gap = 0.0;
  for (const char* delta : {"1e-3", "1e-4"}) {
    Params params = omkl::test::with_param(base, "variant", "hessian_free");
    params = omkl::test::with_param(params, "hf_delta", delta);
    const std::vector<double> central = run_steps(*make("perfedavg", c, params), data);
    ASSERT_EQ(central.size(), exact.size());
    double gap = 0.0;
    for (std::size_t i = 0; i < exact.size(); ++i) gap = std::max(gap, std::fabs(central[i] - exact[i]));
    SCOPED_TRACE(std::string("hf_delta = ") + delta);
    EXPECT_LT(gap, 1e-5);
    if (previous_gap > 0.0) EXPECT_LT(gap, previous_gap / 30.0);  // O(δ²): seen 1.8e-7, then 1.8e-9
    previous_gap = gap;
  }
  EXPECT_GT(previous_gap, 0.0) << "a network's gradient is not linear in w";
  double from_first = 0.0;
  for (std::size_t i = 0; i < exact.size(); ++i) from_first = std::max(from_first, std::fabs(first[i] - exact[i]));
  EXPECT_GT(from_first, 1e-3) << "the Hessian term changes the model";
}

TEST(PerFedAvgTest, PersonalizedPredictionAdaptsOnTheClientsPreviousSampleWithAlpha) {
  // §3.6 step 2: client k predicts with φ = w − α∇ℓ(w; x_prev, y_prev), its previous sample's
  // one gradient step from the round's server model w (α, not the server step β), or with w
  // itself before it has a previous sample. On a linear model h = wᵀa, a = [x; 1]:
  // ∇ℓ = 2(wᵀa − y)a. The server model does not depend on the personalisation, so a learner with
  // personalize = none reads w (predict() at 0 and the unit vectors) on the same stream.
  const std::size_t K = 3, T = 5, d = 2;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const double alpha = 0.35;
  const Params base{{"hidden_layers", "0"}, {"alpha", "0.35"}, {"beta", "0.1"}};
  auto plain = make("perfedavg", c, omkl::test::with_param(base, "personalize", "none"));
  auto personal = make("perfedavg", c, omkl::test::with_param(base, "personalize", "prev_sample"));
  const auto augmented = [&](std::size_t row) {
    std::vector<double> a(data.row(row), data.row(row) + d);
    a.push_back(1.0);
    return a;
  };
  const auto dot = [](const std::vector<double>& u, const std::vector<double>& v) {
    double sum = 0.0;
    for (std::size_t j = 0; j < u.size(); ++j) sum += u[j] * v[j];
    return sum;
  };
  for (std::size_t t = 0; t < T; ++t) {
    const std::vector<double> w = linear_server_model(*plain, d);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = t * K + k;
      const std::vector<double> a = augmented(row);
      std::vector<double> phi = w;
      if (t > 0) {
        const std::size_t previous = row - K;
        const std::vector<double> a_prev = augmented(previous);
        const double residual = dot(w, a_prev) - data.y[previous];
        for (std::size_t j = 0; j <= d; ++j) phi[j] -= alpha * 2.0 * residual * a_prev[j];
      }
      double got = 0.0, unpersonalized = 0.0;
      personal->step(data.row(row), data.y[row], &got);
      plain->step(data.row(row), data.y[row], &unpersonalized);
      EXPECT_NEAR(got, dot(phi, a), 1e-12 * (1.0 + std::fabs(got))) << "round " << t << " client " << k;
      if (t > 0) EXPECT_NE(got, unpersonalized) << "round " << t << " client " << k;
    }
  }
}

TEST(PerFedAvgTest, NetworkGradientMatchesFiniteDifferences) {
  // ∇_w (h_w(x) − y)² by back-propagation against central differences, for a linear model and
  // for two hidden ReLU layers (away from the kinks: a random point of a random network).
  for (std::size_t layers : {0u, 1u, 2u}) {
    Mlp net(4, layers, 5);
    ASSERT_EQ(net.size(), Mlp::parameter_count(4, layers, 5));
    std::vector<double> w(net.size()), g(net.size());
    RandomStream rng(17, layers, RngPurpose::Misc, 3);
    net.initialize(w.data(), rng);
    for (double& v : w) v += 0.1 * (rng.uniform() - 0.5);  // non-zero biases too
    const double x[4] = {0.3, -0.7, 0.2, 0.9}, y = 0.4;
    net.gradient(w.data(), x, y, g.data());
    const double h = 1e-6;
    for (std::size_t j = 0; j < w.size(); ++j) {
      const double keep = w[j];
      w[j] = keep + h;
      const double up = net.forward(w.data(), x);
      w[j] = keep - h;
      const double down = net.forward(w.data(), x);
      w[j] = keep;
      const double numeric = ((up - y) * (up - y) - (down - y) * (down - y)) / (2 * h);
      EXPECT_NEAR(g[j], numeric, 1e-7 * (1.0 + std::fabs(numeric))) << layers << " layers, parameter " << j;
    }
  }
  // Appendix C's counts: Naval (d = 15) 2 × 20 → 761; UJI (d = 520) linear → 521.
  EXPECT_EQ(Mlp::parameter_count(15, 2, 20), 761u);
  EXPECT_EQ(Mlp::parameter_count(15, 3, 20), 1181u);
  EXPECT_EQ(Mlp::parameter_count(520, 0, 20), 521u);
  EXPECT_EQ(Mlp::parameter_count(520, 1, 20), 10441u);
}

TEST(FederatedStudyTest, ClientRegretAndPerClientSpread) {
  // eq. (11) with the algorithm's own kernels: OFSKL predicts with its only kernel, so its regret
  // is 0 exactly; POF-MKL's is finite and its per-client numbers have a spread.
  const Dataset data = federated_stream(4, 40, 3);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("ofskl:D=8"), parse_algorithm_spec("pof-mkl:dict=" + kDict4 + ",D=8,M=2"),
                       parse_algorithm_spec("perfedavg")};
  config.n_seeds = 2;
  config.threads = 1;
  const StudyResult result = run_study(config, data);
  ASSERT_EQ(result.results.size(), 3u);
  const AlgorithmResult& ofskl = result.results[0];
  EXPECT_EQ(ofskl.n_clients, 4u);
  EXPECT_EQ(ofskl.regret_eq11_mean, 0.0);
  const AlgorithmResult& pof = result.results[1];
  EXPECT_TRUE(std::isfinite(pof.regret_eq11_mean));
  EXPECT_GT(pof.final_std_clients, 0.0);
  EXPECT_EQ(pof.uplink_per_client_step, 2 * 2 * 8.0);  // bins of M = 2 kernels of 2D = 16 floats
  // No per-kernel predictors: no eq. (11).
  EXPECT_TRUE(std::isnan(result.results[2].regret_eq11_mean));
}

TEST(FederatedStudyTest, SpreadAcrossClientsIsThePopulationStdOfTheClientsMse) {
  // §4.6: each client's MSE over its own T samples (rows t·K + k), and their population standard
  // deviation (÷ K); with one seed the study's final_std_clients is that number.
  const std::size_t K = 4, T = 30;
  const Dataset data = federated_stream(K, T, 3);
  const std::string spec = "pof-mkl:dict=" + kDict4 + ",D=8,M=2";
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec(spec)};
  config.n_seeds = 1;
  config.base_seed = 3;
  config.threads = 1;
  const StudyResult result = run_study(config, data);
  auto algorithm = make("pof-mkl", fed_context(data), {{"dict", kDict4}, {"D", "8"}, {"M", "2"}});
  const std::vector<double> predictions = run_steps(*algorithm, data);
  std::vector<double> client_mse(K, 0.0);
  for (std::size_t row = 0; row < K * T; ++row)
    client_mse[row % K] += (predictions[row] - data.y[row]) * (predictions[row] - data.y[row]) / double(T);
  double mean = 0.0, square = 0.0;
  for (double m : client_mse) mean += m / double(K);
  for (double m : client_mse) square += (m - mean) * (m - mean) / double(K);
  EXPECT_NEAR(result.results[0].final_mean, mean, 1e-12 * mean);
  EXPECT_NEAR(result.results[0].final_std_clients, std::sqrt(square), 1e-10 * std::sqrt(square));
}

// ---- the server and its clients in separate processes (threads here) ---------------------------

#include "common/local_communicator.h"

namespace {

// One-process predictions of `name` over the whole stream.
std::vector<double> one_process(const std::string& name, const Dataset& data, const AlgoContext& c, const Params& p) {
  auto a = make(name, c, p);
  std::vector<double> out(data.n_samples * c.n_replicates());
  a->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, out.data());
  return out;
}

}  // namespace

TEST(FederatedProcessesTest, ServerAndClientsEqualOneProcessBitForBit) {
  const Dataset data = federated_stream(5, 12, 3);
  const AlgoContext c = fed_context(data, {0, 1, 2});
  struct Case {
    std::string name;
    Params params;
    bool server_theta;  // θ lives on the server (federated_theta() reads it)
  };
  const Params small{{"dict", kDict4}, {"D", "6"}};
  const std::vector<Case> cases = {
      {"pof-mkl", {{"dict", kDict4}, {"D", "6"}, {"M", "2"}}, true},
      // The step up instead of θ_{k,t+1} (the reference profile's message, upload_form.h).
      {"pof-mkl", {{"dict", kDict4}, {"D", "6"}, {"M", "2"}, {"upload", "delta"}}, true},
      {"vm-kofl", small, true},
      {"ofmkl-avg", small, true},
      {"ofskl", {{"D", "6"}}, true},
      // eM-KOFL's local copies (J_t, the copies up, their mean down, the losses up), its
      // global_only reading (J_t and the moved θ down), Fed-OMD's average every 3 rounds.
      {"em-kofl", {{"dict", kDict4}, {"D", "6"}, {"explore", "0.2"}}, false},
      {"em-kofl", {{"dict", kDict4}, {"D", "6"}, {"variant", "global_only"}}, true},
      {"ofskl", {{"D", "6"}, {"local_steps", "3"}}, false},
      // PerFedAvg: the model down, each client's upload w' up; every second-order variant.
      {"perfedavg", {}, false},
      {"perfedavg", {{"variant", "hessian_free"}, {"personalize", "none"}}, false},
      {"perfedavg", {{"variant", "exact"}, {"hidden_layers", "1"}}, false},
  };
  for (const Case& one : cases) {
    const std::string& name = one.name;
    const Params& p = one.params;
    auto reference = make(name, c, p);
    std::vector<double> expected(data.n_samples * 3);
    reference->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, expected.data());
    for (int P : {2, 3, 4, 7}) {  // 7: a client rank with no client (K = 5)
      std::vector<double> got(expected.size(), -1.0);
      CommunicationCount sent;
      std::vector<double> losses;
      std::uint64_t updates = 0;
      double server_seconds = 0.0;
      const auto errors = omkl::test::run_ranks(P, [&](Communicator& comm) {
        auto a = make(name, c, p);
        std::vector<double> out(expected.size());
        a->run_distributed(data.x.data(), data.y.data(), data.n_samples, data.n_features, out.data(), comm, 30.0);
        if (comm.rank() == 0) {
          got = out;
          sent = a->communication();
          updates = a->kernel_updates();
          server_seconds = a->server_seconds();
          losses = a->client_kernel_losses(1);
          for (std::size_t i = 0; i < 4 && one.server_theta && name != "ofskl"; ++i) {
            const auto t_dist = federated_theta(*a, 2, i), t_ref = federated_theta(*reference, 2, i);
            for (std::size_t j = 0; j < t_ref.size(); ++j) ASSERT_EQ(bits(t_dist[j]), bits(t_ref[j]));
          }
        }
      });
      for (const auto& e : errors) ASSERT_EQ(e, "") << name << " on " << P << " ranks";
      for (std::size_t i = 0; i < expected.size(); ++i)
        ASSERT_EQ(bits(got[i]), bits(expected[i])) << name << " on " << P << " ranks, value " << i;
      const CommunicationCount want = reference->communication();
      EXPECT_EQ(sent.uplink_floats, want.uplink_floats) << name;
      EXPECT_EQ(sent.downlink_floats, want.downlink_floats) << name;
      EXPECT_EQ(sent.client_steps, want.client_steps) << name;
      EXPECT_EQ(sent.max_uplink, want.max_uplink) << name;
      EXPECT_EQ(losses, reference->client_kernel_losses(1)) << name;
      EXPECT_EQ(updates, reference->kernel_updates()) << name;
      EXPECT_TRUE(std::isnan(server_seconds)) << name << ": the clients ran elsewhere (§4.6's split is unknown)";
    }
  }
}

TEST(FederatedProcessesTest, AMissingUpdateNamesTheClientAndRound) {
  const Dataset data = federated_stream(4, 6, 3);
  const AlgoContext c = fed_context(data);
  ::setenv("OMKL_FEDERATED_DROP_CLIENT", "2", 1);
  ::setenv("OMKL_FEDERATED_DROP_ROUND", "3", 1);
  for (const std::string name : {"pof-mkl", "em-kofl", "perfedavg"}) {
    const auto errors = omkl::test::run_ranks(3, [&](Communicator& comm) {
      auto a = make(name, c, name == "perfedavg" ? Params{} : Params{{"dict", kDict4}, {"D", "4"}});
      std::vector<double> out(data.n_samples);
      a->run_distributed(data.x.data(), data.y.data(), data.n_samples, data.n_features, out.data(), comm, 5.0);
    });
    EXPECT_NE(errors[0].find("no update from client 2 (rank 1) for round 3"), std::string::npos) << name << ": " << errors[0];
  }
  ::unsetenv("OMKL_FEDERATED_DROP_CLIENT");
  ::unsetenv("OMKL_FEDERATED_DROP_ROUND");
}

TEST(FederatedProcessesTest, ASilentRankIsReportedAfterTheTimeout) {
  const Dataset data = federated_stream(4, 6, 3);
  const AlgoContext c = fed_context(data);
  const auto start = std::chrono::steady_clock::now();
  const auto errors = omkl::test::run_ranks(3, [&](Communicator& comm) {
    auto a = make("vm-kofl", c, {{"dict", kDict4}, {"D", "4"}});
    std::vector<double> out(data.n_samples);
    if (comm.rank() == 2) throw std::runtime_error("rank 2 stops");  // never answers
    a->run_distributed(data.x.data(), data.y.data(), data.n_samples, data.n_features, out.data(), comm, 0.5);
  });
  const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(waited, 10.0);
  // Either rank 0 timed out naming rank 2's clients, or it was aborted by rank 2's failure first.
  EXPECT_TRUE(errors[0].find("no update from client(s) 1, 3 (rank 2) for round 1") != std::string::npos ||
              errors[0].find("aborted") != std::string::npos)
      << errors[0];
}

TEST(FederatedProcessesTest, ShardedAndFederatedStudyEqualsOneProcess) {
  // Every family: a federated stream with federated algorithms (server and clients) and a
  // random-feature baseline and an exact-kernel one (dealt out replicate by replicate).
  const Dataset data = federated_stream(3, 20, 3);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("pof-mkl:dict=" + kDict4 + ",D=6,M=2"),
                       parse_algorithm_spec("em-kofl:dict=" + kDict4 + ",D=6"),
                       parse_algorithm_spec("raker:D=6"), parse_algorithm_spec("kogd"),
                       parse_algorithm_spec("perfedavg")};
  config.n_seeds = 5;
  config.threads = 1;
  config.curve_points = 7;
  const StudyResult expected = run_study(config, data);
  for (int P : {2, 3}) {
    StudyResult got;
    const auto errors = omkl::test::run_ranks(P, [&](Communicator& comm) {
      StudyConfig mine = config;
      mine.communicator = std::shared_ptr<Communicator>(&comm, [](Communicator*) {});
      StudyResult r = run_study(mine, data);
      if (comm.rank() == 0) got = std::move(r);
      else EXPECT_TRUE(r.results.empty());
    });
    for (const auto& e : errors) ASSERT_EQ(e, "") << P << " ranks";
    ASSERT_EQ(got.results.size(), expected.results.size());
    EXPECT_EQ(got.processes, std::size_t(P));
    for (std::size_t i = 0; i < expected.results.size(); ++i) {
      const AlgorithmResult &a = got.results[i], &b = expected.results[i];
      EXPECT_EQ(bits(a.final_mean), bits(b.final_mean)) << b.spec;
      EXPECT_EQ(bits(a.final_std), bits(b.final_std)) << b.spec;
      ASSERT_EQ(a.final_per_seed.size(), b.final_per_seed.size());
      for (std::size_t k = 0; k < b.final_per_seed.size(); ++k) EXPECT_EQ(bits(a.final_per_seed[k]), bits(b.final_per_seed[k]));
      ASSERT_EQ(a.curve_mean.size(), b.curve_mean.size());
      for (std::size_t k = 0; k < b.curve_mean.size(); ++k) EXPECT_EQ(bits(a.curve_mean[k]), bits(b.curve_mean[k])) << b.spec;
      EXPECT_EQ(bits(a.final_std_clients), bits(b.final_std_clients)) << b.spec;
      EXPECT_EQ(a.uplink_per_client_step, b.uplink_per_client_step) << b.spec;
      EXPECT_EQ(a.params, b.params) << b.spec;
      if (std::isfinite(b.regret_eq11_mean)) EXPECT_EQ(bits(a.regret_eq11_mean), bits(b.regret_eq11_mean)) << b.spec;
    }
  }
}

TEST(FederatedStudyTest, BatchRegretIsTheMeanOverClientsAgainstTheRidgeComparator) {
  // §4.7 regret_batch: Σ_t (ŷ − y)² − m_t per client, m the comparator's in-sample residuals;
  // the study reports the mean over clients, i.e. (T·MSE − Σ m) / K, for every algorithm.
  const std::size_t K = 3;
  const Dataset data = federated_stream(K, 20, 2);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("pof-mkl:dict=" + kDict4 + ",D=6,M=2"), parse_algorithm_spec("perfedavg")};
  config.n_seeds = 2;
  config.threads = 1;
  config.regret = true;
  config.regret_features = 10;
  for (const RegretComparator kind : {RegretComparator::RandomFeatures, RegretComparator::Auto}) {
  config.regret_comparator = kind;  // auto: exact on these 60 rows
  const StudyResult result = run_study(config, data);
  const detail::RegretBenchmark comparator =
      kind == RegretComparator::Auto ? detail::federated_kernel_ridge(data, parse_dictionary("fed-51"), 1e-3)
                                     : detail::federated_ridge_comparator(data, parse_dictionary("fed-51"), 1e-3, 10);
  EXPECT_NE(result.regret_benchmark.find(kind == RegretComparator::Auto ? "kernel ridge" : "D = 10"), std::string::npos)
      << result.regret_benchmark;
  double total_m = 0.0;
  for (double m : comparator.residual2) total_m += m;
  EXPECT_NE(result.regret_benchmark.find(comparator.kernel), std::string::npos);
  for (const AlgorithmResult& r : result.results) {
    ASSERT_FALSE(r.regret_mean.empty()) << r.spec;
    const double expected = (r.final_mean * double(data.n_samples) - total_m) / double(K);
    EXPECT_NEAR(r.regret_mean.back(), expected, 1e-9 * std::max(1.0, std::fabs(expected))) << r.spec;
    EXPECT_TRUE(std::isfinite(r.regret_std_clients)) << r.spec;
  }
  // The comparator fits the pooled data: its loss is below every online learner's.
  EXPECT_LT(total_m, result.results[0].final_mean * double(data.n_samples));
  }
}

TEST(FederatedStudyTest, RegretLambdaAndDictNameTheComparator) {
  // StudyConfig::regret_lambda / regret_dict (--regret-lambda, --regret-dict): the batch regret's
  // comparator fitted with that λ on those kernels, both comparators; the label names a λ other
  // than 1e-3; a cached cell is not reused across them; bad values and either without --regret
  // are refused.
  const std::size_t K = 3;
  const Dataset data = federated_stream(K, 20, 2);
  const std::string dict = "gauss:1+gauss:3";
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("ofmkl-avg:dict=" + kDict4 + ",D=6")};
  config.n_seeds = 1;
  config.threads = 1;
  config.regret = true;
  config.regret_features = 10;
  config.regret_lambda = 0.25;
  config.regret_dict = dict;
  for (const RegretComparator kind : {RegretComparator::RandomFeatures, RegretComparator::Exact}) {
    config.regret_comparator = kind;
    const StudyResult result = run_study(config, data);
    const detail::RegretBenchmark comparator =
        kind == RegretComparator::Exact ? detail::federated_kernel_ridge(data, parse_dictionary(dict), 0.25)
                                        : detail::federated_ridge_comparator(data, parse_dictionary(dict), 0.25, 10);
    EXPECT_NE(result.regret_benchmark.find(comparator.kernel), std::string::npos) << result.regret_benchmark;
    EXPECT_NE(result.regret_benchmark.find("λ = 0.25"), std::string::npos) << result.regret_benchmark;
    double total_m = 0.0;
    for (double m : comparator.residual2) total_m += m;
    const AlgorithmResult& r = result.results.at(0);
    const double expected = (r.final_mean * double(data.n_samples) - total_m) / double(K);
    EXPECT_NEAR(r.regret_mean.back(), expected, 1e-9 * std::max(1.0, std::fabs(expected)));
  }
  // A larger λ fits the pooled rows worse: a larger comparator loss is subtracted, so the regret
  // shrinks.
  config.regret_comparator = RegretComparator::Exact;
  config.regret_dict.clear();
  config.regret_lambda = 1e-3;
  const double papers = run_study(config, data).results.at(0).regret_mean.back();
  config.regret_lambda = 10.0;
  EXPECT_LT(run_study(config, data).results.at(0).regret_mean.back(), papers);
  // The cell key holds them: a cached cell of another comparator is not reused.
  config.regret_lambda = 1e-3;
  const Dataset* d = &data;
  const auto key = [&](const StudyConfig& c) { return detail::cell_key(c.algorithms[0], c, *d, 1).dump(); };
  StudyConfig other = config;
  other.regret_lambda = 0.5;
  EXPECT_NE(key(config), key(other));
  other = config;
  other.regret_dict = dict;
  EXPECT_NE(key(config), key(other));
  // Refused: λ ≤ 0 or not finite, an unknown dictionary, either option without the regret.
  const auto message = [&](StudyConfig c) {
    try {
      run_study(c, data);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (double bad : {0.0, -1.0, std::numeric_limits<double>::infinity(), std::nan("")}) {
    StudyConfig c = config;
    c.regret_lambda = bad;
    EXPECT_NE(message(c).find("--regret-lambda"), std::string::npos) << bad;
  }
  StudyConfig c = config;
  c.regret_dict = "no-such-kernel:3";
  EXPECT_NE(message(c).find("--regret-dict"), std::string::npos) << message(c);
  c.regret_dict = "gauss:1+poly:2";  // no random features: refused by the random-feature comparator
  c.regret_comparator = RegretComparator::RandomFeatures;
  EXPECT_NE(message(c).find("--regret-dict: poly"), std::string::npos) << message(c);
  c = config;
  c.regret = false;
  c.regret_lambda = 0.5;
  EXPECT_NE(message(c).find("need --regret"), std::string::npos) << message(c);
}

TEST(FederatedStudyTest, ClientSideTimeIsTheLoopLessTheServersSide) {
  // §4.6: the paper's time is one client's; the nearest analogue is the loop's client-side time
  // (all but the server's aggregation and weight step) ÷ K. The host paths time their server
  // side; a walk that runs both sides in one program, and a run as processes, cannot tell them
  // apart and report none.
  const Dataset data = federated_stream(4, 10, 2);
  const AlgoContext c = fed_context(data, {0, 1});
  for (const std::string name : {"pof-mkl", "em-kofl", "perfedavg"}) {
    auto host = make(name, c, name == "perfedavg" ? Params{} : Params{{"dict", kDict4}, {"D", "6"}});
    EXPECT_EQ(host->server_seconds(), 0.0) << name;  // nothing has run yet
    run_steps(*host, data);
    EXPECT_GT(host->server_seconds(), 0.0) << name;
    auto walk = make(name, c, name == "perfedavg" ? Params{{"step_path", "resident"}}
                                                  : Params{{"dict", kDict4}, {"D", "6"}, {"step_path", "resident"}});
    EXPECT_TRUE(host->distributable()) << name;
    EXPECT_FALSE(walk->distributable()) << name << ": a resident learner's replicates are dealt out instead";
    std::vector<double> out(data.n_samples * 2);
    walk->step_block(data.x.data(), data.y.data(), data.n_samples, data.n_features, out.data());
    EXPECT_TRUE(std::isnan(walk->server_seconds())) << name;
  }
  EXPECT_TRUE(std::isnan(make("raker", c, {{"D", "4"}})->server_seconds()));
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("pof-mkl:dict=" + kDict4 + ",D=6,M=2"), parse_algorithm_spec("perfedavg"),
                       parse_algorithm_spec("vm-kofl:dict=" + kDict4 + ",D=6,step_path=resident")};
  config.n_seeds = 2;
  const StudyResult result = run_study(config, data);
  for (std::size_t i = 0; i < 2; ++i) {
    const AlgorithmResult& r = result.results[i];
    EXPECT_GT(r.client_seconds_per_client, 0.0) << r.spec;
    EXPECT_LE(r.client_seconds_per_client, r.seconds_mean / 4.0) << r.spec;  // the server's side is ≥ 0
  }
  EXPECT_TRUE(std::isnan(result.results[2].client_seconds_per_client));
}

TEST(FederatedStudyTest, ExactComparatorIsTheRandomFeatureComparatorsLimit) {
  // §4.7's exact kernel ridge against its random-feature form: as D grows the features' kernel
  // estimate converges to κ (KernelSpec::evaluate, the kernel the features are drawn for), so
  // the in-sample residuals converge to the exact ones. Past 25 000 rows the exact one is refused.
  const Dataset data = federated_stream(3, 20, 2);
  const Dictionary one = parse_dictionary("gauss:2");
  const double lambda = 0.1;  // residuals well above rounding
  const detail::RegretBenchmark exact = detail::federated_kernel_ridge(data, one, lambda);
  ASSERT_EQ(exact.residual2.size(), data.n_samples);
  const auto total = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  ASSERT_GT(total(exact.residual2), 0.0);
  std::vector<double> gaps;
  for (std::size_t D : {10u, 1000u}) {
    const detail::RegretBenchmark rf = detail::federated_ridge_comparator(data, one, lambda, D);
    gaps.push_back(std::fabs(total(rf.residual2) - total(exact.residual2)) / total(exact.residual2));
  }
  EXPECT_LT(gaps[1], 0.05) << "D = 1000";
  EXPECT_LT(gaps[1], gaps[0]) << "D = 10: " << gaps[0];
  const Dataset big = federated_stream(1, detail::kExactComparatorMaxSamples + 1, 1);  // refused before any matrix
  EXPECT_THROW(detail::federated_kernel_ridge(big, one, lambda), ConfigError);
  EXPECT_THROW(parse_regret_comparator("krr"), ConfigError);
}

TEST(FederatedTest, OfsklDrawsItsKernelFromAStreamOfItsOwn) {
  // §4.4: OFSKL's matrix is keyed by (seed, draw, "rf-ofskl"), so it is not the matrix the
  // multi-kernel methods draw for their first kernel. The same kernel and D through
  // ofmkl-avg (one kernel: the uniform mean is that kernel) then predicts otherwise, while two
  // OFSKL learners of one seed agree bit for bit.
  const Dataset data = federated_stream(2, 6, 3);
  const AlgoContext c = fed_context(data);
  const auto predictions = [&](const char* name, const Params& params) { return one_process(name, data, c, params); };
  const auto ofskl = predictions("ofskl", {{"D", "9"}});
  EXPECT_EQ(ofskl, predictions("ofskl", {{"D", "9"}}));
  const auto first_kernel = predictions("ofmkl-avg", {{"D", "9"}, {"dict", "gauss2:10"}});
  EXPECT_NE(ofskl, first_kernel);
}

TEST(FederatedTest, OfsklSigmaNamesItsOneGaussian) {
  // §4.9 ofskl.sigma: sigma=σ is dict=gauss2:σ under the authors' convention (the default, σ the
  // variance) and dict=gauss:σ under the textbook one; 10 by default. Fed-OMD's local steps read
  // it too. It and dict= together are taken only where they name the same kernel (as
  // parameters() lists them); a σ that is no bandwidth, or sigma on a multi-kernel learner, is
  // refused.
  const Dataset data = federated_stream(2, 6, 3);
  const AlgoContext c = fed_context(data);
  const auto predictions = [&](const char* name, const Params& params) { return one_process(name, data, c, params); };
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}, {"sigma", "3"}}), predictions("ofskl", {{"D", "9"}, {"dict", "gauss2:3"}}));
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}, {"sigma", "3"}, {"rbf_convention", "textbook"}}),
            predictions("ofskl", {{"D", "9"}, {"dict", "gauss:3"}}));
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}}), predictions("ofskl", {{"D", "9"}, {"sigma", "10"}}));
  EXPECT_NE(predictions("ofskl", {{"D", "9"}}), predictions("ofskl", {{"D", "9"}, {"sigma", "3"}}));
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}, {"sigma", "3"}, {"local_steps", "2"}}),
            predictions("ofskl", {{"D", "9"}, {"dict", "gauss2:3"}, {"local_steps", "2"}}));
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}, {"sigma", "3"}, {"dict", "gauss2:3.0"}}),
            predictions("ofskl", {{"D", "9"}, {"sigma", "3"}}));
  EXPECT_EQ(predictions("ofskl", {{"D", "9"}, {"sigma", "3"}, {"rbf_convention", "textbook"}, {"dict", "gauss:3"}}),
            predictions("ofskl", {{"D", "9"}, {"dict", "gauss:3"}}));
  EXPECT_NE(config_error_message("ofskl", c, {{"sigma", "3"}, {"dict", "gauss2:4"}}).find("'sigma'"), std::string::npos);
  EXPECT_NE(config_error_message("ofskl", c, {{"sigma", "3"}, {"dict", "gauss:3"}}).find("'sigma'"), std::string::npos);
  EXPECT_NE(config_error_message("ofskl", c, {{"rbf_convention", "textbook"}, {"dict", "gauss2:10"}})
                .find("'rbf_convention'"),
            std::string::npos);
  EXPECT_EQ(predictions("pof-mkl", {{"M", "1"}, {"rbf_convention", "textbook"}, {"dict", "fed-51-textbook"}}),
            predictions("pof-mkl", {{"M", "1"}, {"rbf_convention", "textbook"}}));
  EXPECT_NE(config_error_message("pof-mkl", c, {{"M", "1"}, {"rbf_convention", "textbook"}, {"dict", "fed-51"}})
                .find("'rbf_convention'"),
            std::string::npos);
  for (const char* bad : {"0", "-1", "inf", "nan"})
    EXPECT_NE(config_error_message("ofskl", c, {{"sigma", bad}}).find("sigma"), std::string::npos) << bad;
  EXPECT_NE(config_error_message("pof-mkl", c, {{"sigma", "3"}}).find("sigma"), std::string::npos);
}

TEST(FederatedTest, PerClientXiDrawsEachClientsBinsWithItsOwnXi) {
  // §1.4 with ξ_k per client (xi_per_client): client k's bin PMF is Algorithm 1's with its own
  // ξ_k, from its pre-update weights (profile reference) and its keyed uniform.
  const std::size_t K = 3;
  const Dataset data = federated_stream(K, 6, 2);
  const AlgoContext c = fed_context(data, {0}, Profile::Reference);
  const double xi[K] = {1.0, 0.2, 0.5};
  // An exponent's sign is not a separator.
  auto a = make("pof-mkl", c, {{"dict", kDict4}, {"D", "4"}, {"M", "1"}, {"eta_k", "2"}, {"xi_per_client", "1e+0+0.2+5E-1"}});
  bool saw_unequal_q = false;
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    const std::size_t k = t % K;
    const std::vector<double> log_w = federated_log_weights(*a, 0, k);
    KernelSelection expected;
    const double u = client_uniform(c.seed, 0, 0xfed00000u, k, std::int64_t(t / K + 1));
    select_kernels(log_w.data(), 4, 1, xi[k], true, u, expected);
    double p;
    a->step(data.row(t), data.y[t], &p);
    const KernelSelection& got = federated_last_selection(*a, 0);
    ASSERT_EQ(got.kernels, expected.kernels) << "step " << t;
    ASSERT_EQ(got.q, expected.q) << "step " << t;
    for (double q : got.q) EXPECT_GE(q, xi[k] / 4 - 1e-15);
    if (k == 0) for (double q : got.q) EXPECT_EQ(q, 0.25);
    saw_unequal_q = saw_unequal_q || (k == 1 && got.q.front() != got.q.back());
  }
  EXPECT_TRUE(saw_unequal_q) << "ξ = 0.2 follows the weights";
  // K values in (0, 1], and not beside xi.
  EXPECT_NE(config_error_message("pof-mkl", c, {{"xi_per_client", "1+0.5"}}).find("2 values for 3 clients"),
            std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"xi_per_client", "1+0+1"}}).find("value 2 '0'"), std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"xi_per_client", "1+1+1"}, {"xi", "1"}}).find("not both"),
            std::string::npos);
  EXPECT_NE(config_error_message("pof-mkl", c, {{"xi_per_client", "1+0.5+1"}, {"step_path", "resident"}})
                .find("different ξ"),
            std::string::npos);
}

TEST(FederatedTest, OfsklLocalStepsIsFedOmdAveragingEveryLRounds) {
  // §3.1 fedomd.local_steps = L: client k steps its own θ_k on its samples,
  // θ_k ← (1 − 2ηλ)θ_k − η·2(f − y)z, predicting with it; at the opening of rounds 1, L + 1, …
  // every θ_k becomes their mean. L = 1 is OFSKL's server step (the default path), so both paths
  // agree with this direct computation.
  const std::size_t K = 3, T = 7, d = 2, D = 3;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const double eta = 0.4, lambda = 0.02;
  const Dictionary dict = parse_dictionary("gauss2:1");
  for (const std::size_t L : {1, 2, 3}) {
    auto a = make("ofskl", c, {{"dict", "gauss2:1"}, {"D", "3"}, {"eta", "0.4"}, {"lambda", "0.02"},
                               {"local_steps", std::to_string(L)}});
    std::vector<std::vector<double>> theta(K, std::vector<double>(2 * D, 0.0));
    for (std::size_t t = 1; t <= T; ++t) {
      if ((t - 1) % L == 0) {
        std::vector<double> mean(2 * D, 0.0);
        for (std::size_t k = 0; k < K; ++k)
          for (std::size_t j = 0; j < 2 * D; ++j) mean[j] += theta[k][j];
        for (double& v : mean) v /= double(K);
        for (auto& th : theta) th = mean;
      }
      for (std::size_t k = 0; k < K; ++k) {
        const std::size_t row = (t - 1) * K + k;
        const auto z = rf_features(dict[0], D, data.row(row), d, c.seed, 0, kOfsklFrequencyStream);
        double f = 0.0;
        for (std::size_t j = 0; j < 2 * D; ++j) f += theta[k][j] * z[j];
        double got = 0.0, predicted = 0.0;
        a->predict(data.row(row), &predicted);
        a->step(data.row(row), data.y[row], &got);
        ASSERT_NEAR(got, f, 1e-12 * (1.0 + std::fabs(f))) << "L " << L << " round " << t << " client " << k;
        ASSERT_EQ(bits(predicted), bits(got)) << "L " << L << " round " << t << " client " << k;
        for (std::size_t j = 0; j < 2 * D; ++j)
          theta[k][j] = (1.0 - 2.0 * eta * lambda) * theta[k][j] - eta * 2.0 * (f - data.y[row]) * z[j];
      }
    }
    // Messages: one θ down at a period's first round and one up at its last (L = 1: both every round).
    const CommunicationCount sent = a->communication();
    std::size_t opens = 0, closes = 0;
    for (std::size_t t = 1; t <= T; ++t) {
      opens += (t - 1) % L == 0;
      closes += t % L == 0;
    }
    if (L > 1) {
      EXPECT_EQ(sent.downlink_floats, 2.0 * D * K * opens) << L;
      EXPECT_EQ(sent.uplink_floats, 2.0 * D * K * closes) << L;
    }
  }
  EXPECT_NE(config_error_message("ofskl", c, {{"local_steps", "0"}}).find("must be in [1, 1e+18], got 0"),
            std::string::npos);
  EXPECT_NE(config_error_message("ofskl", c, {{"local_steps", "2"}, {"step_path", "resident"}}).find("no resident walk"),
            std::string::npos);
}

TEST(FederatedTest, EmKoflGlobalOnlyMatchesADirectComputation) {
  // §3.4 variant=global_only: the server's θ alone. Round t: J_t from the server's weights
  // (em_kofl_draw() of the keyed uniform, explore mixed in); client k predicts f_{J_t} with the
  // global θ, reports ℓ_i = (f_i − y)² + λ‖θ_i‖² for every kernel and uploads
  // g = η(2(f_J − y)z_J + 2λθ_J); then θ_J ← θ_J − (1/K)Σ_k g and ω ← ω·exp(−η_g Σ_k ℓ).
  const std::size_t K = 2, T = 5, d = 2, D = 3, N = 2;
  const Dataset data = federated_stream(K, T, d);
  const AlgoContext c = fed_context(data);
  const double eta = 0.3, eta_g = 0.7, lambda = 0.01, explore = 0.3;
  auto a = make("em-kofl", c, {{"variant", "global_only"}, {"dict", "gauss2:0.5+gauss2:2"}, {"D", "3"},
                               {"eta", "0.3"}, {"eta_g", "0.7"}, {"lambda", "0.01"}, {"explore", "0.3"}});
  AlgoContext tracking = c;
  tracking.track_regret_regularizer = true;  // regret.include_reg: θ̄ = θ_{J_t}
  auto tracked = make("em-kofl", tracking, {{"variant", "global_only"}, {"dict", "gauss2:0.5+gauss2:2"}, {"D", "3"},
                                            {"eta", "0.3"}, {"eta_g", "0.7"}, {"lambda", "0.01"}, {"explore", "0.3"}});
  const Dictionary dict = parse_dictionary("gauss2:0.5+gauss2:2");
  std::vector<std::vector<double>> theta(N, std::vector<double>(2 * D, 0.0));
  std::vector<double> log_w(N, 0.0), w(N);
  std::size_t drawn_counts[2] = {0, 0};
  for (std::size_t t = 1; t <= T; ++t) {
    const double u = client_uniform(c.seed, 0, 0xfe000001u, 0, std::int64_t(t));
    const std::size_t J = em_kofl_draw(log_w.data(), N, explore, u, w.data());
    ++drawn_counts[J];
    std::vector<double> round_loss(N, 0.0), g_sum(2 * D, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = (t - 1) * K + k;
      const double y = data.y[row];
      double f[2], n2[2];
      std::vector<std::vector<double>> z(N);
      for (std::size_t i = 0; i < N; ++i) {
        z[i] = rf_features(dict[i], D, data.row(row), d, c.seed, 0, i);
        f[i] = n2[i] = 0.0;
        for (std::size_t j = 0; j < 2 * D; ++j) {
          f[i] += theta[i][j] * z[i][j];
          n2[i] += theta[i][j] * theta[i][j];
        }
        round_loss[i] += (f[i] - y) * (f[i] - y) + lambda * n2[i];
      }
      for (std::size_t j = 0; j < 2 * D; ++j)
        g_sum[j] += eta * (2.0 * (f[J] - y) * z[J][j] + 2.0 * lambda * theta[J][j]);
      double got = 0.0, again = 0.0;
      a->step(data.row(row), y, &got);
      ASSERT_NEAR(got, f[J], 1e-12 * (1.0 + std::fabs(f[J]))) << "round " << t << " client " << k;
      tracked->step(data.row(row), y, &again);
      ASSERT_NEAR(tracked->regret_regularizer(0), lambda * n2[J], 1e-14) << "round " << t << " client " << k;
    }
    for (std::size_t j = 0; j < 2 * D; ++j) theta[J][j] -= g_sum[j] / double(K);
    for (std::size_t i = 0; i < N; ++i) log_w[i] -= eta_g * round_loss[i];
  }
  EXPECT_GT(drawn_counts[0] * drawn_counts[1], 0u) << "both kernels drawn: the test covers J_t";
  for (std::size_t i = 0; i < N; ++i) {
    const auto got = federated_theta(*a, 0, i);
    for (std::size_t j = 0; j < 2 * D; ++j) EXPECT_NEAR(got[j], theta[i][j], 1e-12) << i << "," << j;
  }
  const auto got_w = federated_log_weights(*a, 0, 0);
  for (std::size_t i = 0; i < N; ++i) EXPECT_NEAR(got_w[i], log_w[i], 1e-12 * (1.0 + std::fabs(log_w[i])));
  // Messages: up θ_J's update and N losses, down θ_J after the server's step.
  const CommunicationCount sent = a->communication();
  EXPECT_EQ(sent.client_steps, double(K * T));
  EXPECT_EQ(sent.uplink_floats, (2.0 * D + N) * K * T);
  EXPECT_EQ(sent.downlink_floats, 2.0 * D * K * T);
  EXPECT_TRUE(a->distributable());  // server and clients as processes: FederatedProcessesTest
  EXPECT_NE(config_error_message("em-kofl", c, {{"variant", "global_only"}, {"step_path", "resident"}})
                .find("no resident walk"),
            std::string::npos);
  EXPECT_NE(config_error_message("em-kofl", c, {{"variant", "global"}}).find("local_copies"), std::string::npos);
}

// ---- regret.include_reg (spec/federated.md §4.7) ------------------------------------------------

TEST(FederatedRegretTest, IncludeRegTracksLambdaThetaBarNormOfEachPrediction) {
  // With track_regret_regularizer, after each client sample regret_regularizer(r) is λ‖θ̄‖² of
  // the parameter the client predicted with, θ̄ = Σ_i w̄_i θ_i (w̄: the client's Hedge weights,
  // the server's, or 1/N), computed here from θ and the weights read before the step; the
  // comparators gain Σ_t λ‖θ_{i,t}‖²; predictions and θ are those of the untracked learner.
  const std::size_t K = 3, T = 7;
  const Dataset data = federated_stream(K, T, 3);
  AlgoContext plain = fed_context(data, {0, 1});
  AlgoContext tracked = plain;
  tracked.track_regret_regularizer = true;
  const double lambda = 0.05;
  for (const std::string name : {"pof-mkl", "vm-kofl", "ofmkl-avg", "ofskl"}) {
    Params p = name == "ofskl" ? Params{{"D", "5"}} : Params{{"dict", kDict4}, {"D", "5"}};
    p.emplace_back("lambda", "0.05");
    if (name == "pof-mkl") p.emplace_back("M", "2");
    auto reference = make(name, plain, p);
    auto a = make(name, tracked, p);
    EXPECT_TRUE(std::isnan(reference->regret_regularizer(0))) << name;
    const std::size_t N = name == "ofskl" ? 1 : 4, R = 2;
    std::vector<double> reg_sum(R * K * N, 0.0);  // Σ_t λ‖θ_{i,t}‖² per (replicate, client, kernel)
    bool some_positive = false;
    for (std::size_t t = 0; t < data.n_samples; ++t) {
      const std::size_t client = t % K;
      std::vector<double> expected(R);
      for (std::size_t r = 0; r < R; ++r) {
        std::vector<std::vector<double>> theta(N);
        for (std::size_t i = 0; i < N; ++i) {
          theta[i] = federated_theta(*a, r, i);
          double n2 = 0.0;
          for (double v : theta[i]) n2 += v * v;
          reg_sum[(r * K + client) * N + i] += lambda * n2;
        }
        std::vector<double> w(N, 1.0 / double(N));
        const std::vector<double> log_w = federated_log_weights(*a, r, client);
        if (!log_w.empty()) {
          double sum = 0.0;
          for (std::size_t i = 0; i < N; ++i) sum += (w[i] = std::exp(log_w[i]));
          for (double& v : w) v /= sum;
        }
        std::vector<double> bar(theta[0].size(), 0.0);
        for (std::size_t i = 0; i < N; ++i)
          for (std::size_t j = 0; j < bar.size(); ++j) bar[j] += w[i] * theta[i][j];
        double n2 = 0.0;
        for (double v : bar) n2 += v * v;
        expected[r] = lambda * n2;
      }
      double got[2], want[2];
      a->step(data.row(t), data.y[t], got);
      reference->step(data.row(t), data.y[t], want);
      for (std::size_t r = 0; r < R; ++r) {
        ASSERT_EQ(bits(got[r]), bits(want[r])) << name << " step " << t;
        const double reg = a->regret_regularizer(r);
        ASSERT_NEAR(reg, expected[r], 1e-12 * std::max(1e-12, expected[r])) << name << " step " << t;
        some_positive = some_positive || reg > 0;
      }
    }
    EXPECT_TRUE(some_positive) << name;  // θ moved off 0, so the term is not vacuous
    for (std::size_t r = 0; r < R; ++r) {
      const std::vector<double> with = a->client_kernel_losses(r), without = reference->client_kernel_losses(r);
      ASSERT_EQ(with.size(), K * N);
      for (std::size_t j = 0; j < K * N; ++j)
        EXPECT_NEAR(with[j] - without[j], reg_sum[r * K * N + j], 1e-12 * (1.0 + with[j])) << name << " " << j;
    }
  }
}

TEST(FederatedRegretTest, EmKoflIncludeRegIsLambdaTimesTheSampledAverageNorm) {
  // eM-KOFL's θ̄ is the average θ̄_{J_t} every client predicts with: ŷ = θ̄_{J_t}ᵀz, so with one
  // kernel (J_t = 0) λ‖θ̄‖² is λ times the norm of the clients' average copy before the round
  // moves it, and the comparators gain Σ_t λ‖θ_{0k,t}‖² of each client's own copy.
  const std::size_t K = 3;
  const Dataset data = federated_stream(K, 6, 2);
  AlgoContext plain = fed_context(data);
  AlgoContext tracked = plain;
  tracked.track_regret_regularizer = true;
  const Params p{{"dict", "gauss2:1"}, {"D", "4"}, {"lambda", "0.1"}};
  auto reference = make("em-kofl", plain, p);
  auto a = make("em-kofl", tracked, p);
  // Every client of a round predicts with the same average, so the round's terms are equal.
  std::vector<double> terms;
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    double got = 0.0, want = 0.0;
    a->step(data.row(t), data.y[t], &got);
    reference->step(data.row(t), data.y[t], &want);
    ASSERT_EQ(bits(got), bits(want)) << t;
    terms.push_back(a->regret_regularizer(0));
  }
  EXPECT_EQ(terms[0], 0.0);  // θ starts at 0
  for (std::size_t round = 0; round < 6; ++round)
    for (std::size_t k = 1; k < K; ++k) EXPECT_EQ(bits(terms[round * K + k]), bits(terms[round * K])) << round;
  EXPECT_GT(terms.back(), 0.0);
  // With one kernel every client's copy is the average when it predicts, so each client's
  // comparator gains exactly the terms of its own samples.
  const std::vector<double> with = a->client_kernel_losses(0), without = reference->client_kernel_losses(0);
  for (std::size_t k = 0; k < K; ++k) {
    double sum = 0.0;
    for (std::size_t t = k; t < terms.size(); t += K) sum += terms[t];
    EXPECT_NEAR(with[k] - without[k], sum, 1e-12 * (1.0 + with[k])) << k;
  }
}

TEST(FederatedRegretTest, StudyIncludeRegAddsTheTermsToBothRegretsAndLeavesTheMseAlone) {
  const std::size_t K = 3;
  const Dataset data = federated_stream(K, 15, 2);
  StudyConfig config;
  config.algorithms = {parse_algorithm_spec("pof-mkl:dict=" + kDict4 + ",D=6,M=2,lambda=0.05"),
                       parse_algorithm_spec("em-kofl:dict=" + kDict4 + ",D=6,lambda=0.05")};
  config.n_seeds = 2;
  config.threads = 1;
  config.regret = true;
  config.regret_features = 10;
  const StudyResult plain = run_study(config, data);
  config.regret_include_reg = true;
  const StudyResult with = run_study(config, data);
  EXPECT_TRUE(with.regret_include_reg);
  for (std::size_t c = 0; c < 2; ++c) {
    const AlgorithmResult &a = with.results[c], &b = plain.results[c];
    EXPECT_EQ(bits(a.final_mean), bits(b.final_mean)) << b.spec;
    // From the algorithm itself, per seed: Σ_t λ‖θ̄_{k,t}‖² / K (the batch regret's addition) and
    // eq. (11), the mean over clients of Σ_t ((ŷ − y)² + λ‖θ̄‖²) − min_i Σ_t ((f_i − y)² + λ‖θ_i‖²).
    double added = 0.0, eq11 = 0.0;
    for (std::uint64_t seed = 0; seed < 2; ++seed) {
      AlgoContext ctx = fed_context(data, {seed}, Profile::Paper);
      ctx.seed = config.base_seed;
      ctx.track_regret_regularizer = true;
      const AlgorithmSpec& spec = config.algorithms[c];
      auto alg = make(spec.name, ctx, spec.params);
      std::vector<double> client(K, 0.0);
      double sum = 0.0, prediction = 0.0;
      for (std::size_t t = 0; t < data.n_samples; ++t) {
        alg->step(data.row(t), data.y[t], &prediction);
        sum += alg->regret_regularizer(0);
        client[t % K] += (prediction - data.y[t]) * (prediction - data.y[t]) + alg->regret_regularizer(0);
      }
      added += sum / double(K) / 2.0;
      const std::vector<double> comparators = alg->client_kernel_losses(0);
      const std::size_t N = comparators.size() / K;
      for (std::size_t k = 0; k < K; ++k)
        eq11 += (client[k] - *std::min_element(comparators.begin() + k * N, comparators.begin() + (k + 1) * N)) /
                double(K) / 2.0;
    }
    EXPECT_GT(added, 0.0) << b.spec;
    EXPECT_NEAR(a.regret_mean.back() - b.regret_mean.back(), added, 1e-9 * (1.0 + added)) << b.spec;
    EXPECT_NEAR(a.regret_eq11_mean, eq11, 1e-9 * (1.0 + std::fabs(eq11))) << b.spec;
    EXPECT_NE(bits(a.regret_eq11_mean), bits(b.regret_eq11_mean)) << b.spec;
  }
  // PerFedAvg has no λ; a stream without clients has no federated regret.
  const auto study_error = [&](const Dataset& stream) -> std::string {
    try {
      run_study(config, stream);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  config.algorithms = {parse_algorithm_spec("perfedavg")};
  EXPECT_NE(study_error(data).find("'perfedavg' has no λ‖θ̄‖² term"), std::string::npos) << study_error(data);
  // A graph-aided learner has a regulariser of its own (λ‖Σ w θ‖²), not the federated one.
  config.algorithms = {parse_algorithm_spec("omkl-sfg:D=4,M=2")};
  EXPECT_NE(study_error(data).find("'omkl-sfg' has no λ‖θ̄‖² term"), std::string::npos) << study_error(data);
  Dataset pooled = data;
  pooled.n_clients = 0;
  config.algorithms = {parse_algorithm_spec("raker:D=4")};
  EXPECT_NE(study_error(pooled).find("is not a federated stream"), std::string::npos) << study_error(pooled);
  // step_path=resident cannot read the terms per client sample.
  AlgoContext ctx = fed_context(data);
  ctx.track_regret_regularizer = true;
  for (const char* name : {"pof-mkl", "em-kofl"})
    EXPECT_NE(config_error_message(name, ctx, {{"dict", kDict4}, {"step_path", "resident"}}).find("regulariser terms"),
              std::string::npos)
        << name;
}

// The defaults each profile resolves (spec/federated.md §4.5, §7; ARCHITECTURE.md: the paper
// behaviour by default, the authors' code's in the reference profile). The step sizes follow
// the number of rounds T, not the rows K·T (§4.5: 1/√T with T the rounds), which a study of
// Naval's 500 rounds of 23 clients depends on.
TEST(FederatedTest, EachProfileResolvesTheSpecsDefaults) {
  const std::size_t K = 3, T = 20;
  const Dataset data = federated_stream(K, T);
  const auto resolved = [](const Algorithm& a, const std::string& key) {
    for (const auto& kv : a.resolved_params())
      if (kv.first == key) return kv.second;
    ADD_FAILURE() << "no resolved parameter '" << key << "'";
    return std::string();
  };
  const double step = 1.0 / std::sqrt(static_cast<double>(T));
  for (Profile profile : {Profile::Paper, Profile::Reference}) {
    const bool reference = profile == Profile::Reference;
    const AlgoContext c = fed_context(data, {0}, profile);
    const auto pof = make("pof-mkl", c);
    for (const char* key : {"eta", "eta_k"})
      EXPECT_NEAR(std::stod(resolved(*pof, key)), step, 1e-12 * step) << key << " " << to_string(profile);
    EXPECT_EQ(std::stod(resolved(*pof, "xi")), 1.0);
    EXPECT_EQ(std::stod(resolved(*pof, "lambda")), 1e-3);
    EXPECT_EQ(resolved(*pof, "selection_weights"), reference ? "pre_update" : "post_update");
    EXPECT_EQ(resolved(*pof, "skip_sort_if_uniform"), reference ? "false" : "true");
    EXPECT_EQ(resolved(*pof, "upload"), reference ? "delta" : "theta");
    const auto em = make("em-kofl", c);
    for (const char* key : {"eta", "eta_g"})
      EXPECT_NEAR(std::stod(resolved(*em, key)), step, 1e-12 * step) << key << " " << to_string(profile);
    EXPECT_EQ(resolved(*em, "weight_loss_reduction"), "sum");
    EXPECT_EQ(std::stod(resolved(*em, "explore")), 0.0);
    EXPECT_EQ(std::stod(resolved(*em, "lambda")), 1e-3);
  }
}
