// The federated family (spec/federated.md) against direct computations, round by round: POF-MKL
// with bins (M < N, §1.3 S5–S8, §1.4, §7 C4/C5), the vM-KOFL and OFMKL-Avg heads (§3.2–§3.3) and
// eM-KOFL's local copies (§3.4). Only the data, the frequencies and the keyed uniforms come from
// the library; every update is recomputed here from the spec's equations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <numeric>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common/test_helpers.h"
#include "families/federated/federated.h"
#include "families/federated/federated_config.h"
#include "features/random_features.h"
#include "omkl/kernel_spec.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::bits;
using omkl::test::make;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;
using Vec = std::vector<double>;

const std::string kFourGaussians = "gauss2:0.5+gauss2:1+gauss2:2+gauss2:4";

// The keyed streams the library draws its uniforms from (as test_federated.cpp addresses them):
// client k's Algorithm 1 draw of round t is client_uniform(seed, replicate, kClientSelectionStreams,
// k, t); eM-KOFL's server draw of J_t is client_uniform(seed, replicate, kServerDrawStream, 0, t).
constexpr std::uint64_t kClientSelectionStreams = 0xfed00000u;
constexpr std::uint64_t kServerDrawStream = 0xfe000001u;

// Absolute below 1, relative above: θ and log w grow with the 1/p-scaled steps (up to η·m/ξ).
constexpr double kTolerance = 1e-12;
double tolerance(double expected) { return kTolerance * (1.0 + std::fabs(expected)); }

// A parameter value that reads back as exactly `v`.
std::string decimal(double v) {
  std::ostringstream out;
  out << std::setprecision(17) << v;
  return out.str();
}

double dot(const Vec& a, const Vec& b) { return std::inner_product(a.begin(), a.end(), b.begin(), 0.0); }

// z_i(x) of every kernel of a dictionary (§1.1): the frequencies every federated learner draws,
// stream (seed, replicate, Frequencies, i), z = [sin, cos]/√D.
class KernelFeatures {
 public:
  KernelFeatures(const std::string& dict, std::size_t D, std::size_t d, std::uint64_t seed, std::uint64_t replicate)
      : D_(D), d_(d) {
    const Dictionary dictionary = parse_dictionary(dict);
    for (std::size_t i = 0; i < dictionary.size(); ++i) {
      RandomStream rng(seed, replicate, RngPurpose::Frequencies, i);
      V_.push_back(draw_frequencies(dictionary[i], D, d, RfKind::Rf, rng));
    }
  }
  std::size_t n_kernels() const { return V_.size(); }
  Vec z(std::size_t i, const double* x) const {
    Vec out(2 * D_);
    feature_map(V_[i].data(), D_, d_, x, 1.0 / std::sqrt(double(D_)), out.data());
    return out;
  }
  std::vector<Vec> all(const double* x) const {
    std::vector<Vec> out;
    for (std::size_t i = 0; i < n_kernels(); ++i) out.push_back(z(i, x));
    return out;
  }

 private:
  std::size_t D_, d_;
  std::vector<Vec> V_;
};

// §1.1 loss ℓ = (f − y)² + λ‖θ‖² and its gradient 2(f − y)z + 2λθ.
double loss(double f, double y, const Vec& theta, double lambda) {
  return (f - y) * (f - y) + lambda * dot(theta, theta);
}
Vec gradient(double f, double y, const Vec& z, const Vec& theta, double lambda) {
  Vec g(z.size());
  for (std::size_t j = 0; j < z.size(); ++j) g[j] = 2.0 * (f - y) * z[j] + 2.0 * lambda * theta[j];
  return g;
}
// v += scale·g
void add_scaled(Vec& v, double scale, const Vec& g) {
  for (std::size_t j = 0; j < v.size(); ++j) v[j] += scale * g[j];
}

// Normalised weights from log-weights (§1.4 numerics: max-shifted).
Vec softmax(const Vec& log_w) {
  const double top = *std::max_element(log_w.begin(), log_w.end());
  Vec w(log_w.size());
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = std::exp(log_w[i] - top);
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  for (double& v : w) v /= total;
  return w;
}

