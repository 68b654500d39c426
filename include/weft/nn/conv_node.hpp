// SPDX-License-Identifier: MIT
/// @file nn::conv2d on tensors as a dense expression node (nn::Conv2dNode): assigned alone it is one convolution; inside a pointwise expression, `relu(nn::conv2d(x, w) + b) + r`, the CPU runs float and double statements as the convolution's epilogue, on each GEMM block as it completes.
#pragma once

#include <optional>
#include <type_traits>

#include "weft/backend/conv.hpp"
#include "weft/expr/dense.hpp"
#include "weft/nn/conv.hpp"
#include "weft/plan/kernel_operands.hpp"

namespace weft::nn {

// In the backend ABI namespace: its members run the backend (docs/architecture.md, "ODR safety").
inline namespace WEFT_BACKEND_ABI {

/// conv2d(x, w[, b], options) on tensors as an expression node (nn::conv2d builds it; the file
/// nn/conv.hpp has the formula). x, w and b are read and checked when it is built (operand
/// expressions are evaluated then; a bad shape throws there); the convolution runs when the node
/// is assigned or evaluated. Assigned alone it writes its destination directly (any layout) or
/// becomes the new tensor; inside a pointwise expression the CPU runs float and double statements
/// as the convolution's epilogue (backend/dense_statements.hpp, backend/conv.hpp: ConvBlocks),
/// and everything else (16-bit floats, an operand whose H and W strides do not merge) evaluates the
/// convolution first.
template <class T>
struct Conv2dNode : Expr<Conv2dNode<T>> {
  using value_type = T;
  using children = weft::detail::TypeList<>;  // one operand to pointwise kernels (expr/dense.hpp)
  static constexpr bool kDense = true;
  static constexpr bool kWritesAnyLayout = true;  // evaluate_into: NCHW, channels-last, any strides
  detail::ConvCall<T> call;  // x and w, checked, and the geometry
  TensorView<const T> bias;  // [O], or empty

  const char* op_name() const { return call.op; }
  /// [N, O, H', W'] (checked when the node was built).
  Shape shape() const { return call.out_shape; }
  /// The convolution as a new contiguous tensor.
  Tensor<T> evaluate() const { return detail::conv_forward<T>(call, bias_or_null()); }
  /// The convolution written into `out` (a view of its shape, any strides); false, with nothing
  /// written, where `out` is on another device or overlaps an operand (the caller then copies
  /// the result in).
  bool evaluate_into(const TensorView<T>& out) const {
    using weft::detail::byte_range, weft::detail::tensor_ref, weft::detail::overlaps;
    const weft::detail::ByteRange range = byte_range(tensor_ref(out));
    for (const TensorView<const T>* v : {&call.x4, &call.w4, &bias})
      if (v->defined() && overlaps(byte_range(tensor_ref(*v)), range)) return false;
    if (out.device() != call.x4.device()) return false;
    detail::conv_forward_into<T>(call, bias_or_null(), nullptr, nullptr, false, false, out);
    return true;
  }
  /// The convolution (+ bias) as finished blocks for an epilogue (float and double on the CPU:
  /// backend/conv.hpp, ConvBlocks); 16-bit floats have none (their statement evaluates first).
  std::optional<weft::detail::ConvBlocks<T>> epilogue_blocks() const
    requires(std::is_same_v<T, float> || std::is_same_v<T, double>)
  {
    Tensor<T> hw, hb;
    return weft::detail::conv2d_epilogue_blocks<T>(call.geo, call.x4, detail::contiguous_in<T>(call.w4, hw),
                                                   bias.defined() ? detail::contiguous_in<T>(bias, hb) : bias);
  }

 private:
  const TensorView<const T>* bias_or_null() const { return bias.defined() ? &bias : nullptr; }
};

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {
/// The node of conv2d(x, w[, b], o) over plain operands, checked.
template <class T, class X, class W>
Conv2dNode<T> conv2d_node(const X& x, const W& w, const ad::detail::Input<T>* b, const ConvOptions& o) {
  check_conv_dtype<T>();
  const ad::detail::Input<T> xi = ad::detail::input<T>(x), wi = ad::detail::input<T>(w);
  TensorView<const T> bias = b ? b->value : TensorView<const T>();
  return {{}, conv_call<T>("nn::conv2d", false, xi.value, wi.value, b ? &bias : nullptr, o), bias};
}
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// conv2d on tensors, views or expressions: an expression node (nn::Conv2dNode) whose value is a
/// [N, O, H', W'] tensor; a pointwise expression around it runs as its epilogue.
template <class X, class W, class B>
  requires detail::PlainConvOperands<X, W, B>
Conv2dNode<detail::conv_dtype_t<X>> conv2d(const X& x, const W& w, const B& b, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::conv2d_node<T>(x, w, &bias, o);
}
template <class X, class W>
  requires detail::PlainConvOperands<X, W>
Conv2dNode<detail::conv_dtype_t<X>> conv2d(const X& x, const W& w, const ConvOptions& o = {}) {
  return detail::conv2d_node<detail::conv_dtype_t<X>>(x, w, nullptr, o);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
