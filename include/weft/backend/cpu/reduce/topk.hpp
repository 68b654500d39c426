// SPDX-License-Identifier: MIT
/// @file The CPU topk executor: per row of a contiguous (outer, n, inner) tensor, a selection (nth_element, then a sort of the k chosen) over (value, index) pairs; OpenMP over rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/expr/reducers.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The first k pairs (x_i, i) of each row under Order, a strict total order (IndexOrder), so the
/// chosen set is unique even among ties: values[(o * k + j) * inner + c] and indices likewise,
/// j = 0..k-1, in Order when `sorted` (else in the order the selection leaves them). 0 <= k <= n.
template <class Order, class T>
void run_topk_ordered(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n,
                      std::int64_t inner, std::int64_t k, bool sorted) {
  using Pair = IndexedValue<order_t<T>>;
  auto before = [](const Pair& a, const Pair& b) { return Order::before(a.value, a.index, b.value, b.index); };
  const std::int64_t rows = outer * inner;
  const int threads = threads_for(rows * n);
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    std::vector<Pair> row(static_cast<std::size_t>(n));
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t o = r / inner, c = r % inner;
      const T* xr = x + o * n * inner + c;
      for (std::int64_t i = 0; i < n; ++i) row[std::size_t(i)] = {order_t<T>(xr[i * inner]), i};
      std::nth_element(row.begin(), row.begin() + k, row.end(), before);
      if (sorted) std::sort(row.begin(), row.begin() + k, before);
      T* vr = values + o * k * inner + c;
      std::int64_t* ir = indices + o * k * inner + c;
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t i = row[std::size_t(j)].index;
        vr[j * inner] = xr[i * inner];  // the element itself, bit for bit (NaN payloads too)
        ir[j * inner] = i;
      }
    }
  }
}

/// topk of each row of a contiguous (outer, n, inner) tensor along n: the k largest (NaN ranking
/// above every number) or smallest (NaN below none), ties broken by the lower index.
template <class T>
void run_topk(const T* x, T* values, std::int64_t* indices, std::int64_t outer, std::int64_t n, std::int64_t inner,
              std::int64_t k, bool largest, bool sorted) {
  if (largest) run_topk_ordered<IndexOrder<true, true>>(x, values, indices, outer, n, inner, k, sorted);
  else run_topk_ordered<IndexOrder<false, false>>(x, values, indices, outer, n, inner, k, sorted);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
