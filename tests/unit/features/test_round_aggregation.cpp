// The federated round's server aggregation as host/device code (round_aggregation.h): its host
// driver against the CPU backend's aggregate_round(), on random θ, frequencies and updates in
// random order (several per slot, slots without any), with either upload form (upload_form.h).
// The GPU runs the same aggregate_group() with 32 lanes
// (CudaTest.NativeAggregateRoundMatchesTheCpuBackend).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "features/random_features.h"
#include "features/rf_backend.h"
#include "features/round_aggregation.h"
#include "features/upload_form.h"
#include "random/rng.h"

using namespace omkl;
using namespace omkl::detail;

namespace {

// `count` updates of random replicates, clients and coefficients; slot S − 1 gets none.
std::vector<ClientUpdate> random_updates(RandomStream& rng, int count, std::size_t R, std::size_t S,
                                         std::size_t n_clients) {
  std::vector<ClientUpdate> updates;
  for (int i = 0; i < count; ++i) {
    ClientUpdate u;
    u.replicate = static_cast<std::uint32_t>(rng.below(R));
    u.slot = static_cast<std::uint32_t>(rng.below(S - 1));
    u.client = static_cast<std::uint32_t>(rng.below(n_clients));
    u.a = 2.0 * rng.uniform() - 1.0;
    u.b = 0.1 * rng.uniform();
    updates.push_back(u);
  }
  return updates;
}

// Two replicates, three Gaussian kernels, four slots (kernel 1 twice), D = 7, d = 4: the problem
// of the base-round tests, and its frequency matrices drawn from `rng` into every backend given.
RfProblem round_problem() {
  RfProblem problem;
  problem.n_replicates = 2;
  problem.n_kernels = 3;
  problem.n_rff = 7;
  problem.n_features = 4;
  problem.slot_kernel = {0, 1, 2, 1};
  problem.feature_scale = 1.0 / std::sqrt(7.0);
  return problem;
}

void draw_round_frequencies(RandomStream& rng, const std::vector<RfBackend*>& backends) {
  const RfProblem& p = backends.front()->problem();
  for (std::size_t r = 0; r < p.n_replicates; ++r)
    for (std::size_t k = 0; k < p.n_kernels; ++k) {
      const auto m = draw_frequencies(KernelSpec::gaussian(0.5 + k), p.n_rff, p.n_features, RfKind::Rf, rng);
      for (RfBackend* b : backends) b->set_frequencies(r, k, m.data());
    }
}

constexpr UploadForm kForms[] = {UploadForm::Delta, UploadForm::Theta};

const char* name(UploadForm form) { return form == UploadForm::Theta ? "theta" : "delta"; }

}  // namespace

// By hand, at 2^54 (doubles 2 apart there, 4 apart above): a client's θ − g rounds to even, so
// the server's θ − (θ − g) is the step to that rounding; a step as large as θ comes back whole.
TEST(UploadFormTest, TheServerTakesBackTheStepTheUploadedThetaRounded) {
  const double theta = 0x1p54;
  EXPECT_EQ(server_term(theta, 1.0, UploadForm::Delta), 1.0);
  EXPECT_EQ(uploaded_value(theta, 1.0, UploadForm::Delta), 1.0);
  EXPECT_EQ(uploaded_value(theta, 1.0, UploadForm::Theta), theta);  // 2^54 − 1: a tie, to even 2^54
  EXPECT_EQ(server_term(theta, 1.0, UploadForm::Theta), 0.0);
  EXPECT_EQ(server_term(theta, 3.0, UploadForm::Theta), 4.0);  // 2^54 − 3: a tie, to even 2^54 − 4
  EXPECT_EQ(server_term(theta, -1.0, UploadForm::Theta), 0.0);   // 2^54 + 1: to the nearer 2^54
  EXPECT_EQ(server_term(theta, -3.0, UploadForm::Theta), -4.0);  // 2^54 + 3: to the nearer 2^54 + 4
  EXPECT_EQ(server_term(0.75, 0.5, UploadForm::Theta), 0.5);  // exact where nothing rounds
  EXPECT_EQ(received_step(theta, uploaded_value(theta, 3.0, UploadForm::Theta), UploadForm::Theta), 4.0);
  EXPECT_EQ(server_term(1.0f, 0x1p-25f, UploadForm::Theta), 0.0f);  // float: below half an ulp of 1
  EXPECT_EQ(server_term(1.0f, 0x1p-23f, UploadForm::Theta), 0x1p-23f);
}

