/// @file fuzz_algorithm_spec.cpp
/// @brief libFuzzer target for the algorithm-spec parser (parse_algorithm_spec), e.g.
/// "raker:D=8,eta=0.05". Input: the spec text. A parsed spec must print (to_string) to a text
/// that parses back to the same name and parameters.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_common.h"
#include "omkl/algorithm.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  return omkl_fuzz::guarded([&] {
    const omkl::AlgorithmSpec spec = omkl::parse_algorithm_spec(text);
    if (spec.name.empty()) omkl_fuzz::fail("spec: empty name accepted");
    for (const auto& [key, value] : spec.params) {
      if (key.empty()) omkl_fuzz::fail("spec: empty key accepted");
      if (spec.find(key) == nullptr || *spec.find(key) != value) omkl_fuzz::fail("spec: find() disagrees");
    }
    const std::string printed = spec.to_string();
    omkl::AlgorithmSpec again;
    try {
      again = omkl::parse_algorithm_spec(printed);
    } catch (const omkl::ConfigError&) {
      omkl_fuzz::fail("spec: to_string() of a parsed spec does not parse");
    }
    if (again.name != spec.name || again.params != spec.params) omkl_fuzz::fail("spec: to_string() round trip");
  });
}
