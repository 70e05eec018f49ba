/// @file federated_split.cpp
/// @brief arrange_federated() (omkl/dataset.h): dealing a pooled dataset to K clients × T
/// rounds, i.i.d. or by group (spec/federated.md §4.3).
///
/// The permutation and the clients' time orders come from counter-based streams keyed by the
/// data seed alone (RngPurpose::Permutation), so every RF draw of a study sees the same clients
/// and the same order (§4.3: "data order and partition are fixed across the RF draws").
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "omkl/dataset.h"
#include "omkl/error.h"
#include "random/rng.h"

namespace omkl {

namespace {

// Stream indices of the two shuffles (distinct from every other use of RngPurpose::Permutation).
constexpr std::uint64_t kIidPermutation = 0xfed1;
constexpr std::uint64_t kClientShuffle = 0xfed2;
constexpr std::uint64_t kSiteShuffle = 0xfed3;

// Fisher–Yates from the back, one below() per position.
void shuffle(std::vector<std::size_t>& v, detail::RandomStream& rng) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.below(i)]);
}

// a × b as text, or "more than 2^64" where it overflows (counts from the command line).
std::string product_text(std::size_t a, std::size_t b) {
  std::size_t product = 0;
  return __builtin_mul_overflow(a, b, &product) ? std::string("more than 2^64") : std::to_string(product);
}

// The rows of every client, iid: one permutation of all rows, cut into K runs of T.
std::vector<std::vector<std::size_t>> iid_clients(const Dataset& data, const FederatedLayout& layout, std::size_t K) {
  const std::size_t T = layout.rounds;
  if (K > data.n_samples / T)  // K·T > n, without overflowing
    throw ConfigError(data.name + ": " + std::to_string(K) + " clients × " + std::to_string(T) + " rounds need " +
                      product_text(K, T) + " rows, the stream has " + std::to_string(data.n_samples));
  std::vector<std::size_t> order(data.n_samples);
  std::iota(order.begin(), order.end(), std::size_t{0});
  detail::RandomStream rng(layout.seed, 0, detail::RngPurpose::Permutation, kIidPermutation);
  shuffle(order, rng);
  std::vector<std::vector<std::size_t>> clients(K);
  for (std::size_t k = 0; k < K; ++k)
    clients[k].assign(order.begin() + static_cast<std::ptrdiff_t>(k * T),
                      order.begin() + static_cast<std::ptrdiff_t>((k + 1) * T));
  return clients;
}

