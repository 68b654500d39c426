// SPDX-License-Identifier: MIT
/// @file An output written as boxes, each a copy of a strided view of the input (forward, reversed or one element repeated along each dim) or a constant: what flip, roll and pad run, one pointwise kernel per box.
#pragma once

#include <cstdint>
#include <type_traits>
#include <vector>

#include "weft/backend/indexing.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::detail {

/// One run of an output dim: `length` output elements from `out_start`, where output element
/// out_start + t reads input element in_start + step * t along the same dim (step 1: forward,
/// -1: reversed, 0: one element repeated); `fill`: the run holds the constant instead.
struct DimRun {
  std::int64_t out_start = 0, length = 0, in_start = 0, step = 1;
  bool fill = false;
};

/// The runs of every dim of an output: `runs[d]` tiles output dim d; an empty list keeps dim d
/// whole and forward (output d = input d).
using DimRuns = std::vector<std::vector<DimRun>>;

/// A view's shape, strides and offset, narrowed or re-read dim by dim before one view is made of
/// them (assigning a TensorView writes its elements, so a view is never rebound).
struct BoxLayout {
  Shape shape;
  Strides strides;
  std::int64_t offset;

  /// Dim d read as `run` says: a negative stride reverses, a zero stride repeats. Such input views
  /// stay inside weft's own copies (PyTorch's views have no negative strides).
  void read(int d, const DimRun& run) {
    offset += run.in_start * strides[d];
    shape[d] = run.length;
    strides[d] *= run.step;
  }
};

/// A view's layout, to be read dim by dim, and the view of the same storage with a layout.
template <class View>
BoxLayout box_layout(const View& v) {
  return {v.shape(), v.strides(), v.offset()};
}
template <class View>
View box_view(const View& v, const BoxLayout& l) {
  return View(v.storage(), l.shape, l.strides, l.offset);
}

/// The fill value of an op whose runs never fill (flip, roll).
struct NoFill {};

inline namespace WEFT_BACKEND_ABI {

/// out = x read through `runs`: for every box of the runs' cartesian product, out's box = the
/// strided view of x it reads (one pointwise kernel, CPU or CUDA), or = `fill_value` where a run
/// of the box fills. Empty boxes are skipped; out's boxes tile it, so every element is written once.
template <class T, class V>
void write_boxes(const TensorView<T>& out, const TensorView<const T>& x, const DimRuns& runs, V fill_value) {
  const int rank = out.dim();
  std::vector<std::size_t> pick(std::size_t(rank), 0);
  for (;;) {
    BoxLayout dst = box_layout(out), src = box_layout(x);
    bool fill = false, empty_box = false;
    for (int d = 0; d < rank && !empty_box; ++d) {
      if (runs[std::size_t(d)].empty()) continue;
      const DimRun& run = runs[std::size_t(d)][pick[std::size_t(d)]];
      empty_box = run.length == 0;
      fill = fill || run.fill;
      dst.read(d, {0, run.length, run.out_start, 1});
      if (!run.fill) src.read(d, run);
    }
    if (!empty_box) {
      if constexpr (std::is_same_v<V, NoFill>) box_view(out, dst) = box_view(x, src);
      else if (fill) box_view(out, dst) = fill_value;
      else box_view(out, dst) = box_view(x, src);
    }
    int d = rank - 1;  // the next box: an odometer over the dims' runs
    while (d >= 0 && (runs[std::size_t(d)].empty() || ++pick[std::size_t(d)] == runs[std::size_t(d)].size())) {
      pick[std::size_t(d)] = 0;
      --d;
    }
    if (d < 0) return;
  }
}

/// A new tensor of `shape` on x's device written by write_boxes (nothing allocated for a refused
/// device).
template <class T, class V>
Tensor<T> boxes_tensor(const char* op, const Shape& shape, const TensorView<const T>& x, const DimRuns& runs,
                       V fill_value) {
  check_executor_for(op, x.device());
  Tensor<T> out = empty<T>(shape, x.device());
  if (out.numel() > 0) write_boxes(out.view(), x, runs, fill_value);
  return out;
}

}  // namespace WEFT_BACKEND_ABI

/// The dims of `dims` wrapped against x's shape, each at most once (flip's and roll's rule).
inline std::vector<int> distinct_dims(const char* op, const std::vector<std::int64_t>& dims, const Shape& shape) {
  std::vector<int> out;
  for (std::int64_t dim : dims) {
    const int d = wrap_dim_of(op, dim, shape);
    for (int seen : out)
      if (seen == d) fail(op, "dim ", d, " appears more than once in the dims for an input of shape ", shape,
                          "; name each dim once");
    out.push_back(d);
  }
  return out;
}

}  // namespace weft::detail
