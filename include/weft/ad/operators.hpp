// SPDX-License-Identifier: MIT
/// @file The pointwise builders over Vars (weft's operators and functions, mixed with tensors, expressions and numbers as constants): differentiable ops build an ad::Expression, comparisons and predicates a plain bool expression.
#pragma once

#include "weft/ad/expression.hpp"

// The operators live in weft::ad, the namespace of Var and ad::Expression, where argument-dependent
// lookup finds them; the functions live in weft beside their tensor overloads (weft::exp(v)).
// One differentiable binary builder (an operator or a function): an ad::Expression.
#define WEFT_AD_BINARY(name, Op)                                 \
  template <class A, class B>                                    \
    requires ad::detail::AdOperands<A, B>                        \
  auto name(const A& a, const B& b) {                            \
    return ad::detail::ad_map<functors::Op>(a, b);               \
  }

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {

WEFT_AD_BINARY(operator+, Add)
WEFT_AD_BINARY(operator-, Sub)
WEFT_AD_BINARY(operator*, Mul)
WEFT_AD_BINARY(operator/, Div)

template <class A>
  requires ad::detail::AdOperands<A>
auto operator-(const A& a) {
  return ad::detail::ad_map<functors::Neg>(a);
}

// Comparisons have no gradient: over Vars they read the values, as plain bool expressions
// (masks for where and masked_fill).
#define WEFT_AD_COMPARISON(name)                                     \
  template <class A, class B>                                        \
    requires ad::detail::AdOperands<A, B>                            \
  auto name(const A& a, const B& b) {                                \
    return weft::name(ad::detail::plain(a), ad::detail::plain(b));   \
  }
WEFT_AD_COMPARISON(operator<)
WEFT_AD_COMPARISON(operator<=)
WEFT_AD_COMPARISON(operator>)
WEFT_AD_COMPARISON(operator>=)
WEFT_AD_COMPARISON(operator==)
WEFT_AD_COMPARISON(operator!=)
#undef WEFT_AD_COMPARISON

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad

namespace weft {
inline namespace WEFT_BACKEND_ABI {

// Differentiable functions: the result is an ad::Expression (evaluated when assigned to an ad::Var).
WEFT_AD_BINARY(pow, Pow)
WEFT_AD_BINARY(maximum, Maximum)
WEFT_AD_BINARY(minimum, Minimum)
WEFT_AD_BINARY(fmod, Fmod)
WEFT_AD_BINARY(remainder, Remainder)
#undef WEFT_AD_BINARY

#define WEFT_AD_UNARY(name, Op)                       \
  template <class A>                                  \
    requires ad::detail::AdOperands<A>                \
  auto name(const A& a) {                             \
    return ad::detail::ad_map<functors::Op>(a);       \
  }
WEFT_AD_UNARY(exp, Exp)
WEFT_AD_UNARY(log, Log)
WEFT_AD_UNARY(log1p, Log1p)
WEFT_AD_UNARY(expm1, Expm1)
WEFT_AD_UNARY(sqrt, Sqrt)
WEFT_AD_UNARY(rsqrt, Rsqrt)
WEFT_AD_UNARY(abs, Abs)
WEFT_AD_UNARY(sin, Sin)
WEFT_AD_UNARY(cos, Cos)
WEFT_AD_UNARY(tanh, Tanh)
WEFT_AD_UNARY(sigmoid, Sigmoid)
WEFT_AD_UNARY(relu, Relu)
WEFT_AD_UNARY(gelu, Gelu)
WEFT_AD_UNARY(gelu_tanh, GeluTanh)
WEFT_AD_UNARY(silu, Silu)
WEFT_AD_UNARY(erf, Erf)
WEFT_AD_UNARY(square, Square)
WEFT_AD_UNARY(reciprocal, Reciprocal)
WEFT_AD_UNARY(sign, Sign)
WEFT_AD_UNARY(floor, Floor)
WEFT_AD_UNARY(ceil, Ceil)
WEFT_AD_UNARY(trunc, Trunc)
WEFT_AD_UNARY(round, Round)
#undef WEFT_AD_UNARY

/// clamp(x, lo, hi): the gradient flows to x inside [lo, hi], to the bound that clipped it outside.
template <class X, class Lo, class Hi>
  requires ad::detail::AdOperands<X, Lo, Hi>
auto clamp(const X& x, const Lo& lo, const Hi& hi) {
  return ad::detail::ad_map<functors::Clamp>(x, lo, hi);
}
/// where(c, a, b): the gradient flows to a where c holds, to b elsewhere; c (bool) gets none.
template <class C, class A, class B>
  requires ad::detail::AdOperands<C, A, B>
auto where(const C& c, const A& a, const B& b) {
  return ad::detail::ad_map<functors::Where>(c, a, b);
}
/// lerp(a, b, w) = a + w (b - a).
template <class A, class B, class W>
  requires ad::detail::AdOperands<A, B, W>
auto lerp(const A& a, const B& b, const W& w) {
  return ad::detail::ad_map<functors::Lerp>(a, b, w);
}
/// masked_fill(x, mask, value) = where(mask, value, x): the gradient flows where mask is false.
template <class X, class M, Number V>
  requires ad::detail::AdOperands<X>
auto masked_fill(const X& x, const M& mask, V value) {
  return ad::detail::ad_map<functors::Where>(mask, double(value), x);
}
/// cast<U>(x): the gradient is cast back to each Var's dtype where it is written.
template <Element U, class X>
  requires ad::detail::AdOperands<X>
auto cast(const X& x) {
  return ad::detail::combine([](const auto& e) { return weft::cast<U>(e); }, ad::detail::unwrap(x));
}

// Predicates have no gradient: over Vars they read the values, as plain bool expressions.
#define WEFT_AD_PREDICATE(name)           \
  template <class A>                      \
    requires ad::detail::AdOperands<A>    \
  auto name(const A& a) {                 \
    return name(ad::detail::plain(a));    \
  }
WEFT_AD_PREDICATE(isnan)
WEFT_AD_PREDICATE(isinf)
WEFT_AD_PREDICATE(isfinite)
#undef WEFT_AD_PREDICATE

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
