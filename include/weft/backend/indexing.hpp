// SPDX-License-Identifier: MIT
/// @file The indexing ops (cat, index_select, gather, index_add / scatter_add) handed to the executor of the data's device, as backend/rows.hpp does for the row ops, so that ops/ names no backend.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/backend/cpu/indexing.hpp"
#include "weft/core/tensor.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/indexing.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass sees no CPU executor; a g++ translation unit sees no CUDA one (the op refused
// CUDA tensors before allocating). The callers have checked shapes, devices and index values.

/// Refuses a CUDA tensor in a translation unit that nvcc did not compile (it has no CUDA executor),
/// before anything is allocated.
inline void check_executor_for(const char* op, Device device) {
#if !defined(__CUDACC__)
  if (device.is_cuda()) fail_no_cuda(op);
#else
  (void)op, (void)device;
#endif
}

/// Strides over a shape where only `dim` moves: a 1-D index read along dim `dim` of a wider space.
inline Strides along_dim(int rank, int dim, std::int64_t stride) {
  Strides s = Shape::filled(rank, 0);
  s[dim] = stride;
  return s;
}

/// out (contiguous, the concatenated shape) = the operands one after another along dim. CPU: one
/// pass over the output, a memcpy per contiguous run; CUDA: a strided copy per operand.
template <class T>
void run_cat(const TensorView<T>& out, const std::vector<TensorView<const T>>& xs, int dim) {
  const Shape& shape = out.shape();
  if (out.device().is_cpu()) {
#if !defined(__CUDA_ARCH__)
    std::int64_t inner = 1;
    for (int d = dim + 1; d < shape.rank(); ++d) inner *= shape[d];
    std::vector<cpu::CatPart<T>> parts;
    std::int64_t begin = 0;
    for (const TensorView<const T>& x : xs) {
      const Strides& s = x.strides();
      parts.push_back({x.data(), Strides(s.begin(), s.begin() + dim), Shape(x.shape().begin() + dim, x.shape().end()),
                       Strides(s.begin() + dim, s.end()), begin});
      begin += x.shape()[dim] * inner;
    }
    cpu::run_cat(out.data(), Shape(shape.begin(), shape.begin() + dim), shape[dim] * inner, parts);
#endif
  } else {
#if defined(__CUDACC__)
    std::int64_t at = 0;
    for (const TensorView<const T>& x : xs) {
      cuda::run_copy_strided(out.data() + at * out.strides()[dim], out.strides(), x.data(), x.strides(), x.shape(),
                             out.device());
      at += x.shape()[dim];
    }
#endif
  }
}

/// out (contiguous: x's shape with dim's extent replaced by index's length) [..., i, ...] =
/// x[..., index[i], ...]. CPU: a memcpy per contiguous block; CUDA: the gather kernel.
template <class T, class I>
void run_index_select(T* out, const TensorView<const T>& x, int dim, const TensorView<const I>& index) {
  const Shape& s = x.shape();
  const Strides& xs = x.strides();
  const std::int64_t n = index.numel(), index_stride = index.strides()[0];
  if (x.device().is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_index_select(out, x.data(), Shape(s.begin(), s.begin() + dim), Strides(xs.begin(), xs.begin() + dim),
                          xs[dim], Shape(s.begin() + dim + 1, s.end()), Strides(xs.begin() + dim + 1, xs.end()),
                          index.data(), index_stride, n);
#endif
  } else {
#if defined(__CUDACC__)
    Shape shape = s;
    shape[dim] = n;
    Strides x_strides = xs;
    x_strides[dim] = 0;
    cuda::run_gather(out, x.data(), x_strides, xs[dim], index.data(), along_dim(s.rank(), dim, index_stride), shape,
                     x.device());
#endif
  }
}

/// out (contiguous, index's shape) [c] = x[c with c[dim] = index[c]].
template <class T, class I>
void run_gather(T* out, const TensorView<const T>& x, int dim, const TensorView<const I>& index) {
  Strides x_strides = x.strides();
  x_strides[dim] = 0;
  if (x.device().is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_gather(out, x.data(), x_strides, x.strides()[dim], index.data(), index.strides(), index.shape());
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_gather(out, x.data(), x_strides, x.strides()[dim], index.data(), index.strides(), index.shape(),
                     x.device());
#endif
  }
}

/// target[c with c[dim] = index[c]] += alpha * source[c] for every multi-index c of `shape`, each
/// operand read through its strides over `shape` (target's at dim apply to the index value). CPU:
/// in a fixed order (bitwise reproducible); CUDA: atomics.
template <class T, class I>
void run_scatter_add(const TensorView<T>& target, const TensorView<const T>& source, const I* index,
                     const Strides& index_strides, const Shape& shape, int dim, T alpha) {
  if (target.device().is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_scatter_add(target.data(), target.strides(), source.data(), source.strides(), index, index_strides, shape,
                         dim, alpha);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_scatter_add(target.data(), target.strides(), source.data(), source.strides(), index, index_strides,
                          shape, dim, alpha, target.device());
#endif
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
