/// @file resident_federation.h
/// @brief The server-side-kernel federations (POF-MKL, OFSKL, OFMKL-Avg, vM-KOFL;
/// spec/federated.md §1.3, §3.1–§3.3) as a device-resident program: whole rounds walked with no
/// host round trip per round (§6.2 item 5). Per round and replicate (draw):
///  A. every client's prediction by every kernel, f_ik = θ_iᵀz_i(x_k), and ‖θ_i‖² (a warp per
///     (client, kernel) pair on the GPU);
///  B. every client's step (§1.3 S2–S7): its prediction, its per-kernel losses, Algorithm 1's bin
///     from its own keyed draw (POF-MKL) or every kernel, its private weights, the coefficients
///     (a, b) of its uploads (a thread per client: clients share nothing here);
///  C. the server's sums (§1.3 S8): per kernel, the clients' uploads in ascending client order,
///     θ_i ← θ_i − (1/K)·Σ_k (a_k·u_i(x_k)·scale + b_k·θ_i), each term as the upload form has it
///     (upload_form.h) — aggregate_slot() of
///     round_aggregation.h, the code of RfBackend::aggregate_round() (a warp per kernel);
///  D. vM-KOFL's server weights from the round's reported losses, summed in client order.
/// client_step() follows global_kernels.cpp's client_step() operation for operation (its
/// kernel_selection.cpp's Algorithm 1 as OMKL_HD code over flat arrays), so the walk draws the
/// host path's bins; its numbers differ from the host path's only where sums are formed in
/// another order (the features, ‖θ‖²). The host driver below is the GPU walk's reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/host_device.h"
#include "core/kernel_weights.h"
#include "core/resident_walk.h"
#include "features/rf_backend.h"
#include "families/federated/kernel_selection.h"
#include "features/round_aggregation.h"
#include "random/stream_position.h"

namespace omkl::detail {

/// What every replicate shares.
struct FederationTables {
  int head = 0;  ///< how a client combines the kernels: 0 its private Hedge weights, 1 the server's, 2 the mean
  int bins = 1;  ///< 1: Algorithm 1's bins of M kernels; 0: every kernel, p = 1
  std::uint32_t K = 0, N = 0, M = 1, n_bins = 1;
  double xi = 1.0;
  int sort = 1;                   ///< rank the kernels before binning
  int post_update_selection = 0;  ///< Algorithm 1 ranks the weights after this step's update
  int sum_losses = 1;             ///< vM-KOFL: the clients' losses summed (else averaged)
  UploadForm upload = UploadForm::Delta;  ///< what the clients send (upload_form.h)
  double eta = 0.0, eta_w = 0.0, lambda = 0.0;
  const StreamPosition* client_streams = nullptr;  ///< R × K: client k's draw stream, position 0
};

/// Every replicate's state, R-strided (sizes per replicate in the comments).
struct FederationStates {
  double* log_w = nullptr;        ///< personal: K × N; global: N
  double* round_loss = nullptr;   ///< global: N
  double* kernel_loss = nullptr;  ///< K × N: Σ_t (f_ik − y)²
  double* norm2 = nullptr;        ///< N: ‖θ_i‖² of the round's θ
  double* f = nullptr;            ///< K × N: this round's predictions
  double* losses = nullptr;       ///< K × N: this round's per-kernel losses (vM-KOFL reports them)
  std::uint8_t* chosen = nullptr; ///< K × N: client k uploads kernel i this round
  double* a = nullptr;            ///< K × N: the upload's coefficients, where chosen
  double* b = nullptr;
  std::uint32_t* ranking = nullptr;  ///< K × N: Algorithm 1's ranking of client k
  double* q = nullptr;               ///< K × n_bins: its bin PMF
  std::uint32_t* bin = nullptr;      ///< K: its bin
  double* probability = nullptr;     ///< K: q of its bin
  std::uint32_t* n_chosen = nullptr; ///< K: |S| of client k this round
  RoundUpdate* updates = nullptr;    ///< N × K: the round's uploads by kernel, client order
  std::uint32_t* n_updates = nullptr;   ///< N
  double* chosen_total = nullptr;    ///< Σ |S| over the walk's client steps
  double* chosen_max = nullptr;      ///< max |S|
};

/// Σ softmax(a)·f over n kernels (max-shifted: the weights are only used through ratios); the
/// host path's combination too.
OMKL_HD double softmax_combine(const double* log_w, const double* f, std::size_t n) {
  double top = -INFINITY;
  for (std::size_t i = 0; i < n; ++i) top = top < log_w[i] ? log_w[i] : top;  // std::max(top, log_w[i])
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const double w = exp_or_zero(log_w[i] - top);
    num += w * f[i];
    den += w;
  }
  return num / den;
}

template <typename Philox>
struct FederationProgram {
  FederationTables tables;
  FederationStates states;

