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
/// merges the ones that are contiguous (the last dim whole when it repeats once). Where the
/// interleaved dims exceed kMaxRank, x is copied contiguous and its repeated dims are split into
/// two halves, repeated one after the other (neighbouring dims that repeat once then merge).
template <class T>
Tensor<T> repeat_view(const char* op, const TensorView<const T>& x, const std::vector<std::int64_t>& repeats) {
  const int rank = x.dim(), m = int(repeats.size());
  if (m < rank)
    fail(op, "got ", m, " repeats for an input of shape ", x.shape(), "; give one per dim (", rank,
         ") or more (extra ones add leading dims)");
  if (m > kMaxRank) fail(op, "got ", m, " repeats; weft's shapes hold at most ", kMaxRank, " dims");
  Shape out_shape;
  std::vector<std::int64_t> split_shape, split_strides, repeated;
  auto push = [&](std::int64_t extent, std::int64_t stride, bool mergeable) {
    if (mergeable && !split_shape.empty() && split_strides.back() == stride * extent && split_shape.back() != 0) {
      split_shape.back() *= extent;  // one stride walks both dims
      split_strides.back() = stride;
    } else {
      split_shape.push_back(extent);
      split_strides.push_back(stride);
    }
  };
  for (int d = 0; d < m; ++d) {
    const std::int64_t r = repeats[std::size_t(d)];
    if (r < 0)
      fail(op, "repeat ", r, " at position ", d, " is negative (input shape ", x.shape(), "); give counts >= 0");
    const int xd = d - (m - rank);
    const std::int64_t n = xd >= 0 ? x.shape()[xd] : 1;
    out_shape.push_back(r * n);
    if (r != 1) {
      push(r, 0, false);  // the copies: a stride-0 dim
      repeated.push_back(d);
    }
    push(n, xd >= 0 ? x.strides()[xd] : 0, r == 1);
  }
  check_executor_for(op, x.device());
  if (int(split_shape.size()) > kMaxRank) {  // in two passes over halves of the repeated dims
    std::vector<std::int64_t> first(repeats), second(std::size_t(m), 1);
    for (std::size_t i = repeated.size() / 2; i < repeated.size(); ++i) {
      first[std::size_t(repeated[i])] = 1;
      second[std::size_t(repeated[i])] = repeats[std::size_t(repeated[i])];
    }
    const Tensor<T> half = repeat_view(op, TensorView<const T>(x.contiguous()), first);
    return repeat_view(op, half.view(), second);
  }
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
