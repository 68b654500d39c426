// SPDX-License-Identifier: MIT
/// @file The CUDA indexing executors: strided copies (cat), gather (gather, index_select, embedding) and scatter-add with atomics (index_add, scatter_add); a thread per element, grid-stride (nvcc only).
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <type_traits>

#include "weft/backend/cuda/reduce.cuh"
#include "weft/backend/cuda/runtime.cuh"
#include "weft/core/device.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/shape.hpp"

namespace weft::detail::cuda {

/// A shape and K operands' strides over it as plain arrays, which a kernel takes by value.
template <int K>
struct StridedSpace {
  int rank = 0;
  std::int64_t extent[kMaxRank] = {};
  std::int64_t stride[K][kMaxRank] = {};

  StridedSpace(const Shape& shape, const std::array<const Strides*, K>& strides) : rank(shape.rank()) {
    for (int d = 0; d < rank; ++d) {
      extent[d] = shape[d];
      for (int k = 0; k < K; ++k) stride[k][d] = (*strides[k])[d];
    }
  }

  /// Each operand's offset (in elements) at flat row-major position i.
  __device__ void offsets(std::int64_t i, std::int64_t (&at)[K]) const {
    for (int k = 0; k < K; ++k) at[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const std::int64_t c = i % extent[d];
      i /= extent[d];
      for (int k = 0; k < K; ++k) at[k] += c * stride[k][d];
    }
  }
};

/// The grid-stride loop's first position and step.
__device__ inline std::int64_t first_position() { return std::int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline std::int64_t position_step() { return std::int64_t(gridDim.x) * blockDim.x; }

/// dst[c] = src[c] for every multi-index c of the space (operand 0: dst, 1: src).
template <class T>
__global__ void __launch_bounds__(kRowBlock) copy_strided_kernel(T* dst, const T* src, StridedSpace<2> space,
                                                                  std::int64_t n) {
  for (std::int64_t i = first_position(); i < n; i += position_step()) {
    std::int64_t at[2];
    space.offsets(i, at);
    dst[at[0]] = src[at[1]];
  }
}

/// out[i] = x[c with c[dim] = index[c]] at row-major position i of c (operand 0: x with stride 0
/// at dim, 1: the index).
template <class T, class I>
__global__ void __launch_bounds__(kRowBlock) gather_kernel(T* out, const T* x, std::int64_t dim_stride,
                                                            const I* index, StridedSpace<2> space, std::int64_t n) {
  for (std::int64_t i = first_position(); i < n; i += position_step()) {
    std::int64_t at[2];
    space.offsets(i, at);
    out[i] = x[at[0] + std::int64_t(index[at[1]]) * dim_stride];
  }
}

/// *p += v as one atomic read-modify-write. 16-bit floats: a compare-and-swap loop on the aligned
/// 32-bit word that holds them (the sum rounds to T at every addition); int64 through the unsigned
/// add (two's complement: the same bits).
template <class T>
__device__ void atomic_add(T* p, math_t<T> v) {
  if constexpr (is_16bit_float_v<T>) {
    const auto address = reinterpret_cast<std::uintptr_t>(p);
    auto* word = reinterpret_cast<unsigned int*>(address & ~std::uintptr_t(3));
    const unsigned shift = (address & 2) ? 16u : 0u;
    unsigned int old = *word, assumed;
    do {
      assumed = old;
      const float sum = float(T::from_bits(std::uint16_t(assumed >> shift))) + v;
      const unsigned int bits = T(sum).bits;
      old = atomicCAS(word, assumed, (assumed & ~(0xffffu << shift)) | (bits << shift));
    } while (old != assumed);
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else {
    atomicAdd(p, v);
  }
}

/// target[c with c[dim] = index[c]] += alpha * source[c] (operand 0: target with stride 0 at dim,
/// 1: source, 2: the index), computed in Acc = math_t<T> (a parameter of its own: nvcc's two
/// passes would mangle the alias in a kernel's signature differently). Atomics: the order of the
/// additions into one element is not fixed.
template <class T, class I, class Acc>
__global__ void __launch_bounds__(kRowBlock) scatter_add_kernel(T* target, std::int64_t dim_stride, const T* source,
                                                                 const I* index, StridedSpace<3> space, std::int64_t n,
                                                                 Acc alpha) {
  for (std::int64_t i = first_position(); i < n; i += position_step()) {
    std::int64_t at[3];
    space.offsets(i, at);
    atomic_add(target + at[0] + std::int64_t(index[at[2]]) * dim_stride, alpha * Acc(source[at[1]]));
  }
}

/// dst[c] = src[c] over `shape`, each through its own strides.
template <class T>
void run_copy_strided(T* dst, const Strides& dst_strides, const T* src, const Strides& src_strides, const Shape& shape,
                      Device device) {
  const std::int64_t n = shape.numel();
  if (n == 0) return;
  CudaDeviceGuard guard(device.index());
  copy_strided_kernel<T>
      <<<row_grid(n, 1), kRowBlock>>>(dst, src, StridedSpace<2>(shape, {&dst_strides, &src_strides}), n);
  check_cuda(cudaGetLastError(), "cat kernel launch");
}

/// gather over `shape`: out[p] = x[c with c[dim] = index[c]]; `x_strides` has 0 at dim, where
/// `dim_stride` applies to the index value (the CPU executor's arguments).
template <class T, class I>
void run_gather(T* out, const T* x, const Strides& x_strides, std::int64_t dim_stride, const I* index,
                const Strides& index_strides, const Shape& shape, Device device) {
  const std::int64_t n = shape.numel();
  if (n == 0) return;
  CudaDeviceGuard guard(device.index());
  gather_kernel<T, I><<<row_grid(n, 1), kRowBlock>>>(out, x, dim_stride, index,
                                                     StridedSpace<2>(shape, {&x_strides, &index_strides}), n);
  check_cuda(cudaGetLastError(), "gather kernel launch");
}

/// target[c with c[dim] = index[c]] += alpha * source[c] over `shape` (the CPU executor's
/// arguments), with atomics: unlike the CPU's, the result may differ in its last bits from run to
/// run when indices repeat.
template <class T, class I>
void run_scatter_add(T* target, const Strides& target_strides, const T* source, const Strides& source_strides,
                     const I* index, const Strides& index_strides, const Shape& shape, int dim, T alpha,
                     Device device) {
  const std::int64_t n = shape.numel();
  if (n == 0) return;
  Strides ts = target_strides;
  ts[dim] = 0;
  CudaDeviceGuard guard(device.index());
  scatter_add_kernel<T, I, math_t<T>><<<row_grid(n, 1), kRowBlock>>>(
      target, target_strides[dim], source, index, StridedSpace<3>(shape, {&ts, &source_strides, &index_strides}), n,
      math_t<T>(alpha));
  check_cuda(cudaGetLastError(), "scatter_add kernel launch");
}

}  // namespace weft::detail::cuda
