// SPDX-License-Identifier: MIT
/// @file pad: borders added to (or, with negative pads, cropped from) the last dims, filled with a constant, the reflection or the edge (torch.nn.functional.pad).
#pragma once

#include <cstdint>
#include <vector>

#include "weft/ops/box_copy.hpp"
#include "weft/ops/indexing.hpp"
#include "weft/ops/materialize.hpp"

namespace weft {

/// How pad fills its borders (torch.nn.functional.pad's modes).
enum class PadMode {
  constant,   // the value
  reflect,    // the mirror image without the edge: x[-j] left of the input, x[2(n-1) - j] right of it
  replicate,  // the edge element: x[0] left, x[n-1] right
};

namespace detail {
inline namespace WEFT_BACKEND_ABI {

inline const char* pad_mode_name(PadMode mode) {
  return mode == PadMode::constant ? "constant" : mode == PadMode::reflect ? "reflect" : "replicate";
}

/// The runs of one padded dim of extent n with (left, right) pads: output element i reads input
/// coordinate j = i - left, for j in [-left, n + right). Three runs: j < 0 (the left border), j in
/// [0, n) (the input, cropped by negative pads), j >= n (the right border).
inline std::vector<DimRun> pad_dim_runs(std::int64_t n, std::int64_t left, std::int64_t right, PadMode mode) {
  const std::int64_t lo = -left, hi = n + right;
  auto run = [&](std::int64_t a, std::int64_t b, std::int64_t in_start, std::int64_t step, bool fill) {
    return DimRun{a + left, std::max<std::int64_t>(b - a, 0), in_start, step, fill};
  };
  const bool fill = mode == PadMode::constant, mirror = mode == PadMode::reflect;
  const std::int64_t left_start = std::max<std::int64_t>(lo, std::min<std::int64_t>(0, hi));
  const std::int64_t right_start = std::min<std::int64_t>(hi, std::max<std::int64_t>(n, lo));
  return {run(lo, left_start, mirror ? -lo : 0, mirror ? -1 : 0, fill),
          run(std::max<std::int64_t>(lo, 0), std::min(hi, n), std::max<std::int64_t>(lo, 0), 1, false),
          run(right_start, hi, mirror ? 2 * (n - 1) - right_start : n - 1, mirror ? -1 : 0, fill)};
}

/// pad's checks (pairs for at most every dim, a non-negative padded extent, reflect's pads below
/// the extent, replicate's input not empty) and its output shape and runs.
inline DimRuns pad_runs(const Shape& shape, const std::vector<std::int64_t>& pads, PadMode mode, Shape& out) {
  const char* op = "pad";
  const int rank = shape.rank();
  if (pads.size() % 2 != 0 || pads.size() > std::size_t(2 * rank))
    fail(op, "got ", pads.size(), " pads for an input of shape ", shape,
         "; give (left, right) pairs for at most its ", rank, " dims, the last dim first");
  DimRuns runs(static_cast<std::size_t>(rank));
  out = shape;
  for (std::size_t p = 0; p < pads.size(); p += 2) {
    const int d = rank - 1 - int(p / 2);
    const std::int64_t n = shape[d], left = pads[p], right = pads[p + 1];
    out[d] = n + left + right;
    if (out[d] < 0)
      fail(op, "pads (", left, ", ", right, ") of dim ", d, " of shape ", shape, " leave a negative extent ", out[d],
           "; crop at most ", n, " elements in all");
    if (mode == PadMode::reflect && (left >= n || right >= n))
      fail(op, "reflect pads (", left, ", ", right, ") of dim ", d, " of shape ", shape,
           " must be smaller than its extent ", n, "; use replicate or constant for wider borders");
    if (mode == PadMode::replicate && n == 0 && (left > 0 || right > 0))
      fail(op, "replicate cannot pad dim ", d, " of shape ", shape, ": it has no element to repeat");
    runs[std::size_t(d)] = pad_dim_runs(n, left, right, mode);
  }
  return runs;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// pad(x, pads, mode, value) (torch.nn.functional.pad): `pads` lists (left, right) pairs from the
/// LAST dim backwards, (left_last, right_last, left_second_last, ...); output extent n + left +
/// right, out[..., i, ...] = x[..., j, ...] for j = i - left in [0, n), and for j outside:
/// constant: `value` (which must fit x's dtype); reflect: x[-j] left, x[2(n-1) - j] right (pads <
/// n); replicate: x[0] left, x[n-1] right. Negative pads crop, in every mode. Any rank and any
/// number of padded dims (torch limits reflect and replicate to the last 3). A new contiguous
/// tensor; each padded dim is three runs (left border, input, right border), so k padded dims
/// write up to 3^k boxes, one pointwise kernel each (CPU or CUDA), every element once. An
/// expression input is evaluated first.
template <Operand X, Number V = int>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> pad(const X& x, const std::vector<std::int64_t>& pads,
                                       PadMode mode = PadMode::constant, V value = 0) {
  using T = detail::operand_dtype_t<X>;
  const auto v = detail::materialize(x);
  Shape shape;
  const detail::DimRuns runs = detail::pad_runs(v.shape(), pads, mode, shape);
  return detail::boxes_tensor("pad", shape, v, runs, detail::number_of_kind<T>("pad", value));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
