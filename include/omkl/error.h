/// @file error.h
/// @brief Exception types thrown by omkl. Every error names what went wrong and where.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace omkl {

/// Base class of every exception omkl throws.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

/// Malformed or inconsistent input data (files, streams, checkpoints).
/// The message starts with "file:line:column:" when a location is known.
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(what) {}
};

/// An invalid configuration: unknown algorithm, parameter, option value or preset.
class ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& what) : Error(what) {}
};

/// A model whose numbers stopped being finite: an update overflowed, so that its prediction of a
/// finite sample is NaN or infinite, or its state holds such numbers — mostly a step size (eta) too
/// large for the scale of the data, or features and targets so large that the kernel features
/// overflow. The run itself failed (as Error; `omkl` exits with 3): a learner that throws it from
/// partial_fit is failed (Learner::failed()), and save() refuses such a model.
class DivergedError : public Error {
 public:
  explicit DivergedError(const std::string& what, std::int64_t sample = 0, double prediction = 0.0)
      : Error(what), sample_(sample), prediction_(prediction) {}
  /// The 1-based sample count (Learner::n_seen()) whose prediction was not finite; 0 where the
  /// divergence was found in the state (at save()).
  std::int64_t sample() const { return sample_; }
  /// That prediction (NaN or ±∞); 0 where sample() is 0.
  double prediction() const { return prediction_; }

 private:
  std::int64_t sample_;
  double prediction_;
};

/// A failure of the CUDA runtime or one of its libraries, or a missing device.
class CudaError : public Error {
 public:
  explicit CudaError(const std::string& what) : Error(what) {}
};

}  // namespace omkl
