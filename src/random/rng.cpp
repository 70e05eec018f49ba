#include "random/rng.h"

#include <algorithm>
#include <cmath>

#include "random/draw_transforms.h"

namespace omkl::detail {

namespace {
constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;
constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;

void mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t product = static_cast<std::uint64_t>(a) * b;
  hi = static_cast<std::uint32_t>(product >> 32);
  lo = static_cast<std::uint32_t>(product);
}

// SplitMix64 finaliser: spreads (seed, replicate) over the 64-bit key.
std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
}  // namespace

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> c,
                                        std::array<std::uint32_t, 2> k) {
  for (int round = 0; round < 10; ++round) {
    std::uint32_t hi0, lo0, hi1, lo1;
    mulhilo(kPhiloxM0, c[0], hi0, lo0);
    mulhilo(kPhiloxM1, c[2], hi1, lo1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kPhiloxW0;
    k[1] += kPhiloxW1;
  }
  return c;
}

RandomStream::RandomStream(std::uint64_t seed, std::uint64_t replicate, RngPurpose purpose,
                           std::uint64_t index) {
  const std::uint64_t key = mix64(mix64(seed) ^ (replicate * 0xD6E8FEB86659FD93ull + 1));
  key_ = {static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)};
  stream_hi_ = (static_cast<std::uint64_t>(purpose) << 48) ^ (index & 0xFFFFFFFFFFFFull);
}

void RandomStream::refill() {
  block_ = philox4x32({static_cast<std::uint32_t>(counter_),
                       static_cast<std::uint32_t>(counter_ >> 32),
                       static_cast<std::uint32_t>(stream_hi_),
                       static_cast<std::uint32_t>(stream_hi_ >> 32)},
                      key_);
  lane_ = 0;
}

std::uint32_t RandomStream::next_u32() {
  if (lane_ == 4) refill();
  const std::uint32_t value = block_[lane_++];
  if (lane_ == 4) ++counter_;
  return value;
}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t hi = next_u32();
  return (hi << 32) | next_u32();
}

namespace {
// The scalar draws and their bulk forms share these, so that both give the same bits; the
// transforms are draw_transforms.h's, which the CUDA device evaluates identically.
using draw::uniform_from;
using draw::normal_from;
using draw::cauchy_from;

constexpr std::size_t kBulkBlocks = 64;  // blocks generated per batch (1 KiB of words)

// The bulk transforms: branch-free (draw_transforms.h), so the loops vectorise (the library is
// built with -fno-trapping-math so that the compiler may evaluate both sides of a select); on
// x86-64 also cloned for AVX2 and picked at load time. Each lane does the scalar draw's
// operations (no FMA, no reassociation), so every clone gives the scalar draw's bits. Not under
// ThreadSanitizer: the clones' resolver runs while the program is being relocated, before the
// sanitizer's runtime, and its instrumented code crashes there.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define OMKL_DRAW_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define OMKL_DRAW_CLONES
#endif

// out[i] = the normal of block i (words 4i … 4i + 3).
OMKL_DRAW_CLONES void normals_of_blocks(const std::uint32_t* words, std::size_t m, double* out) {
  for (std::size_t i = 0; i < m; ++i)
    out[i] = normal_from(uniform_from(words[4 * i], words[4 * i + 1]), uniform_from(words[4 * i + 2], words[4 * i + 3]));
}

// out[2i], out[2i + 1] = the two Cauchy draws of block i.
OMKL_DRAW_CLONES void cauchys_of_blocks(const std::uint32_t* words, std::size_t m, double* out) {
  for (std::size_t i = 0; i < m; ++i) {
    out[2 * i] = cauchy_from(uniform_from(words[4 * i], words[4 * i + 1]));
    out[2 * i + 1] = cauchy_from(uniform_from(words[4 * i + 2], words[4 * i + 3]));
  }
}
}  // namespace

double RandomStream::uniform() {
  const std::uint32_t hi = next_u32();
  return uniform_from(hi, next_u32());
}

double RandomStream::normal() {
  const double u1 = uniform();
  return normal_from(u1, uniform());
}

double RandomStream::cauchy() { return cauchy_from(uniform()); }

