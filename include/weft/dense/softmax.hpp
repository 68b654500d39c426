// SPDX-License-Identifier: MIT
/// @file softmax and log_softmax over one dim (numerically stable: the row max is subtracted first).
#pragma once

#include <cstdint>

#include "weft/backend/rows.hpp"
#include "weft/dense/along_dim.hpp"
#include "weft/dense/factories.hpp"
#include "weft/dense/fuse.hpp"
#include "weft/dense/operand.hpp"

namespace weft {
namespace detail {

inline namespace WEFT_BACKEND_ABI {

template <bool kLog, class T>
Tensor<T> softmax_impl(const char* op, const TensorView<const T>& x, std::int64_t dim) {
  static_assert(is_floating_v<T>, "weft::softmax / log_softmax need a floating-point input; cast first, e.g. "
                                  "weft::softmax(weft::cast<float>(x), dim)");
  const int d = check_along_dim(op, x, &dim);
  const TensorView<const T> xc = x.contiguous();
  Tensor<T> y = empty<T>(x.shape(), x.device());
  if (y.numel() == 0) return y;
  std::int64_t outer = 1, n = 1, inner = 1;
  for (int k = 0; k < x.dim(); ++k) (k < d ? outer : k == d ? n : inner) *= x.shape()[k];
  run_softmax_rows<kLog>(xc.data(), y.data(), outer, n, inner, x.device());
  return y;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x) along `dim`
/// (negative dims count from the end). A new contiguous tensor of x's dtype
/// (16-bit floats compute in float). An expression input is evaluated first.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> softmax(const X& x, std::int64_t dim) {
  return detail::softmax_impl<false, detail::operand_dtype_t<X>>("softmax", detail::materialize(x), dim);
}

/// log_softmax(x)_i = x_i - max x - log sum_j exp(x_j - max x) along `dim`.
template <Operand X>
  requires HasTensorOperand<X>
Tensor<detail::operand_dtype_t<X>> log_softmax(const X& x, std::int64_t dim) {
  return detail::softmax_impl<true, detail::operand_dtype_t<X>>("log_softmax", detail::materialize(x), dim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