  /// global_kernels.cpp's client_step() for client k of replicate r at round t: returns its
  /// prediction; leaves its uploads in chosen/a/b.
  OMKL_HD double client_step(std::size_t r, std::uint32_t k, std::int64_t t, double y) {
    const std::size_t N = tables.N, K = tables.K, row = r * K + k;
    const double* f = states.f + row * N;
    const double* norm2 = states.norm2 + r * N;
    const double prediction = combine(r, k, f);
    double* cumulative = states.kernel_loss + row * N;
    double* losses = states.losses + row * N;
    for (std::size_t i = 0; i < N; ++i) {
      const double e2 = (f[i] - y) * (f[i] - y);
      cumulative[i] += e2;
      losses[i] = e2 + tables.lambda * norm2[i];
    }
    std::uint32_t* ranking = states.ranking + row * N;
    std::uint32_t first = 0, last = static_cast<std::uint32_t>(N);
    double probability = 1.0;
    if (tables.bins) {
      double* log_w = states.log_w + row * N;
      StreamPosition stream = tables.client_streams[row];
      stream.position = 2 * static_cast<std::uint64_t>(t - 1);
      const double u = stream.template uniform<Philox>();
      if (!tables.post_update_selection) select(row, log_w, u);
      for (std::size_t i = 0; i < N; ++i) log_w[i] -= tables.eta_w * losses[i];
      if (tables.post_update_selection) select(row, log_w, u);
      first = states.bin[row] * tables.M;
      last = first + tables.M < N ? first + tables.M : static_cast<std::uint32_t>(N);
      probability = states.probability[row];
    } else {
      for (std::uint32_t i = 0; i < N; ++i) ranking[i] = i;
      states.bin[row] = 0;
      states.probability[row] = 1.0;
    }
    // The client's update of each selected kernel (§1.3 S7): g = (η/p)(2(f − y)z + 2λθ).
    std::uint8_t* chosen = states.chosen + row * N;
    for (std::size_t i = 0; i < N; ++i) chosen[i] = 0;
    const double scale = tables.eta / probability;
    for (std::uint32_t j = first; j < last; ++j) {
      const std::uint32_t i = ranking[j];
      chosen[i] = 1;
      states.a[row * N + i] = scale * 2.0 * (f[i] - y);
      states.b[row * N + i] = scale * 2.0 * tables.lambda;
    }
    states.n_chosen[row] = last - first;
    return prediction;
  }

  /// After every client's step: the uploads by kernel in client order, the counts, and
  /// (vM-KOFL) the reported losses added to the round's, client after client.
  OMKL_HD void collect(std::size_t r) {
    const std::size_t N = tables.N, K = tables.K;
    for (std::size_t i = 0; i < N; ++i) states.n_updates[r * N + i] = 0;
    for (std::uint32_t k = 0; k < K; ++k) {
      const std::size_t row = r * K + k;
      for (std::size_t i = 0; i < N; ++i) {
        if (!states.chosen[row * N + i]) continue;
        std::uint32_t& n = states.n_updates[r * N + i];
        states.updates[(r * N + i) * K + n] = RoundUpdate{k, states.a[row * N + i], states.b[row * N + i]};
        ++n;
      }
      const double count = static_cast<double>(states.n_chosen[row]);
      states.chosen_total[r] += count;
      states.chosen_max[r] = states.chosen_max[r] < count ? count : states.chosen_max[r];
      if (tables.head == 1)
        for (std::size_t i = 0; i < N; ++i) states.round_loss[r * N + i] += states.losses[row * N + i];
    }
  }

  /// After the server's sums: vM-KOFL's global weights (close_global_weights()).
  OMKL_HD void close_round(std::size_t r) {
    if (tables.head != 1) return;
    const double reduce = tables.sum_losses ? 1.0 : 1.0 / static_cast<double>(tables.K);
    for (std::size_t i = 0; i < tables.N; ++i) {
      states.log_w[r * tables.N + i] -= tables.eta_w * reduce * states.round_loss[r * tables.N + i];
      states.round_loss[r * tables.N + i] = 0.0;
    }
  }

  /// Kernel i's uploads of the round, as aggregate_slot() reads them.
  OMKL_HD UpdateRange uploads(std::size_t r, std::size_t i) const {
    return {states.updates + (r * tables.N + i) * tables.K, 0u, states.n_updates[r * tables.N + i]};
  }

 private:
  /// softmax_combine() with the client's or the server's weights, or the mean.
  OMKL_HD double combine(std::size_t r, std::size_t k, const double* f) const {
    const std::size_t N = tables.N;
    if (tables.head == 2) {
      double sum = 0.0;
      for (std::size_t i = 0; i < N; ++i) sum += f[i];
      return sum / static_cast<double>(N);
    }
    return softmax_combine(tables.head == 0 ? states.log_w + (r * tables.K + k) * N : states.log_w + r * N, f, N);
  }

