// SPDX-License-Identifier: MIT
/// @file softmax and log_softmax over one dim (numerically stable: the row max is subtracted first); softmax of an expression holding a matmul is a lazy node (weft::Softmax) that attention recognition (nn/attention_pattern.hpp) reads.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/backend/rows.hpp"
#include "weft/ops/along_dim.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/matmul.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduce.hpp"
#include "weft/expr/dense.hpp"
#include "weft/expr/operators.hpp"

namespace weft {
namespace detail {

/// Whether E's tree holds a matmul node (its softmax is then a lazy Softmax node).
template <class E>
inline constexpr bool has_matmul_v =
    tree_sum<E>([]<class M>(std::type_identity<M>) { return is_instance_v<M, Matmul> ? 1 : 0; }) > 0;

inline namespace WEFT_BACKEND_ABI {

/// softmax (kLog: log_softmax) of x along dim d (checked, wrapped) into y: contiguous, x's shape
/// and device, not overlapping x. On the CPU, the formula in math_t (16-bit floats in float,
/// rounded once), run as a row epilogue (backend/row_epilogue.hpp: per row the max, the sum of
/// exp, then the write):
///   m = amax(x, d),  s = sum(exp(x - m), d),
///   softmax = exp(x - m) / s,  log_softmax = (x - m) - log s
/// (not x - (m + log s): m + log s would round at |m|). A row of only -inf has m = -inf and
/// -inf - -inf = NaN, so it gives NaN, as PyTorch. CUDA: the softmax kernel.
template <bool kLog, class T>
void softmax_rows_into(const TensorView<const T>& x, int d, TensorView<T> y) {
  if (x.numel() == 0) return;
  if (x.device().is_cpu()) {
    const auto v = cast<math_t<T>>(x);
    const auto shifted = v - amax(v, d, true);
    if constexpr (kLog) y = shifted - log(sum(exp(shifted), d, true));
    else y = exp(shifted) / sum(exp(shifted), d, true);
    return;
  }
  const TensorView<const T> xc = x.contiguous();
  std::int64_t outer = 1, n = 1, inner = 1;
  for (int k = 0; k < x.dim(); ++k) (k < d ? outer : k == d ? n : inner) *= x.shape()[k];
  run_softmax_rows<kLog>(xc.data(), y.data(), outer, n, inner, x.device());
}

template <bool kLog, class T>
Tensor<T> softmax_impl(const char* op, const TensorView<const T>& x, std::int64_t dim) {
  static_assert(is_floating_v<T>, "weft::softmax / log_softmax need a floating-point input; cast first, e.g. "
                                  "weft::softmax(weft::cast<float>(x), dim)");
  const int d = check_along_dim(op, x, &dim);
  Tensor<T> y = empty<T>(x.shape(), x.device());
  softmax_rows_into<kLog>(x, d, y.view());
  return y;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// softmax(x, dim) of an expression X that holds a matmul, as a dense node: nothing runs until it
/// is assigned or evaluated (then x is evaluated once, its matmul with the pointwise ops around it
/// as the GEMM's epilogue, and the softmax kernel runs on it), so that matmul(softmax(...), v) can
/// be recognized as attention (nn/attention_pattern.hpp). Anywhere else it is the eager softmax's
/// value: assigned, evaluated, an operand of a pointwise expression or of a matmul.
template <class X>
struct Softmax : Expr<Softmax<X>> {
  static_assert(is_floating_v<typename X::value_type>,
                "weft::softmax needs a floating-point input; cast first, e.g. weft::softmax(weft::cast<float>(x), dim)");
  using value_type = typename X::value_type;
  using children = detail::TypeList<>;  // one operand to pointwise kernels (expr/dense.hpp)
  static constexpr bool kDense = true;
  X x;
  std::int64_t dim = -1;

  const X& input() const { return x; }
  const char* op_name() const { return "softmax"; }
  /// x's shape; a weft::Error for a dim out of range (or operands that do not fit).
  Shape shape() const {
    const Shape s = detail::operand_shape(x);
    detail::wrap_dim_of("softmax", dim, s);
    return s;
  }
  /// The softmax as a new tensor.
  Tensor<value_type> evaluate() const {
    return detail::softmax_impl<false, value_type>("softmax", detail::materialize(x), dim);
  }
  /// The softmax written into `out` (a contiguous view of its shape); false, with nothing
  /// written, where `out` is on another device or overlaps x's value.
  bool evaluate_into(const TensorView<value_type>& out) const {
    const TensorView<const value_type> v = detail::materialize(x);
    const int d = detail::check_along_dim("softmax", v, &dim);
    if (v.device() != out.device() ||
        detail::overlaps(detail::byte_range(detail::tensor_ref(v)), detail::byte_range(detail::tensor_ref(out))))
      return false;
    detail::softmax_rows_into<false>(v, d, out);
    return true;
  }
};

/// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x) along `dim`
/// (negative dims count from the end). A new contiguous tensor of x's dtype
/// (16-bit floats compute in float). An expression input is evaluated first;
/// one that holds a matmul gives a weft::Softmax node instead (evaluated when
/// assigned or read, with the same values).
template <Operand X>
  requires HasTensorOperand<X>
auto softmax(const X& x, std::int64_t dim) {
  if constexpr (detail::has_matmul_v<detail::expr_t<X>>)
    return Softmax<detail::expr_t<X>>{{}, detail::as_expr(x), dim};
  else
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
