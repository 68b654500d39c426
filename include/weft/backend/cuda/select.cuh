// SPDX-License-Identifier: MIT
/// @file The CUDA stream compaction executors (nonzero, masked_select): a block-reduced count of the kept elements, then CUB's DeviceSelect (If over the flat positions, Flagged by the mask), which keeps their order (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/core/shape.hpp"
#include "weft/expr/reducers.hpp"

namespace weft::detail::cuda {

/// Whether flat position i of x holds a nonzero element (a NaN is nonzero; half and bfloat16
/// compared as float): DeviceSelect::If's predicate over the positions.
template <class T>
struct NonzeroAt {
  const T* x;
  __device__ bool operator()(std::int64_t i) const { return order_t<T>(x[i]) != order_t<T>(0); }
};

/// *count += the number of positions in [0, n) where kept(i): a grid-stride count per thread, a
/// block sum (CUB), one atomic add per block.
template <class Kept>
__global__ void __launch_bounds__(kRowBlock) count_kept_kernel(Kept kept, std::int64_t n,
                                                                unsigned long long* count) {
  using BlockReduce = cub::BlockReduce<unsigned long long, kRowBlock>;
  __shared__ typename BlockReduce::TempStorage storage;
  const RowGroup<1> group;
  unsigned long long mine = 0;
  for (std::int64_t i = group.first; i < n; i += group.step) mine += kept(i) ? 1 : 0;
  const unsigned long long block = BlockReduce(storage).Sum(mine);
  if (threadIdx.x == 0) atomicAdd(count, block);
}

/// A shape as a kernel argument (Shape's members are host code).
struct KernelExtents {
  std::int64_t extent[kMaxRank] = {};
  int rank = 0;
};

/// The row-major coordinates of the flat positions flat[0..nnz) over `shape` into out ([nnz, rank]).
__global__ void __launch_bounds__(kRowBlock) unravel_kernel(const std::int64_t* __restrict__ flat, std::int64_t nnz,
                                                             KernelExtents shape, std::int64_t* __restrict__ out) {
  const RowGroup<1> group;
  for (std::int64_t k = group.first; k < nnz; k += group.step)
    unravel(flat[k], shape.extent, shape.rank, out + k * shape.rank);
}

/// The number of nonzero elements of x[0..n), copied to the host (a synchronizing copy: the caller
/// sizes its output by it, as torch.nonzero does).
template <class T>
std::int64_t count_nonzero(const T* x, std::int64_t n, Device device) {
  CudaDeviceGuard guard(device.index());
  if (n == 0) return 0;
  const cudaStream_t stream = 0;
  ScratchBuffer count(sizeof(unsigned long long), stream);
  auto* c = static_cast<unsigned long long*>(count.get());
  check_cuda(cudaMemsetAsync(c, 0, sizeof(*c), stream), "cudaMemsetAsync (nonzero count)");
  count_kept_kernel<<<row_grid(n, 1), kRowBlock, 0, stream>>>(NonzeroAt<T>{x}, n, c);
  check_cuda(cudaGetLastError(), "nonzero count kernel launch");
  unsigned long long host = 0;
  check_cuda(cudaMemcpyAsync(&host, c, sizeof(host), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync (nonzero count)");
  check_cuda(cudaStreamSynchronize(stream), "nonzero count");
  return std::int64_t(host);
}

/// out ([nnz, rank]) = the coordinates of x's nonzero elements in row-major order: DeviceSelect::If
/// keeps the flat positions in order, a kernel unravels them.
template <class T>
void run_nonzero(const T* x, const Shape& shape, std::int64_t nnz, std::int64_t* out, Device device) {
  CudaDeviceGuard guard(device.index());
  const std::int64_t n = shape.numel();
  if (nnz == 0) return;
  const cudaStream_t stream = 0;
  const thrust::counting_iterator<std::int64_t> positions(0);
  std::size_t cub_bytes = 0;
  check_cuda(cub::DeviceSelect::If(nullptr, cub_bytes, positions, (std::int64_t*)nullptr, (std::int64_t*)nullptr, n,
                                   NonzeroAt<T>{x}, stream),
             "cub::DeviceSelect::If (size)");
  // Scratch: the flat positions (nnz), the selected count CUB writes, then CUB's temporary storage.
  const std::size_t flat_bytes = (std::size_t(nnz + 1) * sizeof(std::int64_t) + 255) / 256 * 256;
  ScratchBuffer scratch(flat_bytes + cub_bytes, stream);
  auto* flat = static_cast<std::int64_t*>(scratch.get());
  check_cuda(cub::DeviceSelect::If(static_cast<char*>(scratch.get()) + flat_bytes, cub_bytes, positions, flat,
                                   flat + nnz, n, NonzeroAt<T>{x}, stream),
             "cub::DeviceSelect::If");
  KernelExtents extents;
  extents.rank = shape.rank();
  for (int d = 0; d < shape.rank(); ++d) extents.extent[d] = shape[d];
  unravel_kernel<<<row_grid(nnz, 1), kRowBlock, 0, stream>>>(flat, nnz, extents, out);
  check_cuda(cudaGetLastError(), "nonzero unravel kernel launch");
}

/// out = x's elements where mask is true, in order (DeviceSelect::Flagged); out holds the mask's count of true.
template <class T>
void run_masked_select(const T* x, const bool* mask, std::int64_t n, T* out, Device device) {
  CudaDeviceGuard guard(device.index());
  if (n == 0) return;
  const cudaStream_t stream = 0;
  std::size_t cub_bytes = 0;
  check_cuda(cub::DeviceSelect::Flagged(nullptr, cub_bytes, x, mask, out, (std::int64_t*)nullptr, n, stream),
             "cub::DeviceSelect::Flagged (size)");
  ScratchBuffer scratch(256 + cub_bytes, stream);  // the selected count CUB writes, then its temporary storage
  check_cuda(cub::DeviceSelect::Flagged(static_cast<char*>(scratch.get()) + 256, cub_bytes, x, mask, out,
                                        static_cast<std::int64_t*>(scratch.get()), n, stream),
             "cub::DeviceSelect::Flagged");
}

}  // namespace weft::detail::cuda
