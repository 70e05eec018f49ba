/// @file federated_config.h
/// @brief What the federated kernel algorithms share (spec/federated.md §1–§4): the clients of a
/// federated stream, the 51-Gaussian dictionary and its bandwidth convention, D chosen from the
/// per-client upload budget (§2.2), the step sizes and λ; and the ledger that counts every float
/// sent up and down and refuses an upload over the cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/algorithm_base.h"
#include "core/wall_time.h"
#include "features/rf_ensemble.h"

namespace omkl::detail {

/// The most clients per round a federated algorithm takes: each holds its own copy of the
/// model, so a count given by mistake (1e9) is refused before they are allocated.
constexpr std::int64_t kMaxClients = 1000000;

/// K: clients per round. Parameter `clients`, by default the federated stream's
/// (AlgoContext::n_clients); a stream whose length is not whole rounds is refused.
std::size_t read_clients(ParamReader& params, const AlgoContext& context);

/// The kernels: `rbf_convention` (author: ρ ~ N(0, σ⁻¹I); textbook: N(0, σ⁻²I), §4.4) and `dict`
/// (default fed-51, or the convention's form of `single_default` for a one-kernel learner, which
/// then must name exactly one kernel).
Dictionary read_federated_dictionary(ParamReader& params, bool single_kernel, double single_sigma,
                                     std::string* text);

/// The upload budget of §2.2: `max_upload` floats per client-step (1000) and `max_D` (100); `D`
/// defaults to the largest value whose upload — `kernels_per_upload` vectors of 2D floats plus
/// `extra_floats` scalars — fits, capped at max_D. An explicit D over the budget is refused.
std::size_t read_budgeted_D(ParamReader& params, std::size_t kernels_per_upload, std::size_t extra_floats,
                            double* max_upload);

/// Step sizes and ridge: η (θ) and the kernel-weight step, read as `weight_step_key` (eta_k for
/// client weights, eta_g for the server's; none when empty), both 1/√T by default with T the
/// rounds of the stream (§1.5); λ (1e-3, §4.5).
struct FederatedSteps {
  double eta = 0.0;
  double eta_w = 0.0;
  double lambda = 1e-3;
};
FederatedSteps read_federated_steps(ParamReader& params, const AlgoContext& context, std::size_t n_clients,
                                    const std::string& weight_step_key);

/// The random-feature configuration of a federated learner: i.i.d. Gaussian frequencies from the
/// library's keyed streams (the first D rows of a longer draw, so configurations with different
/// D share their first frequencies, §4.4; `share_prefix_across_D=false` keys the streams by D
/// instead), z = [sin, cos]/√D, squared loss. Reads `precision` (double | float: the float
/// feature map of RfProblem::single_precision).
RfEnsembleConfig federated_features(ParamReader& params, const Dictionary& dictionary, const std::string& text,
                                    std::size_t n_rff, double lambda);

/// OFSKL's frequency matrix ("rf-ofskl", spec/federated.md §4.4): its own Frequencies stream,
/// far from the multi-kernel dictionaries' 0 … N − 1 (and the bandit family's Ω at 0xb0b0).
inline constexpr std::uint64_t kOfsklFrequencyStream = 0x0f5c1000u;

/// Why a federated learner that keeps the regret's regulariser terms
/// (AlgoContext::track_regret_regularizer) cannot walk resident: they are read after every
/// client sample, which the host path does.
inline constexpr const char* kRegularizerOnHostPath =
    "the regret's regulariser terms (--regret-include-reg, regret.include_reg) are read after every client sample, "
    "on the host path";

/// The wall time of a federation's server side on the host path (ServerClock::time() around its
/// aggregation and weight step; Algorithm::server_seconds()). A walk that runs both sides in one
/// program, or a run as processes, makes it unknown (NaN) from then on.
class ServerClock {
 public:
  template <typename Server>
  void time(Server&& server) {
    add_wall_time(seconds_, server);
  }
  void unknown() { known_ = false; }
  double seconds() const { return known_ ? seconds_ : std::numeric_limits<double>::quiet_NaN(); }

 private:
  double seconds_ = 0.0;
  bool known_ = true;
};

/// Counts the floats of every message (§2.1: payload only, headers are free) and refuses an
/// upload over the cap: the budget is checked where the message is formed, not assumed.
class CommunicationLedger {
 public:
  explicit CommunicationLedger(double max_upload = 0.0, CommunicationCount totals = {})
      : max_upload_(max_upload), totals_(totals) {}
  /// One client's step: what it received and what it sent. Throws Error for an upload over the cap.
  void client_step(double downlink, double uplink);
  /// n client steps at once, each receiving `downlink`, together sending `uplink_total`, the
  /// largest `uplink_max` (the resident walk's tally): the totals client_step() would reach.
  void client_steps(double n, double downlink, double uplink_total, double uplink_max);
  const CommunicationCount& totals() const { return totals_; }
  /// The upload cap (0: none).
  double cap() const { return max_upload_; }

 private:
  double max_upload_;
  CommunicationCount totals_;
};

/// Checkpoints: the weights every kernel federation keeps beside θ — log-weights (client or
/// server), the round's reported losses, each client's per-kernel losses (the regret's
/// comparators) — written, and read back with their sizes and values checked: log_w holds
/// weight vectors of `n_kernels` each, none of them all −∞ (all zero: a vector that is counts in
/// out.non_finite() when written, so that such a model is not saved), and the losses are ≥ 0.
void write_federated_weights(StateWriter& out, const std::vector<double>& log_w, const std::vector<double>& round_loss,
                             const std::vector<double>& kernel_loss, std::size_t n_kernels);
void read_federated_weights(StateReader& in, std::vector<double>& log_w, std::vector<double>& round_loss,
                            std::vector<double>& kernel_loss, std::size_t n_kernels);

/// The uniform of client `client`'s draw at round t (1-based) of replicate `replicate`: word 2(t−1)
/// of the counter-based stream (seed, replicate, Selection, `stream_base` + client), so a draw is
/// addressed by (seed, replicate, client, t) alone — any process and any device can make it.
double client_uniform(std::uint64_t seed, std::uint64_t replicate, std::uint64_t stream_base, std::size_t client,
                      std::int64_t t);

}  // namespace omkl::detail
