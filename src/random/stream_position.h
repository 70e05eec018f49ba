/// @file stream_position.h
/// @brief A RandomStream read from its key and position alone, on the host or the device: what
/// a device-resident walk (core/resident_walk.h) draws its per-step uniforms from, so that the
/// draws are the host stream's, word for word, and the stream's state after a walk is one
/// integer the host stream seeks to.
#pragma once

#include <cstdint>

#include "core/host_device.h"
#include "features/frequency_recipe.h"
#include "random/draw_transforms.h"
#include "random/rng.h"

namespace omkl::detail {

/// The host's Philox-4x32-10 block function as frequency_recipe.h's `Philox` parameter
/// (the device uses cuRAND's, kernels/curand_philox.cuh).
struct HostPhilox {
  PhiloxWords operator()(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3, std::uint32_t k0,
                         std::uint32_t k1) const {
    const auto w = philox4x32({c0, c1, c2, c3}, {k0, k1});
    return {w[0], w[1], w[2], w[3]};
  }
};

/// RandomStream(seed, replicate, purpose, index) as (key, stream_hi, position): position counts
/// the 32-bit words consumed, as RandomStream::position() does.
struct StreamPosition {
  std::uint32_t key0 = 0, key1 = 0;
  std::uint64_t stream_hi = 0;
  std::uint64_t position = 0;

  static StreamPosition of(const RandomStream& stream) {
    return {stream.key()[0], stream.key()[1], stream.stream_hi(), stream.position()};
  }

  /// The next word (RandomStream::next_u32()).
  template <typename Philox>
  OMKL_HD std::uint32_t next_u32() {
    const std::uint64_t block = position >> 2;
    const PhiloxWords w = Philox()(static_cast<std::uint32_t>(block), static_cast<std::uint32_t>(block >> 32),
                                   static_cast<std::uint32_t>(stream_hi), static_cast<std::uint32_t>(stream_hi >> 32),
                                   key0, key1);
    const unsigned lane = static_cast<unsigned>(position & 3u);
    ++position;
    return lane == 0 ? w.x : lane == 1 ? w.y : lane == 2 ? w.z : w.w;
  }

  /// RandomStream::uniform(): (0, 1) from two words, the first the high part.
  template <typename Philox>
  OMKL_HD double uniform() {
    const std::uint32_t hi = next_u32<Philox>();
    return draw::uniform_from(hi, next_u32<Philox>());
  }
};

}  // namespace omkl::detail
