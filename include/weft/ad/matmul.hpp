// SPDX-License-Identifier: MIT
/// @file matmul over Vars and its backward: two GEMMs over transposed views of the saved operands (never copied), batch dims the forward broadcast summed back.
///
/// C = A B (batched over leading dims): dA = dC B^T, dB = A^T dC. An operand broadcast over a
/// batch dim gets its gradient summed over that dim (ad/expression.hpp: sum_to_shape).
#pragma once

#include "weft/ad/record.hpp"
#include "weft/ops/matmul.hpp"

namespace weft {
inline namespace WEFT_BACKEND_ABI {

/// matmul(a, b) with a Var operand: a Var, evaluated now by the same GEMM as for tensors. Both
/// operands need at least 2 dims here (a vector operand: unsqueeze it).
template <class A, class B>
  requires ad::detail::AdOperands<A, B>
auto matmul(const A& a, const B& b) {
  using T = ad::detail::input_dtype_t<A>;
  static_assert(std::is_same_v<T, ad::detail::input_dtype_t<B>>,
                "weft::ad: matmul of Vars needs one dtype; cast<T>() an operand");
  const char* op = "matmul";
  const ad::detail::Input<T> x = ad::detail::input<T>(a), y = ad::detail::input<T>(b);
  if (x.value.dim() < 2 || y.value.dim() < 2)
    weft::detail::fail(op, "with Vars, both operands need 2 or more dims, got shapes ", x.value.shape(), " and ",
                       y.value.shape(), "; unsqueeze a vector operand (ad::unsqueeze(v, 0) or (v, -1))");
  Tensor<T> value = weft::eval(weft::matmul(x.value, y.value));
  ad::detail::SavedTensors saved;
  if (y.needs_grad()) saved.add(x.value);
  if (x.needs_grad()) saved.add(y.value);
  return ad::detail::record_op<T>(
      op, std::move(value), std::array{x.node, y.node}, std::move(saved),
      [x = x.value, y = y.value, nx = x.node, ny = y.node](const Tensor<T>& g) {
        if (nx && nx->requires_grad)
          ad::detail::accumulate<T>(nx, ad::detail::sum_to_shape(weft::eval(weft::matmul(g, y.transpose(-2, -1))),
                                                                 x.shape()));
        if (ny && ny->requires_grad)
          ad::detail::accumulate<T>(ny, ad::detail::sum_to_shape(weft::eval(weft::matmul(x.transpose(-2, -1), g)),
                                                                 y.shape()));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
