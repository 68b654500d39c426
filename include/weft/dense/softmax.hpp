// SPDX-License-Identifier: MIT
/// @file softmax and log_softmax over one dim (numerically stable: the row max is subtracted first); on the CPU an expression over reductions, run as a row epilogue.
#pragma once

#include <cstdint>

#include "weft/backend/rows.hpp"
#include "weft/dense/along_dim.hpp"
#include "weft/dense/factories.hpp"
#include "weft/dense/fuse.hpp"
#include "weft/dense/operand.hpp"
#include "weft/dense/reduce.hpp"
#include "weft/expr/math.hpp"

namespace weft {
namespace detail {

inline namespace WEFT_BACKEND_ABI {

/// On the CPU, m = amax(x, dim, true) and s = sum(exp(x - m), dim, true) in math_t, then
/// exp(x - m) / s (log_softmax: (x - m) - log s): one statement over two reductions that runs as
/// a row epilogue (backend/row_epilogue.hpp): per block of rows, pass 1 finds m, then s (the max
/// appears twice and is computed once), pass 2 writes; the three reads of a row hit cache after
/// the first, as in a hand-written three-pass kernel. A one-pass "online" max-and-sum (rescaling
/// the running sum when the max grows) would read the row once less but compute an extra exp per
/// element, and the rows are in cache for that read anyway. CUDA: the row kernel (backend/rows.hpp).
template <bool kLog, class T>
Tensor<T> softmax_impl(const char* op, const TensorView<const T>& x, std::int64_t dim) {
  static_assert(is_floating_v<T>, "weft::softmax / log_softmax need a floating-point input; cast first, e.g. "
                                  "weft::softmax(weft::cast<float>(x), dim)");
  const int d = check_along_dim(op, x, &dim);
  if (x.numel() == 0) return empty<T>(x.shape(), x.device());
  if (x.device().is_cpu()) {
    const auto xa = as_dtype<math_t<T>>(x);
    const auto shifted = xa - amax(xa, d, true);
    if constexpr (kLog) return eval(as_dtype<T>(shifted - log(sum(exp(shifted), d, true))));
    else return eval(as_dtype<T>(exp(shifted) / sum(exp(shifted), d, true)));
  }
  const TensorView<const T> xc = x.contiguous();
  Tensor<T> y = empty<T>(x.shape(), x.device());
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
