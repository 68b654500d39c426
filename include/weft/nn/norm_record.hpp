// SPDX-License-Identifier: MIT
/// @file detail::record_normalization: how a normalization op over Vars (batch_norm, group_norm, rms_norm) records itself: x, a weight and a bias that may be absent (as torch's None), and a backward that returns every gradient at once.
#pragma once

#include <array>
#include <utility>

#include "weft/ad/record.hpp"

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// ad::detail::input(x), or an Input with no value and no node where x is an empty Var or tensor
/// (the op then does without it: no weight scales, no bias adds, no gradient is sent).
template <class T, class X>
ad::detail::Input<T> optional_input(const X& x) {
  if constexpr (ad::detail::is_var_v<X> || weft::is_single_tensor_v<X>)
    if (!x.defined()) return ad::detail::Input<T>{};
  return ad::detail::input<T>(x);
}

/// Records `value`, the result of `op` over x, weight and bias (either may be absent) and a
/// residual added to the normalized x (absent but for nn::batch_norm_relu), saving x, the weight
/// and `saved` (what else the backward reads); `gradients(dy)` returns the op's gradients struct,
/// whose dx, dweight, dbias and dresidual (where the struct has them) go to the inputs.
template <class T, class Gradients>
ad::Var<T> record_normalization(const char* op, Tensor<T> value, const ad::detail::Input<T>& x,
                                const ad::detail::Input<T>& weight, const ad::detail::Input<T>& bias,
                                ad::detail::SavedTensors saved, Gradients gradients,
                                const ad::detail::Input<T>& residual = {}) {
  saved.add(x.value);
  if (weight.value.defined()) saved.add(weight.value);
  return ad::detail::record_op<T>(
      op, std::move(value), std::array{x.node, weight.node, bias.node, residual.node}, std::move(saved),
      [nx = x.node, nw = weight.node, nb = bias.node, nr = residual.node,
       gradients = std::move(gradients)](const Tensor<T>& dy) {
        auto d = gradients(dy);
        ad::detail::accumulate<T>(nx, std::move(d.dx));
        ad::detail::accumulate<T>(nw, std::move(d.dweight));
        if constexpr (requires { d.dbias; }) ad::detail::accumulate<T>(nb, std::move(d.dbias));
        if constexpr (requires { d.dresidual; }) ad::detail::accumulate<T>(nr, std::move(d.dresidual));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail
