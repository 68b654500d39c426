// SPDX-License-Identifier: MIT
/// @file The CUDA cumsum executor: a thread per row of a contiguous (outer, n, inner) tensor, a sequential running sum along it (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/expr/reducers.hpp"

namespace weft::detail::cuda {

/// y[o, i, c] = sum_{j <= i} x[o, j, c], one thread per row (o, c): with inner > 1 neighbouring
/// threads read neighbouring columns. The running sum stays in sum_acc_t<T> and is rounded to O
/// at each output (as the CPU executor).
template <class O, class T>
__global__ void __launch_bounds__(kRowBlock) cumsum_kernel(const T* __restrict__ x, O* __restrict__ y,
                                                            std::int64_t rows, std::int64_t n, std::int64_t inner) {
  using Acc = sum_acc_t<T>;
  const RowGroup<1> group;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const std::int64_t base = (row / inner) * n * inner + row % inner;
    Acc acc = Acc(0);
    for (std::int64_t i = 0; i < n; ++i) {
      acc += Acc(x[base + i * inner]);
      y[base + i * inner] = O(acc);
    }
  }
}

template <class O, class T>
void run_cumsum(const T* x, O* y, std::int64_t outer, std::int64_t n, std::int64_t inner, Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  cumsum_kernel<O, T><<<row_grid(rows, 1), kRowBlock>>>(x, y, rows, n, inner);
  check_cuda(cudaGetLastError(), "cumsum kernel launch");
}

}  // namespace weft::detail::cuda
