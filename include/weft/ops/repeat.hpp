// SPDX-License-Identifier: MIT
/// @file repeat and tile: copies of a tensor laid side by side along each dim (torch.Tensor.repeat, torch.tile), one copy from a broadcast view.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/backend/indexing.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// out[..., r * n + i, ...] = x[..., i, ...] for r in [0, repeats) along each dim of extent n:
/// out viewed as [r0, n0, r1, n1, ...] is x viewed with a stride-0 dim before each repeated dim
/// (x gains leading dims of extent 1 when repeats is longer), so ONE pointwise copy (CPU or CUDA)
/// writes it; no element index is divided: the iteration walks the interleaved dims directly and
/// merges the ones that are contiguous (the last dim whole when it repeats once).
template <class T>
Tensor<T> repeat_view(const char* op, const TensorView<const T>& x, const std::vector<std::int64_t>& repeats) {
  const int rank = x.dim(), m = int(repeats.size());
  if (m < rank)
    fail(op, "got ", m, " repeats for an input of shape ", x.shape(), "; give one per dim (", rank,
         ") or more (extra ones add leading dims)");
  Shape out_shape;
  std::vector<std::int64_t> split_shape, split_strides;
  for (int d = 0; d < m; ++d) {
    if (repeats[std::size_t(d)] < 0)
      fail(op, "repeat ", repeats[std::size_t(d)], " at position ", d, " is negative (input shape ", x.shape(),
           "); give counts >= 0");
    const int xd = d - (m - rank);
    const std::int64_t n = xd >= 0 ? x.shape()[xd] : 1;
    out_shape.push_back(repeats[std::size_t(d)] * n);
    if (repeats[std::size_t(d)] != 1) {  // a dim repeated once needs no copy dim
      split_shape.push_back(repeats[std::size_t(d)]);
      split_strides.push_back(0);
    }
    split_shape.push_back(n);
    split_strides.push_back(xd >= 0 ? x.strides()[xd] : 0);
  }
  if (int(split_shape.size()) > kMaxRank)
    fail(op, "repeats of an input of shape ", x.shape(), " need ", split_shape.size(),
         " dims (one per dim plus one per repeated dim); weft's shapes hold at most ", kMaxRank);
  check_executor_for(op, x.device());
  Tensor<T> out = empty<T>(out_shape, x.device());
  if (out.numel() > 0)
    out.view().view(Shape(split_shape)) =
        TensorView<const T>(x.storage(), Shape(split_shape), Strides(split_strides), x.offset());
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// repeat(x, repeats) (torch.Tensor.repeat): x laid `repeats[d]` times side by side along each
/// dim d; repeats needs one count per dim of x or more, the extra ones leading new dims (x is
/// viewed as [1, ..., 1, x's shape]). out[..., r * n + i, ...] = x[..., i, ...]. A new contiguous
/// tensor written by one pointwise kernel from a broadcast view of x (no copy of x first). An
/// expression input is evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> repeat(const X& x, const std::vector<std::int64_t>& repeats) {
  return detail::repeat_view("repeat", detail::materialize(x), repeats);
}

/// tile(x, reps) (torch.tile): repeat with `reps` padded with 1s in front when it is shorter than
/// x's rank (tile(x, {2}) repeats the last dim).
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> tile(const X& x, const std::vector<std::int64_t>& reps) {
  const auto v = detail::materialize(x);
  std::vector<std::int64_t> full(std::size_t(std::max<int>(v.dim() - int(reps.size()), 0)), 1);
  full.insert(full.end(), reps.begin(), reps.end());
  return detail::repeat_view("tile", v, full);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