  /// kernel_selection.cpp's select_kernels(): the ranking (descending log-weight, ties by
  /// descending index: a strict order, so this insertion sort gives std::sort's result), then
  /// draw_bin(), the host's own bin masses and draw.
  OMKL_HD void select(std::size_t row, const double* log_w, double uniform) {
    const std::size_t N = tables.N, M = tables.M, m = tables.n_bins;
    std::uint32_t* ranking = states.ranking + row * N;
    for (std::uint32_t i = 0; i < N; ++i) {
      std::uint32_t j = i;
      if (tables.sort)
        while (j > 0 && (log_w[i] > log_w[ranking[j - 1]] || (log_w[i] == log_w[ranking[j - 1]] && i > ranking[j - 1]))) {
          ranking[j] = ranking[j - 1];
          --j;
        }
      ranking[j] = i;
    }
    double* q = states.q + row * m;
    const std::size_t bin = draw_bin(log_w, ranking, N, M, tables.xi, uniform, q);
    states.bin[row] = static_cast<std::uint32_t>(bin);
    states.probability[row] = q[bin];
  }
};

/// Sizes and arrays of a walk over whole rounds. x: n_rounds × K × d (row t·K + k is client k's
/// sample of round t, as the stream orders them), y: n_rounds × K, predictions n_rounds × K × R;
/// frequencies R × N × D × d, theta R × N × 2D (one slot per kernel).
template <typename Real>
struct RoundWalkArgs {
  const Real* frequencies = nullptr;
  Real* theta = nullptr;
  const Real* x = nullptr;
  const double* y = nullptr;
  double* predictions = nullptr;
  std::size_t n_rounds = 0, n_replicates = 0, n_kernels = 0, n_rff = 0, n_features = 0, n_clients = 0;
  std::int64_t t0 = 1;  ///< 1-based index of the first round
  double feature_scale = 1.0;
};

/// The host driver: phases A–D of every round, replicate after replicate, one lane.
template <typename Program>
void walk_rounds_on_host(Program& program, const RoundWalkArgs<double>& a) {
  const std::size_t R = a.n_replicates, N = a.n_kernels, D = a.n_rff, d = a.n_features, K = a.n_clients;
  for (std::size_t round = 0; round < a.n_rounds; ++round) {
    const std::int64_t t = a.t0 + static_cast<std::int64_t>(round);
    const double* x = a.x + round * K * d;
    const double* y = a.y + round * K;
    for (std::size_t r = 0; r < R; ++r) {
      for (std::size_t k = 0; k < K; ++k)
        for (std::size_t i = 0; i < N; ++i) {
          double dot, n2;
          resident_pair_features(a.frequencies + (r * N + i) * D * d, x + k * d, a.theta + (r * N + i) * 2 * D,
                                 static_cast<double*>(nullptr), D, d, a.feature_scale, 0u, 1u, dot, n2);
          program.states.f[(r * K + k) * N + i] = dot;
          if (k == 0) program.states.norm2[r * N + i] = n2;
        }
      for (std::uint32_t k = 0; k < K; ++k)
        a.predictions[(round * K + k) * R + r] = program.client_step(r, k, t, y[k]);
      program.collect(r);
      for (std::size_t i = 0; i < N; ++i)
        aggregate_slot(a.frequencies + (r * N + i) * D * d, x, d, a.theta + (r * N + i) * 2 * D, D,
                       program.uploads(r, i), a.feature_scale, 1.0 / static_cast<double>(K), program.tables.upload, 0u,
                       1u);
      program.close_round(r);
    }
  }
}

/// Every replicate's state in one arena; view(base) points FederationStates into a copy.
class FederationStateData {
 public:
  FederationStateData(const FederationTables& tables, std::size_t n_replicates);
  FederationStates view(void* base) const;
  FederationStates view() { return view(bytes_.data()); }
  void* data() { return bytes_.data(); }
  std::size_t size_bytes() const { return bytes_.size() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> bytes_;
  std::size_t log_w_, round_loss_, kernel_loss_, norm2_, f_, losses_, chosen_, a_, b_, ranking_, q_, bin_,
      probability_, n_chosen_, updates_, n_updates_, chosen_total_, chosen_max_;
};

/// The program on the GPU (resident_federation.cu; in a build without CUDA src/cuda/no_cuda.cpp's,
/// whose constructor throws): a block per replicate walks the rounds.
class FederationDeviceWalk {
 public:
  /// Uploads the client streams (R × K) on the lease's stream.
  FederationDeviceWalk(const std::vector<StreamPosition>& client_streams, const DeviceLease& lease);
  ~FederationDeviceWalk();
  FederationDeviceWalk(const FederationDeviceWalk&) = delete;
  FederationDeviceWalk& operator=(const FederationDeviceWalk&) = delete;
  /// `shape` gives the sizes and t0 (its pointers are ignored); x and y host, predictions host.
  void walk(const FederationTables& tables, FederationStateData& state, const DeviceLease& lease,
            const RoundWalkArgs<double>& shape, const double* x, const double* y, double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace omkl::detail
