// SPDX-License-Identifier: MIT
/// @file outer: the outer product of two vectors as a broadcast pointwise product.
#pragma once

#include "weft/core/tensor.hpp"
#include "weft/expr/operators.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// outer(a, b)[i, j] = a[i] * b[j] (torch.outer) for 1-D a and b, the dtypes promoted: the
/// expression a[:, None] * b[None, :] over views of a and b, so nothing runs until it is assigned
/// and it fuses with the expression around it (`y = outer(a, b) + c` is one kernel). A weft::Error
/// for an operand that is not 1-D.
template <SingleTensor A, SingleTensor B>
auto outer(const A& a, const B& b) {
  if (a.dim() != 1 || b.dim() != 1)
    detail::fail("outer", "needs two 1-D tensors, got shapes ", a.shape(), " and ", b.shape(),
                 "; flatten them with reshape({-1}), or use matmul for matrices");
  return a.view().unsqueeze(1) * b.view();
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
