// SPDX-License-Identifier: MIT
/// @file The CUDA softmax / log_softmax executor: one warp (short rows) or one block (long rows) per row, three passes with cub reductions (nvcc only).
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

/// softmax (kLog: log_softmax) over the middle dim of a contiguous
/// (outer, n, inner) tensor; row `row` is (o, c) = (row / inner, row % inner)
/// and its elements lie `inner` apart. G threads share a row:
///   m = max x;  s = sum exp(x - m);  y = exp(x - m) / s  or  (x - m) - log s.
/// A row of only -inf gives m = -inf and NaN everywhere, like PyTorch.
template <bool kLog, int G, class T>
__global__ void __launch_bounds__(kRowBlock) softmax_kernel(const T* __restrict__ x, T* __restrict__ y,
                                                             std::int64_t rows, std::int64_t n, std::int64_t inner) {
  using Acc = math_t<T>;
  __shared__ RowReduceStorage<Acc, G> storage;
  const RowGroup<G> group;
  const int lane = group.lane;
  // Every thread of a group runs the same number of iterations (G == kRowBlock:
  // the whole block), as row_allreduce requires.
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const std::int64_t base = (row / inner) * n * inner + row % inner;
    const T* xr = x + base;
    T* yr = y + base;
    Acc m = -std::numeric_limits<Acc>::infinity();
    for (std::int64_t i = lane; i < n; i += G) m = math::max(m, Acc(xr[i * inner]));
    m = row_allreduce<G>(m, NanMaxOp{}, storage);
    Acc s = 0;
    for (std::int64_t i = lane; i < n; i += G) s += math::exp(Acc(xr[i * inner]) - m);
    s = row_allreduce<G>(s, AddOp{}, storage);
    if constexpr (kLog) {
      const Acc log_s = math::log(s);  // (x - m) - log s: m + log s would round at |m|
      for (std::int64_t i = lane; i < n; i += G) yr[i * inner] = T((Acc(xr[i * inner]) - m) - log_s);
    } else {
      const Acc inv = Acc(1) / s;
      for (std::int64_t i = lane; i < n; i += G) yr[i * inner] = T(math::exp(Acc(xr[i * inner]) - m) * inv);
    }
  }
}

template <bool kLog, class T>
void run_softmax(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner, Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  if (n <= kWarpRowLimit) {
    softmax_kernel<kLog, 32, T><<<row_grid(rows, 32), kRowBlock>>>(x, y, rows, n, inner);
  } else {
    softmax_kernel<kLog, kRowBlock, T><<<row_grid(rows, kRowBlock), kRowBlock>>>(x, y, rows, n, inner);
  }
  check_cuda(cudaGetLastError(), "softmax kernel launch");
}

}  // namespace weft::detail::cuda
