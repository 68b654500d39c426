// SPDX-License-Identifier: MIT
/// @file ConvGeometry: the sizes of one 2-D convolution (input, kernel, stride, padding, dilation, groups, output), which every convolution kernel and its backward read.
#pragma once

#include <cstdint>

namespace weft::detail {

/// out[n, o, i, j] = sum over c of o's group, kh, kw of
///   w[o, c, kh, kw] x[n, c, i stride_h - pad_h + kh dilation_h, j stride_w - pad_w + kw dilation_w]
/// (x zero outside [0, in_h) x [0, in_w)); o's group g = o / (out_channels / groups) reads channels
/// [g in_channels / groups, (g + 1) in_channels / groups). 1-D convolutions have in_h = kernel_h = 1.
struct ConvGeometry {
  std::int64_t batch = 1, in_channels = 1, in_h = 1, in_w = 1;
  std::int64_t out_channels = 1, kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1, groups = 1;
  std::int64_t out_h = 1, out_w = 1;

  std::int64_t in_per_group() const { return in_channels / groups; }
  std::int64_t out_per_group() const { return out_channels / groups; }
  std::int64_t taps() const { return kernel_h * kernel_w; }
  /// The length of each output's sum: a group's channels times the kernel's taps.
  std::int64_t reduction() const { return in_per_group() * taps(); }
  std::int64_t out_positions() const { return batch * out_h * out_w; }
  /// Multiply-adds of the forward pass (the backward's two products have as many each).
  std::int64_t macs() const { return out_positions() * out_channels * reduction(); }
};

}  // namespace weft::detail