// The rows of every client, non-iid: §4.3's majority block plus minority blocks, shuffled (or not).
std::vector<std::vector<std::size_t>> grouped_clients(const Dataset& data, const FederatedLayout& layout,
                                                      std::size_t K_wanted, std::size_t& K_out) {
  // The rows of each group in stream (chronological) order; groups in ascending label order.
  std::map<std::uint32_t, std::vector<std::size_t>> by_label;
  for (std::size_t i = 0; i < data.n_samples; ++i) by_label[data.groups[i]].push_back(i);
  std::vector<std::vector<std::size_t>> sites;
  std::vector<std::uint32_t> labels;
  for (auto& [label, rows] : by_label) {
    labels.push_back(label);
    sites.push_back(std::move(rows));
  }
  const std::size_t G = sites.size(), T = layout.rounds;
  const std::size_t m = layout.minority_rows ? layout.minority_rows : T / 10;
  if (G < 2)
    throw ConfigError(data.name + ": the group column has " + std::to_string(G) +
                      " distinct value(s); a grouped (non-i.i.d.) split needs at least 2");
  if (m == 0)  // T < 10 with the default: a "non-i.i.d." deal that mixes nothing would be silent i.i.d.-by-group
    throw ConfigError("federated layout: a grouped (non-i.i.d.) split of " + std::to_string(T) +
                      " rounds takes rounds / 10 = 0 rows from every other group; it needs at least 10 rounds");
  if ((G - 1) * m >= T)
    throw ConfigError("federated layout: " + std::to_string(G - 1) + " other groups × " + std::to_string(m) +
                      " minority rows leave no room for a client's own group in " + std::to_string(T) + " rounds");
  const std::size_t own = T - (G - 1) * m;
  std::size_t per_group = 0;
  if (K_wanted == 0) {
    per_group = sites[0].size() / T;
    for (const auto& rows : sites) per_group = std::min(per_group, rows.size() / T);
    if (per_group == 0)
      throw ConfigError(data.name + ": every group needs at least " + std::to_string(T) +
                        " rows for one client of " + std::to_string(T) + " rounds");
  } else {
    if (K_wanted % G != 0)
      throw ConfigError("federated layout: " + std::to_string(K_wanted) + " clients cannot be split evenly over " +
                        std::to_string(G) + " groups");
    per_group = K_wanted / G;
  }
  for (std::size_t s = 0; s < G; ++s)
    if (per_group > sites[s].size() / T)  // per_group·T > the group's rows, without overflowing
      throw ConfigError(data.name + ": group " + std::to_string(labels[s]) + " has " + std::to_string(sites[s].size()) +
                        " rows; " + std::to_string(per_group) + " clients per group × " + std::to_string(T) +
                        " rounds need " + product_text(per_group, T));
  const std::size_t C = per_group;
  K_out = G * C;
  // noniid.within_site_order = shuffled: the C·T rows the deal takes from each group (its first,
  // as in stream order) permuted first, so a client's blocks are no longer stretches of time.
  if (layout.shuffle_sites)
    for (std::size_t s = 0; s < G; ++s) {
      std::vector<std::size_t> used(sites[s].begin(), sites[s].begin() + static_cast<std::ptrdiff_t>(C * T));
      detail::RandomStream rng(layout.seed, s, detail::RngPurpose::Permutation, kSiteShuffle);
      shuffle(used, rng);
      std::copy(used.begin(), used.end(), sites[s].begin());
    }
  std::vector<std::vector<std::size_t>> clients(K_out);
  for (std::size_t s = 0; s < G; ++s) {
    for (std::size_t g = 0; g < C; ++g) {
      std::vector<std::size_t>& rows = clients[s * C + g];
      rows.reserve(T);
      for (std::size_t i = 0; i < own; ++i) rows.push_back(sites[s][own * g + i]);
      for (std::size_t other = 0; other < G; ++other) {
        if (other == s) continue;
        const std::size_t r = s < other ? s : s - 1;  // s's place among the groups other than `other`
        const std::size_t first = own * C + m * (r * C + g);
        for (std::size_t i = 0; i < m; ++i) rows.push_back(sites[other][first + i]);
      }
      if (!layout.shuffle_within_client) continue;  // §4.3's listing order (--client-order listed)
      detail::RandomStream rng(layout.seed, s * C + g, detail::RngPurpose::Permutation, kClientShuffle);
      shuffle(rows, rng);
    }
  }
  return clients;
}

}  // namespace

void arrange_federated(Dataset& data, const FederatedLayout& layout) {
  if (layout.rounds == 0) throw ConfigError("federated layout: the number of rounds must be at least 1");
  if (data.n_clients != 0) throw ConfigError(data.name + ": the stream is already arranged for federated clients");
  if (!data.groups.empty() && data.groups.size() != data.n_samples)
    throw ConfigError(data.name + ": " + std::to_string(data.groups.size()) + " group labels for " +
                      std::to_string(data.n_samples) + " rows");
  std::size_t K = layout.clients;
  std::vector<std::vector<std::size_t>> clients;
  if (data.groups.empty()) {
    if (K == 0) K = data.n_samples / layout.rounds;
    if (K == 0)
      throw ConfigError(data.name + ": " + std::to_string(data.n_samples) + " rows are fewer than one client's " +
                        std::to_string(layout.rounds) + " rounds");
    clients = iid_clients(data, layout, K);
  } else {
    clients = grouped_clients(data, layout, K, K);
  }
  const std::size_t T = layout.rounds, d = data.n_features;
  Dataset out;
  out.name = data.name;
  out.task = data.task;
  out.n_features = d;
  out.feature_names = data.feature_names;
  out.n_samples = K * T;
  out.n_clients = K;
  out.x.resize(out.n_samples * d);
  out.y.resize(out.n_samples);
  const bool keep_groups = !data.groups.empty();
  if (keep_groups) out.groups.resize(out.n_samples);
  for (std::size_t t = 0; t < T; ++t) {
    for (std::size_t k = 0; k < K; ++k) {
      const std::size_t from = clients[k][t], to = t * K + k;
      std::copy(data.row(from), data.row(from) + d, out.x.begin() + static_cast<std::ptrdiff_t>(to * d));
      out.y[to] = data.y[from];
      if (keep_groups) out.groups[to] = data.groups[from];
    }
  }
  data = std::move(out);
}

}  // namespace omkl
