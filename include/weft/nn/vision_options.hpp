// SPDX-License-Identifier: MIT
/// @file The options of the vision ops (torch.nn.functional's conv, pool and interpolate arguments): a size per spatial dim (Size2), padding as numbers or "same", and ConvOptions.
#pragma once

#include <cstdint>
#include <string_view>

#include "weft/core/error.hpp"

namespace weft::nn {

/// A height and a width (kernel size, stride, padding, dilation, output size), as torch's
/// `int or (int, int)`: `2` means {2, 2}, `{3, 1}` height 3 and width 1. 1-D ops use `w` only.
struct Size2 {
  std::int64_t h = 1, w = 1;
  constexpr Size2() = default;
  constexpr Size2(std::int64_t both) : h(both), w(both) {}  // NOLINT: implicit, as torch's int
  constexpr Size2(std::int64_t height, std::int64_t width) : h(height), w(width) {}
  friend constexpr bool operator==(const Size2&, const Size2&) = default;
};

/// Padding of a convolution: numbers (zeros added on each side of a spatial dim) or "same"
/// (the output keeps the input's size: stride 1 only, total padding dilation (kernel - 1) split
/// with the extra zero at the end, as torch) or "valid" (no padding).
struct ConvPadding {
  Size2 size{0};
  bool same = false;
  constexpr ConvPadding() = default;
  constexpr ConvPadding(std::int64_t both) : size(both) {}  // NOLINT: implicit, as torch's int
  constexpr ConvPadding(std::int64_t height, std::int64_t width) : size(height, width) {}
  constexpr ConvPadding(Size2 s) : size(s) {}  // NOLINT
  ConvPadding(const char* mode) {  // NOLINT: implicit, as torch's padding="same"
    const std::string_view m(mode ? mode : "");
    if (m == "same") same = true;
    else if (m != "valid")
      weft::detail::fail("nn::conv", "padding must be numbers, \"same\" or \"valid\", got \"", m, "\"");
  }
};

/// torch.nn.functional.conv2d's options: `nn::conv2d(x, w, b, {.stride = 2, .padding = 1})`.
struct ConvOptions {
  Size2 stride{1};
  ConvPadding padding{};
  Size2 dilation{1};
  std::int64_t groups = 1;
};

/// torch.nn.functional.conv_transpose2d's options: output_padding adds rows and columns at the
/// end of the output (to pick among the input sizes a strided convolution maps to one size).
struct ConvTransposeOptions {
  Size2 stride{1};
  Size2 padding{0};
  Size2 output_padding{0};
  std::int64_t groups = 1;
  Size2 dilation{1};
};

}  // namespace weft::nn
