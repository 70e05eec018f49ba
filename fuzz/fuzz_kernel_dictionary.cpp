/// @file fuzz_kernel_dictionary.cpp
/// @brief libFuzzer target for the kernel and kernel-dictionary parsers (parse_kernel,
/// parse_dictionary), e.g. "gauss:0.5+lap:2+poly:2:1" or "jmlr23-76". Input: the dictionary
/// text. Every parsed kernel must be well formed, its name() must parse back (kernel_spec.h),
/// and evaluating it on a small pair of vectors must not fault.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "omkl/kernel_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  return omkl_fuzz::guarded([&] {
    const omkl::Dictionary dict = omkl::parse_dictionary(text);
    if (dict.empty()) omkl_fuzz::fail("dictionary: empty dictionary accepted");
    const double a[3] = {0.25, -1.0, 2.0}, b[3] = {0.5, 0.0, -1.5};
    for (const omkl::KernelSpec& k : dict) {
      if (k.shift_invariant() && !(std::isfinite(k.sigma) && k.sigma > 0.0))
        omkl_fuzz::fail("dictionary: bandwidth not positive and finite");
      if (k.family == omkl::KernelFamily::Polynomial && (k.degree < 1 || !std::isfinite(k.offset)))
        omkl_fuzz::fail("dictionary: bad polynomial");
      (void)k.evaluate(a, b, 3);
      try {
        const omkl::KernelSpec back = omkl::parse_kernel(k.name());
        if (back.family != k.family) omkl_fuzz::fail("dictionary: name() parses back to another family");
      } catch (const omkl::ConfigError&) {
        omkl_fuzz::fail("dictionary: name() of a parsed kernel does not parse back");
      }
    }
  });
}
