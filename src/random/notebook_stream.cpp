#include "random/notebook_stream.h"

#include <algorithm>
#include <map>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {

namespace {
constexpr std::uint64_t kNotebookJ = 2;
constexpr std::uint64_t kSwitchStep = 300;
constexpr std::uint64_t kGfLastRegeneration = kSwitchStep + 2;
}  // namespace

const std::vector<std::size_t>& notebook_m_order() {
  static const std::vector<std::size_t> order = {5, 10, 1, 15, 20};
  return order;
}

std::uint64_t notebook_run_uniforms(NotebookRun run, std::size_t M, std::size_t horizon) {
  const std::uint64_t T = horizon;
  switch (run) {
    case NotebookRun::FeaturesOnly: return 0;
    case NotebookRun::Gf: {
      const std::uint64_t regen = std::min(T, kGfLastRegeneration);
      return regen * (kNotebookJ * M + 1) + (T - regen);
    }
    case NotebookRun::Sfg: return std::min(T, kSwitchStep);
    case NotebookRun::SfgR: {
      const std::uint64_t before = std::min(T, kSwitchStep);
      return 2 * before + (T - before);
    }
  }
  return 0;
}

std::vector<std::vector<double>> draw_notebook_features(NumpyLegacyRandom& stream, const Dictionary& dictionary,
                                                        std::size_t n_rff, std::size_t n_features) {
  for (const KernelSpec& k : dictionary)
    if (k.family != KernelFamily::Gaussian && k.family != KernelFamily::Laplacian)
      throw ConfigError("rng=numpy_legacy draws Gaussian and Laplacian features only, not " + k.name());
  std::vector<std::vector<double>> out(dictionary.size());
  const std::size_t D = n_rff, d = n_features;
  for (KernelFamily family : {KernelFamily::Gaussian, KernelFamily::Laplacian}) {
    for (std::size_t k = 0; k < dictionary.size(); ++k) {
      if (dictionary[k].family != family) continue;
      const double scale = 1.0 / dictionary[k].sigma;
      std::vector<double>& v = out[k];
      v.assign(D * d, 0.0);
      // Ψ is d × D, filled row-major: row a (input coordinate) over columns c (features).
      for (std::size_t a = 0; a < d; ++a)
        for (std::size_t c = 0; c < D; ++c)
          v[c * d + a] = (family == KernelFamily::Gaussian ? stream.normal() : stream.cauchy()) * scale;
    }
  }
  return out;
}

std::vector<NotebookStart> notebook_starts(std::uint32_t seed, const std::vector<std::uint64_t>& replicates,
                                           NotebookRun run, std::size_t M, const NotebookShape& shape) {
  if (shape.horizon == 0)
    throw ConfigError("rng=numpy_legacy needs the stream length T (the notebook's draws per run depend on it)");
  const auto& order = notebook_m_order();
  if (run != NotebookRun::FeaturesOnly && std::find(order.begin(), order.end(), M) == order.end())
    throw ConfigError("rng=numpy_legacy replays the journal notebook, which runs M ∈ {1, 5, 10, 15, 20}; M = " +
                      std::to_string(M) + " has no place in its stream");
  // Uniforms of one whole repetition after its features, and those before `run` within it.
  std::uint64_t per_repetition = 0, before_run = 0;
  for (NotebookRun family : {NotebookRun::Gf, NotebookRun::Sfg, NotebookRun::SfgR}) {
    for (std::size_t m : order) {
      if (family == run && m == M) before_run = per_repetition;
      per_repetition += notebook_run_uniforms(family, m, shape.horizon);
    }
  }
  std::map<std::uint64_t, std::vector<std::size_t>> wanted;  // repetition → output slots
  for (std::size_t i = 0; i < replicates.size(); ++i) wanted[replicates[i]].push_back(i);
  std::vector<NotebookStart> starts(replicates.size());
  if (wanted.empty()) return starts;
  NumpyLegacyRandom stream(seed);
  const std::uint64_t last = wanted.rbegin()->first;
  for (std::uint64_t r = 0; r <= last; ++r) {
    auto frequencies = draw_notebook_features(stream, shape.dictionary, shape.n_rff, shape.n_features);
    const auto it = wanted.find(r);
    if (it != wanted.end()) {
      NumpyLegacyRandom at_run = stream;
      at_run.discard_uniforms(before_run);
      for (std::size_t slot : it->second) {
        starts[slot].frequencies = frequencies;
        starts[slot].stream = at_run;
      }
    }
    stream.discard_uniforms(per_repetition);
  }
  return starts;
}

}  // namespace omkl::detail