// §1.4 step 5: I = min{j : u ≤ Σ_{l ≤ j} pmf_l}, the last index when rounding leaves the sum short.
std::size_t inverse_cdf(const Vec& pmf, double u) {
  double cumulative = 0.0;
  for (std::size_t j = 0; j < pmf.size(); ++j) {
    cumulative += pmf[j];
    if (u <= cumulative) return j;
  }
  return pmf.size() - 1;
}

// Algorithm 1 (§1.4) from its steps: rank by descending weight, ties by descending index (or
// index order when the sort is skipped, §7 C5), cut into m = ⌈N/M⌉ bins of M, bin masses,
// q_j = (1 − ξ)u_j/U + ξ/m, one inverse-CDF draw; S = the drawn bin, p = q_I.
struct Selection {
  std::vector<std::uint32_t> kernels;
  Vec q;
  double p = 1.0;
};
Selection algorithm1(const Vec& log_w, std::size_t M, double xi, bool sort, double u) {
  const std::size_t N = log_w.size(), m = (N + M - 1) / M;
  std::vector<std::uint32_t> order(N);
  std::iota(order.begin(), order.end(), 0u);
  if (sort) {
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::make_pair(log_w[a], a) < std::make_pair(log_w[b], b);  // ascending by (weight, index) ...
    });
    std::reverse(order.begin(), order.end());  // ... then reversed (§1.4 step 1 tie rule)
  }
  const Vec w = softmax(log_w);  // u_j/U is scale-free: normalised weights give the same ratios
  Selection s;
  s.q.assign(m, 0.0);
  for (std::size_t r = 0; r < N; ++r) s.q[r / M] += w[order[r]];
  for (double& q : s.q) q = (1.0 - xi) * q + xi / double(m);
  const std::size_t bin = inverse_cdf(s.q, u);
  s.kernels.assign(order.begin() + bin * M, order.begin() + std::min(N, (bin + 1) * M));
  s.p = s.q[bin];
  return s;
}

void expect_vectors_near(const Vec& got, const Vec& expected, const std::string& where) {
  ASSERT_EQ(got.size(), expected.size()) << where;
  for (std::size_t j = 0; j < got.size(); ++j)
    EXPECT_NEAR(got[j], expected[j], tolerance(expected[j])) << where << " [" << j << "]";
}

// eq. (11)'s comparators (§1.8, §3.5): the library's Σ_t (f_ik,t − y)² of every client k and
// kernel i (client-major) against the direct computation's.
void expect_comparators(const Algorithm& alg, const std::vector<Vec>& kernel_loss, const std::string& where) {
  const Vec got = alg.client_kernel_losses(0);
  const std::size_t N = kernel_loss.front().size();
  ASSERT_EQ(got.size(), kernel_loss.size() * N) << where;
  for (std::size_t k = 0; k < kernel_loss.size(); ++k)
    expect_vectors_near(Vec(got.begin() + k * N, got.begin() + (k + 1) * N), kernel_loss[k],
                        where + ", eq. (11) comparators of client " + std::to_string(k));
}

// The round's samples: row (t − 1)·K + k is client k's sample of round t (§4.3).
std::size_t row_of(std::size_t t, std::size_t k, std::size_t K) { return (t - 1) * K + k; }

// ---- POF-MKL --------------------------------------------------------------------------------

// The sizes of the POF-MKL direct computations (K clients, T rounds, N = 4 kernels of kFourGaussians).
constexpr std::size_t kPofK = 3, kPofT = 5, kPofD = 3, kPofDim = 3;
constexpr double kPofEta = 0.3, kPofEtaK = 2.0, kPofLambda = 0.01;

struct PofMklCase {
  Profile profile = Profile::Reference;
  std::size_t M = 2;
  double xi = 0.3;
  bool post_update = false;  // §7 C4: which weights Algorithm 1 ranks (what the case expects)
  bool sort = true;          // §7 C5: false when ξ = 1 and skip_sort_if_uniform
  Params switches;           // selection switches given explicitly (empty: the profile's defaults)
  std::string name() const {
    return to_string(profile) + " M=" + std::to_string(M) + " xi=" + decimal(xi) +
           (post_update ? " post_update" : " pre_update") + (sort ? " sorted" : " unsorted");
  }
};

struct PofMklObservations {
  bool saw_non_uniform_q = false;
  std::size_t unselected_nonzero_kernels = 0;      // kernels no client chose whose θ was already ≠ 0
  std::vector<std::vector<std::uint32_t>> chosen;  // S_{k,t} of every client step, in stream order
};

