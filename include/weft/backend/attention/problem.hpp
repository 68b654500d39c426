// SPDX-License-Identifier: MIT
/// @file An attention problem as its kernels see it: the extents of q, k and v (SdpaShape) and operands read in place through their strides (SdpaRows).
#pragma once

#include <cstdint>
#include <vector>

#include "weft/core/tensor.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {



/// The extents of q (batch..., Hq, L, E), k (batch..., H, S, E), v (batch..., H, S, Ev);
/// `batch` is every dim before the heads (none for rank 2, where Hq = H = 1).
struct SdpaShape {
  Shape batch;
  bool has_heads = false;  // rank >= 3
  std::int64_t batches = 1, Hq = 1, H = 1, L = 0, S = 0, E = 0, Ev = 0;
  std::int64_t group = 1;  // query heads per key/value head
  double scale = 1;
  bool causal = false;
  /// Query i sees keys j <= i + causal_offset: 0 (upper_left) or S - L (lower_right).
  std::int64_t causal_offset = 0;
  double dropout_p = 0;
  std::uint64_t seed = 0;

  /// (batch..., Hq, rows, cols): the shape of out (rows = L, cols = Ev) or of the scores (L, S).
  Shape with_heads(std::int64_t heads, std::int64_t rows, std::int64_t cols) const {
    Shape s = batch;
    if (has_heads) s.push_back(heads);
    s.push_back(rows);
    if (cols >= 0) s.push_back(cols);
    return s;
  }
  Shape out_shape() const { return with_heads(Hq, L, Ev); }
  Shape lse_shape() const { return with_heads(Hq, L, -1); }
  Shape scores_shape() const { return with_heads(Hq, L, S); }
};

/// An operand (batch..., heads, rows, cols) read in place through its strides: element c of row
/// r of flattened (batch, head) index bh is at data + offset[bh] + r row_stride + c col_stride.
/// Nothing is copied (a transposed head and sequence dim is read as it is), which also spares
/// every caller the compile time of a copy kernel.
template <class T>
struct SdpaRows {
  TensorView<const T> keep;  // keeps the elements alive
  const T* data = nullptr;
  std::vector<std::int64_t> offset;
  std::int64_t row_stride = 0, col_stride = 1;

  SdpaRows() = default;  // no tensor (no mask)
  /// Rows of `t`, viewed as (prod(dims before the last 2), rows, cols) through its strides.
  explicit SdpaRows(const TensorBase<T>& t)
      : keep(t.view()), data(t.data()), row_stride(t.strides()[t.dim() - 2]), col_stride(t.strides()[t.dim() - 1]) {
    const Shape outer(t.shape().begin(), t.shape().end() - 2);
    offset.resize(std::size_t(outer.numel()));
    for (std::int64_t i = 0; i < outer.numel(); ++i) offset[std::size_t(i)] = weft::detail::strided_offset(i, outer, t.strides());
  }

  const T* row(std::int64_t bh, std::int64_t r) const { return data + offset[std::size_t(bh)] + r * row_stride; }
};

template <class T>
SdpaRows<T> sdpa_rows(const TensorBase<T>& t) {
  return SdpaRows<T>(t);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
