// The server-side-kernel federations as a resident program over whole rounds
// (resident_federation.h), run by its host driver: the clients' bins must be the host path's
// (the same last selection, the same uploads and message counts), the predictions, weights
// and θ the host path's within the rounding of the features, and the state must go back where
// the host path keeps it (checkpoints). The GPU runs the same program
// (CudaTest.ResidentFederationWalkEqualsTheHostPath, skipped without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/test_helpers.h"
#include "core/state_io.h"
#include "families/federated/federated.h"
#include "families/federated/kernel_selection.h"

using namespace omkl;
using namespace omkl::detail;
using omkl::test::expect_close;
using omkl::test::make;
using omkl::test::run_blocks;
using omkl::test::run_steps;
using omkl::test::with_param;

namespace {

using Params = std::vector<std::pair<std::string, std::string>>;

constexpr std::size_t kClients = 4;

Dataset federation_stream(std::size_t rounds) { return omkl::test::federated_stream(kClients, rounds, 3, 19); }

AlgoContext fed_context(const Dataset& data, Profile profile, std::vector<std::uint64_t> replicates) {
  return omkl::test::federated_context(data, profile, std::move(replicates));
}

struct Case {
  const char* name;
  Profile profile;
  Params params;
};

std::vector<Case> cases() {
  const Params dict = {{"dict", "gauss2:0.5+gauss2:1+gauss2:2+gauss2:4+gauss2:8"}, {"D", "6"}};
  const auto plus = [&](Params extra) {
    Params p = dict;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };
  return {
      {"pof-mkl", Profile::Paper, plus({{"M", "1"}})},
      {"pof-mkl", Profile::Reference, plus({{"M", "2"}})},                       // pre-update ranking, sorted
      {"pof-mkl", Profile::Paper, plus({{"M", "2"}, {"xi", "0.4"}})},            // exploration < 1: the ranking matters
      {"pof-mkl", Profile::Paper, plus({{"M", "5"}})},                           // one bin
      {"ofmkl-avg", Profile::Paper, dict},
      {"vm-kofl", Profile::Paper, dict},
      {"vm-kofl", Profile::Paper, plus({{"weight_loss_reduction", "mean"}})},
      {"ofskl", Profile::Paper, {{"D", "6"}}},
      // The upload forms each profile does not default to (upload_form.h).
      {"pof-mkl", Profile::Reference, plus({{"M", "2"}, {"upload", "theta"}})},
      {"vm-kofl", Profile::Paper, plus({{"upload", "delta"}})},
  };
}

}  // namespace

TEST(ResidentFederationTest, WalkMakesTheHostPathsRounds) {
  const Dataset data = federation_stream(30);
  for (const Case& c : cases()) {
    const auto ctx = fed_context(data, c.profile, {0, 3});
    auto host = make(c.name, ctx, with_param(c.params, "step_path", "host"));
    const auto expected = run_steps(*host, data);
    // Blocks of whole rounds, and of 7 rows (rounds split across blocks: the partial rounds
    // take the host path).
    for (std::size_t block : {kClients * 5, std::size_t{7}}) {
      auto walk = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
      const auto got = run_blocks(*walk, data, block);
      const std::string what = std::string(c.name) + " " + c.params.back().first + "=" + c.params.back().second +
                               " block " + std::to_string(block);
      for (std::size_t i = 0; i < got.size(); ++i) expect_close(expected[i], got[i], what + " row " + std::to_string(i));
      EXPECT_EQ(walk->kernel_updates(), host->kernel_updates()) << what;
      const CommunicationCount ch = host->communication(), cw = walk->communication();
      EXPECT_EQ(cw.uplink_floats, ch.uplink_floats) << what;
      EXPECT_EQ(cw.downlink_floats, ch.downlink_floats) << what;
      EXPECT_EQ(cw.max_uplink, ch.max_uplink) << what;
      EXPECT_EQ(cw.client_steps, ch.client_steps) << what;
      for (std::size_t r = 0; r < 2; ++r) {
        const KernelSelection& sh = federated_last_selection(*host, r);
        const KernelSelection& sw = federated_last_selection(*walk, r);
        EXPECT_EQ(sw.bin, sh.bin) << what;
        EXPECT_EQ(sw.kernels, sh.kernels) << what;
        EXPECT_EQ(sw.ranking, sh.ranking) << what;
        expect_close(sh.probability, sw.probability, what + " p");
        for (std::size_t k = 0; k < kClients; ++k) {
          const auto wh = federated_log_weights(*host, r, k), ww = federated_log_weights(*walk, r, k);
          ASSERT_EQ(ww.size(), wh.size());
          for (std::size_t i = 0; i < wh.size(); ++i) expect_close(wh[i], ww[i], what + " log w");
        }
        for (std::size_t i = 0; i < (std::string(c.name) == "ofskl" ? 1u : 5u); ++i) {
          const auto th = federated_theta(*host, r, i), tw = federated_theta(*walk, r, i);
          for (std::size_t j = 0; j < th.size(); ++j) expect_close(th[j], tw[j], what + " θ");
        }
      }
    }
  }
}

// One walk of many rounds and walks of one round each leave the same state, bit for bit.
TEST(ResidentFederationTest, OneWalkEqualsRoundByRound) {
  const Dataset data = federation_stream(24);
  for (const Case& c : cases()) {
    const auto ctx = fed_context(data, c.profile, {1, 2});
    auto whole = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    auto rounds = make(c.name, ctx, with_param(c.params, "step_path", "resident"));
    const auto a = run_blocks(*whole, data, data.n_samples);
    const auto b = run_blocks(*rounds, data, kClients);
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], b[i]) << c.name << " " << i;
    StateWriter sa, sb;
    whole->save_state(sa);
    rounds->save_state(sb);
    EXPECT_EQ(sa.bytes(), sb.bytes()) << c.name;
  }
}

// A checkpoint written after resident rounds continues on the host path, and the reverse.
TEST(ResidentFederationTest, CheckpointsCrossBetweenThePaths) {
  const Dataset data = federation_stream(20);
  for (const Case& c : cases()) {
    const auto ctx = fed_context(data, c.profile, {0, 1});
    for (const char* first : {"host", "resident"}) {
      const char* second = std::string(first) == "host" ? "resident" : "host";
      auto a = make(c.name, ctx, with_param(c.params, "step_path", first));
      run_blocks(*a, data, kClients * 2, 0, kClients * 10);
      StateWriter out;
      a->save_state(out);
      const auto expected = run_blocks(*a, data, kClients * 3, kClients * 10);
      auto b = make(c.name, ctx, with_param(c.params, "step_path", second));
      StateReader in(out.bytes());
      b->load_state(in);
      const auto got = run_blocks(*b, data, kClients * 3, kClients * 10);
      for (std::size_t i = 0; i < got.size(); ++i)
        expect_close(expected[i], got[i], std::string(c.name) + " " + first + " → " + second);
    }
  }
}