// POF-MKL, one round at a time (§1.3): every client predicts with its private Hedge weights
// (S3), computes every kernel's loss (S4), selects a bin by Algorithm 1 on the pre- or
// post-update weights (S5, §7 C4), reweights every kernel (S6) and uploads (η/p)∇ℓ of its bin
// (S7); the server subtracts (1/K)·Σ over the clients that chose kernel i (S8, divisor K). θ,
// every client's log-weights, the selections, the predictions and eq. (11)'s comparators are
// compared every round.
PofMklObservations check_pof_mkl(const PofMklCase& c) {
  const std::size_t K = kPofK, T = kPofT, D = kPofD, d = kPofDim;
  const Dataset data = omkl::test::federated_stream(K, T, d, 11);
  const AlgoContext context = omkl::test::federated_context(data, c.profile, {0});
  Params params{
      {"dict", kFourGaussians},          {"M", std::to_string(c.M)},   {"D", std::to_string(D)},       {"xi", decimal(c.xi)},
      {"eta", decimal(kPofEta)}, {"eta_k", decimal(kPofEtaK)}, {"lambda", decimal(kPofLambda)}};
  params.insert(params.end(), c.switches.begin(), c.switches.end());
  auto alg = make("pof-mkl", context, params);
  const KernelFeatures features(kFourGaussians, D, d, context.seed, 0);
  const std::size_t N = features.n_kernels();

  PofMklObservations seen;
  std::vector<Vec> theta(N, Vec(2 * D, 0.0));
  std::vector<Vec> log_w(K, Vec(N, 0.0));
  std::vector<Vec> kernel_loss(K, Vec(N, 0.0));  // eq. (11)'s comparators: Σ_t (f_ik − y)², global θ
  for (std::size_t t = 1; t <= T; ++t) {
    const std::vector<Vec> theta_t = theta;  // the broadcast θ_t (S1)
    std::vector<Vec> library_theta_t(N);     // the library's θ_t, for the bit-for-bit check of S8
    for (std::size_t i = 0; i < N; ++i) library_theta_t[i] = federated_theta(*alg, 0, i);
    std::vector<Vec> step_sum(N, Vec(2 * D, 0.0));
    std::vector<bool> chosen_by_someone(N, false);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = row_of(t, k, K);
      const double* x = data.row(row);
      const double y = data.y[row];
      const std::vector<Vec> z = features.all(x);
      Vec f(N), losses(N);
      for (std::size_t i = 0; i < N; ++i) {
        f[i] = dot(theta_t[i], z[i]);
        losses[i] = loss(f[i], y, theta_t[i], kPofLambda);
        kernel_loss[k][i] += (f[i] - y) * (f[i] - y);
      }
      const Vec w = softmax(log_w[k]);
      const double expected_prediction = dot(w, f);  // S3, eq. (6)
      const double u = client_uniform(context.seed, 0, kClientSelectionStreams, k, std::int64_t(t));
      Selection sel;
      if (!c.post_update) sel = algorithm1(log_w[k], c.M, c.xi, c.sort, u);
      for (std::size_t i = 0; i < N; ++i) log_w[k][i] -= kPofEtaK * losses[i];  // S6: every kernel
      if (c.post_update) sel = algorithm1(log_w[k], c.M, c.xi, c.sort, u);
      for (std::uint32_t i : sel.kernels) {  // S7: g = (η/p)(2(f − y)z + 2λθ)
        add_scaled(step_sum[i], kPofEta / sel.p, gradient(f[i], y, z[i], theta_t[i], kPofLambda));
        chosen_by_someone[i] = true;
      }
      seen.saw_non_uniform_q |= std::any_of(sel.q.begin(), sel.q.end(), [&](double q) { return q != sel.q[0]; });
      seen.chosen.push_back(sel.kernels);

      double prediction = 0.0;
      alg->step(x, y, &prediction);
      const std::string where = c.name() + ", round " + std::to_string(t) + ", client " + std::to_string(k);
      EXPECT_NEAR(prediction, expected_prediction, tolerance(expected_prediction)) << where;
      const KernelSelection& got = federated_last_selection(*alg, 0);
      EXPECT_EQ(got.kernels, sel.kernels) << where;
      expect_vectors_near(got.q, sel.q, where + ", q");
    }
    // S8: θ_{i,t+1} = θ_{i,t} − (1/K)·Σ_{k ∈ C_i} g_ik; the divisor is K, not |C_i|.
    for (std::size_t i = 0; i < N; ++i) add_scaled(theta[i], -1.0 / double(K), step_sum[i]);
    const std::string after = c.name() + ", after round " + std::to_string(t);
    for (std::size_t i = 0; i < N; ++i) {
      const Vec got = federated_theta(*alg, 0, i);
      expect_vectors_near(got, theta[i], after + ", θ_" + std::to_string(i));
      if (chosen_by_someone[i]) continue;
      // A kernel no client chose keeps its parameter, bit for bit (S8).
      for (std::size_t j = 0; j < got.size(); ++j)
        EXPECT_EQ(bits(got[j]), bits(library_theta_t[i][j])) << after << ", unchosen θ_" << i << "[" << j << "]";
      seen.unselected_nonzero_kernels += dot(library_theta_t[i], library_theta_t[i]) > 0.0;
    }
    for (std::size_t k = 0; k < K; ++k)
      expect_vectors_near(federated_log_weights(*alg, 0, k), log_w[k],
                          after + ", log w of client " + std::to_string(k));
    expect_comparators(*alg, kernel_loss, after);
  }
  return seen;
}

