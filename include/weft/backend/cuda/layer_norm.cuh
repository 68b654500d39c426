// SPDX-License-Identifier: MIT
/// @file The CUDA layer_norm executor: one warp (short rows) or one block (long rows) per row; mean, biased variance and the affine write (nvcc only).
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

}  // namespace weft::detail::cuda
