// SPDX-License-Identifier: MIT
/// @file What one thread of the CUDA sort's kernels does (an element's key in, an element of the result out) and how rows are batched for CUB: plain C++ that nvcc's kernels and the host tests both run.
#pragma once

#include <algorithm>
#include <climits>
#include <cstdint>

#include "weft/backend/sort_keys.hpp"
#include "weft/core/config.hpp"

namespace weft::detail::cuda {

/// Rows [first_row, first_row + rows) of a contiguous (outer, n, inner) tensor, sorted by one CUB
/// call: element t of the batch is element t % n of row first_row + t / n (rows back to back, the
/// layout the radix sorts read); row r = (o, c) lies at (o n + i) inner + c.
struct SortBatch {
  std::int64_t first_row, rows, n, inner;
  WEFT_HOST_DEVICE std::int64_t row_base(std::int64_t t) const {
    const std::int64_t r = first_row + t / n;
    return (r / inner) * n * inner + r % inner;
  }
};

/// Rows per CUB call: as many as keep the batch within `max_items` elements (the segmented sort
/// counts its items in an int), at least one.
inline std::int64_t sort_batch_rows(std::int64_t n, std::int64_t max_items = INT_MAX) {
  return std::max<std::int64_t>(max_items / std::max<std::int64_t>(n, 1), 1);
}

/// Thread t of the keys kernel: keys[t] = the key of its element (complemented when descending),
/// order[t] = the element's index along the row.
template <class T, class Index>
WEFT_HOST_DEVICE inline void write_sort_key(const T* x, radix_key_t<T>* keys, Index* order, const SortBatch& b,
                                            std::int64_t t, bool descending) {
  const std::int64_t i = t % b.n;
  keys[t] = radix_key(x[b.row_base(t) + i * b.inner], descending);
  order[t] = Index(i);
}

/// Thread t of the output kernel, order sorted within each row: rank j = t % n of its row gets
/// index order[t] and, when values is not null, the element at that index (bit for bit).
template <class T, class Index>
WEFT_HOST_DEVICE inline void write_sorted_element(const T* x, const Index* order, T* values, std::int64_t* indices,
                                                  const SortBatch& b, std::int64_t t) {
  const std::int64_t base = b.row_base(t), j = t % b.n, i = std::int64_t(order[t]);
  indices[base + j * b.inner] = i;
  if (values) values[base + j * b.inner] = x[base + i * b.inner];
}

}  // namespace weft::detail::cuda
