/// @file resident_perfedavg.h
/// @brief PerFedAvg (spec/federated.md §3.6; perfedavg.cpp) as a device-resident program on the
/// per-step seam (core/resident_walk.h): one step per client sample, each replicate's network in
/// device memory, no host round trip between samples or rounds. The network is not a random-
/// feature model, so the program evaluates and updates its one pair itself (OwnsFeatures), the
/// whole thread block sharing each layer's outputs on the GPU (mlp.h's passes):
///  - pair_features(): the client's personalised prediction, h_φ(x) with φ = w − α∇ℓ(w) on the
///    client's previous sample (or w itself before it has one, or without personalisation);
///  - learn(): the prediction, and the target kept for the update;
///  - pair_update(): the first-order meta-update w − β∇ℓ(w − α∇ℓ(w)) added to the round's sum,
///    the sample kept as the client's previous one, and at the round's last client the server's
///    average w ← Σ/K.
/// The arithmetic is the host path's, operation for operation (the same mlp.h code), so the two
/// agree within the device's fused multiply-adds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/host_device.h"
#include "core/resident_walk.h"
#include "families/federated/mlp.h"
#include "omkl/config.h"
#include "omkl/device_contexts.h"

namespace omkl::detail {

/// What every replicate shares.
struct PerFedAvgTables {
  MlpShape net;
  std::uint32_t K = 0, d = 0;
  double alpha = 0.0, beta = 0.0;
  int personalize = 1;
};

/// Every replicate's state, R-strided (P parameters, A activations, W the widest layer).
struct PerFedAvgStates {
  double* model = nullptr;         ///< P: the server model of the round
  double* round_sum = nullptr;     ///< P: Σ of the round's uploads so far
  double* adapted = nullptr;       ///< P: scratch, w − α∇ℓ
  double* grad = nullptr;          ///< P: scratch
  double* acts = nullptr;          ///< A: scratch
  double* deltas = nullptr;        ///< 2W: scratch
  double* previous_x = nullptr;    ///< K × d: each client's last sample
  double* previous_y = nullptr;    ///< K
  std::uint8_t* has_previous = nullptr;  ///< K
  double* y = nullptr;             ///< 1: this step's target (learn() → pair_update())
  std::uint32_t* client = nullptr; ///< 1: this step's client (plan() → the passes)
};

struct PerFedAvgProgram {
  static constexpr bool kOwnFeatures = true;
  PerFedAvgTables tables;
  PerFedAvgStates states;

  OMKL_HD std::size_t plan(std::size_t r, std::int64_t t, ResidentPair* pairs) {
    states.client[r] = static_cast<std::uint32_t>((t - 1) % tables.K);
    pairs[0].slot = 0;
    pairs[0].kernel = 0;
    pairs[0].rate = 0.0;  // no random-feature update: pair_update() is the step
    pairs[0].shrink = 1.0;
    pairs[0].box = 0.0;
    return 1;
  }

  /// The client's personalised prediction (perfedavg.cpp's personalized_prediction()), in lane 0.
  template <typename Real>
  OMKL_HD void pair_features(std::size_t r, const ResidentPair& /*pair*/, const Real* x, unsigned lane,
                             unsigned n_lanes, double& f, double& norm2) const {
    const std::size_t P = tables.net.n_params, K = tables.K, d = tables.d;
    const double* w = states.model + r * P;
    double* acts = states.acts + r * tables.net.activations;
    const std::size_t k = states.client[r];
    double out;
    if (!tables.personalize || !states.has_previous[r * K + k]) {
      out = mlp_forward(tables.net, w, x, acts, lane, n_lanes);
    } else {
      double* g = states.grad + r * P;
      double* adapted = states.adapted + r * P;
      mlp_gradient(tables.net, w, states.previous_x + (r * K + k) * d, states.previous_y[r * K + k], g, acts,
                   states.deltas + r * 2 * tables.net.widest, lane, n_lanes);
      for (std::size_t j = lane; j < P; j += n_lanes) adapted[j] = w[j] - tables.alpha * g[j];
      block_barrier();
      out = mlp_forward(tables.net, adapted, x, acts, lane, n_lanes);
    }
    f = lane == 0 ? out : 0.0;
    norm2 = 0.0;
  }

