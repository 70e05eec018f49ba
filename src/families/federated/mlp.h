/// @file mlp.h
/// @brief The small fully-connected network of PerFedAvg (spec/federated.md §3.6, Appendix C):
/// d → width → … → width → 1, ReLU hidden layers, a linear output; its parameters in one vector
/// (per layer the weights, out × in row-major, then the biases), with the squared-loss gradient
/// by back-propagation and its exact Hessian-vector product (host only). Plain loops: the
/// networks have at most about 1000 parameters.
///
/// The forward and backward passes are host/device code over flat arrays (mlp_forward(),
/// mlp_gradient()), shared by the host path (Mlp) and the resident walk (resident_perfedavg.h):
/// `lane` of `n_lanes` computes the outputs o = lane, lane + n_lanes, … of each layer, with a
/// block barrier between layers (nothing on the host, one lane).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/host_device.h"
#include "random/rng.h"

namespace omkl::detail {

/// Every lane of a thread block past this point before any goes on (on the host, one lane:
/// nothing to wait for).
OMKL_HD void block_barrier() {
#if defined(__CUDA_ARCH__)
  __syncthreads();
#endif
}

/// Most layers a network has (64 hidden and the output).
constexpr std::size_t kMaxMlpLayers = 65;

/// A network's shape: per layer its inputs, outputs and where its weights start; where each
/// layer's input activations start in a scratch of `activations` values (the sample first, then
/// every layer's outputs), and the widest layer (the deltas' scratch is twice that).
struct MlpShape {
  std::uint32_t n_layers = 0;
  std::uint32_t in[kMaxMlpLayers] = {}, out[kMaxMlpLayers] = {};
  std::uint64_t offset[kMaxMlpLayers] = {};
  std::uint64_t activation_offset[kMaxMlpLayers + 1] = {};
  std::uint64_t n_params = 0, activations = 0;
  std::uint32_t widest = 0;
};

/// h_w(x): the sample into acts, every layer's outputs after it; returns the output.
template <typename Real>
OMKL_HD double mlp_forward(const MlpShape& net, const double* params, const Real* x, double* acts, unsigned lane,
                           unsigned n_lanes) {
  for (std::size_t c = lane; c < net.in[0]; c += n_lanes) acts[c] = static_cast<double>(x[c]);
  block_barrier();
  for (std::size_t l = 0; l < net.n_layers; ++l) {
    const std::size_t in = net.in[l], out = net.out[l];
    const double* W = params + net.offset[l];
    const double* b = W + out * in;
    const double* a = acts + net.activation_offset[l];
    double* z = acts + net.activation_offset[l + 1];
    const bool hidden = l + 1 < net.n_layers;
    for (std::size_t o = lane; o < out; o += n_lanes) {
      double s = b[o];
      for (std::size_t i = 0; i < in; ++i) s += W[o * in + i] * a[i];
      z[o] = hidden ? (0.0 < s ? s : 0.0) : s;  // std::max(0.0, s)
    }
    block_barrier();
  }
  return acts[net.activation_offset[net.n_layers]];
}

/// ∇_w (h_w(x) − y)² into grad (n_params values); returns h_w(x). deltas: 2·widest values.
template <typename Real>
OMKL_HD double mlp_gradient(const MlpShape& net, const double* params, const Real* x, double y, double* grad,
                            double* acts, double* deltas, unsigned lane, unsigned n_lanes) {
  const double output = mlp_forward(net, params, x, acts, lane, n_lanes);
  double* delta = deltas;
  double* below = deltas + net.widest;
  if (lane == 0) delta[0] = 2.0 * (output - y);
  block_barrier();
  for (std::size_t l = net.n_layers; l-- > 0;) {
    const std::size_t in = net.in[l], out = net.out[l];
    const double* W = params + net.offset[l];
    double* gW = grad + net.offset[l];
    double* gb = gW + out * in;
    const double* a = acts + net.activation_offset[l];
    if (n_lanes == 1) {  // the host: rows and columns, no division per weight (the same products)
      for (std::size_t o = 0; o < out; ++o)
        for (std::size_t i = 0; i < in; ++i) gW[o * in + i] = delta[o] * a[i];
    } else {  // a thread block: the weights dealt out evenly over its lanes
      for (std::size_t e = lane; e < out * in; e += n_lanes) gW[e] = delta[e / in] * a[e % in];
    }
    for (std::size_t o = lane; o < out; o += n_lanes) gb[o] = delta[o];
    if (l == 0) break;
    // Back through layer l's weights and the ReLU of layer l − 1's output.
    for (std::size_t i = lane; i < in; i += n_lanes) {
      double s = 0.0;
      for (std::size_t o = 0; o < out; ++o) s += W[o * in + i] * delta[o];
      below[i] = a[i] > 0.0 ? s : 0.0;
    }
    block_barrier();
    double* t = delta;
    delta = below;
    below = t;
  }
  block_barrier();
  return output;
}

/// A network and its scratch space (so one Mlp serves one thread).
class Mlp {
 public:
  Mlp() = default;
  Mlp(std::size_t n_inputs, std::size_t hidden_layers, std::size_t width) {
    std::size_t in = n_inputs;
    shape_.n_layers = static_cast<std::uint32_t>(hidden_layers + 1);
    shape_.activation_offset[0] = 0;
    std::uint64_t activations = n_inputs;
    for (std::size_t l = 0; l <= hidden_layers; ++l) {
      const std::size_t out = l == hidden_layers ? 1 : width;
      shape_.in[l] = static_cast<std::uint32_t>(in);
      shape_.out[l] = static_cast<std::uint32_t>(out);
      shape_.offset[l] = shape_.n_params;
      shape_.n_params += out * in + out;
      shape_.activation_offset[l + 1] = activations;
      activations += out;
      if (out > shape_.widest) shape_.widest = static_cast<std::uint32_t>(out);
      in = out;
    }
    shape_.activations = activations;
    activations_.resize(activations);
    deltas_.resize(2 * shape_.widest);
  }

