/// @file resident_sfg.h
/// @brief OMKL-SFG and SFG-MKL as a device-resident program (core/resident_walk.h): the step of
/// graph_aided.cpp with the host path's every decision — vertex weights and their refresh, the
/// vertex PMF over the dominating set, the node draw from the replicate's own counter stream,
/// S_t = N_out(I_t), the observation probabilities q_k, the prediction and the kernel and
/// vertex weight updates — in OMKL_HD code over flat arrays, in the host path's order of
/// operations, so that a walk draws the host path's nodes and its numbers differ from the host
/// path's only where the pairs' sums and the math library's exp round differently.
///
/// SfgTableData is the configuration flattened once (CSR lists of the graph and of the sums
/// q() forms); SfgStateData is every replicate's state, loaded from and stored back to the
/// GraphReplicates around a walk, so that checkpoints, predict() and the inspection hooks see
/// the state as the host path keeps it. OMKL-GF (its per-step bipartite regeneration), the
/// SFG-R refinement and the vertex ridge term still take the host path.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/host_device.h"
#include "core/resident_walk.h"
#include "features/rf_backend.h"
#include "random/stream_position.h"

namespace omkl::detail {

struct GraphAidedConfig;
struct GraphReplicate;

/// The configuration as the program reads it (pointers into host or device copies of
/// SfgTableData's lists).
struct SfgTables {
  std::uint32_t n = 0;  ///< vertices = kernels = slots
  const std::uint32_t* out_offsets = nullptr;  ///< n + 1; N_out(i) in construction order
  const std::uint32_t* out_list = nullptr;
  const std::uint32_t* in_offsets = nullptr;  ///< n + 1; N_in(k) ascending
  const std::uint32_t* in_list = nullptr;
  const std::uint32_t* complement_offsets = nullptr;  ///< n + 1; V ∖ N_in(k) where used
  const std::uint32_t* complement_list = nullptr;
  const std::uint8_t* use_complement = nullptr;  ///< n
  const std::uint32_t* exploration = nullptr;    ///< the dominating set D
  std::uint32_t n_exploration = 0;
  std::uint32_t max_pairs = 0;  ///< largest out-degree
  double eta = 0.1;
  int inv_sqrt_t = 1;
  long long switch_step = 0;
  int shifted = 0;       ///< reference off-by-one sampler
  int after_switch = 0;  ///< AfterSwitch as an int
  double q_floor = 0.0, p_floor = 0.0, lambda = 0.0;
  double z2 = 0.0;  ///< ‖z‖² = scale²·D (updated_theta_loss)
  int updated_theta_loss = 0;
};

/// Every replicate's state, R-strided (R × n for the per-vertex arrays, R × max_pairs for the
/// step's pairs).
struct SfgStates {
  double* log_w = nullptr;
  double* log_u = nullptr;
  double* u_lin = nullptr;  ///< exp(log_u − u_ref), valid where u_valid
  double* u_ref = nullptr;
  std::uint8_t* u_valid = nullptr;
  StreamPosition* rng = nullptr;
  double* pmf = nullptr;               ///< this step's vertex PMF
  std::uint32_t* node = nullptr;       ///< this step's vertex
  std::uint32_t* n_pairs = nullptr;    ///< |S_t|
  std::uint32_t* updated = nullptr;    ///< S_t
  double* q_used = nullptr;            ///< q̃_k of S_t
  std::uint64_t* updates = nullptr;    ///< θ updates made (kernel_updates()), per replicate
};

/// One step of one replicate. `Philox` is the block function of its counter stream (host or
/// cuRAND's).
template <typename Philox>
struct SfgProgram {
  SfgTables c;
  SfgStates s;

  OMKL_HD double eta_at(std::int64_t t) const {
    return c.inv_sqrt_t ? c.eta / std::sqrt(static_cast<double>(t)) : c.eta;
  }