  OMKL_HD double learn(std::size_t r, std::int64_t /*t*/, double y, const double* f, const double* /*norm2*/,
                       ResidentPair* /*pairs*/) {
    states.y[r] = y;
    return f[0];
  }

  /// First-order Per-FedAvg (§3.6 step 3): w̃ = w − α∇ℓ(w), the upload w − β∇ℓ(w̃) into the
  /// round's sum; the sample kept; the server's average at the round's end (in client order, as
  /// the sum was formed).
  template <typename Real>
  OMKL_HD void pair_update(std::size_t r, const ResidentPair& /*pair*/, const Real* x, unsigned lane,
                           unsigned n_lanes) {
    const std::size_t P = tables.net.n_params, K = tables.K, d = tables.d;
    double* w = states.model + r * P;
    double* g = states.grad + r * P;
    double* adapted = states.adapted + r * P;
    double* acts = states.acts + r * tables.net.activations;
    double* deltas = states.deltas + r * 2 * tables.net.widest;
    const double y = states.y[r];
    const std::size_t k = states.client[r];
    mlp_gradient(tables.net, w, x, y, g, acts, deltas, lane, n_lanes);
    for (std::size_t j = lane; j < P; j += n_lanes) adapted[j] = w[j] - tables.alpha * g[j];
    block_barrier();
    mlp_gradient(tables.net, adapted, x, y, g, acts, deltas, lane, n_lanes);
    double* sum = states.round_sum + r * P;
    for (std::size_t j = lane; j < P; j += n_lanes) sum[j] += w[j] - tables.beta * g[j];
    for (std::size_t e = lane; e < d; e += n_lanes) states.previous_x[(r * K + k) * d + e] = static_cast<double>(x[e]);
    if (lane == 0) {
      states.previous_y[r * K + k] = y;
      states.has_previous[r * K + k] = 1;
    }
    block_barrier();
    if (k + 1 == K)
      for (std::size_t j = lane; j < P; j += n_lanes) {
        w[j] = sum[j] / static_cast<double>(K);
        sum[j] = 0.0;
      }
  }
};

/// Every replicate's state in one arena of 64-bit words; view(base) points PerFedAvgStates into
/// a copy of it.
class PerFedAvgStateData {
 public:
  PerFedAvgStateData(const PerFedAvgTables& tables, std::size_t n_replicates);
  PerFedAvgStates view(void* base) const;
  PerFedAvgStates view() { return view(bytes_.data()); }
  void* data() { return bytes_.data(); }
  std::size_t size_bytes() const { return bytes_.size() * sizeof(std::uint64_t); }

 private:
  std::vector<std::uint64_t> bytes_;
  std::size_t model_, round_sum_, adapted_, grad_, acts_, deltas_, previous_x_, previous_y_, has_previous_, y_,
      client_;
};

/// The program on the GPU (resident_perfedavg.cu; in a build without CUDA src/cuda/no_cuda.cpp's,
/// whose constructor throws): kernels/resident_walk.cuh's walk on a stream of its own (from
/// `contexts` where given), the state uploaded and read back around each walk.
class PerFedAvgDeviceWalk {
 public:
  explicit PerFedAvgDeviceWalk(DeviceContexts* contexts);
  ~PerFedAvgDeviceWalk();
  PerFedAvgDeviceWalk(const PerFedAvgDeviceWalk&) = delete;
  PerFedAvgDeviceWalk& operator=(const PerFedAvgDeviceWalk&) = delete;
  void walk(const PerFedAvgTables& tables, PerFedAvgStateData& state, const ResidentWalkArgs<double>& shape,
            const double* x, const double* y, double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace omkl::detail
