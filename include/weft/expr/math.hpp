// SPDX-License-Identifier: MIT
/// @file The math functions op functors call: scalar overloads (host and device) and, on the host, SIMD packets.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "weft/core/config.hpp"

#if !defined(__CUDA_ARCH__)
#include "weft/backend/cpu/simd.hpp"
#endif

// Op functors are templates over their value type V: a scalar (float,
// double, int32, int64, bool) or, on the host, a simd::Vec packet. They call
// the unqualified names below; overload resolution picks the scalar or the
// packet version, so one functor body serves the scalar tail, the SIMD loop
// and the CUDA kernel.
namespace weft::math {

#if !defined(__CUDA_ARCH__)
using simd::abs;
using simd::cos;
using simd::erf;
using simd::exp;
using simd::expm1;
using simd::log;
using simd::log1p;
using simd::max;
using simd::min;
using simd::pow;
using simd::rsqrt;
using simd::select;
using simd::sigmoid;
using simd::sign;
using simd::sin;
using simd::sqrt;
using simd::tanh;

template <class T>
inline constexpr bool is_packet_v = false;
template <class T, int N>
inline constexpr bool is_packet_v<simd::Vec<T, N>> = true;
#else
template <class T>
inline constexpr bool is_packet_v = false;
#endif

/// `c` as a V: a scalar, or a packet with c in every lane.
template <class V>
WEFT_HOST_DEVICE inline V constant(double c) {
#if !defined(__CUDA_ARCH__)
  if constexpr (is_packet_v<V>) {
    using Lane = std::remove_cvref_t<decltype(V{}[0])>;
    return V::broadcast(Lane(c));
  } else
#endif
    return V(c);
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
#undef WEFT_UNARY_FLOAT_MATH

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
  if constexpr (std::is_same_v<T, bool>) return x;
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
  return T(T(x > T(0)) - T(x < T(0)));
}

/// Scalar select: m ? a : b.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline T select(bool m, T a, T b) {
  return m ? a : b;
}

}  // namespace weft::math

// Comparisons: a bool for scalars; for packets, int32 lanes holding 0 or 1
// (the packet form of a bool value, see plan/lanes.hpp).
namespace weft::math {

#define WEFT_COMPARISON_MATH(name, op, simd_cmp)                                    \
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>            \
  WEFT_HOST_DEVICE inline bool name(T a, T b) {                                      \
    return a op b;                                                                   \
  }
WEFT_COMPARISON_MATH(lt, <, cmp_lt)
WEFT_COMPARISON_MATH(le, <=, cmp_le)
WEFT_COMPARISON_MATH(gt, >, cmp_gt)
WEFT_COMPARISON_MATH(ge, >=, cmp_ge)
WEFT_COMPARISON_MATH(eq, ==, cmp_eq)
WEFT_COMPARISON_MATH(ne, !=, cmp_ne)
#undef WEFT_COMPARISON_MATH

/// Scalar truth test used by where(): c != 0.
template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
WEFT_HOST_DEVICE inline bool nonzero(T c) {
  return c != T(0);
}

#if !defined(__CUDA_ARCH__)
#define WEFT_PACKET_COMPARISON(name, simd_cmp)                                              \
  template <class T, int N>                                                                 \
  inline simd::Vec<std::int32_t, N> name(simd::Vec<T, N> a, simd::Vec<T, N> b) {            \
    return simd::convert<std::int32_t>(simd::mask_to_ones<T>(simd::simd_cmp(a, b)));       \
  }
WEFT_PACKET_COMPARISON(lt, cmp_lt)
WEFT_PACKET_COMPARISON(le, cmp_le)
WEFT_PACKET_COMPARISON(gt, cmp_gt)
WEFT_PACKET_COMPARISON(ge, cmp_ge)
WEFT_PACKET_COMPARISON(eq, cmp_eq)
WEFT_PACKET_COMPARISON(ne, cmp_ne)
#undef WEFT_PACKET_COMPARISON

template <class T, int N>
inline simd::Mask<T, N> nonzero(simd::Vec<T, N> c) {
  return simd::cmp_ne(c, simd::Vec<T, N>::broadcast(T(0)));
}
#endif

}  // namespace weft::math