// ---- vM-KOFL and OFMKL-Avg --------------------------------------------------------------------

enum class GlobalHead { Hedge, Uniform };

// vM-KOFL (§3.3) or OFMKL-Avg (§3.2), one round at a time: every client predicts with the
// server's softmax(log ω)ᵀf (vM-KOFL) or the mean (1/N)Σ f_i (OFMKL-Avg), uploads η∇ℓ_ik of
// every kernel (p = 1); the server steps θ_i by (1/K)Σ_k and, for vM-KOFL, sets
// log ω_i −= η_g·L_i with L_i the clients' losses summed, or averaged (`mean_reduction`).
// Predictions every step; θ, log ω and the message counts every round.
void check_global_head(GlobalHead head, bool mean_reduction) {
  const std::size_t K = 3, T = 5, D = 3, d = 3;
  const double eta = 0.3, eta_g = 0.7, lambda = 0.01;
  const Dataset data = omkl::test::federated_stream(K, T, d, 11);
  const AlgoContext context = omkl::test::federated_context(data, Profile::Reference, {0});
  const std::string name = head == GlobalHead::Hedge ? "vm-kofl" : "ofmkl-avg";
  Params params{{"dict", kFourGaussians}, {"D", std::to_string(D)}, {"eta", decimal(eta)}, {"lambda", decimal(lambda)}};
  if (head == GlobalHead::Hedge) params.emplace_back("eta_g", decimal(eta_g));
  if (mean_reduction) params.emplace_back("weight_loss_reduction", "mean");
  auto alg = make(name, context, params);
  const KernelFeatures features(kFourGaussians, D, d, context.seed, 0);
  const std::size_t N = features.n_kernels();
  const std::string label = name + (mean_reduction ? " (mean)" : "");

  std::vector<Vec> theta(N, Vec(2 * D, 0.0));
  Vec log_omega(N, 0.0);
  std::vector<Vec> kernel_loss(K, Vec(N, 0.0));  // eq. (11)'s comparators
  for (std::size_t t = 1; t <= T; ++t) {
    std::vector<Vec> step_sum(N, Vec(2 * D, 0.0));
    Vec round_loss(N, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = row_of(t, k, K);
      const double* x = data.row(row);
      const double y = data.y[row];
      Vec f(N);
      for (std::size_t i = 0; i < N; ++i) {
        const Vec z = features.z(i, x);
        f[i] = dot(theta[i], z);
        round_loss[i] += loss(f[i], y, theta[i], lambda);
        kernel_loss[k][i] += (f[i] - y) * (f[i] - y);
        add_scaled(step_sum[i], eta, gradient(f[i], y, z, theta[i], lambda));
      }
      const double expected =
          head == GlobalHead::Hedge ? dot(softmax(log_omega), f) : std::accumulate(f.begin(), f.end(), 0.0) / double(N);
      double prediction = 0.0;
      alg->step(x, y, &prediction);
      EXPECT_NEAR(prediction, expected, tolerance(expected)) << label << ", round " << t << ", client " << k;
    }
    const double reduce = mean_reduction ? 1.0 / double(K) : 1.0;
    for (std::size_t i = 0; i < N; ++i) {
      add_scaled(theta[i], -1.0 / double(K), step_sum[i]);
      log_omega[i] -= eta_g * reduce * round_loss[i];
    }
    const std::string after = label + ", after round " + std::to_string(t);
    for (std::size_t i = 0; i < N; ++i)
      expect_vectors_near(federated_theta(*alg, 0, i), theta[i], after + ", θ_" + std::to_string(i));
    if (head == GlobalHead::Hedge)
      expect_vectors_near(federated_log_weights(*alg, 0, 0), log_omega, after + ", log ω");
    else
      EXPECT_TRUE(federated_log_weights(*alg, 0, 0).empty()) << label;
    expect_comparators(*alg, kernel_loss, after);
  }
  // §2.2 / §6.3: up every kernel's 2D floats (and vM-KOFL's N losses); down every θ (and ω̄).
  const double per_step = 2.0 * D * N + (head == GlobalHead::Hedge ? double(N) : 0.0);
  const CommunicationCount sent = alg->communication();
  EXPECT_EQ(sent.client_steps, double(K * T)) << label;
  EXPECT_EQ(sent.uplink_floats, per_step * K * T) << label;
  EXPECT_EQ(sent.downlink_floats, per_step * K * T) << label;
  EXPECT_EQ(sent.max_uplink, per_step) << label;
}

