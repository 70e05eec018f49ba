/// @file resident_em_kofl.h
/// @brief eM-KOFL (spec/federated.md §3.4; em_kofl.cpp) as a device-resident program on the
/// per-step seam (core/resident_walk.h): one step per client sample, every replicate's state in
/// device memory, no host round trip between samples or rounds.
///  - plan(): the sample's client k and round t; at a round's first client, the server's kernel
///    J_t from its Hedge weights and the replicate's keyed draw (em_kofl_draw(), the host path's
///    code); the step's pairs are client k's N copies (slots k·N + i), rate η, shrink 1 − 2ηλ;
///  - mix(): at a round's first client, every client's copy of kernel J_t replaced by their mean,
///    summed in ascending client order (the host path's order, entry by entry);
///  - learn(): the prediction f_J, the client's per-kernel losses, and at the round's last client
///    the server's weights ω ← ω·exp(−η_g·L).
/// Its numbers differ from the host path's only where the features' sums are formed in another
/// order. The host driver (walk_on_host) is the GPU walk's reference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/host_device.h"
#include "core/kernel_weights.h"
#include "core/resident_walk.h"
#include "core/state_device_walk.h"
#include "features/rf_backend.h"
#include "random/stream_position.h"

namespace omkl::detail {

/// §3.4 step 1: J_t ~ π = (1 − explore)·ω̄ + explore/N by inverse CDF of `uniform`, ω̄ the
/// max-shifted softmax of the log-weights (w: N entries of scratch); the last kernel when
/// rounding leaves the sum short.
OMKL_HD std::size_t em_kofl_draw(const double* log_w, std::size_t N, double explore, double uniform, double* w) {
  double top = -INFINITY;
  for (std::size_t i = 0; i < N; ++i) top = top < log_w[i] ? log_w[i] : top;  // std::max(top, log_w[i])
  double total = 0.0;
  for (std::size_t i = 0; i < N; ++i) total += (w[i] = exp_or_zero(log_w[i] - top));
  double cumulative = 0.0;
  for (std::size_t i = 0; i < N; ++i) {
    cumulative += (1.0 - explore) * (w[i] / total) + explore / static_cast<double>(N);
    if (uniform <= cumulative) return i;
  }
  return N - 1;
}

/// What every replicate shares.
struct EmKoflTables {
  std::uint32_t K = 0, N = 0;
  double eta = 0.0, eta_w = 0.0, lambda = 0.0, explore = 0.0;
  int sum_losses = 1;  ///< the server's loss: the clients' summed (else averaged)
};

/// Every replicate's state, R-strided.
struct EmKoflStates {
  StreamPosition* server_stream = nullptr;  ///< 1: the J_t stream at position 0 (read at 2(t − 1))
  double* log_w = nullptr;                  ///< N: the server's weights ω
  double* round_loss = nullptr;             ///< N: the round's reported losses
  double* kernel_loss = nullptr;            ///< K × N: Σ_t (f_ik − y)² with the local copies
  double* scratch = nullptr;                ///< N
  std::uint32_t* sampled = nullptr;         ///< 1: J_t of the round in progress
  std::uint8_t* opening = nullptr;          ///< 1: this step opens a round
};

template <typename Philox>
struct EmKoflProgram {
  static constexpr bool kMixesSlots = true;
  EmKoflTables tables;
  EmKoflStates states;

  /// The client of the step at 1-based sample t, and its round.
  OMKL_HD std::uint32_t client_of(std::int64_t t) const { return static_cast<std::uint32_t>((t - 1) % tables.K); }
  OMKL_HD std::int64_t round_of(std::int64_t t) const { return (t - 1) / static_cast<std::int64_t>(tables.K) + 1; }

