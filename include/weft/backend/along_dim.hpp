// SPDX-License-Identifier: MIT
/// @file The ops along one dim of a contiguous tensor seen as (outer, n, inner) (argmax / argmin, topk, cumsum), handed to the executor of the data's device, as rows.hpp does for the row ops.
#pragma once

#include <cstdint>

#include "weft/backend/cpu/reduce/arg_reduce.hpp"
#include "weft/backend/cpu/reduce/cumsum.hpp"
#include "weft/backend/cpu/reduce/topk.hpp"
#include "weft/core/device.hpp"
#include "weft/core/shape.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/arg_reduce.cuh"
#include "weft/backend/cuda/cumsum.cuh"
#include "weft/backend/cuda/topk.cuh"
#endif

namespace weft::detail {

/// A contiguous tensor seen as (outer, n, inner) around one dim: element (o, i, c) lies at
/// (o * n + i) * inner + c, i running along the dim.
struct DimRows {
  std::int64_t outer = 1, n = 1, inner = 1;
};

/// `shape` around dim d (a rank-0 shape: one element, (1, 1, 1)).
inline DimRows rows_along(const Shape& shape, int d) {
  DimRows r;
  for (int k = 0; k < shape.rank(); ++k) (k < d ? r.outer : k == d ? r.n : r.inner) *= shape[k];
  return r;
}

inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass sees no CPU executor (host-only SIMD); a g++ translation unit sees no CUDA one (the op
// refused CUDA tensors before allocating).

/// out[o * inner + c] = argmax (kMax) or argmin along n of each row of contiguous x; n >= 1.
template <bool kMax, class T>
void run_arg_reduce_rows(const T* x, std::int64_t* out, const DimRows& r, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_arg_reduce<kMax>(x, out, r.outer, r.n, r.inner);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_arg_reduce<kMax>(x, out, r.outer, r.n, r.inner, device);
#endif
  }
}

/// The k best elements of each row of contiguous x along n and their indices, into (outer, k, inner) outputs.
/// The CUDA executor always sorts; the CPU one leaves an unsorted selection when !sorted.
template <class T>
void run_topk_rows(const T* x, T* values, std::int64_t* indices, const DimRows& r, std::int64_t k, bool largest,
                   bool sorted, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_topk(x, values, indices, r.outer, r.n, r.inner, k, largest, sorted);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_topk(x, values, indices, r.outer, r.n, r.inner, k, largest, device);
#endif
  }
}

/// The running sums of contiguous x along n, into y of the same layout.
template <class O, class T>
void run_cumsum_rows(const T* x, O* y, const DimRows& r, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_cumsum(x, y, r.outer, r.n, r.inner);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_cumsum(x, y, r.outer, r.n, r.inner, device);
#endif
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