// ---- eM-KOFL --------------------------------------------------------------------------------

// Two kernels of far-apart bandwidths, so that their losses, and hence the weights, part quickly.
const std::string kEmKoflDict = "gauss2:0.1+gauss2:4";

struct EmKoflObservations {
  std::size_t drawn[2] = {0, 0};  // rounds that drew kernel 0, kernel 1 (kEmKoflDict)
  // The first round whose J would differ had the server reduced the losses the other way (sum
  // ↔ mean); 0 if none. Until then every prediction is the same under both reductions.
  std::size_t first_round_the_reduction_shows = 0;
};

// eM-KOFL, variant=local_copies (§3.4), one round at a time: the server draws J_t from
// π = (1 − explore)·softmax(log ω) + explore/N, averages the clients' copies of kernel J_t and sets
// every copy to the average θ̄; client k predicts θ̄ᵀz_J, computes every copy's loss
// ℓ_ik = (θ_ikᵀz_i − y)² + λ‖θ_ik‖² and steps every copy θ_ik −= η∇ℓ_ik; the server sets
// log ω −= η_g·L with L the losses summed (or averaged) over clients. The untracked learner's
// predictions every step; the tracked learner's (regret.include_reg) too, and its per-client
// Σ_t ℓ_ik of the copies (the losses the weights move by) every round; message counts.
EmKoflObservations check_em_kofl(bool mean_reduction) {
  const std::size_t K = 2, T = 6, D = 3, d = 3;
  const double eta = 0.3, eta_g = 0.7, lambda = 0.01, explore = 0.3;
  const Dataset data = omkl::test::federated_stream(K, T, d, 11);
  // The weights reach the predictions only through J_t, so the keys (seed 4: the frequencies and
  // the server's uniforms) and the dictionary are chosen to make some draw within the T rounds
  // depend on them; the returned observations check that it does.
  AlgoContext context = omkl::test::federated_context(data, Profile::Reference, {0});
  context.seed = 4;
  AlgoContext tracking = context;
  tracking.track_regret_regularizer = true;  // client_kernel_losses() then holds Σ_t ℓ_ik, λ‖θ_ik‖² included
  Params params{{"dict", kEmKoflDict},     {"D", std::to_string(D)},    {"eta", decimal(eta)},
                {"eta_g", decimal(eta_g)}, {"lambda", decimal(lambda)}, {"explore", decimal(explore)}};
  if (mean_reduction) params.emplace_back("weight_loss_reduction", "mean");
  auto plain = make("em-kofl", context, params);  // variant=local_copies by default
  auto tracked = make("em-kofl", tracking, params);
  const KernelFeatures features(kEmKoflDict, D, d, context.seed, 0);
  const std::size_t N = features.n_kernels();
  const std::string label = std::string("em-kofl") + (mean_reduction ? " (mean)" : " (sum)");

  EmKoflObservations seen;
  std::vector<std::vector<Vec>> copies(K, std::vector<Vec>(N, Vec(2 * D, 0.0)));  // θ_ik
  std::vector<Vec> kernel_loss(K, Vec(N, 0.0));                                   // Σ_t ℓ_ik
  Vec log_omega(N, 0.0), log_omega_other(N, 0.0);
  const auto draw = [&](const Vec& log_w, double u) {
    Vec pi = softmax(log_w);
    for (double& p : pi) p = (1.0 - explore) * p + explore / double(N);
    return inverse_cdf(pi, u);
  };
  for (std::size_t t = 1; t <= T; ++t) {
    // Steps 1–3: J_t, the average of the clients' copies, every copy set to it.
    const double u = client_uniform(context.seed, 0, kServerDrawStream, 0, std::int64_t(t));
    const std::size_t J = draw(log_omega, u);
    ++seen.drawn[J];
    if (seen.first_round_the_reduction_shows == 0 && draw(log_omega_other, u) != J)
      seen.first_round_the_reduction_shows = t;
    Vec average(2 * D, 0.0);
    for (std::size_t k = 0; k < K; ++k) add_scaled(average, 1.0 / double(K), copies[k][J]);
    for (std::size_t k = 0; k < K; ++k) copies[k][J] = average;
    // Steps 4–5: predict with the average, then every copy steps on its own loss.
    Vec round_loss(N, 0.0);
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t row = row_of(t, k, K);
      const double* x = data.row(row);
      const double y = data.y[row];
      const double expected = dot(average, features.z(J, x));
      for (std::size_t i = 0; i < N; ++i) {
        const Vec z = features.z(i, x);
        const double f = dot(copies[k][i], z);
        const double l = loss(f, y, copies[k][i], lambda);
        round_loss[i] += l;
        kernel_loss[k][i] += l;
        add_scaled(copies[k][i], -eta, gradient(f, y, z, copies[k][i], lambda));
      }
      for (Algorithm* alg : {plain.get(), tracked.get()}) {
        double prediction = 0.0;
        alg->step(x, y, &prediction);
        EXPECT_NEAR(prediction, expected, tolerance(expected))
            << label << (alg == tracked.get() ? " tracked" : "") << ", round " << t << ", client " << k << ", J " << J;
      }
    }
    // Step 6: ω_{t+1} = ω_t·exp(−η_g·L_t); the other reduction tracked for the sensitivity check.
    const double reduce = mean_reduction ? 1.0 / double(K) : 1.0, other = mean_reduction ? 1.0 : 1.0 / double(K);
    for (std::size_t i = 0; i < N; ++i) {
      log_omega[i] -= eta_g * reduce * round_loss[i];
      log_omega_other[i] -= eta_g * other * round_loss[i];
    }
    const Vec losses = tracked->client_kernel_losses(0);
    for (std::size_t k = 0; k < K; ++k)
      expect_vectors_near(
          Vec(losses.begin() + k * N, losses.begin() + (k + 1) * N), kernel_loss[k],
          label + ", Σ_t ℓ of client " + std::to_string(k) + "'s copies after round " + std::to_string(t));
  }
  // §2.2: up θ_{J_t,k} (2D) and N losses; down θ̄_{J_t} (J_t, an index, is free).
  const CommunicationCount sent = plain->communication();
  EXPECT_EQ(sent.client_steps, double(K * T)) << label;
  EXPECT_EQ(sent.uplink_floats, (2.0 * D + N) * K * T) << label;
  EXPECT_EQ(sent.downlink_floats, 2.0 * D * K * T) << label;
  return seen;
}

}  // namespace

