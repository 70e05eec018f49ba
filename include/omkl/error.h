/// @file error.h
/// @brief Exception types thrown by omkl. Every error names what went wrong and where.
#pragma once

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

/// A failure of the CUDA runtime or one of its libraries, or a missing device.
class CudaError : public Error {
 public:
  explicit CudaError(const std::string& what) : Error(what) {}
};

}  // namespace omkl
