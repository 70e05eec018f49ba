/// @file presets.cpp
/// @brief The published protocols (spec/raker.md §7.2; spec/graph-aided.md §5.1).
#include "omkl/error.h"
#include "omkl/study.h"

namespace omkl {

namespace {
const std::vector<Preset>& presets() {
  static const std::vector<Preset> all = {
      {"jmlr19-regression",
       "Raker/AdaRaker JMLR 2019 regression: 3 Gaussians σ ∈ {0.1,1,10} (5-kernel exact dictionary "
       "for MKL baselines), D = 50, step 1/√T, η_w = 0.5, λ = 0.01; data used as stored",
       {{"D", "50"}, {"lambda", "0.01"}, {"eta_w", "0.5"}, {"B", "50"}},
       Normalization::None},
      {"jmlr19-classification",
       "Raker/AdaRaker JMLR 2019 classification: as regression with the logistic loss and "
       "λ = 0.005 (AdaRaker reference profile: 0.0005)",
       {{"D", "50"}, {"eta_w", "0.5"}, {"B", "50"}},
       Normalization::None},
  };
  return all;
}
}  // namespace

const Preset& find_preset(const std::string& name) {
  std::string known;
  for (const auto& p : presets()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw ConfigError("unknown preset '" + name + "' (known: " + known + ")");
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : presets()) names.push_back(p.name);
  return names;
}

}  // namespace omkl
