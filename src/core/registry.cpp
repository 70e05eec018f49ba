#include <algorithm>
#include <limits>
#include <sstream>

#include "core/algorithm_base.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"

namespace omkl::detail {

double Algorithm::regret_regularizer(std::size_t) const { return std::numeric_limits<double>::quiet_NaN(); }

void Algorithm::step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                           double* predictions) {
  const std::size_t r = n_replicates();
  for (std::size_t t = 0; t < n; ++t) step(x + t * n_features, y[t], predictions + t * r);
}

const std::vector<AlgorithmInfo>& algorithm_registry() {
  // Built once, immutable afterwards: each family adds its entries in one function.
  static const std::vector<AlgorithmInfo> registry = [] {
    std::vector<AlgorithmInfo> all;
    add_raker_algorithms(all);
    add_exact_kernel_algorithms(all);
    add_ada_mkl_algorithms(all);
    add_graph_aided_algorithms(all);
    std::sort(all.begin(), all.end(),
              [](const AlgorithmInfo& a, const AlgorithmInfo& b) { return a.name < b.name; });
    return all;
  }();
  return registry;
}

const AlgorithmInfo& find_algorithm(const std::string& name) {
  for (const auto& info : algorithm_registry())
    if (info.name == name) return info;
  std::string known;
  for (const auto& info : algorithm_registry()) known += (known.empty() ? "" : ", ") + info.name;
  throw ConfigError("unknown algorithm '" + name + "' (known: " + known + ")");
}

std::unique_ptr<Algorithm> make_algorithm(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& params,
    const std::vector<std::pair<std::string, std::string>>& defaults, const AlgoContext& context) {
  const AlgorithmInfo& info = find_algorithm(name);
  if (context.n_features == 0) throw ConfigError("algorithm '" + name + "': the stream has no features");
  if (context.replicates.empty()) throw ConfigError("algorithm '" + name + "': no replicates requested");
  ParamReader reader(name, params, defaults);
  auto algorithm = info.make(reader, context);
  reader.finish();
  return algorithm;
}

}  // namespace omkl::detail

namespace omkl {

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& info : detail::algorithm_registry()) names.push_back(info.name);
  return names;
}

std::string describe_algorithm(const std::string& name) {
  const auto& info = detail::find_algorithm(name);
  // Build a tiny instance so that the algorithm itself lists the parameters it reads.
  detail::AlgoContext context;
  context.n_features = 2;
  context.horizon = 16;
  detail::ParamReader reader(name, {});
  try {
    info.make(reader, context);
  } catch (const ConfigError&) {
    // Classification-only algorithms reject the regression probe; describe them as such.
    context.task = Task::Classification;
    reader = detail::ParamReader(name, {});
    info.make(reader, context);
  }
  return info.name + ": " + info.summary + "\n" + reader.describe();
}

}  // namespace omkl
