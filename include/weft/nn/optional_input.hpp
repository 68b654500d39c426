// SPDX-License-Identifier: MIT
/// @file nn::detail::optional_input: an operand of an nn op over Vars that may be absent (an empty Var or tensor, as torch's None: weight, bias).
#pragma once

#include "weft/ad/record.hpp"

namespace weft::nn::detail {
inline namespace WEFT_BACKEND_ABI {

/// ad::detail::input(x), or an Input with no value and no node where x is an empty Var or tensor
/// (the op then does without it: no weight scales, no bias adds, no gradient is sent).
template <class T, class X>
ad::detail::Input<T> optional_input(const X& x) {
  if constexpr (ad::detail::is_var_v<X> || weft::is_single_tensor_v<X>)
    if (!x.defined()) return ad::detail::Input<T>{};
  return ad::detail::input<T>(x);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail
