// SPDX-License-Identifier: MIT
/// @file Expression builders: operators and pointwise functions over tensors, expressions and numbers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/expr/nodes.hpp"

namespace weft {

namespace detail {

/// Wraps an operand as a node: tensors become Leafs, numbers Scalars. Only for Operands: a
/// builder's return type names expr_t<X>, which for another type (an autograd Var) must fail to
/// substitute, not fail to compile.
template <class X>
  requires Operand<X>
auto as_expr(const X& x) {
  if constexpr (Expression<X>) return x;
  else if constexpr (is_single_tensor_v<X>) return Leaf<typename X::value_type>{{}, x.view()};
  else if constexpr (is_tensor_list_v<X>) return ListLeaf<typename X::value_type>{{}, x};
  else if constexpr (is_scalar_list_v<X>) return ListScalar<typename X::value_type>{{}, x};
  else if constexpr (std::is_same_v<X, bool>) return Scalar<bool>{{}, x};
  else if constexpr (std::is_integral_v<X>) return Scalar<std::int64_t>{{}, std::int64_t(x)};
  else return Scalar<double>{{}, double(x)};
}

template <class X>
using expr_t = decltype(as_expr(std::declval<X>()));

template <class Op, class... Xs>
auto make_map(const Xs&... xs) {
  return Map<Op, expr_t<Xs>...>{{}, Op{}, {{{as_expr(xs)}...}}};
}

}  // namespace detail

#define WEFT_BINARY_OPERATOR(sym, Op)                                    \
  template <Operand A, Operand B>                                        \
    requires HasTensorOperand<A, B>                                      \
  auto operator sym(const A& a, const B& b) {                            \
    return detail::make_map<functors::Op>(a, b);                              \
  }
WEFT_BINARY_OPERATOR(+, Add)
WEFT_BINARY_OPERATOR(-, Sub)
WEFT_BINARY_OPERATOR(*, Mul)
WEFT_BINARY_OPERATOR(/, Div)
WEFT_BINARY_OPERATOR(<, Less)
WEFT_BINARY_OPERATOR(<=, LessEqual)
WEFT_BINARY_OPERATOR(>, Greater)
WEFT_BINARY_OPERATOR(>=, GreaterEqual)
WEFT_BINARY_OPERATOR(==, Equal)
WEFT_BINARY_OPERATOR(!=, NotEqual)
#undef WEFT_BINARY_OPERATOR

template <Operand A>
  requires HasTensorOperand<A>
auto operator-(const A& a) {
  return detail::make_map<functors::Neg>(a);
}

#define WEFT_UNARY_FUNCTION(name, Op)                        \
  template <Operand A>                                       \
    requires HasTensorOperand<A>                             \
  auto name(const A& a) {                                    \
    return detail::make_map<functors::Op>(a);                     \
  }
WEFT_UNARY_FUNCTION(exp, Exp)
WEFT_UNARY_FUNCTION(log, Log)
WEFT_UNARY_FUNCTION(log1p, Log1p)
WEFT_UNARY_FUNCTION(expm1, Expm1)
WEFT_UNARY_FUNCTION(sqrt, Sqrt)
WEFT_UNARY_FUNCTION(rsqrt, Rsqrt)
WEFT_UNARY_FUNCTION(abs, Abs)
WEFT_UNARY_FUNCTION(sin, Sin)
WEFT_UNARY_FUNCTION(cos, Cos)
WEFT_UNARY_FUNCTION(tanh, Tanh)
WEFT_UNARY_FUNCTION(sigmoid, Sigmoid)
WEFT_UNARY_FUNCTION(relu, Relu)
WEFT_UNARY_FUNCTION(gelu, Gelu)
WEFT_UNARY_FUNCTION(gelu_tanh, GeluTanh)
WEFT_UNARY_FUNCTION(silu, Silu)
WEFT_UNARY_FUNCTION(erf, Erf)
WEFT_UNARY_FUNCTION(square, Square)
WEFT_UNARY_FUNCTION(reciprocal, Reciprocal)
WEFT_UNARY_FUNCTION(sign, Sign)
WEFT_UNARY_FUNCTION(floor, Floor)
WEFT_UNARY_FUNCTION(ceil, Ceil)
WEFT_UNARY_FUNCTION(trunc, Trunc)
WEFT_UNARY_FUNCTION(round, Round)
WEFT_UNARY_FUNCTION(isnan, IsNan)
WEFT_UNARY_FUNCTION(isinf, IsInf)
WEFT_UNARY_FUNCTION(isfinite, IsFinite)
WEFT_UNARY_FUNCTION(logical_not, LogicalNot)
#undef WEFT_UNARY_FUNCTION

#define WEFT_BINARY_FUNCTION(name, Op)                       \
  template <Operand A, Operand B>                            \
    requires HasTensorOperand<A, B>                          \
  auto name(const A& a, const B& b) {                        \
    return detail::make_map<functors::Op>(a, b);                  \
  }
WEFT_BINARY_FUNCTION(pow, Pow)
WEFT_BINARY_FUNCTION(maximum, Maximum)
WEFT_BINARY_FUNCTION(minimum, Minimum)
WEFT_BINARY_FUNCTION(fmod, Fmod)
WEFT_BINARY_FUNCTION(remainder, Remainder)
WEFT_BINARY_FUNCTION(logical_and, LogicalAnd)
WEFT_BINARY_FUNCTION(logical_or, LogicalOr)
WEFT_BINARY_FUNCTION(logical_xor, LogicalXor)
#undef WEFT_BINARY_FUNCTION

namespace detail {
/// A bool tensor, bool expression or bool number: what &&, || and ! take (logical_and, logical_or
/// and logical_not take any dtype).
template <class X>
concept BoolOperand = std::is_same_v<typename expr_t<X>::value_type, bool>;
}  // namespace detail

/// a && b, a || b and !a elementwise on bool operands (masks: `isfinite(x) && (x > 0)`). Both sides
/// are always evaluated, element by element: there is no short circuit in a kernel.
template <Operand A, Operand B>
  requires HasTensorOperand<A, B> && detail::BoolOperand<A> && detail::BoolOperand<B>
auto operator&&(const A& a, const B& b) {
  return detail::make_map<functors::LogicalAnd>(a, b);
}
template <Operand A, Operand B>
  requires HasTensorOperand<A, B> && detail::BoolOperand<A> && detail::BoolOperand<B>
auto operator||(const A& a, const B& b) {
  return detail::make_map<functors::LogicalOr>(a, b);
}
template <Operand A>
  requires HasTensorOperand<A> && detail::BoolOperand<A>
auto operator!(const A& a) {
  return detail::make_map<functors::LogicalNot>(a);
}

/// clamp(x, lo, hi) = min(max(x, lo), hi); lo and hi may be numbers or tensors.
template <Operand X, Operand Lo, Operand Hi>
  requires HasTensorOperand<X, Lo, Hi>
auto clamp(const X& x, const Lo& lo, const Hi& hi) {
  return detail::make_map<functors::Clamp>(x, lo, hi);
}

/// where(cond, a, b) = cond ? a : b, elementwise; cond is usually a bool tensor or comparison.
template <Operand C, Operand A, Operand B>
  requires HasTensorOperand<C, A, B>
auto where(const C& cond, const A& a, const B& b) {
  return detail::make_map<functors::Where>(cond, a, b);
}

/// lerp(a, b, w) = a + w * (b - a).
template <Operand A, Operand B, Operand W>
  requires HasTensorOperand<A, B, W>
auto lerp(const A& a, const B& b, const W& w) {
  return detail::make_map<functors::Lerp>(a, b, w);
}

/// The operand converted to dtype U, rounding to U's precision.
template <Element U, Operand X>
  requires HasTensorOperand<X>
auto cast(const X& x) {
  return Cast<U, detail::expr_t<X>>{{}, detail::as_expr(x)};
}

namespace detail {
/// x as a floating operand of dtype F: a tensor or expression cast to F, a number as a double.
template <class F, class X>
auto as_floating(const X& x) {
  if constexpr (Number<X>) return as_expr(double(x));
  else return cast<F>(x);
}
}  // namespace detail

/// isclose(a, b) = a == b || |a - b| <= atol + rtol |b| (torch.isclose), elementwise, bool; with
/// equal_nan two NaNs are close too. Integer and bool operands compare as float (a bool operand
/// of a subtraction is refused), as exact integers would only need a == b.
template <Operand A, Operand B>
  requires HasTensorOperand<A, B>
auto isclose(const A& a, const B& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false) {
  using Ea = detail::expr_t<A>;
  using Eb = detail::expr_t<B>;
  using F = to_floating_t<typename detail::mixed_promote<Ea, Eb>::type>;
  if (!(rtol >= 0) || !(atol >= 0))
    detail::fail("isclose", "rtol and atol must be >= 0, got rtol ", rtol, " and atol ", atol);
  const auto fa = detail::as_floating<F>(a);
  const auto fb = detail::as_floating<F>(b);
  return (fa == fb) || (abs(fa - fb) <= atol + rtol * abs(fb)) || (equal_nan && (isnan(fa) && isnan(fb)));
}

}  // namespace weft
