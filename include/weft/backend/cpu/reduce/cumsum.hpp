// SPDX-License-Identifier: MIT
/// @file The CPU cumsum executor: a sequential running sum along the middle dim of a contiguous (outer, n, inner) tensor, neighbouring columns summed together; OpenMP over rows and column blocks.
#pragma once

#include <algorithm>
#include <cstdint>

#include "weft/backend/cpu/reduce/arg_reduce.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/expr/reducers.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// y[o, i, c] = sum_{j <= i} x[o, j, c] of a contiguous (outer, n, inner) tensor, into y of the
/// same layout. The running sum is kept in sum_acc_t<T> (float for 16-bit floats, int64 for
/// integers) and rounded to O at each output, so each output carries only its own rounding
/// besides the i additions of a sequential sum.
template <class O, class T>
void run_cumsum(const T* x, O* y, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = sum_acc_t<T>;
  const std::int64_t width = std::min(inner, kColumnBlock);
  const std::int64_t blocks = (inner + width - 1) / width;
  const int threads = threads_for(outer * n * inner);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t u = 0; u < outer * blocks; ++u) {
    const std::int64_t o = u / blocks, c0 = u % blocks * width, w = std::min(width, inner - c0);
    const T* xb = x + o * n * inner + c0;
    O* yb = y + o * n * inner + c0;
    Acc acc[kColumnBlock] = {};
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t c = 0; c < w; ++c) {
        acc[c] += Acc(xb[i * inner + c]);
        yb[i * inner + c] = O(acc[c]);
      }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
