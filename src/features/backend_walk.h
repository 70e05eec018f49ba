/// @file backend_walk.h
/// @brief The resident walk's host driver (core/resident_walk.h) over the θ and frequencies an
/// RfBackend holds: the reference path of a family whose models live in a backend (the
/// graph-aided family, eM-KOFL) on a machine without a GPU.
#pragma once

#include <cstddef>
#include <vector>

#include "core/resident_walk.h"
#include "features/rf_backend.h"
#include "omkl/error.h"

namespace omkl::detail {

/// Reads every (replicate, slot)'s θ from `backend`, walks `program` over the block with the
/// host driver, and writes θ back. `frequencies` caches V of every (replicate, kernel), R × P ×
/// D × d; it is filled on first use (clear it when the backend's matrices change, as a loaded
/// checkpoint does).
template <typename Program>
void walk_on_backend(Program& program, RfBackend& backend, std::vector<double>& frequencies,
                     const ResidentWalkArgs<double>& shape, const double* x, const double* y, double* predictions) {
  const RfProblem& p = backend.problem();
  const std::size_t R = shape.n_replicates, S = p.n_slots(), P = p.n_kernels;
  const std::size_t theta_n = p.theta_size(), block = p.n_rff * p.n_features;
  if (R != p.n_replicates) throw Error("resident walk: the walk's replicates are not the backend's");
  if (frequencies.empty()) {
    frequencies.resize(R * P * block);
    for (std::size_t r = 0; r < R; ++r)
      for (std::size_t k = 0; k < P; ++k) backend.get_frequencies(r, k, frequencies.data() + (r * P + k) * block);
  }
  std::vector<double> theta(R * S * theta_n);
  backend.get_all_theta(theta.data());
  walk_on_host(program, shape, frequencies.data(), theta.data(), x, y, predictions);
  backend.set_all_theta(theta.data());
}

}  // namespace omkl::detail
