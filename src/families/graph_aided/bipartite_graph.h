/// @file bipartite_graph.h
/// @brief The per-step bipartite feedback graph of OMKL-GF (spec/graph-aided.md §2.1, [J] Alg. 2,
/// eqs. 19–21): N kernel nodes, J selective nodes, each selective node linked to the kernels
/// hit by M independent draws from its own exploration mixture.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "random/rng.h"
#include "random/sampling.h"

namespace omkl::detail {

class BipartiteFeedbackGraph {
 public:
  /// N kernels, J selective nodes, M draws per selective node. ConfigError (naming the
  /// parameter) for N = 0 (empty dictionary), J < 1, M < 1 or M > N.
  BipartiteFeedbackGraph(std::size_t n_kernels, std::size_t n_selective, std::size_t draws);

  std::size_t n_kernels() const { return n_; }
  std::size_t n_selective() const { return j_; }
  std::size_t draws() const { return m_; }

  /// Alg. 2 from kernel weights w (any positive scale): w̄ = w/Σw and, for selective node
  /// j = 0..J−1, π_kj = (1 − η_e^{j+1}) w̄_k + η_e^{j+1}/N (eq. 20 with 1-based exponent; node 0
  /// explores most), P[k,j] = 1 − (1 − π_kj)^M, then column j is cleared and M kernels are drawn
  /// from π_·j with `rule` (the reference uses the shifted sampler, §3 R5), consuming the
  /// uniforms in order j-major: exactly J·M of them (§1.9). P is always the unshifted link
  /// probability, as in the reference. ConfigError unless η_e ∈ [0, 1].
  void regenerate(const std::vector<double>& w, double eta_e, const double* uniforms,
                  SamplerRule rule);
  /// Same, drawing the J·M uniforms from `rng`.
  void regenerate(const std::vector<double>& w, double eta_e, RandomStream& rng, SamplerRule rule);

  bool linked(std::size_t kernel, std::size_t node) const;
  /// S for selective node j: {k : A[k, j] = 1} in ascending k (§2.1.b step 4).
  const std::vector<std::size_t>& kernels(std::size_t node) const;
  /// P[k, j] = 1 − (1 − π_kj)^M from the last regeneration (kept when the graph is frozen).
  double link_probability(std::size_t kernel, std::size_t node) const;

  /// u_j = Σ_{k : A[k,j] = 1} w_k (Alg. 1 step 1), from the current weights.
  std::vector<double> selective_weights(const std::vector<double>& w) const;
  /// q_k = Σ_j p_j · P[k, j] (eq. 21), p the selective-node PMF of the step.
  std::vector<double> observation_probabilities(const std::vector<double>& p) const;
  /// q_k alone in O(J), for the kernels of S_t only; bitwise equal to entry k above.
  double observation_probability(std::size_t kernel, const std::vector<double>& p) const;

 private:
  void check_kernel(std::size_t k) const;
  void check_node(std::size_t j) const;

  std::size_t n_, j_, m_;
  std::vector<std::uint8_t> adjacency_;        // n_ × j_, row-major
  std::vector<double> link_probability_;       // n_ × j_, row-major
  std::vector<std::vector<std::size_t>> kernels_;  // per selective node, ascending
  std::vector<double> pi_, cdf_;               // scratch, so that a step allocates nothing
  std::vector<double> uniforms_;
};

/// Selective-node PMF (eq. 19): p_j = (1 − η_e) u_j/U + η_e/J, U = Σ_j u_j.
/// ConfigError unless η_e ∈ [0, 1].
std::vector<double> selective_node_probabilities(const std::vector<double>& u, double eta_e);

}  // namespace omkl::detail
