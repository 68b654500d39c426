// SPDX-License-Identifier: MIT
/// @file weft::channels_last and is_channels_last: a 4-D tensor's elements in NHWC order under its [N, C, H, W] shape (torch's memory_format=channels_last).
///
/// channels_last(x) copies x into a new NHWC allocation and returns the view of it with x's
/// shape and strides (H W C, 1, W C, C): index (n, c, h, w) as before, channels adjacent in
/// memory. The view owns its elements (a Tensor is always contiguous, so the channels-last form
/// is a view). Every vision op reads it in place.
#pragma once

#include "weft/core/tensor.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// Whether v's strides are channels-last: (H W C, 1, W C, C) on [N, C, H, W], size-1 dims
/// ignored as torch does (they have no stride that matters). A 4-D view only.
template <class T>
bool is_channels_last(const TensorView<T>& v) {
  if (v.dim() != 4) return false;
  const Shape& s = v.shape();
  const Strides& st = v.strides();
  // dims in NHWC order, innermost first: C, W, H, N
  std::int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (s[d] != 1 && st[d] != expected) return false;
    expected *= s[d];
  }
  return true;
}
template <class T>
bool is_channels_last(const Tensor<T>& t) {
  return is_channels_last(t.view());
}

/// A view of shape [N, C, H, W] over a new uninitialized NHWC allocation (torch's
/// empty(..., memory_format=channels_last)): a destination for ops that write either layout.
template <class T>
TensorView<T> empty_channels_last(const Shape& s, Device device = Device::cpu()) {
  if (s.rank() != 4)
    detail::fail("empty_channels_last", "needs a 4-D [N, C, H, W] shape, got ", s);
  Tensor<T> nhwc = weft::empty<T>(Shape{s[0], s[2], s[3], s[1]}, device);
  return nhwc.permute({0, 3, 1, 2});
}

/// x (a 4-D tensor, view or expression) with channels-last memory: a view of shape [N, C, H, W]
/// over a new NHWC allocation holding x's values (one copy).
template <Operand X>
  requires HasTensorOperand<X>
TensorView<detail::operand_dtype_t<X>> channels_last(const X& x) {
  using T = detail::operand_dtype_t<X>;
  const TensorView<const T> v = detail::materialize(x);
  if (v.dim() != 4)
    detail::fail("channels_last", "needs a 4-D [N, C, H, W] tensor, got shape ", v.shape(),
                 "; for other ranks permute the dims yourself");
  TensorView<T> view = empty_channels_last<T>(v.shape(), v.device());
  view = v;
  return view;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
