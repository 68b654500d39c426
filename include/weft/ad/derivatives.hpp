// SPDX-License-Identifier: MIT
/// @file The derivative of every pointwise functor, one line per op (PyTorch's derivatives.yaml): the gradient flowing into operand K of `op(args...)` given the gradient g of its result, as a weft expression.
///
/// The expressions name the forward's operand subtrees again, so a backward kernel recomputes the
/// forward's intermediates from the saved leaves (sigmoid(b) in the backward of a * sigmoid(b))
/// instead of keeping them: a pointwise chain is bound by memory traffic, and recomputing costs
/// none beyond reading the leaves, which the backward reads anyway. Where the forward is the same
/// subtree (the same tensors and ops), the fused backward kernel computes it once (a shared
/// subexpression).
#pragma once

#include <numbers>

#include "weft/expr/operators.hpp"

namespace weft::ad {
inline namespace WEFT_BACKEND_ABI {
namespace detail {

/// No gradient flows (a step function, a comparison): the contribution is 0.
inline auto zero_gradient() { return weft::detail::as_expr(0.0); }

/// Derivative<Op>::of<K>(g, args...): g * d op(args...) / d args[K], the gradient that flows into
/// operand K. Ops without a specialization (comparisons, logical ops, predicates: bool results)
/// pass no gradient.
template <class Op>
struct Derivative {
  template <int K, class G, class... A>
  static auto of(const G&, const A&...) {
    return zero_gradient();
  }
};

/// A step function: the derivative is 0 wherever it exists (torch gives 0 everywhere).
struct StepDerivative {
  template <int K, class G, class A>
  static auto of(const G&, const A&) {
    return zero_gradient();
  }
};

// clang-format off
template <> struct Derivative<functors::Add> {  // d(a + b) = da + db
  template <int K, class G, class A, class B> static auto of(const G& g, const A&, const B&) { return g; }
};
template <> struct Derivative<functors::Sub> {  // d(a - b) = da - db
  template <int K, class G, class A, class B> static auto of(const G& g, const A&, const B&) {
    if constexpr (K == 0) return g; else return -g;
  }
};
template <> struct Derivative<functors::Mul> {  // d(a b) = b da + a db
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return g * b; else return g * a;
  }
};
template <> struct Derivative<functors::Div> {  // d(a / b) = da / b - a / b^2 db
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return g / b; else return -(g * a) / (b * b);
  }
};
template <> struct Derivative<functors::Neg> {  // d(-a) = -da
  template <int K, class G, class A> static auto of(const G& g, const A&) { return -g; }
};
template <> struct Derivative<functors::Exp> {  // d exp(a) = exp(a) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * weft::exp(a); }
};
template <> struct Derivative<functors::Log> {  // d log(a) = da / a
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g / a; }
};
template <> struct Derivative<functors::Log1p> {  // d log(1 + a) = da / (1 + a)
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g / (a + 1.0); }
};
template <> struct Derivative<functors::Expm1> {  // d (exp(a) - 1) = exp(a) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * weft::exp(a); }
};
template <> struct Derivative<functors::Sqrt> {  // d sqrt(a) = da / (2 sqrt(a))
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * 0.5 / weft::sqrt(a); }
};
template <> struct Derivative<functors::Rsqrt> {  // d a^(-1/2) = -a^(-3/2) / 2 da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * -0.5 * weft::rsqrt(a) / a; }
};
template <> struct Derivative<functors::Abs> {  // d |a| = sign(a) da (0 at 0, as torch)
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * weft::sign(a); }
};
template <> struct Derivative<functors::Sin> {  // d sin(a) = cos(a) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * weft::cos(a); }
};
template <> struct Derivative<functors::Cos> {  // d cos(a) = -sin(a) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return -g * weft::sin(a); }
};
template <> struct Derivative<functors::Tanh> {  // d tanh(a) = (1 - tanh(a)^2) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * (1.0 - weft::square(weft::tanh(a))); }
};
template <> struct Derivative<functors::Sigmoid> {  // d sigmoid(a) = s (1 - s) da, s = sigmoid(a)
  template <int K, class G, class A> static auto of(const G& g, const A& a) {
    return g * weft::sigmoid(a) * (1.0 - weft::sigmoid(a));
  }
};
template <> struct Derivative<functors::Relu> {  // d relu(a) = [a > 0] da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return weft::where(a > 0, g, 0.0); }
};
template <> struct Derivative<functors::Gelu> {  // d gelu(a): nn::gelu_backward's formula
  template <int K, class G, class A> static auto of(const G& g, const A& a) {
    return weft::detail::make_map<functors::GeluBackward>(g, a);
  }
};
template <> struct Derivative<functors::GeluTanh> {  // d gelu_tanh(a): nn::gelu_tanh_backward's formula
  template <int K, class G, class A> static auto of(const G& g, const A& a) {
    return weft::detail::make_map<functors::GeluTanhBackward>(g, a);
  }
};
template <> struct Derivative<functors::Silu> {  // d a s(a) = s (1 + a (1 - s)) da, s = sigmoid(a)
  template <int K, class G, class A> static auto of(const G& g, const A& a) {
    return g * weft::sigmoid(a) * (1.0 + a * (1.0 - weft::sigmoid(a)));
  }
};
template <> struct Derivative<functors::Erf> {  // d erf(a) = 2 / sqrt(pi) exp(-a^2) da
  template <int K, class G, class A> static auto of(const G& g, const A& a) {
    return g * (2.0 * std::numbers::inv_sqrtpi) * weft::exp(-weft::square(a));
  }
};
template <> struct Derivative<functors::Square> {  // d a^2 = 2 a da
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return g * 2.0 * a; }
};
template <> struct Derivative<functors::Reciprocal> {  // d (1 / a) = -da / a^2
  template <int K, class G, class A> static auto of(const G& g, const A& a) { return -g / (a * a); }
};
template <> struct Derivative<functors::Sign> : StepDerivative {};
template <> struct Derivative<functors::Floor> : StepDerivative {};
template <> struct Derivative<functors::Ceil> : StepDerivative {};
template <> struct Derivative<functors::Trunc> : StepDerivative {};
template <> struct Derivative<functors::Round> : StepDerivative {};
template <> struct Derivative<functors::Pow> {  // d a^b = b a^(b - 1) da + a^b log(a) db
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return g * b * weft::pow(a, b - 1.0);
    else return g * weft::pow(a, b) * weft::log(a);
  }
};
template <> struct Derivative<functors::Maximum> {  // d max(a, b): the larger's, split evenly on ties (torch)
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return weft::where(a > b, g, weft::where(a == b, g * 0.5, 0.0));
    else return weft::where(b > a, g, weft::where(a == b, g * 0.5, 0.0));
  }
};
template <> struct Derivative<functors::Minimum> {  // d min(a, b): the smaller's, split evenly on ties (torch)
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return weft::where(a < b, g, weft::where(a == b, g * 0.5, 0.0));
    else return weft::where(b < a, g, weft::where(a == b, g * 0.5, 0.0));
  }
};
template <> struct Derivative<functors::Fmod> {  // d (a - trunc(a / b) b) = da - trunc(a / b) db
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return g; else return -g * weft::trunc(a / b);
  }
};
template <> struct Derivative<functors::Remainder> {  // d (a - floor(a / b) b) = da - floor(a / b) db
  template <int K, class G, class A, class B> static auto of(const G& g, const A& a, const B& b) {
    if constexpr (K == 0) return g; else return -g * weft::floor(a / b);
  }
};
template <> struct Derivative<functors::Clamp> {  // d clamp(x, lo, hi) = [lo <= x <= hi] dx + [x < lo] dlo + [x > hi] dhi
  template <int K, class G, class X, class L, class H> static auto of(const G& g, const X& x, const L& lo, const H& hi) {
    if constexpr (K == 0) return weft::where((x >= lo) && (x <= hi), g, 0.0);
    else if constexpr (K == 1) return weft::where(x < lo, g, 0.0);
    else return weft::where(x > hi, g, 0.0);
  }
};
template <> struct Derivative<functors::Where> {  // d where(c, a, b) = [c] da + [!c] db (c: none)
  template <int K, class G, class C, class A, class B> static auto of(const G& g, const C& c, const A&, const B&) {
    if constexpr (K == 0) return zero_gradient();
    else if constexpr (K == 1) return weft::where(c, g, 0.0);
    else return weft::where(c, 0.0, g);
  }
};
template <> struct Derivative<functors::Lerp> {  // d (a + w (b - a)) = (1 - w) da + w db + (b - a) dw
  template <int K, class G, class A, class B, class W> static auto of(const G& g, const A& a, const B& b, const W& w) {
    if constexpr (K == 0) return g * (1.0 - w);
    else if constexpr (K == 1) return g * w;
    else return g * (b - a);
  }
};
// clang-format on

}  // namespace detail
}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::ad
