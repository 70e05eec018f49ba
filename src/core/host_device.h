/// @file host_device.h
/// @brief OMKL_HD marks per-element math shared by the CPU backend and CUDA kernels.
#pragma once

#if defined(__CUDACC__)
#define OMKL_HD __host__ __device__ __forceinline__
#else
#define OMKL_HD inline
#endif
