/// @file rng.h
/// @brief Counter-based random numbers (Philox-4x32-10). No global state: every stream is
/// keyed by (base seed, replicate, purpose, index), so a replicate's draws never depend on the
/// thread count, the backend, or which other replicates run beside it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace omkl::detail {

/// What a random stream is used for; part of the key so that purposes never share draws.
enum class RngPurpose : std::uint32_t {
  Frequencies = 1,   // random-feature matrices (index = kernel)
  Selection = 2,     // per-step sampling decisions (graph, bandit)
  Synthetic = 3,     // synthetic data generators
  Permutation = 4,
  Misc = 5,
};

/// Philox-4x32-10 block function (Salmon et al., SC'11).
std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> counter,
                                        std::array<std::uint32_t, 2> key);

/// A sequential stream of random numbers: counter-based, so position() / seek() make the
/// stream's state a single integer, which checkpoints store.
class RandomStream {
 public:
  RandomStream(std::uint64_t seed, std::uint64_t replicate, RngPurpose purpose,
               std::uint64_t index = 0);

  std::uint32_t next_u32();
  std::uint64_t next_u64();
  /// Uniform in the open interval (0, 1), 53-bit resolution.
  double uniform();
  /// Standard normal (Box–Muller on two uniforms; only the cosine output is used so that the
  /// stream's whole state is its position). The transforms are draw_transforms.h's own log and
  /// cos, not the C library's, so that the CUDA device reproduces every draw bit for bit.
  double normal();
  /// Standard Cauchy: tan(π(u − 1/2)).
  double cauchy();
  /// Chi-square with k degrees of freedom, as a sum of k squared normals (k is small here).
  double chi_square(int k);
  /// n standard normals, bitwise the values n calls of normal() give, in a tight loop over
  /// whole Philox blocks (one block per normal) when the stream sits at a block boundary.
  void normals(double* out, std::size_t n);
  /// n standard Cauchy draws, bitwise those of n calls of cauchy() (two per block).
  void cauchys(double* out, std::size_t n);
  /// Uniform integer in [0, n).
  std::uint64_t below(std::uint64_t n);

  /// The Philox key and the upper 64 bits of the counter: with a block number they address
  /// any block of the stream (frequency_recipe.h draws matrix rows that way).
  std::array<std::uint32_t, 2> key() const { return key_; }
  std::uint64_t stream_hi() const { return stream_hi_; }

  /// Number of 32-bit words consumed so far.
  std::uint64_t position() const { return counter_ * 4 + (lane_ == 4 ? 0 : lane_); }
  void seek(std::uint64_t position);

 private:
  void refill();
  // Fills words[4·i .. 4·i+3] with the blocks of counters counter_ .. counter_ + n_blocks − 1
  // and advances past them (the stream must be at a block boundary).
  void blocks(std::uint32_t* words, std::size_t n_blocks);
  std::array<std::uint32_t, 2> key_{};
  std::uint64_t stream_hi_ = 0;  // purpose and index, upper counter words
  std::uint64_t counter_ = 0;    // block counter
  unsigned lane_ = 4;            // next unused word of block_ (4 = empty)
  std::array<std::uint32_t, 4> block_{};
};

}  // namespace omkl::detail