  /// graph_selection.cpp's plan_selection() for OMKL-SFG, then the pairs of plan_pairs().
  OMKL_HD std::size_t plan(std::size_t r, std::int64_t t, ResidentPair* pairs) {
    const std::size_t n = c.n;
    double* u = s.u_lin + r * n;
    const double* log_u = s.log_u + r * n;
    // Vertex weights: refreshed (u_ref = max log_u) when missing or when the largest has
    // drifted below 1e-200, as vertex_weights_lin() does.
    double top = 0.0;
    if (s.u_valid[r])
      for (std::size_t i = 0; i < n; ++i) top = u[i] > top ? u[i] : top;
    if (!s.u_valid[r] || top < 1e-200) {
      double ref = -INFINITY;
      for (std::size_t i = 0; i < n; ++i) ref = log_u[i] > ref ? log_u[i] : ref;
      s.u_ref[r] = ref;
      for (std::size_t i = 0; i < n; ++i) u[i] = exp_or_zero_hd(log_u[i] - ref);
      s.u_valid[r] = 1;
    }
    const double eta = eta_at(t);
    // vertex_probabilities(u, ξ = η, D).
    double* p = s.pmf + r * n;
    double total = 0.0;
    for (std::size_t i = 0; i < n; ++i) total += u[i];
    for (std::size_t i = 0; i < n; ++i) p[i] = (1.0 - eta) * (u[i] / total);
    const double share = eta / static_cast<double>(c.n_exploration);
    for (std::uint32_t e = 0; e < c.n_exploration; ++e) p[c.exploration[e]] += share;
    double p_total = 0.0;
    for (std::size_t i = 0; i < n; ++i) p_total += p[i];
    // The vertex: drawn before the switch step, then as after_switch says (AfterSwitch order:
    // Fixed0, ArgmaxU, KeepSampling).
    const bool before = t <= c.switch_step;
    const int mode = before ? 2 : c.after_switch;
    std::size_t node = 0;
    if (mode == 2) {
      node = sample(p, n, s.rng[r].template uniform<Philox>());
    } else if (mode == 1) {
      for (std::size_t i = 1; i < n; ++i)
        if (u[i] > u[node]) node = i;
    }
    s.node[r] = static_cast<std::uint32_t>(node);
    // S_t = N_out(node) with q̃_k = max(q_k, q_floor), and the pairs' coefficients.
    const std::uint32_t first = c.out_offsets[node], count = c.out_offsets[node + 1] - first;
    std::uint32_t* updated = s.updated + r * c.max_pairs;
    double* q_used = s.q_used + r * c.max_pairs;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint32_t k = c.out_list[first + i];
      double q = observation(k, p, p_total);
      q = q > c.q_floor ? q : c.q_floor;
      updated[i] = k;
      q_used[i] = q;
      pairs[i].slot = k;
      pairs[i].kernel = k;
      pairs[i].rate = eta / q;
      pairs[i].shrink = 1.0 - 2.0 * eta * c.lambda / q;
    }
    s.n_pairs[r] = count;
    s.updates[r] += count;  // rate = η/q̃ > 0: every pair updates
    return count;
  }

  /// graph_aided.cpp's learn(): ŷ from S_t's outputs, then the kernel and vertex weights.
  OMKL_HD double learn(std::size_t r, std::int64_t t, double y, const double* f, const double* norm2) {
    const std::size_t n = c.n;
    const double eta = eta_at(t);
    const std::uint32_t count = s.n_pairs[r];
    const std::uint32_t* updated = s.updated + r * c.max_pairs;
    const double* q_used = s.q_used + r * c.max_pairs;
    double* log_w = s.log_w + r * n;
    // combine_prediction() with predicted = updated.
    double prediction = 0.0;
    if (count > 0) {
      double m = -INFINITY;
      for (std::uint32_t i = 0; i < count; ++i) m = log_w[updated[i]] > m ? log_w[updated[i]] : m;
      double num = 0.0, den = 0.0;
      for (std::uint32_t i = 0; i < count; ++i) {
        const double w = std::exp(log_w[updated[i]] - m);
        num += w * f[i];
        den += w;
      }
      prediction = num / den;
    }
    for (std::uint32_t i = 0; i < count; ++i) {
      const double fi = f[i];
      double n2 = norm2[i];
      if (c.updated_theta_loss) {
        const double rate = eta / q_used[i], shrink = 1.0 - 2.0 * eta * c.lambda / q_used[i];
        const double g = rate * 2.0 * (fi - y);
        n2 = shrink * shrink * n2 - 2.0 * shrink * g * fi + g * g * c.z2;
        if (n2 < 0) n2 = 0;
      }
      const double loss = ((fi - y) * (fi - y) + c.lambda * n2) / q_used[i];
      log_w[updated[i]] -= eta * loss;
    }
    const std::uint32_t node = s.node[r];
    const double err = (prediction - y) * (prediction - y);
    const double p_node = s.pmf[r * n + node];
    const double p_tilde = p_node > c.p_floor ? p_node : c.p_floor;
    double* log_u = s.log_u + r * n;
    log_u[node] -= eta * err / p_tilde;
    if (s.u_valid[r]) s.u_lin[r * n + node] = exp_or_zero_hd(log_u[node] - s.u_ref[r]);
    return prediction;
  }

