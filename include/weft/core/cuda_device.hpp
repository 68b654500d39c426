// SPDX-License-Identifier: MIT
/// @file The CUDA runtime as storage needs it (nvcc only): failed calls as weft::CudaError, and a guard that makes a device current.
#pragma once

#include <cuda_runtime.h>

#include "weft/core/error.hpp"

namespace weft::detail {

/// Throws weft::CudaError naming the failed call. Out of line and cold: a launch checks several
/// calls, and inlining the message and the throw into each check was half of a kernel's host code.
[[noreturn, gnu::cold, gnu::noinline]] inline void throw_cuda_error(cudaError_t status, const char* what) {
  throw CudaError(cat("weft: CUDA call ", what, " failed: ", cudaGetErrorName(status), " (",
                      cudaGetErrorString(status), ")"));
}

/// Throws weft::CudaError naming the call when a CUDA runtime call failed.
inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) [[unlikely]] throw_cuda_error(status, what);
}

/// Makes `device` current for the lifetime of the guard.
class CudaDeviceGuard {
 public:
  explicit CudaDeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
  }
  ~CudaDeviceGuard() { cudaSetDevice(previous_); }
  CudaDeviceGuard(const CudaDeviceGuard&) = delete;
  CudaDeviceGuard& operator=(const CudaDeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace weft::detail
