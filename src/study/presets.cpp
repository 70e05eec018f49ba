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
       Normalization::None,
       false,
       0,
       {"raker", "adaraker"}},
      {"jmlr19-classification",
       "Raker/AdaRaker JMLR 2019 classification: as regression with the logistic loss and "
       "λ = 0.005 (AdaRaker reference profile: 0.0005)",
       {{"D", "50"}, {"eta_w", "0.5"}, {"B", "50"}},
       Normalization::None,
       false,
       0,
       {"raker", "adaraker"},
       Spread::Sample,
       0,
       {},
       /*classification=*/true},
      // spec/graph-aided.md §5.1 (journal tables). R = 20 repetitions, the study's default --seeds here;
      // their spread is the population standard deviation (§1.7, ddof = 0), as POF-MKL's (§4.6).
      // Keys are soft defaults shared by every algorithm of a study; each algorithm reads only
      // the ones it knows: dict/D/lambda/eta/eta_schedule/switch_step/M by omkl-gf, omkl-sfg,
      // omkl-sfg-r; rf/feature_scale/step_scale/shrink_scale/weight_rule/first_error_is_one by
      // Raker (§4.4: i.i.d. frequencies, 1/√D features, θ ← θ − η_t[2(f − y)z + 2λθ], exponential
      // weights with step η_t and the updated θ in the ridge term (eta_w, eta_w_schedule,
      // weight_theta), the first error counted as it is); eta/eta_schedule by the exact-kernel
      // baselines omkr, rbf-1, poly-2 (§4.1–4.2) and dict/D/rf/feature_scale/eta/eta_schedule by
      // rfomkr (§4.3); these keep their own ridge-free rules.
      // No "beta": omkl-sfg-r reads it as a fixed refinement threshold.
      {"jmlr23-graph",
       "Graph-aided OMKL, JMLR 2023 tables: 76 kernels (51 Gaussians + 25 Laplacians, jmlr23-76), "
       "D = 50, λ = 1e-3, η_t = ξ_t = η_e,t = 0.1/√t, switch step 300, M = 10 (OMKL-GF J = 2); "
       "targets min-max scaled, inputs divided by the largest row norm (§1.2); 20 repetitions",
       {{"dict", "jmlr23-76"},
        {"D", "50"},
        {"lambda", "0.001"},
        {"eta", "0.1"},
        {"eta_schedule", "inv_sqrt_t"},
        {"switch_step", "300"},
        {"M", "10"},
        {"J", "2"},
        {"rf", "rf"},
        {"feature_scale", "inv_sqrt_D"},
        {"step_scale", "1"},
        {"shrink_scale", "2"},
        {"weight_rule", "exp_eta"},
        // §4.4: Raker's weight step is the same 0.1/√t and its ridge term uses the updated θ.
        {"eta_w", "0.1"},
        {"eta_w_schedule", "inv_sqrt_t"},
        {"weight_theta", "post"},
        {"first_error_is_one", "false"}},
       Normalization::Jmlr23,
       false,
       0,
       {"omkl-gf", "omkl-sfg", "omkl-sfg-r"},
       Spread::Population,
       20},
      // spec/graph-aided.md §2.7 / §5.5b (conference tables; no reference code exists, so use it
      // with the paper profile). ξ = η = 1/√T is the default of eta_schedule=const. M is left to
      // the algorithms (SFG-MKL / SFG-MKL-R default 5, OMKL-GF 10, as in [C]); J = 1 is read by
      // OMKL-GF only. R = 50 repetitions, the study's default --seeds with this preset.
      {"conf-sfg",
       "Graph-aided OMKL, conference version (SFG-MKL / SFG-MKL-R): 41 Gaussians (conf-41), "
       "D = 50, λ = 1e-3, ξ = η = 1/√T constant, switch step 300, M = 5 for SFG-MKL(-R) and "
       "M = 10, J = 1 for OMKL-GF (algorithm defaults); §1.2 preprocessing; 50 repetitions",
       {{"dict", "conf-41"},
        {"D", "50"},
        {"lambda", "0.001"},
        {"eta_schedule", "const"},
        {"switch_step", "300"},
        {"J", "1"},
        {"rf", "rf"},
        {"feature_scale", "inv_sqrt_D"},
        {"step_scale", "1"},
        {"shrink_scale", "2"},
        {"weight_rule", "exp_eta"},
        {"first_error_is_one", "false"}},
       Normalization::Jmlr23,
       false,
       0,
       {"sfg-mkl", "sfg-mkl-r", "omkl-gf"},
       Spread::Sample,
       50},
      // spec/federated.md §4 (POF-MKL, NeurIPS 2022): T = 500 rounds, K from the data (Naval 23,
      // UJI 42, Air 240 with --group-column site), i.i.d. or by-group split (§4.3), inputs divided
      // by the largest row norm and targets min-max scaled over the rows used (§4.2); the 51
      // Gaussians of §4.4, λ = 1e-3, η = η_k = 1/√T, ξ = 1; D from M and the 1000-float upload
      // cap (100 / 20 / 9 for M = 1 / 25 / 51) are the algorithms' own defaults.
      {"fed-pofmkl",
       "POF-MKL, NeurIPS 2022: K clients × T = 500 rounds (K from the data; --group-column for the "
       "non-i.i.d. split), 51 Gaussians (fed-51), λ = 1e-3, η = η_k = 1/√T, ξ = 1, D from M under "
       "1000 uploaded floats per client-step; x / max‖x‖, y min-max (§4.2); 20 draws",
       {{"lambda", "0.001"}, {"xi", "1"}},
       Normalization::Jmlr23,
       false,
       500,
       {"pof-mkl:M=1", "pof-mkl:M=25", "pof-mkl:M=51", "em-kofl", "vm-kofl", "ofmkl-avg", "ofskl", "perfedavg"},
       Spread::Population,
       20},
      // spec/bandit.md §8 (OKS++ / IOKS, ECML-PKDD 2022): the six Gaussians σ = 2^−2 … 2^3, every
      // feature to [−1, 1] and regression targets to [0, 1] (§8.2), a fresh permutation of the
      // stream per repetition (§8.4); the loss (and so the table) from --loss; U, C₀, G, G₁, ℓ_max
      // follow the loss (§1.3). 10 repetitions (§8.4); OKS's c_λ and Raker's c_η are grids (§8.5).
      {"bandit-oks",
       "Online kernel selection under bandit feedback, ECML-PKDD 2022: 6 Gaussians σ ∈ {0.25 … 8} (oks-6), "
       "features to [−1, 1], targets to [0, 1], a fresh permutation per repetition; --loss "
       "logistic|square|absolute picks the table; 10 repetitions; classes written 0/1: --labels pm1",
       {{"dict", "oks-6"}},
       Normalization::Symmetric,
       true,
       0,
       {"oks++", "ioks", "rf-oks++", "rf-ioks"},
       Spread::Sample,
       10,
       // Tables 4 and 7 (absolute loss) have no OKS++ rows, the loss being non-smooth (§4): OKS and
       // RF-OKS take their place beside IOKS and RF-IOKS (spec/bandit.md §8.8).
       {{"absolute", {"oks", "ioks", "rf-oks", "rf-ioks"}}}},
  };
  return all;
}
}  // namespace

