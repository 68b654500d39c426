// SPDX-License-Identifier: MIT
/// @file The CUDA sort executor: each row of a contiguous (outer, n, inner) tensor mapped to its order-preserving keys (backend/sort_keys.hpp) and sorted with its indices by CUB's stable radix sorts (DeviceRadixSort for one row, DeviceSegmentedRadixSort for many) (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_segmented_radix_sort.cuh>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/backend/cuda/sort_thread.hpp"
#include "weft/backend/sort_keys.hpp"
#include "weft/core/device.hpp"

namespace weft::detail::cuda {

/// The batch's keys and indices, one thread per element (write_sort_key).
template <class T, class Index>
__global__ void __launch_bounds__(kRowBlock)
    sort_keys_kernel(const T* __restrict__ x, radix_key_t<T>* __restrict__ keys, Index* __restrict__ order,
                     SortBatch batch, bool descending) {
  const RowGroup<1> group;
  for (std::int64_t t = group.first; t < batch.rows * batch.n; t += group.step)
    write_sort_key(x, keys, order, batch, t, descending);
}

/// The sorted batch written out, one thread per element (write_sorted_element; values may be nullptr).
template <class T, class Index>
__global__ void __launch_bounds__(kRowBlock)
    sorted_output_kernel(const T* __restrict__ x, const Index* __restrict__ order, T* __restrict__ values,
                         std::int64_t* __restrict__ indices, SortBatch batch) {
  const RowGroup<1> group;
  for (std::int64_t t = group.first; t < batch.rows * batch.n; t += group.step)
    write_sorted_element(x, order, values, indices, batch, t);
}

/// offsets[s] = s * n for s in [0, segments]: where DeviceSegmentedRadixSort's segments begin
/// (offsets) and end (offsets + 1).
__global__ void __launch_bounds__(kRowBlock) segment_offsets_kernel(int* offsets, int segments, int n) {
  const RowGroup<1> group;
  for (std::int64_t s = group.first; s <= segments; s += group.step) offsets[s] = int(s) * n;
}

/// Sorts one batch of rows: keys and indices into scratch, CUB's
/// radix sort (stable: equal keys keep the order of their indices), the result written out. One
/// row uses DeviceRadixSort (any length Index holds); several, DeviceSegmentedRadixSort (its
/// item count is an int: the caller's batches hold at most INT_MAX elements).
template <class T, class Index>
void sort_batch(const T* x, T* values, std::int64_t* indices, const SortBatch& batch, bool descending) {
  using K = radix_key_t<T>;
  const std::int64_t rows = batch.rows, n = batch.n, total = rows * n;
  const cudaStream_t stream = 0;
  // Scratch: keys and indices twice (in, out), then the segment offsets, then CUB's temporary storage.
  auto round_up = [](std::size_t b) { return (b + 255) / 256 * 256; };
  const std::size_t key_bytes = round_up(std::size_t(total) * sizeof(K));
  const std::size_t index_bytes = round_up(std::size_t(total) * sizeof(Index));
  const std::size_t offset_bytes = rows > 1 ? round_up(std::size_t(rows + 1) * sizeof(int)) : 0;
  std::size_t cub_bytes = 0;
  if (rows == 1) {
    check_cuda(cub::DeviceRadixSort::SortPairs(nullptr, cub_bytes, (const K*)nullptr, (K*)nullptr,
                                               (const Index*)nullptr, (Index*)nullptr, total, 0, int(8 * sizeof(K)),
                                               stream),
               "cub::DeviceRadixSort::SortPairs (size)");
  } else {
    check_cuda(cub::DeviceSegmentedRadixSort::SortPairs(nullptr, cub_bytes, (const K*)nullptr, (K*)nullptr,
                                                        (const Index*)nullptr, (Index*)nullptr, int(total), int(rows),
                                                        (const int*)nullptr, (const int*)nullptr, 0,
                                                        int(8 * sizeof(K)), stream),
               "cub::DeviceSegmentedRadixSort::SortPairs (size)");
  }
  ScratchBuffer scratch(2 * key_bytes + 2 * index_bytes + offset_bytes + cub_bytes, stream);
  char* p = static_cast<char*>(scratch.get());
  K* keys_in = reinterpret_cast<K*>(p);
  K* keys_out = reinterpret_cast<K*>(p + key_bytes);
  Index* order_in = reinterpret_cast<Index*>(p + 2 * key_bytes);
  Index* order_out = reinterpret_cast<Index*>(p + 2 * key_bytes + index_bytes);
  int* offsets = reinterpret_cast<int*>(p + 2 * key_bytes + 2 * index_bytes);
  void* cub_scratch = p + 2 * key_bytes + 2 * index_bytes + offset_bytes;

  sort_keys_kernel<T, Index><<<row_grid(total, 1), kRowBlock, 0, stream>>>(x, keys_in, order_in, batch, descending);
  check_cuda(cudaGetLastError(), "sort keys kernel launch");
  if (rows == 1) {
    check_cuda(cub::DeviceRadixSort::SortPairs(cub_scratch, cub_bytes, keys_in, keys_out, order_in, order_out, total,
                                               0, int(8 * sizeof(K)), stream),
               "cub::DeviceRadixSort::SortPairs");
  } else {
    segment_offsets_kernel<<<row_grid(rows + 1, 1), kRowBlock, 0, stream>>>(offsets, int(rows), int(n));
    check_cuda(cudaGetLastError(), "sort segment offsets kernel launch");
    check_cuda(cub::DeviceSegmentedRadixSort::SortPairs(cub_scratch, cub_bytes, keys_in, keys_out, order_in, order_out,
                                                        int(total), int(rows), offsets, offsets + 1, 0,
                                                        int(8 * sizeof(K)), stream),
               "cub::DeviceSegmentedRadixSort::SortPairs");
  }
  sorted_output_kernel<T, Index><<<row_grid(total, 1), kRowBlock, 0, stream>>>(x, order_out, values, indices, batch);
  check_cuda(cudaGetLastError(), "sorted output kernel launch");
}

/// A stable sort of each row of a contiguous (outer, n, inner) tensor along n (NaN last ascending,
/// first descending; -0.0 ties 0.0), into values (nullptr: not wanted) and indices of the same
/// layout. Rows go to CUB in batches of at most INT_MAX elements; rows longer than that one by one.
template <class T>
void run_sort(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n, std::int64_t inner,
              bool descending, Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  const std::int64_t per_batch = sort_batch_rows(n);
  for (std::int64_t r = 0; r < rows; r += per_batch) {
    const SortBatch batch{r, std::min(per_batch, rows - r), n, inner};
    if (n > INT_MAX) sort_batch<T, std::int64_t>(x, values, indices, batch, descending);
    else sort_batch<T, std::int32_t>(x, values, indices, batch, descending);
  }
}

}  // namespace weft::detail::cuda
