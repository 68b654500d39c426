// SPDX-License-Identifier: MIT
/// @file What the dense ops share about their operands: the dtype an operand produces, an operand as a tensor, dims checked against a shape.
#pragma once

#include <algorithm>
#include <cstdint>

#include "weft/core/shape.hpp"
#include "weft/dense/fuse.hpp"

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

/// `dim` wrapped into [0, rank) (a rank-0 tensor takes 0 and -1, like PyTorch),
/// or a weft::Error naming the op, the dim and the input's shape.
inline int wrap_dim_of(const char* op, std::int64_t dim, const Shape& shape) {
  const std::int64_t r = std::max(shape.rank(), 1);
  if (dim < -r || dim >= r)
    fail(op, "dim ", dim, " is out of range for an input of shape ", shape, "; dims go from ", -r, " to ", r - 1);
  return int(dim < 0 ? dim + r : dim);
}

}  // namespace weft::detail
