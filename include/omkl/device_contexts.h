/// @file device_contexts.h
/// @brief GPU streams with their cuBLAS handles, made once and reused by every CUDA backend of a
/// study, and of successive studies given the same object (StudyConfig::device_contexts): the
/// context creation — the process's first CUDA call, a stream, a cuBLAS handle — then happens
/// once, and `omkl bench` reports it apart from the study time.
#pragma once

#include <memory>

namespace omkl {

/// A pool of contexts (opaque; thread-safe).
class DeviceContexts;

/// A pool with one context made, the time that took in `seconds` when given; null in a build
/// without CUDA or on a machine without a usable device.
std::shared_ptr<DeviceContexts> make_device_contexts(double* seconds = nullptr);

/// Seconds spent making the pool's contexts so far.
double device_context_seconds(const DeviceContexts& contexts);

}  // namespace omkl