std::size_t default_seeds(const std::string& preset) {
  constexpr std::size_t kWithoutRepetitions = 5;
  if (preset.empty()) return kWithoutRepetitions;
  const std::size_t stated = find_preset(preset).repetitions;
  return stated > 0 ? stated : kWithoutRepetitions;
}

const std::vector<std::string>& preset_algorithms(const Preset& preset, const std::string& loss) {
  for (const auto& [table_loss, algorithms] : preset.algorithms_by_loss)
    if (table_loss == loss) return algorithms;
  return preset.algorithms;
}

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

std::string to_string(Spread spread) {
  switch (spread) {
    case Spread::Sample: return "sample";
    case Spread::Population: return "population";
    case Spread::Default: break;
  }
  return "default";
}

RegretComparator parse_regret_comparator(const std::string& text) {
  if (text == "auto") return RegretComparator::Auto;
  if (text == "exact") return RegretComparator::Exact;
  if (text == "rf") return RegretComparator::RandomFeatures;
  throw ConfigError("unknown regret comparator '" + text + "' (expected auto, exact or rf)");
}

Spread parse_spread(const std::string& text) {
  if (text == "sample") return Spread::Sample;
  if (text == "population") return Spread::Population;
  throw ConfigError("unknown standard deviation '" + text + "' (expected sample or population)");
}

}  // namespace omkl
