#include "core/rng.h"

#include <cmath>

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

double RandomStream::uniform() {
  // 53 random bits, shifted by half a unit so that 0 and 1 never occur.
  return (static_cast<double>(next_u64() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

double RandomStream::normal() {
  const double u1 = uniform();
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
}

double RandomStream::cauchy() { return std::tan(M_PI * (uniform() - 0.5)); }

double RandomStream::chi_square(int k) {
  double sum = 0.0;
  for (int i = 0; i < k; ++i) {
    const double g = normal();
    sum += g * g;
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
