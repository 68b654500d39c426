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

#include "reference.hpp"

namespace error_model {
inline namespace WEFT_BACKEND_ABI {  // it uses reference.hpp's helpers (docs/architecture.md, ODR safety)

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
///   + the smallest subnormal of T (its ulp at 0), for results that round to a subnormal.
/// eps and ulp are the test support's (reference.hpp).
template <class T>
double tolerance(const Expected& e, double ulps) {
  using weft_test::eps_of;
  double tol = ulps * eps_of<weft::math_t<T>>() * e.magnitude + weft_test::ulp_of<T>(0.0);
  if constexpr (weft::is_16bit_float_v<T>) tol += eps_of<T>() * std::fabs(e.value);
  return tol;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace error_model
