/// @file fuzz_checkpoint.cpp
/// @brief libFuzzer target for the checkpoint loader (Learner::load).
/// Input, two forms:
///  - starting with the magic "OMKLCKPT": a whole checkpoint file, written as is (exercises the
///    header, size and checksum checks);
///  - anything else: a checkpoint payload, wrapped in a valid header and checksum before it is
///    written, so that mutations reach the learner-state decoding behind the checksum.
/// A checkpoint that loads must then predict (and, when the prediction is of a sane size, learn
/// from) one sample without faulting.
///
/// Load allocates the model its spec and context describe before it reads the state, so a few
/// changed bytes (n_features = 10^6, D = 10^8, 10^5 clients) legitimately ask for gigabytes,
/// which the sanitizer runtime reports as a fatal out-of-memory. The harness skips such
/// payloads (n_features or the client count in (64, 2^24], a horizon over 2^16, a numeric spec or
/// default value in (4096, 2^58)); larger counts stay in: the loader must refuse them with an
/// InputError (learner.cpp bounds stored widths and client counts by 2^24, the algorithms D by
/// 10^6).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/state_io.h"
#include "fuzz_common.h"
#include "omkl/algorithm.h"
#include "omkl/learner.h"

namespace {
// A stored count the loader accepts (up to 2^24) but that makes a large model.
bool mid_sized(std::uint64_t v, std::uint64_t limit) { return v > limit && v <= (std::uint64_t{1} << 24); }

bool mid_sized_value(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return false;
  const double a = v < 0 ? -v : v;
  return a > 4096.0 && a < 2.9e17;  // 2^58 ≈ 2.88e17
}

// True when the payload describes a model too large to fuzz (see the file comment).
bool too_large_to_fuzz(const std::string& payload) {
  try {
    omkl::detail::StateReader in(payload, "fuzz");
    (void)in.get_string();  // tag
    const std::string spec_text = in.get_string();
    omkl::detail::StateReader c(in.get_string(), "fuzz");
    try {
      for (const auto& [key, value] : omkl::parse_algorithm_spec(spec_text).params)
        if (mid_sized_value(value)) return true;
    } catch (const omkl::Error&) {
    }
    if (mid_sized(c.get_u64(), 64)) return true;  // n_features
    (void)c.get_u64();                           // task
    (void)c.get_u64();                           // profile
    (void)c.get_u64();                           // seed
    (void)c.get_u64();                           // replicate
    if (c.get_u64() > (1u << 16)) return true;          // horizon
    (void)c.get_u64();                                  // backend
    const std::uint64_t n_defaults = c.get_u64();
    for (std::uint64_t i = 0; i < n_defaults; ++i) {
      (void)c.get_string();
      if (mid_sized_value(c.get_string())) return true;
    }
    if (!c.at_end() && mid_sized(c.get_u64(), 64)) return true;  // n_clients
  } catch (const omkl::Error&) {
    // a damaged prefix: the loader refuses it cheaply
  }
  return false;
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static omkl_fuzz::ScratchCleanup cleanup{omkl_fuzz::scratch_path("checkpoint", ".ckpt")};
  const std::string& path = cleanup.path;
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (input.compare(0, 8, "OMKLCKPT") == 0) {
    if (input.size() > 32 && too_large_to_fuzz(input.substr(24, input.size() - 32))) return 0;
    omkl_fuzz::write_scratch(path, data, size);
  } else {
    if (too_large_to_fuzz(input)) return 0;
    std::string file("OMKLCKPT");
    put_u64(file, omkl::detail::kCheckpointVersion);
    put_u64(file, input.size());
    file += input;
    put_u64(file, omkl::detail::fnv1a64(input));
    omkl_fuzz::write_scratch(path, reinterpret_cast<const std::uint8_t*>(file.data()), file.size());
  }
  return omkl_fuzz::guarded([&] {
    omkl::Learner learner = omkl::Learner::load(path);
    const std::size_t d = learner.n_features();
    if (d > (1u << 16)) return;  // a model that wide loaded; do not spend time on it
    std::vector<double> x(d, 0.5);
    const double y = learner.task() == omkl::Task::Classification ? 1.0 : 0.25;
    // A loaded model predicts from its state as stored; a damaged but finite state (θ = 1e300)
    // may legitimately predict ±∞ or NaN. Only a model whose prediction is of a sane size is
    // also updated: an update from absurd numbers tests the arithmetic, not the loader.
    const double p = learner.predict(x);
    if (!(std::fabs(p) < 1e100)) return;
    (void)learner.partial_fit(x, y);
    (void)learner.predict(x);
  });
}
