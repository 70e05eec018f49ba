/// @file cuda_check.h
/// @brief Checked CUDA, cuBLAS and cuRAND calls: every failure throws omkl::CudaError with the
/// expression, file, line and the library's error string.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "omkl/error.h"

namespace omkl::cuda {

[[noreturn]] inline void throw_cuda_error(const char* what, const char* expr, const char* file, int line,
                                          const std::string& detail) {
  throw CudaError(std::string(what) + " failed: " + expr + " at " + file + ":" + std::to_string(line) +
                  ": " + detail);
}

inline const char* cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

}  // namespace omkl::cuda

#define OMKL_CUDA_CHECK(expr)                                                                     \
  do {                                                                                            \
    const cudaError_t omkl_status_ = (expr);                                                      \
    if (omkl_status_ != cudaSuccess)                                                              \
      ::omkl::cuda::throw_cuda_error("CUDA call", #expr, __FILE__, __LINE__,                      \
                                     cudaGetErrorString(omkl_status_));                           \
  } while (0)

#define OMKL_CUBLAS_CHECK(expr)                                                                   \
  do {                                                                                            \
    const cublasStatus_t omkl_status_ = (expr);                                                   \
    if (omkl_status_ != CUBLAS_STATUS_SUCCESS)                                                    \
      ::omkl::cuda::throw_cuda_error("cuBLAS call", #expr, __FILE__, __LINE__,                    \
                                     ::omkl::cuda::cublas_status_name(omkl_status_));             \
  } while (0)

/// Follows every kernel launch. With OMKL_CUDA_SYNC_CHECKS it also synchronises, so that an
/// asynchronous fault is reported at the launch that caused it.
#if defined(OMKL_CUDA_SYNC_CHECKS)
#define OMKL_CUDA_CHECK_LAUNCH()                   \
  do {                                             \
    OMKL_CUDA_CHECK(cudaGetLastError());           \
    OMKL_CUDA_CHECK(cudaDeviceSynchronize());      \
  } while (0)
#else
#define OMKL_CUDA_CHECK_LAUNCH() OMKL_CUDA_CHECK(cudaGetLastError())
#endif

/// For destructors: report, never throw.
#define OMKL_CUDA_CHECK_NOTHROW(expr)                                                            \
  do {                                                                                           \
    const cudaError_t omkl_status_ = (expr);                                                     \
    if (omkl_status_ != cudaSuccess)                                                             \
      std::fprintf(stderr, "omkl: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__,          \
                   cudaGetErrorString(omkl_status_));                                            \
  } while (0)

/// The cuBLAS form of OMKL_CUDA_CHECK_NOTHROW, for destructors.
#define OMKL_CUBLAS_CHECK_NOTHROW(expr)                                                          \
  do {                                                                                           \
    const cublasStatus_t omkl_status_ = (expr);                                                  \
    if (omkl_status_ != CUBLAS_STATUS_SUCCESS)                                                   \
      std::fprintf(stderr, "omkl: %s failed at %s:%d: %s\n", #expr, __FILE__, __LINE__,          \
                   ::omkl::cuda::cublas_status_name(omkl_status_));                              \
  } while (0)
