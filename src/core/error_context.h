/// @file error_context.h
/// @brief Rethrowing an error with where it happened in front of its message, keeping its kind.
///
/// A study runs thousands of (algorithm, seed) tasks on worker threads; an error from one of
/// them is only useful with the task that met it ("study: algorithm 'ioks', seed 7: …"). The kind
/// is kept because callers act on it: the command line's exit code follows it (input 1,
/// configuration 2, others 3), and memory exhaustion stays std::bad_alloc so that its own advice
/// is given.
#pragma once

#include <exception>
#include <new>
#include <string>

#include "omkl/error.h"

namespace omkl::detail {

/// Call inside a catch block: rethrows the exception in flight as the same kind with `where`
/// before its message. std::bad_alloc and exceptions that are no std::exception pass unchanged.
[[noreturn]] inline void rethrow_with_context(const std::string& where) {
  try {
    throw;
  } catch (const ConfigError& e) {
    throw ConfigError(where + e.what());
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  } catch (const CudaError& e) {
    throw CudaError(where + e.what());
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(where + e.what());
  }
}

}  // namespace omkl::detail
