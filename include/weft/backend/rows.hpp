// SPDX-License-Identifier: MIT
/// @file The row ops (softmax, log_softmax, layer_norm and its backward, cross_entropy and its backward) handed to the executor of the data's device: one call per op,
/// as backend/run.hpp does for statements, so that ops/ names no backend. On the CPU, softmax, log_softmax and layer_norm are their formulas run as row
/// epilogues (backend/row_epilogue.hpp), not kernels of their own.
#pragma once

#include <cstdint>

#include "weft/backend/cpu/rows/cross_entropy.hpp"
#include "weft/backend/cpu/rows/layer_norm.hpp"
#include "weft/core/device.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/cross_entropy.cuh"
#include "weft/backend/cuda/layer_norm.cuh"
#include "weft/backend/cuda/softmax.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass sees no CPU executor (host-only SIMD); a g++ translation unit sees no CUDA one (the op
// refused CUDA tensors before allocating).

/// softmax (log_softmax with kLog) of contiguous x viewed as (outer, n, inner), over the middle dim, into y, on a
/// CUDA device (the CPU runs softmax's formula as a row epilogue: ops/softmax.hpp).
template <bool kLog, class T>
void run_softmax_rows(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner, Device device) {
#if defined(__CUDACC__)
  cuda::run_softmax<kLog>(x, y, outer, n, inner, device);
#else
  (void)x, (void)y, (void)outer, (void)n, (void)inner, (void)device;
#endif
}

/// layer_norm of `rows` contiguous rows of n elements into y, on a CUDA device (the CPU runs layer_norm's formula
/// as a row epilogue: ops/layer_norm.hpp); b may be null (no bias).
template <class T>
void run_layer_norm_rows(const T* x, const T* w, const T* b, T* y, std::int64_t rows, std::int64_t n, double eps,
                         Device device) {
#if defined(__CUDACC__)
  cuda::run_layer_norm(x, w, b, y, rows, n, eps, device);
#else
  (void)x, (void)w, (void)b, (void)y, (void)rows, (void)n, (void)eps, (void)device;
#endif
}

/// layer_norm's gradients over `rows` contiguous rows of n elements: dx (x's shape), dw and db
/// (n elements each).
template <class T>
void run_layer_norm_backward_rows(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, std::int64_t rows,
                                  std::int64_t n, double eps, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_layer_norm_backward(dy, x, w, dx, dw, db, rows, n, eps);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_layer_norm_backward(dy, x, w, dx, dw, db, rows, n, eps, device);
#endif
  }
}

/// cross_entropy's per-row losses (as O) of `rows` rows of n contiguous elements, row r at x + r * x_stride.
template <class T, class I, class O>
void run_cross_entropy_rows(const T* x, std::int64_t x_stride, const I* target, std::int64_t rows, std::int64_t n,
                            O* loss, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_cross_entropy(x, x_stride, target, rows, n, loss);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_cross_entropy(x, x_stride, target, rows, n, loss, device);
#endif
  }
}

/// cross_entropy's gradient: dx row r = scale * grad[r * grad_stride] * (softmax(x_r) - onehot(t_r)); grad may be
/// null (a gradient of 1).
template <class T, class I>
void run_cross_entropy_backward_rows(const T* x, std::int64_t x_stride, const I* target, const T* grad,
                                     std::int64_t grad_stride, double scale, std::int64_t rows, std::int64_t n, T* dx,
                                     std::int64_t dx_stride, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_cross_entropy_backward(x, x_stride, target, grad, grad_stride, scale, rows, n, dx, dx_stride);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_cross_entropy_backward(x, x_stride, target, grad, grad_stride, scale, rows, n, dx, dx_stride, device);
#endif
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
