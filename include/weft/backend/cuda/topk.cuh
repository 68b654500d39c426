// SPDX-License-Identifier: MIT
/// @file The CUDA topk executor: a thread per row of a contiguous (outer, n, inner) tensor, inserting each element into its sorted k best (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/expr/reducers.hpp"

namespace weft::detail::cuda {

/// The first k >= 1 pairs (x_i, i) of row `row` = (o, c) under Order (IndexOrder, a strict
/// total order), sorted, into values / indices at (o * k + j) * inner + c. The outputs themselves
/// hold the row's best so far: element i enters by insertion when it comes before the last kept
/// pair (or while fewer than k are kept). O(n k) at worst (a row already in the order); a random
/// row with k << n costs about one compare per element. Elements arrive in index order, so an
/// equal value never passes a kept one.
template <class Order, class T>
__global__ void __launch_bounds__(kRowBlock) topk_kernel(const T* __restrict__ x, T* __restrict__ values,
                                                          std::int64_t* __restrict__ indices, std::int64_t rows,
                                                          std::int64_t n, std::int64_t inner, std::int64_t k) {
  using Acc = order_t<T>;
  const RowGroup<1> group;
  for (std::int64_t row = group.first; row < rows; row += group.step) {
    const std::int64_t o = row / inner, c = row % inner;
    const T* xr = x + o * n * inner + c;
    T* vr = values + o * k * inner + c;
    std::int64_t* ir = indices + o * k * inner + c;
    std::int64_t kept = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const T v = xr[i * inner];
      const Acc a = Acc(v);
      if (kept == k && !Order::before(a, i, Acc(vr[(k - 1) * inner]), ir[(k - 1) * inner])) continue;
      std::int64_t j = kept < k ? kept++ : k - 1;  // a new slot, or the last kept pair's (it drops out)
      for (; j > 0 && Order::before(a, i, Acc(vr[(j - 1) * inner]), ir[(j - 1) * inner]); --j) {
        vr[j * inner] = vr[(j - 1) * inner];
        ir[j * inner] = ir[(j - 1) * inner];
      }
      vr[j * inner] = v;
      ir[j * inner] = i;
    }
  }
}

/// topk along n of a contiguous (outer, n, inner) tensor: the k largest (NaN above every number)
/// or smallest (NaN below none), ties by the lower index; always sorted. 0 <= k <= n.
template <class T>
void run_topk(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n, std::int64_t inner,
              std::int64_t k, bool largest, Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t rows = outer * inner;
  if (rows == 0 || k == 0) return;
  if (largest) {
    topk_kernel<IndexOrder<true, true>, T><<<row_grid(rows, 1), kRowBlock>>>(x, values, indices, rows, n, inner, k);
  } else {
    topk_kernel<IndexOrder<false, false>, T><<<row_grid(rows, 1), kRowBlock>>>(x, values, indices, rows, n, inner, k);
  }
  check_cuda(cudaGetLastError(), "topk kernel launch");
}

}  // namespace weft::detail::cuda
