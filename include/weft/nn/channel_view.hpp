// SPDX-License-Identifier: MIT
/// @file detail::channel_view: an [N, C, *] input of the normalization ops seen as [N, C, S] (its spatial dims merged into one) in place, whichever its layout, and the checks those ops share.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "weft/core/error.hpp"
#include "weft/core/tensor.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// The spatial extent S = prod(shape[2:]) of an [N, C, *] shape (1 for [N, C]).
inline std::int64_t spatial_size(const Shape& s) {
  std::int64_t n = 1;
  for (int d = 2; d < s.rank(); ++d) n *= s[d];
  return n;
}

/// x [N, C, *] as a view [N, C, S] of the same elements. The spatial dims merge into one when each
/// steps over the next one's whole extent (stride[d] = stride[d + 1] * shape[d + 1], size-1 dims
/// aside): true of NCHW (S's stride 1) and of channels-last NHWC memory (S's stride C), so both
/// are read in place; any other strides get a contiguous copy first.
template <class T>
TensorView<const T> channel_view(const TensorView<const T>& x) {
  const Shape& s = x.shape();
  const Strides& st = x.strides();
  std::int64_t step = 1;  // the merged dim's stride: the innermost spatial dim of extent > 1
  bool merges = true, found = false;
  for (int d = s.rank() - 1; d >= 2; --d) {
    if (s[d] == 1) continue;
    if (!found) step = st[d], found = true;
    else {
      // the next spatial dim of extent > 1 inward must be stepped over whole
      std::int64_t inner = d + 1;
      while (s[inner] == 1) ++inner;
      merges = merges && st[d] == st[inner] * s[inner];
    }
  }
  if (!merges) return channel_view<T>(TensorView<const T>(x.contiguous()));
  return TensorView<const T>(x.storage(), Shape{s[0], s[1], spatial_size(s)}, Strides{st[0], st[1], step}, x.offset());
}

/// x and dy (of one shape) as [N, C, S] views with one layout: both in place when their strides
/// agree, else contiguous (copies of the one that is not). A backward reads both in each pass, and
/// a channels-last x beside the NCHW dy of its output would make every pass read one of them
/// strided (batch_norm_backward on [16, 64, 56, 56], one thread: 22 ms, 11-14 ms with the copy).
template <class T>
std::pair<TensorView<const T>, TensorView<const T>> channel_views_alike(const TensorView<const T>& x,
                                                                        const TensorView<const T>& dy) {
  TensorView<const T> x3 = channel_view(x), dy3 = channel_view(dy);
  if (x3.strides() == dy3.strides()) return {x3, dy3};
  return {channel_view(TensorView<const T>(x.contiguous())), channel_view(TensorView<const T>(dy.contiguous()))};
}

/// The checks of an [N, C, *] input: defined, rank >= 2, on the CPU (these ops run there so far).
template <class T>
void check_channel_input(const char* op, const TensorView<const T>& x) {
  if (!x.defined()) fail(op, "the input is an empty (default-constructed) tensor");
  if (x.dim() < 2)
    fail(op, "the input of shape ", x.shape(), " needs at least 2 dims [N, C, *] (batch, channels, spatial dims)");
  if (!x.device().is_cpu())
    fail(op, "the input (shape ", x.shape(), ") is on ", x.device(),
         ", but this op runs on the CPU so far; move it with .to(weft::Device::cpu())");
}

/// A per-channel tensor (weight, bias, running stats) that is either undefined (not used, as
/// torch's None) or of shape [C] on the CPU.
template <class T>
void check_per_channel(const char* op, const char* name, const TensorView<const T>& t, const Shape& x_shape,
                       std::int64_t channels) {
  if (!t.defined()) return;
  if (t.dim() != 1 || t.shape()[0] != channels)
    fail(op, name, " of shape ", t.shape(), " does not fit the input of shape ", x_shape, ": it needs shape [",
         channels, "] (one value per channel, dim 1 of the input)");
  if (!t.device().is_cpu())
    fail(op, name, " (shape ", t.shape(), ") is on ", t.device(),
         ", but this op runs on the CPU so far; move it with .to(weft::Device::cpu())");
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
