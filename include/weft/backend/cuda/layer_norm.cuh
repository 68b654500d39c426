// SPDX-License-Identifier: MIT
/// @file The CUDA layer_norm executors: one warp (short rows) or one block (long rows) per row; mean, biased variance
/// and the affine write; backward, the same statistics and row sums for dx, then a thread per column adding the rows
/// of the weight and bias gradients in order (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/expr/math.hpp"

namespace weft::detail::cuda {

/// y = (x - mean) * rsqrt(var + eps) * w + b over each contiguous row of n
/// elements; mean = sum x / n, var = sum (x - mean)^2 / n (two passes: no
/// cancellation when |mean| >> std). `b` may be null. Acc is math_t<T>, a
/// template parameter so that g++ and cicc mangle the kernel's name alike
/// (scripts/check-cuda-kernels compares them).
template <int G, class T, class Acc>
__global__ void __launch_bounds__(kRowBlock) layer_norm_kernel(const T* __restrict__ x, const T* __restrict__ w,
                                                                const T* __restrict__ b, T* __restrict__ y,
                                                                std::int64_t rows, std::int64_t n, Acc eps) {
  __shared__ RowReduceStorage<Acc, G> storage;
  const RowGroup<G> group;
  const int lane = group.lane;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    Acc s = 0;
    for (std::int64_t i = lane; i < n; i += G) s += Acc(xr[i]);
    const Acc mean = row_allreduce<G>(s, AddOp{}, storage) / Acc(n);
    Acc q = 0;
    for (std::int64_t i = lane; i < n; i += G) {
      const Acc d = Acc(xr[i]) - mean;
      q += d * d;
    }
    const Acc var = row_allreduce<G>(q, AddOp{}, storage) / Acc(n);
    const Acc rstd = Acc(1) / math::sqrt(var + eps);
    for (std::int64_t i = lane; i < n; i += G)
      yr[i] = T((Acc(xr[i]) - mean) * rstd * Acc(w[i]) + (b ? Acc(b[i]) : Acc(0)));
  }
}

template <class T>
void run_layer_norm(const T* x, const T* w, const T* b, T* y, std::int64_t rows, std::int64_t n, double eps,
                    Device device) {
  CudaDeviceGuard guard(device.index());
  if (rows == 0 || n == 0) return;
  using Acc = math_t<T>;
  if (n <= kWarpRowLimit) {
    layer_norm_kernel<32, T, Acc><<<row_grid(rows, 32), kRowBlock>>>(x, w, b, y, rows, n, Acc(eps));
  } else {
    layer_norm_kernel<kRowBlock, T, Acc><<<row_grid(rows, kRowBlock), kRowBlock>>>(x, w, b, y, rows, n, Acc(eps));
  }
  check_cuda(cudaGetLastError(), "layer_norm kernel launch");
}

/// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * w, xhat = (x - mean) * rstd, per
/// row (see cpu/rows/layer_norm.hpp); each row's mean and rstd are kept in stats[2 row], [2 row + 1].
template <int G, class T, class Acc>
__global__ void __launch_bounds__(kRowBlock)
    layer_norm_backward_kernel(const T* __restrict__ dy, const T* __restrict__ x, const T* __restrict__ w,
                               T* __restrict__ dx, Acc* __restrict__ stats, std::int64_t rows, std::int64_t n, Acc eps) {
  __shared__ RowReduceStorage<Acc, G> storage;
  const RowGroup<G> group;
  const int lane = group.lane;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const T* xr = x + row * n;
    const T* dyr = dy + row * n;
    T* dxr = dx + row * n;
    Acc s = 0;
    for (std::int64_t i = lane; i < n; i += G) s += Acc(xr[i]);
    const Acc mean = row_allreduce<G>(s, AddOp{}, storage) / Acc(n);
    Acc q = 0, sg = 0, sgd = 0;
    for (std::int64_t i = lane; i < n; i += G) {
      const Acc d = Acc(xr[i]) - mean, g = Acc(dyr[i]) * Acc(w[i]);
      q += d * d;
      sg += g;
      sgd += g * d;
    }
    const Acc var = row_allreduce<G>(q, AddOp{}, storage) / Acc(n);
    const Acc mean_g = row_allreduce<G>(sg, AddOp{}, storage) / Acc(n);
    const Acc rstd = Acc(1) / math::sqrt(var + eps);
    const Acc mean_gxhat = row_allreduce<G>(sgd, AddOp{}, storage) * rstd / Acc(n);
    for (std::int64_t i = lane; i < n; i += G) {
      const Acc xhat = (Acc(xr[i]) - mean) * rstd;
      dxr[i] = T(rstd * (Acc(dyr[i]) * Acc(w[i]) - mean_g - xhat * mean_gxhat));
    }
    if (lane == 0) stats[2 * row] = mean, stats[2 * row + 1] = rstd;
  }
}

/// dw_j = sum_r dy_rj * xhat_rj and db_j = sum_r dy_rj: a thread per column j,
/// adding the rows in order (deterministic); neighbouring threads read neighbouring elements.
template <class T, class Acc>
__global__ void layer_norm_weight_grad_kernel(const T* __restrict__ dy, const T* __restrict__ x,
                                              const Acc* __restrict__ stats, T* __restrict__ dw, T* __restrict__ db,
                                              std::int64_t rows, std::int64_t n) {
  const std::int64_t j = std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  Acc sw = 0, sb = 0;
  for (std::int64_t r = 0; r < rows; ++r) {
    const Acc d = Acc(dy[r * n + j]);
    sw += d * (Acc(x[r * n + j]) - stats[2 * r]) * stats[2 * r + 1];
    sb += d;
  }
  dw[j] = T(sw);
  db[j] = T(sb);
}

template <class T>
void run_layer_norm_backward(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, std::int64_t rows,
                             std::int64_t n, double eps, Device device) {
  CudaDeviceGuard guard(device.index());
  if (n == 0) return;
  using Acc = math_t<T>;
  ScratchBuffer stats(std::size_t(2 * rows) * sizeof(Acc), 0);
  Acc* st = static_cast<Acc*>(stats.get());
  if (rows > 0) {
    if (n <= kWarpRowLimit) {
      layer_norm_backward_kernel<32, T, Acc><<<row_grid(rows, 32), kRowBlock>>>(dy, x, w, dx, st, rows, n, Acc(eps));
    } else {
      layer_norm_backward_kernel<kRowBlock, T, Acc>
          <<<row_grid(rows, kRowBlock), kRowBlock>>>(dy, x, w, dx, st, rows, n, Acc(eps));
    }
    check_cuda(cudaGetLastError(), "layer_norm_backward kernel launch");
  }
  const unsigned column_blocks = unsigned((n + kRowBlock - 1) / kRowBlock);
  layer_norm_weight_grad_kernel<T, Acc><<<column_blocks, kRowBlock>>>(dy, x, st, dw, db, rows, n);
  check_cuda(cudaGetLastError(), "layer_norm_backward weight gradient kernel launch");
}

}  // namespace weft::detail::cuda