void RandomStream::blocks(std::uint32_t* words, std::size_t n_blocks) {
  // Structure of arrays over the batch, so that the 32×32→64 multiplies of the ten rounds
  // vectorise across counters.
  std::uint32_t c0[kBulkBlocks], c1[kBulkBlocks], c2[kBulkBlocks], c3[kBulkBlocks];
  for (std::size_t done = 0; done < n_blocks; done += kBulkBlocks) {
    const std::size_t m = std::min(kBulkBlocks, n_blocks - done);
    for (std::size_t i = 0; i < m; ++i) {
      const std::uint64_t counter = counter_ + i;
      c0[i] = static_cast<std::uint32_t>(counter);
      c1[i] = static_cast<std::uint32_t>(counter >> 32);
      c2[i] = static_cast<std::uint32_t>(stream_hi_);
      c3[i] = static_cast<std::uint32_t>(stream_hi_ >> 32);
    }
    std::uint32_t k0 = key_[0], k1 = key_[1];
    for (int round = 0; round < 10; ++round) {
      for (std::size_t i = 0; i < m; ++i) {
        const std::uint64_t p0 = static_cast<std::uint64_t>(kPhiloxM0) * c0[i];
        const std::uint64_t p1 = static_cast<std::uint64_t>(kPhiloxM1) * c2[i];
        const std::uint32_t n0 = static_cast<std::uint32_t>(p1 >> 32) ^ c1[i] ^ k0;
        const std::uint32_t n2 = static_cast<std::uint32_t>(p0 >> 32) ^ c3[i] ^ k1;
        c1[i] = static_cast<std::uint32_t>(p1);
        c3[i] = static_cast<std::uint32_t>(p0);
        c0[i] = n0;
        c2[i] = n2;
      }
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    for (std::size_t i = 0; i < m; ++i) {
      std::uint32_t* w = words + 4 * (done + i);
      w[0] = c0[i];
      w[1] = c1[i];
      w[2] = c2[i];
      w[3] = c3[i];
    }
    counter_ += m;
  }
}

void RandomStream::normals(double* out, std::size_t n) {
  if (lane_ != 4) {  // mid-block: the blocks do not line up with the normals
    for (std::size_t i = 0; i < n; ++i) out[i] = normal();
    return;
  }
  std::uint32_t words[4 * kBulkBlocks];
  for (std::size_t done = 0; done < n; done += kBulkBlocks) {
    const std::size_t m = std::min(kBulkBlocks, n - done);
    blocks(words, m);
    normals_of_blocks(words, m, out + done);
  }
}

void RandomStream::cauchys(double* out, std::size_t n) {
  if (lane_ != 4) {
    for (std::size_t i = 0; i < n; ++i) out[i] = cauchy();
    return;
  }
  std::uint32_t words[4 * kBulkBlocks];
  const std::size_t pairs = n / 2;
  for (std::size_t done = 0; done < pairs; done += kBulkBlocks) {
    const std::size_t m = std::min(kBulkBlocks, pairs - done);
    blocks(words, m);
    cauchys_of_blocks(words, m, out + 2 * done);
  }
  if (n % 2) out[n - 1] = cauchy();  // half a block, as the scalar draw leaves it
}

double RandomStream::chi_square(int k) {
  double g[64];
  double sum = 0.0;
  for (int done = 0; done < k; done += 64) {
    const int m = std::min(64, k - done);
    normals(g, static_cast<std::size_t>(m));
    for (int i = 0; i < m; ++i) sum += g[i] * g[i];
  }
  return sum;
}

std::uint64_t RandomStream::below(std::uint64_t n) {
  // Rejection sampling removes the modulo bias.
  const std::uint64_t limit = ~0ull - (~0ull % n);
  std::uint64_t value;
  do {
    value = next_u64();
  } while (value >= limit);
  return value % n;
}

void RandomStream::seek(std::uint64_t position) {
  counter_ = position / 4;
  lane_ = 4;
  const unsigned lane = static_cast<unsigned>(position % 4);
  if (lane != 0) {
    refill();
    lane_ = lane;
  }
}

}  // namespace omkl::detail
