// SPDX-License-Identifier: MIT
/// @file An operand (tensor or expression) as the ops that read their input more than once need it: its dtype, and its elements as a tensor (materialize).
#pragma once

#include <algorithm>
#include <cstdint>

#include "weft/core/shape.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::detail {

/// dtype of the elements an operand (tensor or expression) produces.
template <class X>
using operand_dtype_t = typename expr_t<X>::value_type;

/// A read-only view of an operand: a tensor's own elements, or an expression evaluated into a new
/// tensor (for the ops that read their input more than once).
template <class X>
TensorView<const operand_dtype_t<X>> materialize(const X& x) {
  if constexpr (is_single_tensor_v<X>) return x.view();
  else if constexpr (is_instance_v<X, Leaf>) return x.tensor;
  else return eval(x);
}

}  // namespace weft::detail
