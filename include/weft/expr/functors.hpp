// SPDX-License-Identifier: MIT
/// @file The catalog of pointwise op functors: one small struct per op, with its formula.
#pragma once

#include "weft/core/config.hpp"
#include "weft/expr/math.hpp"

namespace weft::functors {

/// How an op's result dtype follows from its operands (PyTorch's rules). The operand dtypes an
/// op refuses, as PyTorch does, are listed with the dtype rules: detail::refusal in nodes.hpp.
enum class Kind : unsigned char {
  arithmetic,  // promote the operands; integers stay integers
  floating,    // promote, then integers and bool become float
  comparison,  // compute in the promoted type, result bool
  where,       // (cond, a, b): promote a and b; cond is only tested
  square,      // (x): promote x with the number 2, as torch.square = pow(x, 2) does: bool -> int64
  predicate,   // (x): compute in x's floating type (integers and bool as float), result bool
};

/// How the op is printed by WEFT_LOGS=output_code.
enum class Notation : unsigned char { infix, prefix, call };

// Each functor: kind, printed name, notation, and one operator() template
// that serves scalars (host and device) and SIMD packets alike. A functor
// that cannot serve packets simply fails the packet requires-check, and the
// kernel runs its scalar loop instead.

#define WEFT_OP_TRAITS(k, text, notation_)             \
  static constexpr Kind kind = Kind::k;              \
  static constexpr const char* name = text;          \
  static constexpr Notation notation = Notation::notation_;

// ---- binary -------------------------------------------------------------------
struct Add {  // a + b
  WEFT_OP_TRAITS(arithmetic, "+", infix)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { return V(a + b); }
};
struct Sub {  // a - b
  WEFT_OP_TRAITS(arithmetic, "-", infix)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { return V(a - b); }
};
struct Mul {  // a * b
  WEFT_OP_TRAITS(arithmetic, "*", infix)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { return V(a * b); }
};
struct Div {  // a / b, true division (integers divide as float, like torch.div)
  WEFT_OP_TRAITS(floating, "/", infix)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { return V(a / b); }
};
struct Maximum {  // maximum(a, b); NaN if either is NaN
  WEFT_OP_TRAITS(arithmetic, "maximum", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { using detail::math::max; return max(a, b); }
};
struct Minimum {  // minimum(a, b); NaN if either is NaN
  WEFT_OP_TRAITS(arithmetic, "minimum", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { using detail::math::min; return min(a, b); }
};
struct Pow {  // pow(a, b) = a^b
  WEFT_OP_TRAITS(arithmetic, "pow", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { using detail::math::pow; return pow(a, b); }
};
struct Fmod {  // fmod(a, b) = a - trunc(a / b) * b, exactly (C's fmod): the sign of a
  WEFT_OP_TRAITS(arithmetic, "fmod", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { using detail::math::fmod; return fmod(a, b); }
};
struct Remainder {  // remainder(a, b) = a - floor(a / b) * b (Python's %): the sign of b
  WEFT_OP_TRAITS(arithmetic, "remainder", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b) const { using detail::math::floor_mod; return floor_mod(a, b); }
};

#define WEFT_COMPARISON_OP(Name, text, fn)                                                      \
  struct Name {                                                                                 \
    WEFT_OP_TRAITS(comparison, text, infix)                                                     \
    template <class V> WEFT_HOST_DEVICE auto operator()(V a, V b) const { using detail::math::fn; return fn(a, b); } \
  };
WEFT_COMPARISON_OP(Less, "<", lt)            // a < b
WEFT_COMPARISON_OP(LessEqual, "<=", le)      // a <= b
WEFT_COMPARISON_OP(Greater, ">", gt)         // a > b
WEFT_COMPARISON_OP(GreaterEqual, ">=", ge)   // a >= b
WEFT_COMPARISON_OP(Equal, "==", eq)          // a == b
WEFT_COMPARISON_OP(NotEqual, "!=", ne)       // a != b
#undef WEFT_COMPARISON_OP

// Logical ops test their operands against zero (NaN is true, as in PyTorch) and combine the 0/1
// truths: min is "and", max is "or", != is "xor". The truths are bools for scalars and 0/1 lanes
// for packets, so one body serves both.
struct LogicalAnd {  // a && b = (a != 0) and (b != 0)
  WEFT_OP_TRAITS(comparison, "&&", infix)
  template <class V> WEFT_HOST_DEVICE auto operator()(V a, V b) const {
    using namespace detail::math;
    return min(ne(a, constant<V>(0)), ne(b, constant<V>(0)));
  }
};
struct LogicalOr {  // a || b = (a != 0) or (b != 0)
  WEFT_OP_TRAITS(comparison, "||", infix)
  template <class V> WEFT_HOST_DEVICE auto operator()(V a, V b) const {
    using namespace detail::math;
    return max(ne(a, constant<V>(0)), ne(b, constant<V>(0)));
  }
};
struct LogicalXor {  // logical_xor(a, b) = (a != 0) != (b != 0)
  WEFT_OP_TRAITS(comparison, "logical_xor", call)
  template <class V> WEFT_HOST_DEVICE auto operator()(V a, V b) const {
    using namespace detail::math;
    return ne(ne(a, constant<V>(0)), ne(b, constant<V>(0)));
  }
};
struct LogicalNot {  // !x = (x == 0)
  WEFT_OP_TRAITS(comparison, "!", prefix)
  template <class V> WEFT_HOST_DEVICE auto operator()(V x) const { using namespace detail::math; return eq(x, constant<V>(0)); }
};

// ---- unary, dtype-preserving -----------------------------------------------------
struct Neg {  // -x
  WEFT_OP_TRAITS(arithmetic, "-", prefix)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { return V(-x); }
};
struct Abs {  // |x|
  WEFT_OP_TRAITS(arithmetic, "abs", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::abs; return abs(x); }
};
struct Relu {  // relu(x) = max(x, 0)
  WEFT_OP_TRAITS(arithmetic, "relu", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const {
    using detail::math::max;
    return max(x, detail::math::constant<V>(0));
  }
};
struct Square {  // square(x) = x * x
  WEFT_OP_TRAITS(square, "square", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { return V(x * x); }
};
struct Sign {  // sign(x) = (x > 0) - (x < 0)
  WEFT_OP_TRAITS(arithmetic, "sign", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::sign; return sign(x); }
};
// Rounding to an integral value of the same dtype (integers pass through; bool is refused, as in PyTorch).
struct Floor {  // floor(x): the largest integer <= x
  WEFT_OP_TRAITS(arithmetic, "floor", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::floor; return floor(x); }
};
struct Ceil {  // ceil(x): the smallest integer >= x
  WEFT_OP_TRAITS(arithmetic, "ceil", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::ceil; return ceil(x); }
};
struct Trunc {  // trunc(x): x rounded toward zero
  WEFT_OP_TRAITS(arithmetic, "trunc", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::trunc; return trunc(x); }
};
struct Round {  // round(x): the nearest integer, ties to even (torch.round; C's round breaks ties away from zero)
  WEFT_OP_TRAITS(arithmetic, "round", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x) const { using detail::math::round_even; return round_even(x); }
};

// ---- unary tests, bool-valued (computed in the floating type: an integer is always finite) ---------
struct IsNan {  // isnan(x) = x != x
  WEFT_OP_TRAITS(predicate, "isnan", call)
  template <class V> WEFT_HOST_DEVICE auto operator()(V x) const { using namespace detail::math; return ne(x, x); }
};
struct IsInf {  // isinf(x) = |x| == inf
  WEFT_OP_TRAITS(predicate, "isinf", call)
  template <class V> WEFT_HOST_DEVICE auto operator()(V x) const {
    using namespace detail::math;
    return eq(abs(x), constant<V>(double(INFINITY)));
  }
};
struct IsFinite {  // isfinite(x) = |x| < inf (false for NaN)
  WEFT_OP_TRAITS(predicate, "isfinite", call)
  template <class V> WEFT_HOST_DEVICE auto operator()(V x) const {
    using namespace detail::math;
    return lt(abs(x), constant<V>(double(INFINITY)));
  }
};

// ---- unary, float-valued (integers compute in float) -------------------------------
#define WEFT_FLOAT_UNARY_OP(Name, text, expr)                                            \
  struct Name {                                                                           \
    WEFT_OP_TRAITS(floating, text, call)                                                  \
    template <class V> WEFT_HOST_DEVICE V operator()(V x) const {                         \
      using namespace detail::math;                                                               \
      return expr;                                                                        \
    }                                                                                     \
  };
WEFT_FLOAT_UNARY_OP(Exp, "exp", exp(x))                   // exp(x) = e^x
WEFT_FLOAT_UNARY_OP(Log, "log", log(x))                   // log(x), natural
WEFT_FLOAT_UNARY_OP(Log1p, "log1p", log1p(x))             // log1p(x) = log(1 + x)
WEFT_FLOAT_UNARY_OP(Expm1, "expm1", expm1(x))             // expm1(x) = e^x - 1
WEFT_FLOAT_UNARY_OP(Sqrt, "sqrt", sqrt(x))                // sqrt(x)
WEFT_FLOAT_UNARY_OP(Rsqrt, "rsqrt", rsqrt(x))             // rsqrt(x) = 1 / sqrt(x)
WEFT_FLOAT_UNARY_OP(Sin, "sin", sin(x))                   // sin(x)
WEFT_FLOAT_UNARY_OP(Cos, "cos", cos(x))                   // cos(x)
WEFT_FLOAT_UNARY_OP(Tanh, "tanh", tanh(x))                // tanh(x)
WEFT_FLOAT_UNARY_OP(Erf, "erf", erf(x))                   // erf(x) = 2/sqrt(pi) * int_0^x e^-t^2 dt
WEFT_FLOAT_UNARY_OP(Sigmoid, "sigmoid", sigmoid(x))       // sigmoid(x) = 1 / (1 + exp(-x))
WEFT_FLOAT_UNARY_OP(Silu, "silu", V(x * sigmoid(x)))      // silu(x) = x * sigmoid(x)
WEFT_FLOAT_UNARY_OP(Reciprocal, "reciprocal", V(constant<V>(1) / x))  // reciprocal(x) = 1 / x
// gelu(x) = x/2 * (1 + erf(x / sqrt(2)))  (PyTorch's default, approximate='none')
WEFT_FLOAT_UNARY_OP(Gelu, "gelu", V(constant<V>(0.5) * x * (constant<V>(1) + erf(x * constant<V>(0.70710678118654752440)))))
// gelu_tanh(x) = x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))  (PyTorch's approximate='tanh'; GPT-2's GELU)
WEFT_FLOAT_UNARY_OP(GeluTanh, "gelu_tanh",
                    V(constant<V>(0.5) * x *
                      (constant<V>(1) + tanh(constant<V>(0.79788456080286535588) * (x + constant<V>(0.044715) * x * x * x)))))
#undef WEFT_FLOAT_UNARY_OP

// ---- gradients of unary ops: (dy, x) -> dy * op'(x), one op so that 16-bit values round once -------
// gelu_backward(dy, x) = dy * (Phi(x) + x phi(x)), Phi(x) = (1 + erf(x / sqrt(2))) / 2, phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
struct GeluBackward {
  WEFT_OP_TRAITS(floating, "gelu_backward", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V dy, V x) const {
    using namespace detail::math;
    const V cdf = V(constant<V>(0.5) * (constant<V>(1) + erf(x * constant<V>(0.70710678118654752440))));
    const V pdf = V(exp(constant<V>(-0.5) * x * x) * constant<V>(0.39894228040143267794));
    return V(dy * (cdf + x * pdf));
  }
};
// gelu_tanh_backward(dy, x) = dy * ((1 + t) / 2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)),
// t = tanh(sqrt(2/pi) (x + 0.044715 x^3))
struct GeluTanhBackward {
  WEFT_OP_TRAITS(floating, "gelu_tanh_backward", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V dy, V x) const {
    using namespace detail::math;
    const V x2 = V(x * x);
    const V t = tanh(constant<V>(0.79788456080286535588) * (x + constant<V>(0.044715) * x2 * x));
    const V slope = V(constant<V>(0.79788456080286535588) * (constant<V>(1) + constant<V>(3 * 0.044715) * x2));
    return V(dy * (constant<V>(0.5) * (constant<V>(1) + t) + constant<V>(0.5) * x * (constant<V>(1) - t * t) * slope));
  }
};

// ---- ternary -------------------------------------------------------------------
struct Clamp {  // clamp(x, lo, hi) = min(max(x, lo), hi)
  WEFT_OP_TRAITS(arithmetic, "clamp", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V x, V lo, V hi) const {
    using detail::math::max;
    using detail::math::min;
    return min(max(x, lo), hi);
  }
};
struct Lerp {  // lerp(a, b, w) = a + w * (b - a)
  WEFT_OP_TRAITS(floating, "lerp", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V a, V b, V w) const { return V(a + w * (b - a)); }
};
struct Where {  // where(c, a, b) = c ? a : b
  WEFT_OP_TRAITS(where, "where", call)
  template <class V> WEFT_HOST_DEVICE V operator()(V c, V a, V b) const {
    using detail::math::nonzero;
    using detail::math::select;
    return select(nonzero(c), a, b);
  }
};

#undef WEFT_OP_TRAITS

}  // namespace weft::functors

namespace weft::functors {

/// Whether an op has a packet form for integer lanes (the float forms all exist).
template <class Op>
inline constexpr bool has_integer_packets = true;
template <>
inline constexpr bool has_integer_packets<Pow> = false;
template <>
inline constexpr bool has_integer_packets<Sign> = false;

}  // namespace weft::functors
