/// @file householder.h
/// @brief Householder QR of a small square matrix and the rows of its Q factor, written once
/// for the host and the CUDA device (orthogonal random features, spec/raker.md §1.3).
///
/// Convention of LAPACK's dgeqr2 (and so of Eigen's HouseholderQR, numpy.linalg.qr and
/// MATLAB's qr): column k's reflector H_k = I − τ_k v vᵀ with v_k = 1 maps the column to
/// β e_k, β = −sign(α)·‖(α, x)‖; τ_k = 0 (H_k = I) when x = 0. Q = H_0 H_1 ⋯ H_{d−1}.
///
/// Every sum runs in ascending index order and every operation is a single IEEE operation
/// (draw_transforms.h's never-fused mul/add/…), so the host and the device get the same bits.
/// Element (i, j) of a matrix lives at m[(i·d + j)·stride]: stride 1 is row-major; the device
/// interleaves the scratch of its threads (stride = number of threads) so that their loads
/// coalesce.
#pragma once

#include <cstddef>

#include "random/draw_transforms.h"

namespace omkl::detail {

/// Factors the d×d matrix g in place: R on and above the diagonal, the reflectors' tails
/// (v_i for i > k) below it, τ_k in tau[k·stride].
OMKL_HD void householder_factor(double* g, std::size_t d, std::size_t stride, double* tau) {
  using namespace draw;
  const auto at = [=](std::size_t i, std::size_t j) -> double& { return g[(i * d + j) * stride]; };
  for (std::size_t k = 0; k < d; ++k) {
    const double alpha = at(k, k);
    double tail = 0.0;
    for (std::size_t i = k + 1; i < d; ++i) tail = add(tail, mul(at(i, k), at(i, k)));
    if (tail == 0.0) {
      tau[k * stride] = 0.0;
      continue;
    }
    const double norm = sqrt(add(mul(alpha, alpha), tail));
    const double beta = alpha >= 0 ? -norm : norm;
    tau[k * stride] = div(sub(beta, alpha), beta);
    const double pivot = sub(alpha, beta);
    for (std::size_t i = k + 1; i < d; ++i) at(i, k) = div(at(i, k), pivot);
    at(k, k) = beta;
    // The other columns: a_j ← a_j − τ v (vᵀ a_j).
    const double t = tau[k * stride];
    for (std::size_t j = k + 1; j < d; ++j) {
      double w = at(k, j);
      for (std::size_t i = k + 1; i < d; ++i) w = add(w, mul(at(i, k), at(i, j)));
      w = mul(w, t);
      at(k, j) = sub(at(k, j), w);
      for (std::size_t i = k + 1; i < d; ++i) at(i, j) = sub(at(i, j), mul(at(i, k), w));
    }
  }
}

/// Row i of Q from a factored g: Qᵀ e_i = H_{d−1} ⋯ H_0 e_i (the H_k are symmetric), into
/// row[j·stride]. With `haar`, column k is negated where R_kk < 0 (Q·diag(sign R_kk), the
/// sign fix that makes Q Haar-distributed).
OMKL_HD void householder_q_row(const double* g, const double* tau, std::size_t d, std::size_t stride,
                               std::size_t i, bool haar, double* row) {
  using namespace draw;
  const auto at = [=](std::size_t r, std::size_t c) { return g[(r * d + c) * stride]; };
  for (std::size_t j = 0; j < d; ++j) row[j * stride] = j == i ? 1.0 : 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    const double t = tau[k * stride];
    if (t == 0.0) continue;
    double w = row[k * stride];
    for (std::size_t j = k + 1; j < d; ++j) w = add(w, mul(at(j, k), row[j * stride]));
    w = mul(w, t);
    row[k * stride] = sub(row[k * stride], w);
    for (std::size_t j = k + 1; j < d; ++j) row[j * stride] = sub(row[j * stride], mul(at(j, k), w));
  }
  if (haar)
    for (std::size_t k = 0; k < d; ++k)
      if (at(k, k) < 0) row[k * stride] = -row[k * stride];
}

}  // namespace omkl::detail
