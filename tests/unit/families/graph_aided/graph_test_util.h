/// @file graph_test_util.h
/// @brief Random graphs and weights for the feedback-graph tests.
#pragma once

#include <cmath>
#include <cstddef>
#include <exception>
#include <string>
#include <vector>

#include "random/rng.h"
#include "families/graph_aided/feedback_graph.h"
#include "omkl/kernel_spec.h"

namespace omkl::test {

/// A random graph on n nodes, every node with a self-loop and exactly m out-neighbours.
inline detail::FeedbackGraph random_out_degree_graph(std::size_t n, std::size_t m, detail::RandomStream& rng) {
  detail::FeedbackGraph g(n);
  for (std::size_t i = 0; i < n; ++i) {
    g.add_edge(i, i);
    while (g.out_degree(i) < m) g.add_edge(i, static_cast<std::size_t>(rng.below(n)));
  }
  return g;
}

/// Random positive weights with a wide dynamic range (like exponentiated losses).
inline std::vector<double> random_weights(std::size_t n, detail::RandomStream& rng) {
  std::vector<double> u(n);
  for (double& v : u) v = std::exp(-8.0 * rng.uniform());
  return u;
}

/// A random dictionary of Gaussian and Laplacian kernels with γ in [1e-2, 1e2].
inline Dictionary random_dictionary(std::size_t n, detail::RandomStream& rng) {
  Dictionary d;
  for (std::size_t i = 0; i < n; ++i) {
    const double gamma = std::pow(10.0, 4.0 * rng.uniform() - 2.0);
    d.push_back(rng.uniform() < 0.6 ? KernelSpec::gaussian_sigma2(gamma) : KernelSpec::laplacian(gamma));
  }
  return d;
}

inline bool message_names(const std::exception& e, const std::string& what) {
  return std::string(e.what()).find(what) != std::string::npos;
}

}  // namespace omkl::test
