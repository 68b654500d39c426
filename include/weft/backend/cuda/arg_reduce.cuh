// SPDX-License-Identifier: MIT
/// @file The CUDA argmax / argmin executor: a thread (many columns), a warp (short rows) or a block (long rows) per row of a contiguous (outer, n, inner) tensor (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/expr/reducers.hpp"

namespace weft::detail::cuda {

/// out[row] = the index of the first element of row `row` = (o, c) = (row / inner, row % inner)
/// (its n >= 1 elements lie `inner` apart) under argmax's (kMax) or argmin's order. G threads
/// share a row: each keeps the winner of the elements lane, lane + G, ..., then the group
/// combines them; the order breaks ties by index, so the combine order does not matter.
template <bool kMax, int G, class T>
__global__ void __launch_bounds__(kRowBlock) arg_reduce_kernel(const T* __restrict__ x, std::int64_t* __restrict__ out,
                                                                std::int64_t rows, std::int64_t n,
                                                                std::int64_t inner) {
  using Acc = order_t<T>;
  using Red = ArgExtremumReducer<Acc, kMax>;
  const Red red;
  const RowGroup<G> group;
  // Every thread of a group runs the same number of iterations, as row_allreduce requires.
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const T* xr = x + (row / inner) * n * inner + row % inner;
    IndexedValue<Acc> best{Acc(xr[0]), 0};  // lanes past a short row keep element 0: no harm
    for (std::int64_t i = group.lane; i < n; i += G) best = red.combine(best, {Acc(xr[i * inner]), i});
    if constexpr (G > 1) {
      __shared__ RowReduceStorage<IndexedValue<Acc>, G> storage;
      best = row_allreduce<G>(best, ReduceCombine<Red>{red}, storage);
    }
    if (group.lane == 0) out[row] = best.index;
  }
}

template <bool kMax, class T>
void run_arg_reduce(const T* x, std::int64_t* out, std::int64_t outer, std::int64_t n, std::int64_t inner,
                    Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t rows = outer * inner;
  if (inner > 1 && rows >= kThreadPerOutputMin) {  // neighbouring threads read neighbouring columns
    arg_reduce_kernel<kMax, 1, T><<<row_grid(rows, 1), kRowBlock>>>(x, out, rows, n, inner);
  } else if (n <= kWarpRowLimit) {
    arg_reduce_kernel<kMax, 32, T><<<row_grid(rows, 32), kRowBlock>>>(x, out, rows, n, inner);
  } else {
    arg_reduce_kernel<kMax, kRowBlock, T><<<row_grid(rows, kRowBlock), kRowBlock>>>(x, out, rows, n, inner);
  }
  check_cuda(cudaGetLastError(), "argmax / argmin kernel launch");
}

}  // namespace weft::detail::cuda
