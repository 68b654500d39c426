// SPDX-License-Identifier: MIT
/// @file The error model of the cuda suite's pointwise and foreach checks: an element's error is
/// bounded by ulps * eps(compute type) * the magnitude of the terms it is built from, plus one ulp
/// of a 16-bit output (the rounding at the store, which the float error can push across a tie),
/// plus the smallest subnormal of the output.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>

#include <weft/core/dtype.hpp>

namespace error_model {

template <class T>
double to_double(T x) {
  if constexpr (std::is_same_v<T, bool>) return x ? 1.0 : 0.0;
  else return double(weft::math_t<T>(x));
}

/// A number as the kernel sees it: converted once to the compute type C.
template <class C>
double as_compute(double x) {
  return double(C(x));
}

/// All the digits of a double, for failure messages.
inline std::string exact(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", x);
  return buffer;
}

// ------------------------------------------------------------- tolerances

/// The reference value of one element, and the magnitude that the rounding
/// errors of its computation scale with: the sum of |terms| (a cancelling sum
/// is accurate relative to its terms, not to its result).
struct Expected {
  double value;
  double magnitude;
};

/// Spacing of T at 1.0 (unit roundoff is half of it).
template <class T>
constexpr double epsilon() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-52;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-23;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-10;
  else if constexpr (std::is_same_v<T, weft::bfloat16>) return 0x1p-7;
  else return 0.0;
}

/// Smallest positive subnormal of T: the absolute error of rounding a tiny result.
template <class T>
constexpr double smallest_subnormal() {
  if constexpr (std::is_same_v<T, double>) return 0x1p-1074;
  else if constexpr (std::is_same_v<T, float>) return 0x1p-149;
  else if constexpr (std::is_same_v<T, weft::half>) return 0x1p-24;
  else if constexpr (std::is_same_v<T, weft::bfloat16>) return 0x1p-133;
  else return 0.0;
}

/// |got - reference| allowed for a result stored as T and computed in math_t<T>:
///   ulps * eps(math_t<T>) * magnitude: the compute-type error of the chain.
///     Each + - * (or one contracted FMA) adds 1/2 ulp of its magnitude; CUDA's
///     expf/exp are within 2/1 ulp, division and sqrt are correctly rounded
///     (nvcc's default -prec-div/-prec-sqrt), so sigmoid = 1/(1 + expf(-x)) is
///     within ~3 ulp. The tests pass 4 ulps for arithmetic chains, 8 when a
///     device math function is involved: about twice the analysed bound.
///   + eps(T) * |reference| for half and bfloat16: the one rounding at the
///     store (<= 1/2 ulp of T), which the float error can push across a tie:
///     1 ulp of T.
///   + the smallest subnormal of T, for results that round to a subnormal.
template <class T>
double tolerance(const Expected& e, double ulps) {
  double tol = ulps * epsilon<weft::math_t<T>>() * e.magnitude + smallest_subnormal<T>();
  if constexpr (weft::is_16bit_float_v<T>) tol += epsilon<T>() * std::fabs(e.value);
  return tol;
}

}  // namespace error_model
