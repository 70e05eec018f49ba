// The stream readers against damaged files: a valid CSV or LIBSVM file, mutated at random
// (bytes replaced by characters that matter to the parsers, deleted, duplicated, the file cut
// short), must either load as a consistent dataset or fail with an InputError that names the
// file — never crash, hang or return non-finite values. Under the sanitizer builds
// (scripts/check_sanitizers.sh) this is also a memory-safety check of the parsers.
#include "common/temp_dir_test.h"
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "random/rng.h"
#include "omkl/dataset.h"
#include "omkl/error.h"

namespace {

using omkl::detail::RandomStream;
using omkl::detail::RngPurpose;


// Characters the CSV and LIBSVM grammars give a meaning to, and a few they reject.
constexpr char kAlphabet[] = "0123456789.,:-+eE \t\r\n#naifNAIFx\"'\x01\xff";

std::string mutate(std::string text, RandomStream& rng) {
  const std::size_t n_edits = 1 + rng.below(4);
  for (std::size_t e = 0; e < n_edits && !text.empty(); ++e) {
    const std::size_t at = rng.below(text.size());
    switch (rng.below(4)) {
      case 0: text[at] = kAlphabet[rng.below(sizeof kAlphabet - 1)]; break;
      case 1: text.erase(at, 1 + rng.below(3)); break;
      case 2: text.insert(at, text.substr(at, 1 + rng.below(8))); break;
      default: text.resize(at); break;
    }
  }
  return text;
}

// Loads `path`; on success the dataset must be consistent and finite, on failure the error an
// InputError that starts with the path. Returns whether it loaded.
bool loads_or_fails_cleanly(const std::function<omkl::Dataset()>& load, const std::string& path,
                            const std::string& text) {
  try {
    const omkl::Dataset data = load();
    EXPECT_GT(data.n_samples, 0u) << text;
    EXPECT_EQ(data.x.size(), data.n_samples * data.n_features) << text;
    EXPECT_EQ(data.y.size(), data.n_samples) << text;
    for (double v : data.x) EXPECT_TRUE(std::isfinite(v)) << text;
    for (double v : data.y) EXPECT_TRUE(std::isfinite(v)) << text;
    return true;
  } catch (const omkl::InputError& error) {
    EXPECT_EQ(std::string(error.what()).rfind(path, 0), 0u) << error.what() << "\n" << text;
    return false;
  }
}

class ReaderMutationTest : public omkl::test::TempDirTest {
 protected:
  // 1 500 mutations of `valid`, written as m<i><extension> and read by `load`; both outcomes
  // must occur often, so the mutations reach past the reader's first check.
  void check_mutations(const std::string& valid, const std::string& extension, std::uint64_t stream,
                       const std::function<omkl::Dataset(const std::string&)>& load) {
    RandomStream rng(17, 0, RngPurpose::Misc, stream);
    int loaded = 0, failed = 0;
    for (int i = 0; i < 1500; ++i) {
      const std::string text = mutate(valid, rng);
      const std::string path = write("m" + std::to_string(i) + extension, text);
      (loads_or_fails_cleanly([&] { return load(path); }, path, text) ? loaded : failed)++;
      if (HasFailure()) break;
    }
    EXPECT_GT(loaded, 50);
    EXPECT_GT(failed, 50);
  }
};

TEST_F(ReaderMutationTest, DamagedCsvLoadsConsistentlyOrFailsNamingTheFile) {
  check_mutations("a,b,c,y\n0.5,-1.25,3e-2,1\n2,0.125,-7,-1\n1e3,4.5,0,0.75\n-0.5,6,8,2\n", ".csv", 1,
                  [](const std::string& path) { return omkl::load_csv(path); });
}

TEST_F(ReaderMutationTest, DamagedLibsvmLoadsConsistentlyOrFailsNamingTheFile) {
  check_mutations("# comment\n1 1:0.5 3:-2\n-1 2:1.5 4:0.25\n\n0.5 1:3e-1 2:4 3:5\n-1 4:-8\n", ".svm", 2,
                  [](const std::string& path) { return omkl::load_libsvm(path); });
}

}  // namespace
