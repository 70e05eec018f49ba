/// @file loss.h
/// @brief Data losses C(f, y) and their derivatives ∂C/∂f (spec/raker.md §2).
///
/// The regulariser λ‖θ‖² is not part of these functions: the θ update applies it as a shrink,
/// so one loop serves every loss (the loss is a parameter, never a copy of the loop).
#pragma once

#include <cmath>
#include <string>

#include "core/host_device.h"

namespace omkl {

namespace detail {
class ParamReader;
}

enum class LossKind : int { Squared = 0, Logistic = 1, Hinge = 2, SquaredHinge = 3, Absolute = 4 };

LossKind parse_loss(const std::string& text);
std::string to_string(LossKind loss);

/// Whether the loss reads y as a label ±1 (logistic, hinge, squared hinge): on other targets it
/// would learn nothing meaningful, and the error rate it reports would be made up.
inline bool needs_labels(LossKind loss) {
  return loss == LossKind::Logistic || loss == LossKind::Hinge || loss == LossKind::SquaredHinge;
}
/// The end of every refusal of a stream whose targets are not ±1: how two classes written
/// otherwise become ±1 (map_labels_to_pm1, --labels pm1).
inline constexpr const char* kLabelsHint =
    "the stream's targets are not all −1 or +1 (two classes written otherwise, e.g. 0/1, map to ±1 with "
    "labels \"pm1\": --labels pm1, labels=\"pm1\" in Python, map_labels_to_pm1() in C++)";
/// Fails the parameter "loss" (ParamReader::fail) where `loss` needs labels and the stream's
/// targets are not all ±1 (`labels` false): every family's one check of its loss against the task.
void check_loss_labels(detail::ParamReader& params, LossKind loss, bool labels);

namespace detail {

/// log(1 + e^{-u}) without overflow.
OMKL_HD double log1p_exp_neg(double u) {
  return (u > 0 ? 0.0 : -u) + log1p(exp(-fabs(u)));
}

/// Data loss C(f, y).
OMKL_HD double loss_value(LossKind loss, double f, double y) {
  switch (loss) {
    case LossKind::Squared: return (y - f) * (y - f);
    case LossKind::Logistic: return log1p_exp_neg(y * f);
    case LossKind::Hinge: { double m = 1.0 - y * f; return m > 0 ? m : 0.0; }
    case LossKind::SquaredHinge: { double m = 1.0 - y * f; return m > 0 ? m * m : 0.0; }
    case LossKind::Absolute: return fabs(y - f);
  }
  return 0.0;
}

/// Derivative ∂C/∂f. Logistic: −y·s(−y f) with s the sigmoid, evaluated as
/// −y·exp(−log(1 + e^{y f})) so that it neither overflows nor loses precision.
/// Hinge and absolute use the subgradient 0 at the kink.
OMKL_HD double loss_derivative(LossKind loss, double f, double y) {
  switch (loss) {
    case LossKind::Squared: return 2.0 * (f - y);
    case LossKind::Logistic: return -y * exp(-log1p_exp_neg(-y * f));
    case LossKind::Hinge: return (y * f < 1.0) ? -y : 0.0;
    case LossKind::SquaredHinge: { double m = 1.0 - y * f; return m > 0 ? -2.0 * y * m : 0.0; }
    case LossKind::Absolute: return (f > y) ? 1.0 : ((f < y) ? -1.0 : 0.0);
  }
  return 0.0;
}

}  // namespace detail
}  // namespace omkl