  OMKL_HD std::size_t plan(std::size_t r, std::int64_t t, ResidentPair* pairs) {
    const std::size_t N = tables.N;
    const std::uint32_t client = client_of(t);
    states.opening[r] = client == 0 ? 1 : 0;
    if (client == 0) {
      StreamPosition stream = states.server_stream[r];
      stream.position = 2 * static_cast<std::uint64_t>(round_of(t) - 1);
      const double u = stream.template uniform<Philox>();
      states.sampled[r] = static_cast<std::uint32_t>(em_kofl_draw(states.log_w + r * N, N, tables.explore, u, states.scratch + r * N));
    }
    for (std::size_t i = 0; i < N; ++i) {
      pairs[i].slot = static_cast<std::uint32_t>(client * N + i);
      pairs[i].kernel = static_cast<std::uint32_t>(i);
      pairs[i].rate = tables.eta;
      pairs[i].shrink = 1.0 - 2.0 * tables.eta * tables.lambda;
      pairs[i].box = 0.0;
    }
    return N;
  }

  /// §3.4 steps 2–3: θ̄_J = (1/K)·Σ_k θ_{J,k} into every client's copy of J.
  template <typename Real>
  OMKL_HD void mix(std::size_t r, std::int64_t /*t*/, Real* theta, std::size_t D, unsigned lane, unsigned n_lanes) {
    if (!states.opening[r]) return;
    const std::size_t N = tables.N, K = tables.K, J = states.sampled[r], D2 = 2 * D;
    for (std::size_t j = lane; j < D2; j += n_lanes) {
      Real mean = Real(0);
      for (std::size_t k = 0; k < K; ++k) mean += theta[(k * N + J) * D2 + j];
      mean /= static_cast<Real>(K);
      for (std::size_t k = 0; k < K; ++k) theta[(k * N + J) * D2 + j] = mean;
    }
  }

  /// §3.4 steps 4–6: the prediction with the averaged kernel, the client's losses, and at the
  /// round's end the server's weights.
  OMKL_HD double learn(std::size_t r, std::int64_t t, double y, const double* f, const double* norm2,
                       ResidentPair* /*pairs*/) {
    const std::size_t N = tables.N, K = tables.K;
    const std::uint32_t client = client_of(t);
    double* cumulative = states.kernel_loss + (r * K + client) * N;
    double* round_loss = states.round_loss + r * N;
    for (std::size_t i = 0; i < N; ++i) {
      const double e = f[i] - y;
      cumulative[i] += e * e;
      round_loss[i] += e * e + tables.lambda * norm2[i];
    }
    if (client + 1 == K) {
      const double reduce = tables.sum_losses ? 1.0 : 1.0 / static_cast<double>(K);
      double* log_w = states.log_w + r * N;
      for (std::size_t i = 0; i < N; ++i) {
        log_w[i] -= tables.eta_w * reduce * round_loss[i];
        round_loss[i] = 0.0;
      }
    }
    return f[states.sampled[r]];
  }
};

/// Every replicate's state in one arena of 64-bit words; view(base) points EmKoflStates into a
/// copy of it.
class EmKoflStateData {
 public:
  EmKoflStateData(const EmKoflTables& tables, std::size_t n_replicates);
  EmKoflStates view(void* base) const;
  EmKoflStates view() { return view(bytes_.data()); }
  void* data() { return bytes_.data(); }
  std::size_t size_bytes() const { return bytes_.size() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> bytes_;
  std::size_t server_stream_, log_w_, round_loss_, kernel_loss_, scratch_, sampled_, opening_;
};

/// The program on the GPU (core/state_device_walk.h, instantiated in resident_em_kofl.cu, or
/// src/cuda/no_cuda.cpp without CUDA): the
/// state uploaded and read back around each walk, θ and V a CUDA RfBackend's (device_lease()).
using EmKoflDeviceWalk = StateDeviceWalk<EmKoflProgram, EmKoflTables, EmKoflStateData>;
extern template class StateDeviceWalk<EmKoflProgram, EmKoflTables, EmKoflStateData>;

}  // namespace omkl::detail
