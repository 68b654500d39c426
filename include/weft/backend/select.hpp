// SPDX-License-Identifier: MIT
/// @file The stream compaction ops (nonzero, masked_select) handed to the executor of the data's device, as along_dim.hpp does for the ops along a dim: a count first (the caller sizes its output by it), then the selection.
#pragma once

#include <cstdint>

#include "weft/backend/cpu/select.hpp"
#include "weft/core/device.hpp"
#include "weft/core/shape.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/select.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass sees no CPU executor; a g++ translation unit sees no CUDA one (the op refused
// CUDA tensors before allocating).

/// The number of nonzero elements of contiguous x[0..n) (on a GPU: a reduction, then a copy to the host).
template <class T>
std::int64_t run_count_nonzero(const T* x, std::int64_t n, Device device) {
  std::int64_t count = 0;
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    count = cpu::count_nonzero(x, n);
#endif
  } else {
#if defined(__CUDACC__)
    count = cuda::count_nonzero(x, n, device);
#endif
  }
  return count;
}

/// out ([nnz, rank], nnz from run_count_nonzero) = the coordinates of contiguous x's nonzero elements, row-major.
template <class T>
void run_nonzero(const T* x, const Shape& shape, std::int64_t nnz, std::int64_t* out, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    (void)nnz;
    cpu::run_nonzero(x, shape, out);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_nonzero(x, shape, nnz, out, device);
#endif
  }
}

/// out (the mask's count of true) = x's elements where mask is true, in order (x and mask contiguous, n elements).
template <class T>
void run_masked_select(const T* x, const bool* mask, std::int64_t n, T* out, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_masked_select(x, mask, n, out);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_masked_select(x, mask, n, out, device);
#endif
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
