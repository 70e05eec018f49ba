#include "random/numpy_legacy.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/state_io.h"
#include "omkl/error.h"

namespace omkl::detail {

namespace {
constexpr std::uint32_t kN = 624, kM = 397;
constexpr std::uint32_t kMatrixA = 0x9908b0dfu, kUpper = 0x80000000u, kLower = 0x7fffffffu;
}  // namespace

NumpyLegacyRandom::NumpyLegacyRandom(std::uint32_t seed) {
  mt_[0] = seed;
  for (std::uint32_t i = 1; i < kN; ++i) mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + i;
  index_ = kN;
}

void NumpyLegacyRandom::twist() {
  for (std::uint32_t i = 0; i < kN; ++i) {
    const std::uint32_t y = (mt_[i] & kUpper) | (mt_[(i + 1) % kN] & kLower);
    mt_[i] = mt_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? kMatrixA : 0u);
  }
  index_ = 0;
}

std::uint32_t NumpyLegacyRandom::next_u32() {
  if (index_ >= kN) twist();
  std::uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double NumpyLegacyRandom::uniform() {
  const std::uint32_t a = next_u32() >> 5, b = next_u32() >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyLegacyRandom::normal() {
  if (has_gauss_) {
    has_gauss_ = false;
    return gauss_;
  }
  double x1, x2, s;
  do {
    x1 = 2.0 * uniform() - 1.0;
    x2 = 2.0 * uniform() - 1.0;
    s = x1 * x1 + x2 * x2;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

double NumpyLegacyRandom::cauchy() {
  const double numerator = normal();
  return numerator / normal();
}

void NumpyLegacyRandom::discard_uniforms(std::uint64_t n) {
  // Whole tempered words are not needed: advancing the index is enough once a block exists.
  std::uint64_t words = 2 * n;
  while (words > 0) {
    if (index_ >= kN) twist();
    const std::uint64_t take = std::min<std::uint64_t>(words, kN - index_);
    index_ += static_cast<std::uint32_t>(take);
    words -= take;
  }
}

void NumpyLegacyRandom::save(StateWriter& out) const {
  out.put_tag("mt19937");
  std::vector<std::uint64_t> words(mt_.begin(), mt_.end());
  out.put_u64s(words);
  out.put_u64(index_);
  out.put_u64(has_gauss_ ? 1 : 0);
  out.put_f64(gauss_);
}

void NumpyLegacyRandom::load(StateReader& in) {
  in.expect_tag("mt19937");
  const std::vector<std::uint64_t> words = in.get_u64s();
  if (words.size() != kN) throw InputError("checkpoint: MT19937 state has the wrong size");
  for (std::uint32_t i = 0; i < kN; ++i) mt_[i] = static_cast<std::uint32_t>(words[i]);
  const std::uint64_t index = in.get_u64();
  if (index > kN) throw InputError("checkpoint: MT19937 position out of range");
  index_ = static_cast<std::uint32_t>(index);
  has_gauss_ = in.get_u64() != 0;
  gauss_ = in.get_f64();
}

bool NumpyLegacyRandom::operator==(const NumpyLegacyRandom& other) const {
  return mt_ == other.mt_ && index_ == other.index_ && has_gauss_ == other.has_gauss_ &&
         (!has_gauss_ || gauss_ == other.gauss_);
}

}  // namespace omkl::detail
