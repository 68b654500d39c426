// SPDX-License-Identifier: MIT
/// @file The CUDA cross_entropy executors: one warp (short rows) or one block (long rows) per row; the max and the sum
/// of exp by cub reductions, then the loss or the gradient's write (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <limits>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/expr/math.hpp"

namespace weft::detail::cuda {

/// The max m and s = sum_j exp(x_j - m) of row xr (n elements), in every thread of the group.
template <int G, class T, class Acc, int StorageG>
__device__ void row_exp_sum(const T* xr, std::int64_t n, int lane, RowReduceStorage<Acc, StorageG>& storage, Acc& m,
                            Acc& s) {
  m = -std::numeric_limits<Acc>::infinity();
  for (std::int64_t i = lane; i < n; i += G) m = math::max(m, Acc(xr[i]));
  m = row_allreduce<G>(m, NanMaxOp{}, storage);
  s = 0;
  for (std::int64_t i = lane; i < n; i += G) s += math::exp(Acc(xr[i]) - m);
  s = row_allreduce<G>(s, AddOp{}, storage);
}

/// loss_r = log s - (x_t - m) (see cpu/rows/cross_entropy.hpp); row r at x + r * x_stride. Acc is
/// math_t<T>, a template parameter so that g++ and cicc mangle the kernel's name alike.
template <int G, class T, class I, class O, class Acc>
__global__ void __launch_bounds__(kRowBlock) cross_entropy_kernel(const T* __restrict__ x, std::int64_t x_stride,
                                                                   const I* __restrict__ target, std::int64_t rows,
                                                                   std::int64_t n, O* __restrict__ loss) {
  __shared__ RowReduceStorage<Acc, G> storage;
  const RowGroup<G> group;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const T* xr = x + row * x_stride;
    Acc m, s;
    row_exp_sum<G>(xr, n, group.lane, storage, m, s);
    if (group.lane == 0) loss[row] = O(math::log(s) - (Acc(xr[target[row]]) - m));
  }
}

/// dx_rj = g_r * (softmax(x_r)_j - [j == t_r]), g_r = scale * grad[r * grad_stride] (scale when
/// grad is null). dx may be x itself (same rows): every read of a row precedes the group's sync.
template <int G, class T, class I, class Acc>
__global__ void __launch_bounds__(kRowBlock)
    cross_entropy_backward_kernel(const T* x, std::int64_t x_stride, const I* __restrict__ target,
                                  const T* __restrict__ grad, std::int64_t grad_stride, Acc scale, std::int64_t rows,
                                  std::int64_t n, T* dx, std::int64_t dx_stride) {
  __shared__ RowReduceStorage<Acc, G> storage;
  const RowGroup<G> group;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const T* xr = x + row * x_stride;
    T* dr = dx + row * dx_stride;
    const std::int64_t t = std::int64_t(target[row]);
    const Acc xt = Acc(xr[t]);  // read before row_exp_sum, whose reductions sync the group before any write
    Acc m, s;
    row_exp_sum<G>(xr, n, group.lane, storage, m, s);
    const Acc g = scale * (grad ? Acc(grad[row * grad_stride]) : Acc(1));
    const Acc c = g / s;
    for (std::int64_t i = group.lane; i < n; i += G)
      dr[i] = T(i == t ? g * (math::exp(xt - m) / s - Acc(1)) : math::exp(Acc(xr[i]) - m) * c);
  }
}

template <class T, class I, class O>
void run_cross_entropy(const T* x, std::int64_t x_stride, const I* target, std::int64_t rows, std::int64_t n, O* loss,
                       Device device) {
  CudaDeviceGuard guard(device.index());
  if (rows == 0 || n == 0) return;
  using Acc = math_t<T>;
  if (n <= kWarpRowLimit) {
    cross_entropy_kernel<32, T, I, O, Acc><<<row_grid(rows, 32), kRowBlock>>>(x, x_stride, target, rows, n, loss);
  } else {
    cross_entropy_kernel<kRowBlock, T, I, O, Acc>
        <<<row_grid(rows, kRowBlock), kRowBlock>>>(x, x_stride, target, rows, n, loss);
  }
  check_cuda(cudaGetLastError(), "cross_entropy kernel launch");
}

template <class T, class I>
void run_cross_entropy_backward(const T* x, std::int64_t x_stride, const I* target, const T* grad,
                                std::int64_t grad_stride, double scale, std::int64_t rows, std::int64_t n, T* dx,
                                std::int64_t dx_stride, Device device) {
  CudaDeviceGuard guard(device.index());
  if (rows == 0 || n == 0) return;
  using Acc = math_t<T>;
  if (n <= kWarpRowLimit) {
    cross_entropy_backward_kernel<32, T, I, Acc><<<row_grid(rows, 32), kRowBlock>>>(
        x, x_stride, target, grad, grad_stride, Acc(scale), rows, n, dx, dx_stride);
  } else {
    cross_entropy_backward_kernel<kRowBlock, T, I, Acc><<<row_grid(rows, kRowBlock), kRowBlock>>>(
        x, x_stride, target, grad, grad_stride, Acc(scale), rows, n, dx, dx_stride);
  }
  check_cuda(cudaGetLastError(), "cross_entropy_backward kernel launch");
}

}  // namespace weft::detail::cuda
