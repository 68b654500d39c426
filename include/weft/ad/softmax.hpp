// SPDX-License-Identifier: MIT
/// @file softmax and log_softmax over Vars; each backward is one statement whose row sum runs as a row epilogue.
///
/// y = softmax(x):     dx = y (dy - sum(dy y))          (sums along dim, kept)
/// y = log_softmax(x): dx = dy - exp(y) sum(dy)
/// Both read the saved output y, not x: the forward's exp is not recomputed.
#pragma once

#include "weft/ad/record.hpp"
#include "weft/ops/softmax.hpp"

namespace weft {
namespace ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

template <bool kLog, class X>
auto softmax_recorded(const X& x, std::int64_t dim) {
  using T = input_dtype_t<X>;
  const Input<T> in = input<T>(x);
  Tensor<T> value;
  value = [&] {
    if constexpr (kLog) return weft::log_softmax(in.value, dim);
    else return weft::softmax(in.value, dim);
  }();
  const TensorView<const T> y = value.view();
  return record_op<T>(kLog ? "log_softmax" : "softmax", std::move(value), std::array{in.node}, SavedTensors(),
                      [node = in.node, y, dim](const Tensor<T>& g) {
                        if constexpr (kLog)
                          accumulate<T>(node, weft::eval(g - weft::exp(y) * weft::sum(g, dim, true)));
                        else
                          accumulate<T>(node, weft::eval(y * (g - weft::sum(g * y, dim, true))));
                      });
}

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace ad

inline namespace WEFT_BACKEND_ABI {

/// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x) along dim, over a Var.
template <class X>
  requires ad::detail::AdOperands<X>
auto softmax(const X& x, std::int64_t dim) {
  return ad::detail::softmax_recorded<false>(x, dim);
}
/// log_softmax(x)_i = x_i - max x - log sum_j exp(x_j - max x) along dim, over a Var.
template <class X>
  requires ad::detail::AdOperands<X>
auto log_softmax(const X& x, std::int64_t dim) {
  return ad::detail::softmax_recorded<true>(x, dim);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
