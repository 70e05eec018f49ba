// Federated layouts (spec/federated.md §4.3): the i.i.d. split, the grouped (non-i.i.d.) split
// with its exact indexing, the CSV group column, and their errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/temp_dir_test.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

using namespace omkl;

namespace {

// Row i has x = (i, −i) and y = i, so every arranged row says where it came from.
Dataset numbered(std::size_t n, std::vector<std::uint32_t> groups = {}) {
  Dataset data;
  data.name = "numbered";
  data.n_samples = n;
  data.n_features = 2;
  for (std::size_t i = 0; i < n; ++i) {
    data.x.push_back(double(i));
    data.x.push_back(-double(i));
    data.y.push_back(double(i));
  }
  data.groups = std::move(groups);
  return data;
}

// Three groups of 25 rows each, labelled 0, 1, 2, and their grouped deal of 10 rounds with 2
// minority rows from each other group (2 clients per group; 20 rows of each group used).
std::vector<std::uint32_t> three_groups() {
  std::vector<std::uint32_t> groups;
  for (std::uint32_t s = 0; s < 3; ++s) groups.insert(groups.end(), 25, s);
  return groups;
}
FederatedLayout three_group_layout() {
  FederatedLayout layout;
  layout.rounds = 10;
  layout.minority_rows = 2;
  layout.seed = 4;
  return layout;
}

std::string config_error(Dataset data, const FederatedLayout& layout) {
  try {
    arrange_federated(data, layout);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

class CsvGroupTest : public omkl::test::TempDirTest {};

}  // namespace

TEST(FederatedSplitTest, IidSplitIsOnePermutationCutIntoClients) {
  Dataset data = numbered(1003);
  FederatedLayout layout;
  layout.rounds = 100;
  layout.seed = 4;
  arrange_federated(data, layout);
  ASSERT_EQ(data.n_clients, 10u);  // ⌊1003 / 100⌋
  ASSERT_EQ(data.n_samples, 1000u);
  std::set<double> seen;
  for (std::size_t t = 0; t < data.n_samples; ++t) {
    EXPECT_EQ(data.row(t)[0], data.y[t]);  // rows move whole
    EXPECT_EQ(data.row(t)[1], -data.y[t]);
    EXPECT_TRUE(seen.insert(data.y[t]).second) << "row used twice";
  }
  // A permutation, not the file order; the same seed gives the same arrangement.
  bool moved = false;
  for (std::size_t t = 0; t < 20; ++t) moved = moved || data.y[t] != double(t);
  EXPECT_TRUE(moved);
  Dataset again = numbered(1003);
  arrange_federated(again, layout);
  EXPECT_EQ(again.y, data.y);
  layout.seed = 5;
  Dataset other = numbered(1003);
  arrange_federated(other, layout);
  EXPECT_NE(other.y, data.y);
}

TEST(FederatedSplitTest, GroupedSplitFollowsTheSpecsIndexing) {
  // Four groups in chronological runs; T = 20 with 2 minority rows: 14 own rows per client.
  const std::size_t T = 20, m = 2, G = 4;
  std::vector<std::uint32_t> groups;
  const std::size_t sizes[G] = {70, 61, 65, 90};  // ⌊n_s / T⌋ = 3, 3, 3, 4 → C = 3
  for (std::uint32_t s = 0; s < G; ++s) groups.insert(groups.end(), sizes[s], s);
  Dataset data = numbered(groups.size(), groups);
  // First row of each group in the pooled data.
  std::vector<std::size_t> start(G + 1, 0);
  for (std::size_t s = 0; s < G; ++s) start[s + 1] = start[s] + sizes[s];
  FederatedLayout layout;
  layout.rounds = T;
  layout.minority_rows = m;
  layout.seed = 9;
  arrange_federated(data, layout);
  const std::size_t C = 3, K = G * C, own = T - (G - 1) * m;
  ASSERT_EQ(data.n_clients, K);
  ASSERT_EQ(data.n_samples, K * T);
  std::map<std::size_t, std::vector<std::size_t>> rows_of_client;
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t k = 0; k < K; ++k) rows_of_client[k].push_back(std::size_t(data.y[t * K + k]));
  std::set<std::size_t> used;
  for (std::size_t s = 0; s < G; ++s)
    for (std::size_t g = 0; g < C; ++g) {
      std::vector<std::size_t> rows = rows_of_client[s * C + g];
      // The expected rows: own block [own·g, own·g + own) of group s, then m rows of each other group s'.
      std::vector<std::size_t> expected;
      for (std::size_t i = 0; i < own; ++i) expected.push_back(start[s] + own * g + i);
      for (std::size_t other = 0; other < G; ++other) {
        if (other == s) continue;
        const std::size_t r = s < other ? s : s - 1;
        for (std::size_t i = 0; i < m; ++i) expected.push_back(start[other] + own * C + m * (r * C + g) + i);
      }
      std::vector<std::size_t> sorted = rows;
      std::sort(sorted.begin(), sorted.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(sorted, expected) << "client " << s * C + g;
      EXPECT_NE(rows, expected) << "a client's rows are shuffled";
      for (std::size_t row : rows) EXPECT_TRUE(used.insert(row).second) << "row " << row << " dealt twice";
    }
  // Per group, the rows used are exactly its first C·T.
  for (std::size_t s = 0; s < G; ++s)
    for (std::size_t i = 0; i < C * T; ++i) EXPECT_EQ(used.count(start[s] + i), 1u) << "group " << s << " row " << i;
  for (std::size_t t = 0; t < data.n_samples; ++t)
    EXPECT_EQ(data.groups[t], groups[std::size_t(data.y[t])]);
}

TEST(FederatedSplitTest, ListedClientOrderIsTheListingOrderAndShuffledPermutesIt) {
  // The client's time order (--client-order): listed keeps each client's rows as §4.3 lists them
  // (own block, then the other groups' blocks in group order, each in stream order); shuffled
  // (the default, §4.3's "this shuffle sets the client's time order") is a permutation of
  // exactly those rows.
  const std::size_t T = 10, m = 2, G = 3;
  const std::vector<std::uint32_t> groups = three_groups();
  FederatedLayout layout = three_group_layout();
  Dataset shuffled = numbered(groups.size(), groups);
  arrange_federated(shuffled, layout);
  layout.shuffle_within_client = false;
  Dataset chronological = numbered(groups.size(), groups);
  arrange_federated(chronological, layout);
  const std::size_t C = 2, K = G * C, own = T - (G - 1) * m;
  ASSERT_EQ(chronological.n_clients, K);
  for (std::size_t s = 0; s < G; ++s)
    for (std::size_t g = 0; g < C; ++g) {
      const std::size_t k = s * C + g;
      std::vector<std::size_t> expected;
      for (std::size_t i = 0; i < own; ++i) expected.push_back(25 * s + own * g + i);
      for (std::size_t other = 0; other < G; ++other) {
        if (other == s) continue;
        const std::size_t r = s < other ? s : s - 1;
        for (std::size_t i = 0; i < m; ++i) expected.push_back(25 * other + own * C + m * (r * C + g) + i);
      }
      std::vector<std::size_t> in_order, permuted;
      for (std::size_t t = 0; t < T; ++t) {
        in_order.push_back(std::size_t(chronological.y[t * K + k]));
        permuted.push_back(std::size_t(shuffled.y[t * K + k]));
      }
      EXPECT_EQ(in_order, expected) << "client " << k;
      EXPECT_NE(permuted, expected) << "client " << k;
      std::sort(permuted.begin(), permuted.end());
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(permuted, expected) << "client " << k;
    }
}

TEST(FederatedSplitTest, ShuffledSitesDealEachGroupsUsedRowsInAPermutedOrder) {
  // noniid.within_site_order = shuffled (§4.3): each group's first C·T rows (those a
  // chronological deal uses) permuted with the data seed before the deal. Every client still
  // takes T − (G − 1)m rows of its own group and m of each other; together the clients take
  // exactly those C·T rows of each group once; the deal differs from the chronological one and
  // repeats with the seed.
  const std::size_t T = 10, m = 2, G = 3, C = 2, K = G * C, own = T - (G - 1) * m;
  const std::vector<std::uint32_t> groups = three_groups();  // 20 rows of each used, 5 not
  FederatedLayout layout = three_group_layout();
  Dataset chronological = numbered(groups.size(), groups);
  arrange_federated(chronological, layout);
  layout.shuffle_sites = true;
  Dataset shuffled = numbered(groups.size(), groups), again = numbered(groups.size(), groups);
  arrange_federated(shuffled, layout);
  arrange_federated(again, layout);
  ASSERT_EQ(shuffled.n_clients, K);
  EXPECT_EQ(shuffled.y, again.y);
  EXPECT_NE(shuffled.y, chronological.y);
  std::set<std::size_t> used;
  for (std::size_t k = 0; k < K; ++k) {
    std::vector<std::size_t> per_group(G, 0);
    std::set<std::size_t> mine, chrono_mine;
    for (std::size_t t = 0; t < T; ++t) {
      const std::size_t row = std::size_t(shuffled.y[t * K + k]);
      ++per_group[row / 25];
      mine.insert(row);
      chrono_mine.insert(std::size_t(chronological.y[t * K + k]));
      EXPECT_LT(row % 25, C * T) << "row " << row << " is past the rows the deal uses";
      EXPECT_TRUE(used.insert(row).second) << "row " << row << " dealt twice";
    }
    for (std::size_t s = 0; s < G; ++s) EXPECT_EQ(per_group[s], s == k / C ? own : m) << "client " << k;
    EXPECT_NE(mine, chrono_mine) << "client " << k << " got the chronological deal's rows";
  }
  EXPECT_EQ(used.size(), G * C * T);
}

TEST(FederatedSplitTest, ErrorsNameWhatIsMissing) {
  FederatedLayout layout;
  layout.rounds = 100;
  layout.clients = 11;
  EXPECT_NE(config_error(numbered(1003), layout).find("11 clients × 100 rounds need 1100 rows"), std::string::npos);
  layout.clients = 0;
  EXPECT_NE(config_error(numbered(50), layout).find("fewer than one client"), std::string::npos);
  std::vector<std::uint32_t> two(300, 0);
  std::fill(two.begin() + 150, two.end(), 1);
  layout.clients = 3;
  EXPECT_NE(config_error(numbered(300, two), layout).find("cannot be split evenly over 2 groups"), std::string::npos);
  layout.clients = 4;
  EXPECT_NE(config_error(numbered(300, two), layout).find("group 0 has 150 rows"), std::string::npos);
  layout.clients = 0;
  layout.minority_rows = 100;
  EXPECT_NE(config_error(numbered(300, two), layout).find("no room"), std::string::npos);
  layout.minority_rows = 0;
  layout.rounds = 9;  // the default minority rows T/10 would be none
  EXPECT_NE(config_error(numbered(300, two), layout).find("9 rounds takes rounds / 10 = 0 rows"), std::string::npos);
  layout.minority_rows = 1;  // given, the split is fine
  EXPECT_EQ(config_error(numbered(300, two), layout), "");
  layout.rounds = 100;
  std::vector<std::uint32_t> one(300, 7);
  layout.minority_rows = 50;
  EXPECT_NE(config_error(numbered(300, one), layout).find("at least 2"), std::string::npos);
  Dataset twice = numbered(400);
  layout.clients = 0;
  arrange_federated(twice, layout);
  EXPECT_NE(config_error(twice, layout).find("already arranged"), std::string::npos);
}

TEST_F(CsvGroupTest, GroupColumnIsReadOutOfTheFeatures) {
  const std::string path = write("g.csv", "site,a,b,y\n0,1,2,3\n1,4,5,6\n1,7,8,9\n");
  CsvOptions options;
  options.group_column = "site";
  const Dataset data = load_csv(path, options);
  EXPECT_EQ(data.n_features, 2u);
  EXPECT_EQ(data.x, (std::vector<double>{1, 2, 4, 5, 7, 8}));
  EXPECT_EQ(data.y, (std::vector<double>{3, 6, 9}));
  EXPECT_EQ(data.groups, (std::vector<std::uint32_t>{0, 1, 1}));
  // Without the option the column is a feature.
  EXPECT_EQ(load_csv(path).n_features, 3u);
}

TEST_F(CsvGroupTest, BadGroupColumnsAreLocatedErrors) {
  const std::string path = write("g.csv", "site,a,y\n0,1,2\n1.5,3,4\n");
  CsvOptions options;
  options.group_column = "station";
  omkl::test::expect_input_error([&] { load_csv(path, options); }, path + ":1:1", "unknown group column 'station'");
  options.group_column = "site";
  omkl::test::expect_input_error([&] { load_csv(path, options); }, path + ":3:1", "not a non-negative integer");
  options.group_column = "y";
  omkl::test::expect_input_error([&] { load_csv(path, options); }, path + ":1:3", "both the target and the group");
  const std::string two = write("two.csv", "site,y\n0,1\n");
  options.group_column = "site";
  omkl::test::expect_input_error([&] { load_csv(two, options); }, two + ":1:1", "at least 3 columns");
}
