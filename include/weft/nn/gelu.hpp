// SPDX-License-Identifier: MIT
/// @file nn::gelu_backward and nn::gelu_tanh_backward: the GELU gradients as pointwise expressions (they fuse).
#pragma once

#include "weft/expr/operators.hpp"

namespace weft::nn {

/// gelu_backward(dy, x) = dy * d/dx gelu(x) = dy * (Phi(x) + x phi(x)), the gradient of the
/// exact weft::gelu (Phi, phi: the standard normal's cdf and density). An expression, like
/// every pointwise op: `dx = nn::gelu_backward(dy, x)` is one kernel, and it fuses into larger
/// ones. dtype: dy's and x's promoted (floating; torch refuses integers, so does weft).
template <Operand G, Operand X>
  requires HasTensorOperand<G, X>
auto gelu_backward(const G& dy, const X& x) {
  return detail::make_map<functors::GeluBackward>(dy, x);
}

/// gelu_tanh_backward(dy, x) = dy * d/dx gelu_tanh(x) = dy * ((1 + t) / 2 + x/2 (1 - t^2)
/// sqrt(2/pi) (1 + 3 * 0.044715 x^2)), t = tanh(sqrt(2/pi) (x + 0.044715 x^3)): the gradient
/// of weft::gelu_tanh (GPT-2's GELU), as one fusable expression.
template <Operand G, Operand X>
  requires HasTensorOperand<G, X>
auto gelu_tanh_backward(const G& dy, const X& x) {
  return detail::make_map<functors::GeluTanhBackward>(dy, x);
}

}  // namespace weft::nn