  static std::size_t parameter_count(std::size_t n_inputs, std::size_t hidden_layers, std::size_t width) {
    if (hidden_layers == 0) return n_inputs + 1;
    return (n_inputs + 1) * width + (hidden_layers - 1) * (width + 1) * width + width + 1;
  }

  std::size_t size() const { return static_cast<std::size_t>(shape_.n_params); }
  const MlpShape& shape() const { return shape_; }

  /// Glorot-uniform weights, zero biases.
  void initialize(double* params, RandomStream& rng) const {
    for (std::size_t l = 0; l < shape_.n_layers; ++l) {
      const std::size_t in = shape_.in[l], out = shape_.out[l], offset = shape_.offset[l];
      const double a = std::sqrt(6.0 / static_cast<double>(in + out));
      for (std::size_t j = 0; j < out * in; ++j) params[offset + j] = a * (2.0 * rng.uniform() - 1.0);
      for (std::size_t j = 0; j < out; ++j) params[offset + out * in + j] = 0.0;
    }
  }

  double forward(const double* params, const double* x) {
    return mlp_forward(shape_, params, x, activations_.data(), 0u, 1u);
  }

  /// ∇_w (h_w(x) − y)² into `grad` (size()); returns h_w(x).
  double gradient(const double* params, const double* x, double y, double* grad) {
    return mlp_gradient(shape_, params, x, y, grad, activations_.data(), deltas_.data(), 0u, 1u);
  }

  /// ∇²_w (h_w(x) − y)² · v into `hv` (size()); returns h_w(x). Pearlmutter's R-operator: a
  /// forward pass of the directional derivatives R{·} = d/dε (·)(w + εv) at ε = 0 beside the
  /// activations, then the back-propagation of the deltas and their R{}'s. ReLU's second
  /// derivative is 0 off its kink, so this is the Hessian's product wherever it exists: exact,
  /// unlike a central difference of two gradients (PerFedAvg's variant=exact against
  /// hessian_free). Host only: the resident walk is first-order.
  double hessian_vector(const double* params, const double* x, double y, const double* v, double* hv) {
    const MlpShape& net = shape_;
    const double output = forward(params, x);
    const double* acts = activations_.data();
    r_activations_.assign(activations_.size(), 0.0);  // R{x} = 0: the sample does not move with w
    double* r_acts = r_activations_.data();
    for (std::size_t l = 0; l < net.n_layers; ++l) {
      const std::size_t in = net.in[l], out = net.out[l];
      const double* W = params + net.offset[l];
      const double* V = v + net.offset[l];
      const double* c = V + out * in;  // the direction's biases
      const double* a = acts + net.activation_offset[l];
      const double* ra = r_acts + net.activation_offset[l];
      const double* z = acts + net.activation_offset[l + 1];
      double* rz = r_acts + net.activation_offset[l + 1];
      const bool hidden = l + 1 < net.n_layers;
      for (std::size_t o = 0; o < out; ++o) {
        double rs = c[o];  // R{s} = V a + W R{a} + c
        for (std::size_t i = 0; i < in; ++i) rs += V[o * in + i] * a[i] + W[o * in + i] * ra[i];
        rz[o] = hidden ? (z[o] > 0.0 ? rs : 0.0) : rs;  // ReLU's slope, 0 or 1, is fixed near w
      }
    }
    r_deltas_.resize(4 * static_cast<std::size_t>(net.widest));
    double* delta = r_deltas_.data();  // ∂ℓ/∂s of the layer at hand, then R{} of it
    double* r_delta = delta + net.widest;
    double* below = r_delta + net.widest;
    double* r_below = below + net.widest;
    delta[0] = 2.0 * (output - y);
    r_delta[0] = 2.0 * r_acts[net.activation_offset[net.n_layers]];
    for (std::size_t l = net.n_layers; l-- > 0;) {
      const std::size_t in = net.in[l], out = net.out[l];
      const double* W = params + net.offset[l];
      const double* V = v + net.offset[l];
      const double* a = acts + net.activation_offset[l];
      const double* ra = r_acts + net.activation_offset[l];
      double* hW = hv + net.offset[l];
      double* hb = hW + out * in;
      for (std::size_t o = 0; o < out; ++o) {  // R{δ aᵀ} = R{δ} aᵀ + δ R{a}ᵀ
        for (std::size_t i = 0; i < in; ++i) hW[o * in + i] = r_delta[o] * a[i] + delta[o] * ra[i];
        hb[o] = r_delta[o];
      }
      if (l == 0) break;
      for (std::size_t i = 0; i < in; ++i) {  // R{Wᵀδ} = Vᵀδ + Wᵀ R{δ}, through the ReLU's mask
        double s = 0.0, rs = 0.0;
        for (std::size_t o = 0; o < out; ++o) {
          s += W[o * in + i] * delta[o];
          rs += V[o * in + i] * delta[o] + W[o * in + i] * r_delta[o];
        }
        below[i] = a[i] > 0.0 ? s : 0.0;
        r_below[i] = a[i] > 0.0 ? rs : 0.0;
      }
      std::swap(delta, below);
      std::swap(r_delta, r_below);
    }
    return output;
  }

 private:
  MlpShape shape_;
  std::vector<double> activations_, deltas_;  // scratch
  std::vector<double> r_activations_, r_deltas_;  // hessian_vector()'s scratch
};

}  // namespace omkl::detail
