/// @file selection_stream.h
/// @brief The uniforms behind an algorithm's per-step sampling decisions: the counter-based
/// stream (default), or the journal notebook's NumPy stream (rng = numpy_legacy, §1.9).
#pragma once

#include <cstdint>
#include <variant>

#include "random/numpy_legacy.h"
#include "random/rng.h"
#include "core/state_io.h"

namespace omkl::detail {

class SelectionStream {
 public:
  explicit SelectionStream(RandomStream counter) : stream_(counter) {}
  explicit SelectionStream(NumpyLegacyRandom numpy) : stream_(numpy) {}

  /// One uniform in [0, 1) ((0, 1) for the counter stream).
  double uniform() {
    if (auto* c = std::get_if<RandomStream>(&stream_)) return c->uniform();
    return std::get<NumpyLegacyRandom>(stream_).uniform();
  }

  /// The counter stream (a device-resident walk reads it by key and position, and seeks it to
  /// where the walk left it); std::bad_variant_access for the NumPy stream.
  const RandomStream& counter_stream() const { return std::get<RandomStream>(stream_); }
  void seek_counter(std::uint64_t position) { std::get<RandomStream>(stream_).seek(position); }

  /// Counter streams store their position; the NumPy stream its whole MT19937 state.
  void save(StateWriter& out) const {
    if (const auto* c = std::get_if<RandomStream>(&stream_)) out.put_u64(c->position());
    else std::get<NumpyLegacyRandom>(stream_).save(out);
  }
  void load(StateReader& in) {
    if (auto* c = std::get_if<RandomStream>(&stream_)) c->seek(in.get_u64());
    else std::get<NumpyLegacyRandom>(stream_).load(in);
  }

 private:
  std::variant<RandomStream, NumpyLegacyRandom> stream_;
};

}  // namespace omkl::detail