// §1.3 S5–S8 with M < N, in both profiles: the reference profile ranks the pre-update weights
// and uploads g (the authors' code); the paper profile ranks the post-update weights (Algorithm 2's
// order, §7 C4) and uploads θ_{k,t+1} (§7 C1, equal to g up to rounding). ξ = 0.3 and η_k = 2
// make q follow the weights from the first reweighting on.
TEST(FederatedDirectTest, PofMklWithBinsMatchesADirectComputation) {
  for (const std::size_t M : {2, 1}) {
    PofMklCase reference;
    reference.M = M;
    const PofMklObservations a = check_pof_mkl(reference);
    PofMklCase paper;
    paper.profile = Profile::Paper;
    paper.M = M;
    paper.post_update = true;
    const PofMklObservations b = check_pof_mkl(paper);
    for (const PofMklObservations* seen : {&a, &b}) {
      EXPECT_TRUE(seen->saw_non_uniform_q) << "M = " << M << ": q never followed the weights";
      // M = 1: three clients choose one kernel of four each, so some kernel stays unchosen
      // every round; after round 1 some such kernel has already moved off θ = 0.
      if (M == 1) EXPECT_GT(seen->unselected_nonzero_kernels, 0u) << "no unchosen kernel with θ ≠ 0";
    }
    EXPECT_NE(a.chosen, b.chosen) << "M = " << M << ": pre- and post-update selections never differed";
  }
}

