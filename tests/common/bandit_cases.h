/// @file bandit_cases.h
/// @brief The bandit family's configurations that a resident walk must run as the host path
/// does (every rule, loss and mode, the random features and the kernel expansions), and their
/// stream: shared by the host driver's tests (test_resident_bandit.cpp) and the GPU's
/// (test_cuda_backend.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/test_helpers.h"
#include "omkl/dataset.h"

namespace omkl::test {

/// Inputs in [−1, 1]^4; targets in [0, 1] (regression) or ±1 (classification).
inline Dataset bandit_case_stream(std::size_t n, Task task) {
  Dataset data = random_stream(n, 4, Task::Regression, 21);
  for (double& v : data.x) v = 2.0 * v - 1.0;
  if (task == Task::Classification) {
    data.task = Task::Classification;
    for (double& v : data.y) v = v > 0.5 ? 1.0 : -1.0;
  }
  return data;
}

struct BanditCase {
  const char* name;
  Task task;
  std::vector<std::pair<std::string, std::string>> params;
};

inline std::vector<BanditCase> bandit_cases() {
  using Params = std::vector<std::pair<std::string, std::string>>;
  // The kernel expansions' dictionary: all three bounded kernel families.
  const std::string expansion_dict = "gauss:0.5+lap:1+cauchy:2+gauss:4+lap_l2:1.5";
  const Params base = {{"D", "24"}, {"dict", "gauss:0.5+gauss:1+gauss:2+gauss:4"}};
  const auto plus = [&](Params extra) {
    Params p = base;
    p.insert(p.end(), extra.begin(), extra.end());
    return p;
  };
  return {
      {"rf-oks", Task::Regression, plus({{"c_lambda", "5"}})},
      {"rf-oks++", Task::Regression, base},
      {"rf-oks++", Task::Classification, plus({{"logistic_mode", "reference"}})},
      {"rf-oks++", Task::Classification, plus({{"logistic_mode", "paper"}, {"independent_omega", "true"}})},
      {"rf-ioks", Task::Regression, base},
      {"rf-ioks", Task::Regression, plus({{"loss", "absolute"}, {"bisection", "clean"}})},
      {"rf-ioks", Task::Classification, base},
      {"oks", Task::Regression, {{"dict", expansion_dict}, {"c_lambda", "5"}}},
      {"oks++", Task::Regression, {{"dict", expansion_dict}}},
      {"oks++", Task::Classification, {{"dict", expansion_dict}, {"logistic_mode", "reference"}}},
      {"ioks", Task::Regression, {{"dict", expansion_dict}, {"loss", "absolute"}}},
      {"ioks", Task::Classification, {{"dict", expansion_dict}, {"bisection", "clean"}}},
  };
}

}  // namespace omkl::test