 private:
  OMKL_HD static double exp_or_zero_hd(double d) { return d < -745.2 ? 0.0 : std::exp(d); }

  /// sample_index() of sampling.h (both rules) over p[0..n).
  OMKL_HD std::size_t sample(const double* p, std::size_t n, double r) const {
    if (c.shifted && r <= 0.0) return 0;
    double acc = 0.0, previous = 0.0;
    std::size_t last_positive = 0;
    for (std::size_t k = 0; k < n; ++k) {
      acc += p[k];
      if (!c.shifted) {
        if (r < acc) return k;
        if (k == 0 || acc > previous) last_positive = k;
      } else if (r <= acc) {
        return k + 1 < n - 1 ? k + 1 : n - 1;
      }
      previous = acc;
    }
    return c.shifted ? n - 1 : last_positive;
  }

  /// ObservationSums::q() without a refinement edge.
  OMKL_HD double observation(std::uint32_t k, const double* p, double p_total) const {
    if (c.use_complement[k]) {
      double sum = 0.0;
      for (std::uint32_t i = c.complement_offsets[k]; i < c.complement_offsets[k + 1]; ++i)
        sum += p[c.complement_list[i]];
      const double q = p_total - sum;
      if (q >= 0.5 * p_total) return q;
    }
    double sum = 0.0;
    for (std::uint32_t i = c.in_offsets[k]; i < c.in_offsets[k + 1]; ++i) sum += p[c.in_list[i]];
    return sum;
  }
};

/// The configuration's lists, flattened once; view() points SfgTables at them.
struct SfgTableData {
  SfgTables scalars;  // pointers unset
  std::vector<std::uint32_t> out_offsets, out_list, in_offsets, in_list, complement_offsets, complement_list,
      exploration;
  std::vector<std::uint8_t> use_complement;

  SfgTables view() const;
};

/// ConfigError-free check: empty when the resident walk can run this configuration, else why not.
std::string resident_sfg_unsupported(const GraphAidedConfig& config);
SfgTableData make_sfg_tables(const GraphAidedConfig& config, double feature_scale, std::size_t n_rff);

/// Every replicate's state as flat arrays; view() points SfgStates at them.
struct SfgStateData {
  std::size_t n = 0, max_pairs = 0, n_replicates = 0;
  std::vector<double> log_w, log_u, u_lin, u_ref, pmf, q_used;
  std::vector<std::uint8_t> u_valid;
  std::vector<StreamPosition> rng;
  std::vector<std::uint32_t> node, n_pairs, updated;
  std::vector<std::uint64_t> updates;  // zero at load(); summed by the caller after a walk

  SfgStateData(std::size_t n_vertices, std::size_t max_pairs, std::size_t n_replicates);
  SfgStates view();
  /// From the host path's replicates (their counter streams' positions, weights, u cache).
  void load(const std::vector<GraphReplicate>& reps);
  /// Back into them, with the trace of each replicate's last step (node, PMF, S_t, q̃, ŷ).
  void store(std::vector<GraphReplicate>& reps, std::int64_t t_last, double eta_last,
             const double* last_predictions) const;
};

#if OMKL_WITH_CUDA
/// The program on the GPU (resident_sfg.cu): the tables uploaded once, the state uploaded and
/// read back around each walk, θ and V the CUDA backend's own (RfBackend::device_lease()).
class SfgDeviceWalk {
 public:
  /// Uploads the tables on the lease's stream (RfBackend::device_lease()).
  SfgDeviceWalk(const SfgTableData& tables, const DeviceLease& lease);
  ~SfgDeviceWalk();
  SfgDeviceWalk(const SfgDeviceWalk&) = delete;
  SfgDeviceWalk& operator=(const SfgDeviceWalk&) = delete;
  /// Walks n_steps samples from time t0 for every replicate: x n_steps × d and y (host),
  /// predictions n_steps × R (host). `shape` gives the sizes, t0 and the loss (its pointers are
  /// ignored); θ and V are the lease's.
  void walk(SfgStateData& state, const DeviceLease& lease, const ResidentWalkArgs<double>& shape,
            const double* x, const double* y, double* predictions);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
#endif

}  // namespace omkl::detail
