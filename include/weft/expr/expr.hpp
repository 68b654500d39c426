// SPDX-License-Identifier: MIT
/// @file The Expr CRTP base and the concepts that say what may appear in an expression.
#pragma once

#include <type_traits>

#include "weft/core/dtype.hpp"
#include "weft/core/tensor.hpp"
#include "weft/core/tensor_list.hpp"

namespace weft {

/// Base of every expression node; nodes hold operands and a functor, nothing else. Nodes have
/// the methods that mirror free functions, as tensors do (`(a + b).sum()`: core/tensor_methods.hpp).
template <class Derived>
struct Expr : TensorMethods<Derived> {};

/// An expression node (Leaf, Scalar, Map, Cast, ...).
template <class E>
concept Expression = std::is_base_of_v<Expr<std::remove_cvref_t<E>>, std::remove_cvref_t<E>>;

/// A C++ number that may appear in an expression (a "wrapped number" in PyTorch).
template <class S>
concept Number = std::is_arithmetic_v<std::remove_cvref_t<S>>;

/// A Tensor or a TensorView (of writable or read-only elements).
template <class X>
concept SingleTensor = is_single_tensor_v<std::remove_cvref_t<X>>;

/// A list of tensors.
template <class X>
concept TensorListLike = is_tensor_list_v<std::remove_cvref_t<X>>;

/// A tensor, a view or a list of tensors (the operands that give an expression its shape).
template <class X>
concept TensorLike = SingleTensor<X> || TensorListLike<X>;

/// What the expression builders accept: nodes, tensors, lists and numbers.
template <class X>
concept Operand = Expression<X> || TensorLike<X> || is_scalar_list_v<std::remove_cvref_t<X>> || Number<X>;

/// At least one operand of a builder must be a tensor, list or expression.
template <class... Xs>
concept HasTensorOperand = (... || (Expression<Xs> || TensorLike<Xs>));

}  // namespace weft
