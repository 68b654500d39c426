// SPDX-License-Identifier: MIT
/// @file The sort along one dim of a contiguous (outer, n, inner) tensor handed to the executor of the data's device (CPU radix sort, CUB's radix sorts), as along_dim.hpp does for topk.
#pragma once

#include <cstdint>

#include "weft/backend/along_dim.hpp"
#include "weft/backend/cpu/sort.hpp"
#include "weft/core/device.hpp"

#if defined(__CUDACC__)
#include "weft/backend/cuda/sort.cuh"
#endif

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

// nvcc's device pass sees no CPU executor; a g++ translation unit sees no CUDA one (the op refused
// CUDA tensors before allocating).

/// A stable sort of each row of contiguous x along n, into values (nullptr: only the indices) and
/// indices of the same (outer, n, inner) layout.
template <class T>
void run_sort_rows(const T* x, T* values, std::int64_t* indices, const DimRows& r, bool descending, Device device) {
  if (device.is_cpu()) {
#if !defined(__CUDA_ARCH__)
    cpu::run_sort(x, values, indices, r.outer, r.n, r.inner, descending);
#endif
  } else {
#if defined(__CUDACC__)
    cuda::run_sort(x, values, indices, r.outer, r.n, r.inner, descending, device);
#endif
  }
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
