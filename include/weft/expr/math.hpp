// SPDX-License-Identifier: MIT
/// @file The math functions op functors call: scalar overloads (host and device); packets bring their own (backend/cpu).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "weft/core/config.hpp"

// Op functors are templates over their value type V: a scalar (float,
// double, int32, int64, bool) or, on the host, a SIMD packet. They call the
// names below unqualified (`using math::exp; exp(x)`): a scalar finds these
// overloads, a packet also finds its own by argument-dependent lookup in its
// namespace (weft::simd, backend/cpu), and overload resolution picks one. So
// one functor body serves the scalar tail, the SIMD loop and the CUDA kernel,
// and this layer names no backend type.
namespace weft::detail::math {

/// Whether V is a packet (a SIMD vector of lanes, which holds its raw vector type) rather than a scalar.
template <class V>
inline constexpr bool is_packet_v = requires { typename V::Raw; };

/// `c` as a V: a scalar, or a packet with c in every lane.
template <class V>
WEFT_HOST_DEVICE inline V constant(double c) {
  if constexpr (is_packet_v<V>) {
    using Lane = std::remove_cvref_t<decltype(V{}[0])>;
    return V::broadcast(Lane(c));
  } else {
    return V(c);
  }
}

#define WEFT_UNARY_FLOAT_MATH(name, fname, dname)                      \
  WEFT_HOST_DEVICE inline float name(float x) { return ::fname(x); }   \
  WEFT_HOST_DEVICE inline double name(double x) { return ::dname(x); }
WEFT_UNARY_FLOAT_MATH(exp, expf, exp)
WEFT_UNARY_FLOAT_MATH(expm1, expm1f, expm1)
WEFT_UNARY_FLOAT_MATH(log, logf, log)
WEFT_UNARY_FLOAT_MATH(log1p, log1pf, log1p)
WEFT_UNARY_FLOAT_MATH(sqrt, sqrtf, sqrt)
WEFT_UNARY_FLOAT_MATH(sin, sinf, sin)
WEFT_UNARY_FLOAT_MATH(cos, cosf, cos)
WEFT_UNARY_FLOAT_MATH(tanh, tanhf, tanh)
WEFT_UNARY_FLOAT_MATH(erf, erff, erf)

// Rounding to an integral value of the same type; integers are integral already.
#define WEFT_ROUNDING_MATH(name, fname, dname)                          \
  WEFT_UNARY_FLOAT_MATH(name, fname, dname)                             \
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0> \
  WEFT_HOST_DEVICE inline I name(I x) {                                 \
    return x;                                                           \
  }
WEFT_ROUNDING_MATH(floor, floorf, floor)
WEFT_ROUNDING_MATH(ceil, ceilf, ceil)
WEFT_ROUNDING_MATH(trunc, truncf, trunc)
WEFT_ROUNDING_MATH(round_even, rintf, rint)  // rint rounds in the default mode: to nearest, ties to even
#undef WEFT_ROUNDING_MATH
#undef WEFT_UNARY_FLOAT_MATH

// fmod(a, b) = a - trunc(a / b) * b, exact; the sign of a. Integers: C++'s %, except that a
// divisor of 0 gives 0 (PyTorch raises ZeroDivisionError on the CPU; a kernel cannot, and a trap
// would kill the process) and a signed -1 gives 0 (INT_MIN % -1 traps on x86).
WEFT_HOST_DEVICE inline float fmod(float a, float b) { return ::fmodf(a, b); }
WEFT_HOST_DEVICE inline double fmod(double a, double b) { return ::fmod(a, b); }
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
WEFT_HOST_DEVICE inline I fmod(I a, I b) {
  if constexpr (std::is_signed_v<I>)
    if (b == I(-1)) return I(0);
  return b == I(0) ? I(0) : I(a % b);
}

// floor_mod(a, b) = a - floor(a / b) * b (torch.remainder, Python's %): fmod moved into b's sign
// (ATen's formula: a zero or NaN stays as fmod gave it).
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T floor_mod(T a, T b) {
  T r = fmod(a, b);
  return r != T(0) && ((r < T(0)) != (b < T(0))) ? T(r + b) : r;
}

WEFT_HOST_DEVICE inline float pow(float x, float y) { return ::powf(x, y); }
WEFT_HOST_DEVICE inline double pow(double x, double y) { return ::pow(x, y); }

// rsqrt(x) = 1 / sqrt(x)
WEFT_HOST_DEVICE inline float rsqrt(float x) { return 1.0f / ::sqrtf(x); }
WEFT_HOST_DEVICE inline double rsqrt(double x) { return 1.0 / ::sqrt(x); }

// sigmoid(x) = 1 / (1 + exp(-x))
WEFT_HOST_DEVICE inline float sigmoid(float x) { return 1.0f / (1.0f + ::expf(-x)); }
WEFT_HOST_DEVICE inline double sigmoid(double x) { return 1.0 / (1.0 + ::exp(-x)); }

// Integer powers by squaring; a negative exponent truncates toward zero like 1/x^-y.
// bool (a bool tensor to a bool number): x^true = x, x^false = true.
template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
WEFT_HOST_DEVICE inline I pow(I x, I y) {
  if constexpr (std::is_same_v<I, bool>) {
    return y ? x : true;
  } else {
    if (y < 0) return x == 1 ? I(1) : x == -1 ? (y % 2 ? I(-1) : I(1)) : I(0);
    I r = 1;
    for (; y; y >>= 1, x = I(x * x))
      if (y & 1) r = I(r * x);
    return r;
  }
}

template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T abs(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;  // bool and uint8
  else return x < T(0) ? T(-x) : x;
}

// max/min propagate NaN like torch.maximum: a NaN operand wins. Of +0 and -0, max is +0 and
// min is -0 (IEEE 754-2019 maximum / minimum), as the SIMD packets compute them.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T max(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (a == b) return ::copysign(1.0, double(a)) < 0 ? b : a;  // equal: only a zero's sign can differ
  }
  return a > b ? a : (b != b ? b : (a == b ? a : b));
}
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T min(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return a;
    if (a == b) return ::copysign(1.0, double(a)) < 0 ? a : b;
  }
  return a < b ? a : (b != b ? b : (a == b ? a : b));
}

// sign(x) = (x > 0) - (x < 0); NaN gives 0 like PyTorch's CPU kernel
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T sign(T x) {
  if constexpr (std::is_unsigned_v<T>) return T(x != T(0));
  else return T(T(x > T(0)) - T(x < T(0)));
}

/// Scalar select: m ? a : b.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T select(bool m, T a, T b) {
  return m ? a : b;
}

}  // namespace weft::detail::math

// Comparisons: a bool for scalars (packets: int32 lanes holding 0 or 1, backend/cpu/simd/packet.hpp).
namespace weft::detail::math {

#define WEFT_COMPARISON_MATH(name, op)                                    \
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>            \
  WEFT_HOST_DEVICE inline bool name(T a, T b) {                                      \
    return a op b;                                                                   \
  }
WEFT_COMPARISON_MATH(lt, <)
WEFT_COMPARISON_MATH(le, <=)
WEFT_COMPARISON_MATH(gt, >)
WEFT_COMPARISON_MATH(ge, >=)
WEFT_COMPARISON_MATH(eq, ==)
WEFT_COMPARISON_MATH(ne, !=)
#undef WEFT_COMPARISON_MATH

/// Scalar truth test used by where(): c != 0.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline bool nonzero(T c) {
  return c != T(0);
}

}  // namespace weft::detail::math
