// SPDX-License-Identifier: MIT
/// @file How a dense op over Vars records itself: its operands as values and tape nodes, one node for its result, and the backward step that adds each operand's gradient.
///
/// Pointwise expressions derive their backward from their type (ad/expression.hpp); a dense op
/// (a reduction, matmul, a view, softmax, layer_norm, ...) states its backward once, in terms of
/// the kernels weft has (matmul of transposed views, the layer_norm and cross-entropy backward
/// kernels, ...), through `record_op`.
#pragma once

#include <array>
#include <memory>
#include <utility>

#include "weft/ad/expression.hpp"
#include "weft/ad/saved.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

namespace detail {

/// A dense op's operand: its value, and the tape node to send its gradient to (null for a
/// constant). A Var gives its value and node; an ad::Expression is evaluated (and recorded) now,
/// `var` keeping that node; a tensor or plain expression is a constant, read without a copy.
template <class T>
struct Input {
  TensorView<const T> value;
  std::shared_ptr<NodeBase> node;
  Var<T> var;
  Tensor<T> evaluated;  // a plain expression's value
  bool needs_grad() const { return node && node->requires_grad; }
};

template <class T, class X>
Input<T> input(const X& x) {
  // A view's `=` writes elements: each Input is built whole (views bound at construction).
  if constexpr (is_var_v<X>) {
    return Input<T>{TensorView<const T>(x.value().view()), x.node(), x, {}};
  } else if constexpr (is_ad_expression<X>::value) {
    Var<T> v(x);
    return Input<T>{TensorView<const T>(v.value().view()), v.node(), v, {}};
  } else if constexpr (is_single_tensor_v<X>) {
    return Input<T>{TensorView<const T>(x.view()), nullptr, {}, {}};
  } else {
    Tensor<T> evaluated = weft::eval(x);
    const TensorView<const T> view(evaluated.view());
    return Input<T>{view, nullptr, {}, std::move(evaluated)};
  }
}

/// The dtype of a dense op's operand (a Var's, an expression's, a tensor's).
template <class X>
using input_dtype_t = typename std::remove_cvref_t<X>::value_type;

/// A new contiguous tensor with another shape of the same element count, without a copy.
template <class T>
Tensor<T> reshaped(Tensor<T>&& t, const Shape& shape) {
  return Tensor<T>(weft::detail::AdoptStorage{}, t.storage(), shape);
}

/// Adds `contribution` (a tensor, view or expression of the node's shape) into the node's
/// gradient; nothing for a constant or a node that needs no gradient.
template <class T, class C>
void accumulate(const std::shared_ptr<NodeBase>& parent, C&& contribution) {
  if (!parent || !parent->requires_grad) return;
  auto& node = static_cast<Node<T>&>(*parent);
  if (node.grad.defined()) node.grad += contribution;
  else node.grad = std::forward<C>(contribution);  // a new tensor moves in; a view or expression is evaluated
}

/// Records `value` as the result of `op` over `inputs`: when recording, with an input that
/// requires a gradient, the node's backward step checks the saved tensors and calls
/// `backward(grad)`, which adds each input's gradient (accumulate). NoGrad, or no input requiring
/// a gradient, gives a constant.
template <class T, std::size_t N, class Backward>
Var<T> record_op(const char* op, Tensor<T> value, const std::array<std::shared_ptr<NodeBase>, N>& inputs,
                 SavedTensors saved, Backward backward) {
  auto node = std::make_shared<Node<T>>();
  node->op = op;
  node->value = std::move(value);
  if (recording_for(inputs)) {
    node->requires_grad = true;
    node->parents.assign(inputs.begin(), inputs.end());
    Node<T>* self = node.get();
    node->backward_step = [self, op, saved = std::move(saved), backward = std::move(backward)] {
      saved.check(op);
      backward(static_cast<const Tensor<T>&>(self->grad));
    };
  }
  return Var<T>(std::move(node));
}

}  // namespace detail

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad
