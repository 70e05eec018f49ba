/// @file fuzz_libsvm.cpp
/// @brief libFuzzer target for the LIBSVM reader (load_libsvm).
/// Input: one option byte, then the file. The option byte's low three bits give the declared
/// n_features (0 = infer from the largest index). Seeds start with the characters '0'..'7'.
/// The reader densifies, so a few bytes ("1 300000000:1") legitimately ask for gigabytes; in
/// infer mode the harness skips inputs with any index between 2^12 and 2^60, where even one
/// row stops fitting in a vector (there the reader must refuse the file, so that range, and
/// rows × dimension wrapping around, stay in).
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "fuzz_common.h"
#include "omkl/dataset.h"

namespace {
// Whether a run of digits directly before a ':' (saturating) lies in (2^12, 2^60): any index
// there, if the reader takes it (it may sit in a comment), makes a dense matrix of gigabytes.
bool dense_size_is_huge_but_valid(const std::uint8_t* p, std::size_t n) {
  constexpr std::uint64_t kSaturated = ~std::uint64_t{0};
  std::uint64_t value = 0;
  bool digits = false;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t c = p[i];
    if (c >= '0' && c <= '9') {
      value = value > (kSaturated - 9) / 10 ? kSaturated : value * 10 + (c - '0');
      digits = true;
      continue;
    }
    // vector<double>::max_size() is 2^60 − 1: from there on the reader must refuse the file.
    if (c == ':' && digits && value > (std::uint64_t{1} << 12) && value < (std::uint64_t{1} << 60)) return true;
    value = 0;
    digits = false;
  }
  return false;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static omkl_fuzz::ScratchCleanup cleanup{omkl_fuzz::scratch_path("libsvm", ".svm")};
  const std::string& path = cleanup.path;
  const std::size_t declared = data[0] & 7;
  if (declared == 0 && dense_size_is_huge_but_valid(data + 1, size - 1)) return 0;
  omkl_fuzz::write_scratch(path, data + 1, size - 1);
  return omkl_fuzz::guarded([&] {
    const omkl::Dataset d = omkl::load_libsvm(path, declared);
    if (d.n_samples == 0) omkl_fuzz::fail("libsvm: accepted a file without data rows");
    if (declared != 0 && d.n_features != declared) omkl_fuzz::fail("libsvm: n_features != declared");
    if (d.x.size() != d.n_samples * d.n_features) omkl_fuzz::fail("libsvm: x size != n_samples * n_features");
    if (d.y.size() != d.n_samples) omkl_fuzz::fail("libsvm: y size != n_samples");
    for (double v : d.x)
      if (!std::isfinite(v)) omkl_fuzz::fail("libsvm: non-finite feature accepted");
    for (double v : d.y)
      if (!std::isfinite(v)) omkl_fuzz::fail("libsvm: non-finite label accepted");
  });
}
