/// @file bipartite_graph.cpp
/// @brief OMKL-GF bipartite feedback graph (spec/graph-aided.md §2.1).
#include "families/graph_aided/bipartite_graph.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "families/graph_aided/feedback_graph.h"
#include "omkl/error.h"

namespace omkl::detail {
namespace {

void check_eta_e(double eta_e) {
  if (!(eta_e >= 0.0 && eta_e <= 1.0))
    throw ConfigError("eta_e (exploration rate) must be in [0, 1], got " + std::to_string(eta_e));
}

}  // namespace

BipartiteFeedbackGraph::BipartiteFeedbackGraph(std::size_t n_kernels, std::size_t n_selective,
                                               std::size_t draws)
    : n_(n_kernels), j_(n_selective), m_(draws) {
  if (n_selective < 1) throw ConfigError("J (number of selective nodes) must be >= 1, got 0");
  // Draws are with replacement, but M > N only repeats kernels; the issue treats it as a
  // dictionary too small for the graph, like the SFG out-degree.
  check_out_degree(draws, n_kernels);
  adjacency_.assign(n_ * j_, 0);
  link_probability_.assign(n_ * j_, 0.0);
  kernels_.assign(j_, {});
  pi_.resize(n_);
  uniforms_.resize(j_ * m_);
}

void BipartiteFeedbackGraph::check_kernel(std::size_t k) const {
  if (k >= n_) throw std::out_of_range("BipartiteFeedbackGraph: kernel " + std::to_string(k) + " out of range");
}

void BipartiteFeedbackGraph::check_node(std::size_t j) const {
  if (j >= j_) throw std::out_of_range("BipartiteFeedbackGraph: selective node " + std::to_string(j) + " out of range");
}

void BipartiteFeedbackGraph::regenerate(const std::vector<double>& w, double eta_e,
                                        const double* uniforms, SamplerRule rule) {
  check_eta_e(eta_e);
  if (w.size() != n_)
    throw std::invalid_argument("BipartiteFeedbackGraph::regenerate: w has " + std::to_string(w.size()) +
                                " entries, expected N = " + std::to_string(n_));
  double total = 0.0;
  for (double v : w) total += v;
  if (!(total > 0.0)) throw std::invalid_argument("BipartiteFeedbackGraph::regenerate: weights must have a positive sum");
  const double n = static_cast<double>(n_);
  for (std::size_t j = 0; j < j_; ++j) {
    // η_e^{j+1}: node 0 explores most (eq. 20, 1-based exponent = reference's j + 1).
    const double explore = std::pow(eta_e, static_cast<double>(j + 1));
    for (std::size_t k = 0; k < n_; ++k) {
      pi_[k] = (1.0 - explore) * (w[k] / total) + explore / n;
      // The reference's literal 1 − (1 − π)^M, so that the bit-compatible mode rounds alike.
      link_probability_[k * j_ + j] = 1.0 - std::pow(1.0 - pi_[k], static_cast<double>(m_));
      adjacency_[k * j_ + j] = 0;
    }
    cdf_ = cumulative_sums(pi_);
    for (std::size_t r = 0; r < m_; ++r)
      adjacency_[sample_from_cdf(cdf_, uniforms[j * m_ + r], rule) * j_ + j] = 1;
    auto& list = kernels_[j];
    list.clear();
    for (std::size_t k = 0; k < n_; ++k)
      if (adjacency_[k * j_ + j]) list.push_back(k);
  }
}

void BipartiteFeedbackGraph::regenerate(const std::vector<double>& w, double eta_e, RandomStream& rng,
                                        SamplerRule rule) {
  check_eta_e(eta_e);  // before consuming any uniform, so a bad call leaves the stream untouched
  for (double& r : uniforms_) r = rng.uniform();
  regenerate(w, eta_e, uniforms_.data(), rule);
}

bool BipartiteFeedbackGraph::linked(std::size_t kernel, std::size_t node) const {
  check_kernel(kernel);
  check_node(node);
  return adjacency_[kernel * j_ + node] != 0;
}

const std::vector<std::size_t>& BipartiteFeedbackGraph::kernels(std::size_t node) const {
  check_node(node);
  return kernels_[node];
}

double BipartiteFeedbackGraph::link_probability(std::size_t kernel, std::size_t node) const {
  check_kernel(kernel);
  check_node(node);
  return link_probability_[kernel * j_ + node];
}

std::vector<double> BipartiteFeedbackGraph::selective_weights(const std::vector<double>& w) const {
  if (w.size() != n_) throw std::invalid_argument("selective_weights: w must have N entries");
  std::vector<double> u(j_, 0.0);
  for (std::size_t k = 0; k < n_; ++k)
    for (std::size_t j = 0; j < j_; ++j)
      if (adjacency_[k * j_ + j]) u[j] += w[k];
  return u;
}

std::vector<double> BipartiteFeedbackGraph::observation_probabilities(const std::vector<double>& p) const {
  if (p.size() != j_) throw std::invalid_argument("observation_probabilities: p must have J entries");
  std::vector<double> q(n_);
  for (std::size_t k = 0; k < n_; ++k) q[k] = observation_probability(k, p);
  return q;
}

double BipartiteFeedbackGraph::observation_probability(std::size_t kernel, const std::vector<double>& p) const {
  check_kernel(kernel);
  if (p.size() != j_) throw std::invalid_argument("observation_probability: p must have J entries");
  double q = 0.0;
  for (std::size_t j = 0; j < j_; ++j) q += link_probability_[kernel * j_ + j] * p[j];
  return q;
}

std::vector<double> selective_node_probabilities(const std::vector<double>& u, double eta_e) {
  check_eta_e(eta_e);
  if (u.empty()) throw ConfigError("J (number of selective nodes) must be >= 1, got 0");
  double total = 0.0;
  for (double v : u) total += v;
  if (!(total > 0.0)) throw std::invalid_argument("selective_node_probabilities: weights must have a positive sum");
  const double jn = static_cast<double>(u.size());
  std::vector<double> p(u.size());
  for (std::size_t j = 0; j < u.size(); ++j) p[j] = (1.0 - eta_e) * u[j] / total + eta_e / jn;
  return p;
}

}  // namespace omkl::detail