TEST(RoundAggregationTest, GroupsKeepCallOrderWithinASlot) {
  std::vector<ClientUpdate> updates = {{1, 2, 0, 0.1, 0.2}, {0, 1, 3, 0.3, 0.4}, {1, 2, 5, 0.5, 0.6}, {0, 1, 1, 0.7, 0.8}};
  std::vector<RoundUpdate> sorted;
  std::vector<RoundGroup> groups;
  group_round_updates(updates.data(), updates.size(), 4, [](std::uint32_t slot) { return slot % 2; }, sorted, groups);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].replicate, 0u);
  EXPECT_EQ(groups[0].slot, 1u);
  EXPECT_EQ(groups[0].kernel, 1u);
  EXPECT_EQ(groups[0].first, 0u);
  EXPECT_EQ(groups[0].last, 2u);
  EXPECT_EQ(sorted[0].client, 3u);  // call order: client 3 before client 1
  EXPECT_EQ(sorted[1].client, 1u);
  EXPECT_EQ(groups[1].replicate, 1u);
  EXPECT_EQ(groups[1].slot, 2u);
  EXPECT_EQ(groups[1].kernel, 0u);
  EXPECT_EQ(sorted[2].client, 0u);
  EXPECT_EQ(sorted[3].client, 5u);
}

TEST(RoundAggregationTest, HostDriverEqualsTheCpuBackend) {
  RfProblem problem;
  problem.n_replicates = 3;
  problem.n_kernels = 4;
  problem.n_rff = 9;
  problem.n_features = 5;
  problem.slot_kernel = {0, 1, 2, 3, 1};  // slot 4 shares kernel 1's features
  problem.feature_scale = 1.0 / 3.0;
  auto cpu = make_rf_backend(BackendKind::Cpu, problem);
  const std::size_t R = 3, P = 4, S = 5, D = 9, d = 5, n_clients = 6;
  RandomStream rng(11, 0, RngPurpose::Misc);
  std::vector<double> V(R * P * D * d), theta(R * S * 2 * D), x(n_clients * d);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < P; ++k) {
      const auto m = draw_frequencies(KernelSpec::gaussian(0.4 + 0.6 * k), D, d, RfKind::Rf, rng);
      std::copy(m.begin(), m.end(), V.begin() + static_cast<std::ptrdiff_t>((r * P + k) * D * d));
      cpu->set_frequencies(r, k, m.data());
    }
  for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
  for (double& v : x) v = 3.0 * rng.uniform() - 1.5;
  const std::vector<ClientUpdate> updates = random_updates(rng, 40, R, S, n_clients);
  const double scale = 0.25;
  for (UploadForm form : kForms) {
    SCOPED_TRACE(name(form));
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t s = 0; s < S; ++s) cpu->set_theta(r, s, theta.data() + (r * S + s) * 2 * D);
    std::vector<double> norm2(R * S);
    cpu->aggregate_round(x.data(), n_clients, updates.data(), updates.size(), scale, form, norm2.data());

    std::vector<RoundUpdate> sorted;
    std::vector<RoundGroup> groups;
    group_round_updates(
        updates.data(), updates.size(), S, [&](std::uint32_t slot) { return problem.slot_kernel[slot]; }, sorted,
        groups);
    // Lanes split the features with no exchange: 3 lanes one after another give the same bits as 1.
    std::vector<double> expected = theta, three_lanes = theta;
    for (const RoundGroup& g : groups) {
      const double* Vg = V.data() + (g.replicate * P + g.kernel) * D * d;
      aggregate_group(Vg, x.data(), d, expected.data() + (g.replicate * S + g.slot) * 2 * D, D, sorted.data(),
                      g.first, g.last, problem.feature_scale, scale, form, 0u, 1u);
      for (unsigned lane = 0; lane < 3; ++lane)
        aggregate_group(Vg, x.data(), d, three_lanes.data() + (g.replicate * S + g.slot) * 2 * D, D, sorted.data(),
                        g.first, g.last, problem.feature_scale, scale, form, lane, 3u);
    }
    EXPECT_EQ(three_lanes, expected);
    std::vector<double> got(2 * D);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t s = 0; s < S; ++s) {
        cpu->get_theta(r, s, got.data());
        double n2 = 0.0;
        for (std::size_t j = 0; j < 2 * D; ++j) {
          const double want = expected[(r * S + s) * 2 * D + j];
          EXPECT_NEAR(got[j], want, 1e-13 * std::max(1.0, std::fabs(want))) << r << " " << s << " " << j;
          n2 += want * want;
        }
        EXPECT_NEAR(norm2[r * S + s], n2, 1e-12 * n2);
        if (s == S - 1)  // no update: θ unchanged, bit for bit
          for (std::size_t j = 0; j < 2 * D; ++j) EXPECT_EQ(got[j], theta[(r * S + s) * 2 * D + j]);
      }
  }
}

