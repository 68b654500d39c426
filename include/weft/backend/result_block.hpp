// SPDX-License-Identifier: MIT
/// @file ResultBlock: one finished block of a dense node's result as its GEMM hands it to an epilogue (a box of the result seen in the node's block shape), and the views of a statement's operands seen in that shape and restricted to the box.
///
/// A GEMM finishes its output block by block. matmul's blocks are boxes of its result itself
/// (one batch index, a run of rows, a run of columns). A convolution's are not: its GEMM's rows
/// are the output positions (n, i, j) of the whole batch, so a block is a run of positions times a
/// run of channels, a box of the result [N, C, H', W'] only once H' and W' are merged ([N, C,
/// H' W'], the run split where it crosses an image). So each node names its block shape (its
/// result's shape with adjacent dims merged), and the statement around it sees every operand in
/// that shape: possible without a copy where the merged dims' strides chain (NCHW, channels-last,
/// broadcasts), else the statement is not run as the epilogue.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/core/shape.hpp"
#include "weft/core/tensor_view.hpp"

namespace weft::detail {

/// A finished block of a dense node's result: in each dim d of the node's block shape it covers
/// [start[d], start[d] + size[d]), and its element at box index (k_0, k_1, ...) lies at
/// data[sum over d of k_d strides[d]] (a buffer of the GEMM, valid during the callback).
template <class T>
struct ResultBlock {
  const T* data = nullptr;
  Shape start, size;
  Strides strides;
};

/// The strides that show elements laid out as (from, from_strides) in the shape `to` (the same
/// count) without moving them, as torch's view: each run of `from`'s dims whose strides chain
/// (stride[d] = stride[d + 1] size[d + 1]) may be split or merged freely, runs may not mix.
/// Empty where `to` would need a copy.
inline std::optional<Strides> view_strides(const Shape& from, const Strides& from_strides, const Shape& to) {
  Strides strides = to;
  if (from.numel() == 0 || from.rank() == 0) return contiguous_strides(to);
  int view_d = to.rank() - 1;
  std::int64_t chunk_stride = from_strides[from.rank() - 1], from_count = 1, view_count = 1;
  for (int d = from.rank() - 1; d >= 0; --d) {
    from_count *= from[d];
    const bool run_ends = d == 0 || (from[d - 1] != 1 && from_strides[d - 1] != from_count * chunk_stride);
    if (!run_ends) continue;
    while (view_d >= 0 && (view_count < from_count || to[view_d] == 1)) {
      strides[view_d] = view_count * chunk_stride;
      view_count *= to[view_d];
      --view_d;
    }
    if (view_count != from_count) return std::nullopt;
    if (d > 0) chunk_stride = from_strides[d - 1], from_count = 1, view_count = 1;
  }
  if (view_d != -1) return std::nullopt;
  return strides;
}

/// `view` broadcast to the node's result shape `full` and seen in its block shape `space`; empty
/// where that needs a copy (an operand whose merged dims' strides do not chain).
template <class T>
std::optional<TensorView<T>> in_block_shape(const TensorView<T>& view, const Shape& full, const Shape& space) {
  const TensorView<T> expanded = view.expand(full);
  const std::optional<Strides> strides = view_strides(full, expanded.strides(), space);
  if (!strides) return std::nullopt;
  return TensorView<T>(expanded.storage(), space, *strides, expanded.offset());
}

/// `view` (broadcast to `full`, seen in the block shape `space`: it can be) restricted to the
/// block's box.
template <class T, class U>
TensorView<T> block_of(const TensorView<T>& view, const Shape& full, const Shape& space, const ResultBlock<U>& block) {
  const TensorView<T> spaced = *in_block_shape(view, full, space);
  std::int64_t offset = spaced.offset();
  for (int d = 0; d < space.rank(); ++d) offset += block.start[d] * spaced.strides()[d];
  return TensorView<T>(spaced.storage(), block.size, spaced.strides(), offset);
}

}  // namespace weft::detail
