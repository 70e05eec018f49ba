/// @file bandit.h
/// @brief The bandit kernel-selection family (spec/bandit.md): OKS, OKS++, IOKS and their
/// random-feature versions (bandit.cpp, one loop over a selection rule and a representation),
/// and the baseline LKMBooks (lkmbooks.cpp). Raker in this paper's configuration is the raker
/// family's `raker` with the harness's parameters. This header exposes the §8.6 logs for tests
/// and the family's registration.
#pragma once

#include <cstddef>
#include <vector>

#include "core/algorithm_base.h"

namespace omkl::detail {

/// §8.6: per kernel, how often it was selected and the loss it suffered when selected; the
/// sampling distribution the next round would use.
struct BanditLog {
  std::vector<double> selected;
  std::vector<double> p;
  std::vector<double> kernel_loss;
  std::vector<double> kernel_mistakes;  ///< classification: ŷ = sign⁺(f_I) ≠ y per kernel (0 otherwise)
};
/// The log of one replicate of an OKS / OKS++ / IOKS (or RF) algorithm; Error for others.
BanditLog bandit_log(const Algorithm& algorithm, std::size_t replicate);

void add_bandit_algorithms(std::vector<AlgorithmInfo>& registry);

/// The bandit protocol's metric (§2.3): ŷ = +1 if f ≥ 0, so a score of 0 (a kernel's first
/// pick, LKMBooks' first round) is a mistake on a −1 label. Every bandit algorithm reports it.
inline MetricConvention bandit_metric_convention() {
  MetricConvention m;
  m.zero_score_is_positive = true;
  return m;
}
void add_lkmbooks(std::vector<AlgorithmInfo>& registry);  // lkmbooks.cpp

}  // namespace omkl::detail