// §7 C4/C5 inside the learner with ξ = 1 (q = 1/m whatever the weights): the switches decide
// only which kernels travel together. Each combination given explicitly, and the paper profile's
// defaults (post_update, skip_sort_if_uniform = true: bins in index order).
TEST(FederatedDirectTest, PofMklSelectionSwitchesMatchADirectComputation) {
  const auto with_switches = [](Profile profile, bool post_update, bool skip_sort) {
    PofMklCase c;
    c.profile = profile;
    c.xi = 1.0;
    c.post_update = post_update;
    c.sort = !skip_sort;
    c.switches = {{"selection_weights", post_update ? "post_update" : "pre_update"},
                  {"skip_sort_if_uniform", skip_sort ? "true" : "false"}};
    return c;
  };
  const PofMklObservations pre_sorted = check_pof_mkl(with_switches(Profile::Reference, false, false));
  const PofMklObservations post_sorted = check_pof_mkl(with_switches(Profile::Reference, true, false));
  const PofMklObservations unsorted = check_pof_mkl(with_switches(Profile::Reference, false, true));
  PofMklCase paper_defaults;
  paper_defaults.profile = Profile::Paper;
  paper_defaults.xi = 1.0;
  paper_defaults.post_update = true;
  paper_defaults.sort = false;
  const PofMklObservations paper = check_pof_mkl(paper_defaults);
  for (const PofMklObservations* seen : {&pre_sorted, &post_sorted, &unsorted, &paper})
    EXPECT_FALSE(seen->saw_non_uniform_q) << "ξ = 1: q = 1/m";
  // The switches are visible: sorted and index-order bins differ from the first round on (at t = 1
  // the ranking is 3, 2, 1, 0), and ranking before or after the reweighting differs somewhere.
  EXPECT_NE(pre_sorted.chosen, unsorted.chosen);
  EXPECT_NE(pre_sorted.chosen, post_sorted.chosen);
  EXPECT_EQ(unsorted.chosen, paper.chosen) << "without the sort the weights do not enter the selection";
}

// §3.3 vM-KOFL (server Hedge weights, both reductions of the clients' losses) and §3.2
// OFMKL-Avg (the uniform mean): the same θ recursion with p = 1, different heads.
TEST(FederatedDirectTest, VmKoflAndOfmklAvgHeadsMatchADirectComputation) {
  check_global_head(GlobalHead::Hedge, false);
  check_global_head(GlobalHead::Hedge, true);
  check_global_head(GlobalHead::Uniform, false);
}

// §3.4 eM-KOFL's default variant=local_copies, η ≠ η_g, explore = 0.3, with both reductions of
// the clients' losses (kofl.weight_loss_reduction).
TEST(FederatedDirectTest, EmKoflLocalCopiesMatchADirectComputation) {
  for (const bool mean_reduction : {false, true}) {
    const EmKoflObservations seen = check_em_kofl(mean_reduction);
    EXPECT_GT(seen.drawn[0] * seen.drawn[1], 0u) << "both kernels drawn: the test covers J_t";
    // The weights reach the predictions only through J_t: make sure a wrong reduction would show.
    EXPECT_GT(seen.first_round_the_reduction_shows, 0u) << "mean = " << mean_reduction;
  }
}
