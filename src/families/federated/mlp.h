/// @file mlp.h
/// @brief The small fully-connected network of PerFedAvg (spec/federated.md §3.6, Appendix C):
/// d → width → … → width → 1, ReLU hidden layers, a linear output; its parameters in one vector
/// (per layer the weights, out × in row-major, then the biases), with the squared-loss gradient
/// by back-propagation. Plain loops: the networks have at most about 1000 parameters.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "random/rng.h"

namespace omkl::detail {

/// A network and its scratch space (so one Mlp serves one thread).
class Mlp {
 public:
  Mlp() = default;
  Mlp(std::size_t n_inputs, std::size_t hidden_layers, std::size_t width) {
    std::size_t in = n_inputs;
    for (std::size_t l = 0; l <= hidden_layers; ++l) {
      const std::size_t out = l == hidden_layers ? 1 : width;
      layers_.push_back({in, out, n_params_});
      n_params_ += out * in + out;
      in = out;
    }
    activations_.resize(layers_.size() + 1);
    for (std::size_t l = 0; l < layers_.size(); ++l) activations_[l + 1].resize(layers_[l].out);
    deltas_.resize(layers_.size());
  }

  static std::size_t parameter_count(std::size_t n_inputs, std::size_t hidden_layers, std::size_t width) {
    if (hidden_layers == 0) return n_inputs + 1;
    return (n_inputs + 1) * width + (hidden_layers - 1) * (width + 1) * width + width + 1;
  }

  std::size_t size() const { return n_params_; }

  /// Glorot-uniform weights, zero biases.
  void initialize(double* params, RandomStream& rng) const {
    for (const Layer& layer : layers_) {
      const double a = std::sqrt(6.0 / static_cast<double>(layer.in + layer.out));
      for (std::size_t j = 0; j < layer.out * layer.in; ++j) params[layer.offset + j] = a * (2.0 * rng.uniform() - 1.0);
      for (std::size_t j = 0; j < layer.out; ++j) params[layer.offset + layer.out * layer.in + j] = 0.0;
    }
  }

  double forward(const double* params, const double* x) {
    activations_[0].assign(x, x + layers_.front().in);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const Layer& layer = layers_[l];
      const double* W = params + layer.offset;
      const double* b = W + layer.out * layer.in;
      const std::vector<double>& a = activations_[l];
      std::vector<double>& z = activations_[l + 1];
      const bool hidden = l + 1 < layers_.size();
      for (std::size_t o = 0; o < layer.out; ++o) {
        double s = b[o];
        for (std::size_t i = 0; i < layer.in; ++i) s += W[o * layer.in + i] * a[i];
        z[o] = hidden ? std::max(0.0, s) : s;
      }
    }
    return activations_.back()[0];
  }

  /// ∇_w (h_w(x) − y)² into `grad` (size()); returns h_w(x).
  double gradient(const double* params, const double* x, double y, double* grad) {
    const double out = forward(params, x);
    const std::size_t L = layers_.size();
    deltas_[L - 1].assign(1, 2.0 * (out - y));
    for (std::size_t l = L; l-- > 0;) {
      const Layer& layer = layers_[l];
      const double* W = params + layer.offset;
      double* gW = grad + layer.offset;
      double* gb = gW + layer.out * layer.in;
      const std::vector<double>& a = activations_[l];
      const std::vector<double>& delta = deltas_[l];
      for (std::size_t o = 0; o < layer.out; ++o) {
        for (std::size_t i = 0; i < layer.in; ++i) gW[o * layer.in + i] = delta[o] * a[i];
        gb[o] = delta[o];
      }
      if (l == 0) break;
      // Back through layer l's weights and the ReLU of layer l − 1's output.
      std::vector<double>& below = deltas_[l - 1];
      below.assign(layer.in, 0.0);
      for (std::size_t o = 0; o < layer.out; ++o)
        for (std::size_t i = 0; i < layer.in; ++i) below[i] += W[o * layer.in + i] * delta[o];
      for (std::size_t i = 0; i < layer.in; ++i)
        if (!(a[i] > 0.0)) below[i] = 0.0;
    }
    return out;
  }

 private:
  struct Layer {
    std::size_t in, out, offset;
  };
  std::vector<Layer> layers_;
  std::size_t n_params_ = 0;
  std::vector<std::vector<double>> activations_, deltas_;  // scratch
};

}  // namespace omkl::detail
