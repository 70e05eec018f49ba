#include <algorithm>
#include <limits>
#include <sstream>

#include "core/algorithm_base.h"
#include "core/closest_name.h"
#include "omkl/algorithm.h"
#include "omkl/error.h"

namespace omkl::detail {

double Algorithm::regret_regularizer(std::size_t) const { return std::numeric_limits<double>::quiet_NaN(); }

double Algorithm::server_seconds() const { return std::numeric_limits<double>::quiet_NaN(); }

void Algorithm::run_distributed(const double*, const double*, std::size_t, std::size_t, double*, Communicator&,
                                double) {
  throw ConfigError("this algorithm does not run as a server and clients in separate processes");
}

void Algorithm::step_block(const double* x, const double* y, std::size_t n, std::size_t n_features,
                           double* predictions) {
  const std::size_t r = n_replicates();
  for (std::size_t t = 0; t < n; ++t) step(x + t * n_features, y[t], predictions + t * r);
}

void Algorithm::step_block_replicated(const StreamRows&, double*) {
  throw Error("this algorithm runs every replicate on one shared stream (it has no per-replicate streams)");
}

// Each family's registration function, defined in its folder under src/families/.
void add_raker_algorithms(std::vector<AlgorithmInfo>& registry);
void add_exact_kernel_algorithms(std::vector<AlgorithmInfo>& registry);
void add_ada_mkl_algorithms(std::vector<AlgorithmInfo>& registry);
void add_graph_aided_algorithms(std::vector<AlgorithmInfo>& registry);
void add_federated_algorithms(std::vector<AlgorithmInfo>& registry);
void add_bandit_algorithms(std::vector<AlgorithmInfo>& registry);

const std::vector<FamilyRegistration>& algorithm_families() {
  // The families: one line each. A new family adds its line here and its folder; the CLI's
  // list and describe, make_learner(), checkpoints and studies all read this table.
  static const std::vector<FamilyRegistration> families = {
      {"raker", add_raker_algorithms},
      {"exact_kernel", add_exact_kernel_algorithms},
      {"ada_mkl", add_ada_mkl_algorithms},
      {"graph_aided", add_graph_aided_algorithms},
      {"federated", add_federated_algorithms},
      {"bandit", add_bandit_algorithms},
  };
  return families;
}

const std::vector<AlgorithmInfo>& algorithm_registry() {
  // Built once, immutable afterwards: each family adds its entries in one function.
  static const std::vector<AlgorithmInfo> registry = [] {
    std::vector<AlgorithmInfo> all;
    for (const FamilyRegistration& family : algorithm_families()) {
      const std::size_t first = all.size();
      family.add(all);
      for (std::size_t i = first; i < all.size(); ++i) all[i].family = family.name;
    }
    for (std::size_t i = 0; i < all.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (all[i].name == all[j].name)
          throw Error("algorithm '" + all[i].name + "' is registered by both the " + all[j].family + " and the " +
                      all[i].family + " family");
    std::sort(all.begin(), all.end(),
              [](const AlgorithmInfo& a, const AlgorithmInfo& b) { return a.name < b.name; });
    return all;
  }();
  return registry;
}

const AlgorithmInfo& find_algorithm(const std::string& name) {
  for (const auto& info : algorithm_registry())
    if (info.name == name) return info;
  std::vector<std::string> names;
  std::string known;
  for (const auto& info : algorithm_registry()) {
    names.push_back(info.name);
    known += (known.empty() ? "" : ", ") + info.name;
  }
  throw ConfigError("unknown algorithm '" + name + "'" + did_you_mean(name, names) +
                    " (known: " + known + ")");
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
  algorithm->set_resolved_params(reader.resolved());
  return algorithm;
}

}  // namespace omkl::detail

namespace omkl {

std::vector<AlgorithmSummary> list_algorithms() {
  std::vector<AlgorithmSummary> out;
  for (const auto& info : detail::algorithm_registry()) out.push_back({info.name, info.family, info.summary});
  return out;
}

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const auto& info : detail::algorithm_registry()) names.push_back(info.name);
  return names;
}

std::string describe_algorithm(const std::string& name) {
  const auto& info = detail::find_algorithm(name);
  // Build a tiny instance so that the algorithm itself lists the parameters it reads, on two
  // probe streams of different lengths and client counts: a default that differs between them
  // follows from the stream (1/√T, ⌊log2 T⌋ + 1, the stream's clients), and its line states the
  // rule instead of the probe's number.
  const auto probe = [&](std::size_t horizon, std::size_t clients) {
    detail::AlgoContext context;
    context.n_features = 2;
    context.horizon = horizon;
    context.n_clients = clients;  // read by the federated family only
    detail::ParamReader reader(name, {});
    try {
      info.make(reader, context);
    } catch (const ConfigError&) {
      // Classification-only algorithms reject the regression probe; describe them as such.
      context.task = Task::Classification;
      reader = detail::ParamReader(name, {});
      info.make(reader, context);
    }
    return reader;
  };
  const detail::ParamReader shown = probe(16, 2), other = probe(1200, 3);
  std::vector<std::string> from_stream;
  for (const detail::ParamDoc& doc : shown.documented())
    for (const detail::ParamDoc& again : other.documented())
      if (again.key == doc.key && again.fallback != doc.fallback) from_stream.push_back(doc.key);
  return info.name + ": " + info.summary + " (family: " + info.family + ")\n" + shown.describe(from_stream);
}

}  // namespace omkl