// RfBackend's own aggregate_round() (the CUDA backend's default round: θ read and written in one
// transfer each) against the CPU backend's override, on the same θ, frequencies and updates.
TEST(RoundAggregationTest, BaseRoundEqualsTheCpuBackend) {
  const RfProblem problem = round_problem();
  const std::size_t R = 2, S = 4, D = 7, d = 4, n_clients = 5;
  auto fast = make_rf_backend(BackendKind::Cpu, problem);
  auto base = make_rf_backend(BackendKind::Cpu, problem);
  RandomStream rng(12, 0, RngPurpose::Misc);
  draw_round_frequencies(rng, {fast.get(), base.get()});
  std::vector<double> theta(R * S * 2 * D), x(n_clients * d);
  for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
  fast->set_all_theta(theta.data());
  base->set_all_theta(theta.data());
  for (int round = 0; round < 4; ++round) {
    const UploadForm form = kForms[round % 2];
    for (double& v : x) v = 2.0 * rng.uniform() - 1.0;
    const std::vector<ClientUpdate> updates = random_updates(rng, 12, R, S, n_clients);
    std::vector<double> norm_fast(R * S), norm_base(R * S);
    fast->aggregate_round(x.data(), n_clients, updates.data(), updates.size(), 0.2, form, norm_fast.data());
    base->RfBackend::aggregate_round(x.data(), n_clients, updates.data(), updates.size(), 0.2, form,
                                     norm_base.data());
    std::vector<double> got_fast(theta.size()), got_base(theta.size());
    fast->get_all_theta(got_fast.data());
    base->get_all_theta(got_base.data());
    for (std::size_t i = 0; i < theta.size(); ++i)
      EXPECT_NEAR(got_base[i], got_fast[i], 1e-13 * std::max(1.0, std::fabs(got_fast[i]))) << "round " << round << " " << i;
    for (std::size_t j = 0; j < R * S; ++j) {
      EXPECT_NEAR(norm_base[j], norm_fast[j], 1e-12 * norm_fast[j]) << "round " << round << " slot row " << j;
      double n2 = 0.0;  // the norms are of θ after the round
      for (std::size_t e = 0; e < 2 * D; ++e) n2 += got_base[j * 2 * D + e] * got_base[j * 2 * D + e];
      EXPECT_EQ(norm_base[j], n2);
    }
    for (std::size_t r = 0; r < R; ++r)  // the slot without updates keeps its θ bit for bit
      for (std::size_t e = 0; e < 2 * D; ++e)
        EXPECT_EQ(got_base[(r * S + S - 1) * 2 * D + e], theta[(r * S + S - 1) * 2 * D + e]);
  }
}

// A server in another process (the MPI federation) adds the clients' client_update() vectors in
// client order; with RfBackend's own client_update() and aggregate_round() (the CUDA backend's
// defaults) that must give the one-process round's θ bit for bit, as the CPU backend's pair does
// (FederatedMpiTest and tests/mpi). The two once took their sines from different functions. With
// upload=theta the client sends θ − g and the server takes θ less that (upload_form.h's halves).
TEST(RoundAggregationTest, BaseClientUpdatesAddUpToTheBaseRound) {
  const std::size_t R = 2, S = 4, D = 7, d = 4, n_clients = 5;
  auto backend = make_rf_backend(BackendKind::Cpu, round_problem());
  RandomStream rng(13, 0, RngPurpose::Misc);
  draw_round_frequencies(rng, {backend.get()});
  std::vector<double> theta(R * S * 2 * D), x(n_clients * d);
  for (double& v : theta) v = 2.0 * rng.uniform() - 1.0;
  for (double& v : x) v = 4.0 * rng.uniform() - 2.0;
  const std::vector<ClientUpdate> updates = random_updates(rng, 14, R, S, n_clients);
  const double scale = 0.2;
  std::vector<double> rounds[2];
  for (UploadForm form : kForms) {
    backend->set_all_theta(theta.data());
    // The remote server: per (replicate, slot), the updates' values taken back and added in call order.
    std::vector<double> acc(R * S * 2 * D, 0.0), g(2 * D);
    for (const ClientUpdate& u : updates) {
      backend->RfBackend::client_update(u.replicate, u.slot, x.data() + u.client * d, u.a, u.b, g.data());
      const std::size_t row = (u.replicate * S + u.slot) * 2 * D;
      for (std::size_t e = 0; e < 2 * D; ++e) {
        const double sent = uploaded_value(theta[row + e], g[e], form);  // the client's message
        acc[row + e] += received_step(theta[row + e], sent, form);       // the server's reading of it
      }
    }
    std::vector<double> remote(theta.size());
    for (std::size_t i = 0; i < theta.size(); ++i) remote[i] = theta[i] - scale * acc[i];
    backend->RfBackend::aggregate_round(x.data(), n_clients, updates.data(), updates.size(), scale, form, nullptr);
    std::vector<double> local(theta.size());
    backend->get_all_theta(local.data());
    for (std::size_t i = 0; i < theta.size(); ++i) ASSERT_EQ(remote[i], local[i]) << name(form) << " " << i;
    rounds[form == UploadForm::Theta] = local;
  }
  // The two forms are the same round up to θ's rounding, and not the same bits.
  EXPECT_NE(rounds[0], rounds[1]);
  for (std::size_t i = 0; i < theta.size(); ++i) EXPECT_NEAR(rounds[1][i], rounds[0][i], 1e-15) << i;
}
