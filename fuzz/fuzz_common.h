/// @file fuzz_common.h
/// @brief Helpers shared by the libFuzzer targets: a per-process scratch file for the readers
/// that take a path, and the rule for which exceptions count as a clean rejection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <unistd.h>

#include "omkl/error.h"

namespace omkl_fuzz {

/// A fixed scratch path per process (so that parallel jobs do not collide), under $TMPDIR.
inline const std::string& scratch_path(const char* target, const char* extension) {
  static const std::string path = [&] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/omkl-fuzz-" + target + "-" +
           std::to_string(::getpid()) + extension;
  }();
  return path;
}

/// Writes `n` bytes to `path`, replacing it; aborts on I/O failure (not a finding in the library).
inline void write_scratch(const std::string& path, const std::uint8_t* data, std::size_t n) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) {
    std::perror(path.c_str());
    std::abort();
  }
  if (n > 0 && std::fwrite(data, 1, n, f) != n) {
    std::perror(path.c_str());
    std::abort();
  }
  std::fclose(f);
}

/// Removes the scratch file when the process exits normally.
struct ScratchCleanup {
  std::string path;
  ~ScratchCleanup() { std::remove(path.c_str()); }
};

/// A property of a successful parse does not hold: report it as a crash, with a message.
[[noreturn]] inline void fail(const char* what) {
  std::fprintf(stderr, "omkl fuzz: property violated: %s\n", what);
  std::abort();
}

/// Runs `body`; the library's typed exceptions (omkl::Error: InputError, ConfigError, ...) are
/// the documented way to refuse bad input. Anything else escaping — std::bad_alloc,
/// std::out_of_range from a container, a foreign exception — is a finding: abort so libFuzzer
/// saves the input.
template <class Body>
int guarded(Body&& body) {
  try {
    body();
  } catch (const omkl::Error&) {
    // rejected cleanly
  } catch (const std::exception& e) {
    std::fprintf(stderr, "omkl fuzz: undocumented exception escaped: %s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "omkl fuzz: non-std exception escaped\n");
    std::abort();
  }
  return 0;
}

}  // namespace omkl_fuzz
