/// @file numpy_legacy.h
/// @brief NumPy's legacy global RandomState, bit for bit (spec/graph-aided.md §1.9): MT19937
/// seeded like std::mt19937(seed), 53-bit uniforms from two 32-bit outputs, Marsaglia-polar
/// normals with the cached second value, and Cauchy = normal / normal.
///
/// This exists only so that `rng = numpy_legacy` can replay the journal notebooks' single
/// shared stream and reproduce their tables to the printed digits; the library's own
/// randomness is the counter-based stream of rng.h.
#pragma once

#include <array>
#include <cstdint>

namespace omkl::detail {

class StateWriter;
class StateReader;

class NumpyLegacyRandom {
 public:
  /// As np.random.seed(seed) for an integer seed (init_genrand).
  explicit NumpyLegacyRandom(std::uint32_t seed = 0);

  std::uint32_t next_u32();
  /// np.random.random_sample(): ((a >> 5)·2^26 + (b >> 6)) / 2^53 ∈ [0, 1).
  double uniform();
  /// np.random.standard_normal(): polar method; every second value comes from the cache.
  double normal();
  /// np.random.standard_cauchy(): first normal divided by the second.
  double cauchy();
  /// Consumes n uniforms (2n outputs) without the conversion.
  void discard_uniforms(std::uint64_t n);

  void save(StateWriter& out) const;
  void load(StateReader& in);

  bool operator==(const NumpyLegacyRandom& other) const;

 private:
  void twist();
  std::array<std::uint32_t, 624> mt_{};
  std::uint32_t index_ = 624;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace omkl::detail
