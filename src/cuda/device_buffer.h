/// @file device_buffer.h
/// @brief Move-only RAII owners of device memory, pinned host memory, streams and cuBLAS handles.
/// Raw cudaMalloc / cudaFree appear nowhere else.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.h"

namespace omkl::cuda {

/// Device array of T, allocated stream-ordered on the stream it belongs to.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t n, cudaStream_t stream) : stream_(stream) { resize(n); }
  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      swap(other);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void set_stream(cudaStream_t stream) { stream_ = stream; }
  /// Grows to at least n elements; contents are not preserved when it grows.
  void resize(std::size_t n) {
    if (n <= capacity_) {
      size_ = n;
      return;
    }
    release();
    if (n > 0) OMKL_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), n * sizeof(T), stream_));
    capacity_ = size_ = n;
  }
  void copy_from_host(const T* host, std::size_t n, std::size_t offset = 0) {
    OMKL_CUDA_CHECK(cudaMemcpyAsync(data_ + offset, host, n * sizeof(T), cudaMemcpyHostToDevice, stream_));
  }
  void copy_to_host(T* host, std::size_t n, std::size_t offset = 0) const {
    OMKL_CUDA_CHECK(cudaMemcpyAsync(host, data_ + offset, n * sizeof(T), cudaMemcpyDeviceToHost, stream_));
  }
  void zero() {
    if (size_) OMKL_CUDA_CHECK(cudaMemsetAsync(data_, 0, size_ * sizeof(T), stream_));
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::size_t size() const { return size_; }

 private:
  void release() noexcept {
    if (data_) OMKL_CUDA_CHECK_NOTHROW(cudaFreeAsync(data_, stream_));
    data_ = nullptr;
    size_ = capacity_ = 0;
  }
  void swap(DeviceBuffer& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(stream_, o.stream_);
  }
  T* data_ = nullptr;
  std::size_t size_ = 0, capacity_ = 0;
  cudaStream_t stream_ = nullptr;
};

/// Page-locked host array: fast, truly asynchronous copies. A mapped one is also addressable
/// by kernels (device_data()): a kernel reads its inputs from, and writes its outputs to, host
/// memory directly, with no copy calls (for per-step round trips of a few hundred bytes).
template <typename T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(bool mapped) : mapped_(mapped) {}
  ~PinnedBuffer() {
    if (data_) OMKL_CUDA_CHECK_NOTHROW(cudaFreeHost(data_));
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void resize(std::size_t n) {
    if (n <= capacity_) return;
    if (data_) OMKL_CUDA_CHECK(cudaFreeHost(data_));
    data_ = nullptr;
    if (mapped_) {
      OMKL_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&data_), n * sizeof(T), cudaHostAllocMapped));
      OMKL_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_data_), data_, 0));
    } else {
      OMKL_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&data_), n * sizeof(T)));
    }
    capacity_ = n;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  /// The kernels' address of data() (mapped buffers only).
  T* device_data() { return device_data_; }

 private:
  T* data_ = nullptr;
  T* device_data_ = nullptr;
  std::size_t capacity_ = 0;
  bool mapped_ = false;
};

/// An owning CUDA event, for timing stream work (OMKL_TIMING).
class DeviceEvent {
 public:
  DeviceEvent() { OMKL_CUDA_CHECK(cudaEventCreate(&event_)); }
  ~DeviceEvent() {
    if (event_) OMKL_CUDA_CHECK_NOTHROW(cudaEventDestroy(event_));
  }
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  void record(cudaStream_t stream) { OMKL_CUDA_CHECK(cudaEventRecord(event_, stream)); }
  /// Milliseconds from `start` to this event; both must have completed.
  float ms_since(const DeviceEvent& start) const {
    float ms = 0.0f;
    OMKL_CUDA_CHECK(cudaEventElapsedTime(&ms, start.event_, event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

/// An owning non-blocking stream and the cuBLAS handle bound to it.
class CudaContext {
 public:
  CudaContext() {
    OMKL_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    // A constructor that throws runs no destructor: what was made before the failing call is
    // released here.
    try {
      OMKL_CUBLAS_CHECK(cublasCreate(&cublas_));
      OMKL_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaContext() { release(); }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }
  /// Multiprocessors of the current device.
  std::size_t multiprocessors() const {
    int device = 0, count = 0;
    OMKL_CUDA_CHECK(cudaGetDevice(&device));
    OMKL_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
    return static_cast<std::size_t>(count);
  }
  void synchronize() const { OMKL_CUDA_CHECK(cudaStreamSynchronize(stream_)); }

 private:
  void release() noexcept {
    if (cublas_) OMKL_CUBLAS_CHECK_NOTHROW(cublasDestroy(cublas_));
    if (stream_) OMKL_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
    cublas_ = nullptr;
    stream_ = nullptr;
  }
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace omkl::cuda
