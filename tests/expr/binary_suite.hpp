// SPDX-License-Identifier: MIT
/// @file The binary-op checks (+ - * / pow maximum minimum and the six comparisons), instantiated
/// per dtype pair by binary_*.cpp. Result dtypes are written out here (PyTorch's promotion), not
/// taken from weft.
///
/// ulps (see pointwise_check.hpp): 1 for + - * / (correctly rounded: 0.5 ulp, doubled); 4 for pow
/// (float: exp(y log|x|) in double, then one rounding; scalar tail: powf; double: std::pow, < 1
/// ulp); maximum / minimum and comparisons are exact. Integer results are exact.
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

/// Inputs on a grid of 0.25 in [-8, 8]: equal elements occur often (comparisons see ties),
/// products and powers stay far inside float16's range. NaNs are mixed into floating inputs.
template <class T>
Domain binary_domain(bool divisor = false) {
  if constexpr (std::is_same_v<T, bool>) {
    return Domain{};
  } else if constexpr (std::is_integral_v<T>) {
    return Domain{-20, 20, false, true, divisor ? 0.0 : 0.1, divisor ? 1.0 : 0.0};
  } else {
    Domain d{-8, 8, false, true, divisor ? 0.0 : 0.05, divisor ? 0.25 : 0.0, 0.02, 0.25};
    return d;
  }
}

inline double nan_max(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }
inline double nan_min(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b); }

/// + - * / (first) or pow maximum minimum (second) over tensors of dtypes A and B; R is the
/// promoted dtype, F the dtype of true division (R, or float32 for integer / bool R). Two halves,
/// a test case each.
template <class A, class B, class R, class F, int half = 0>
void run_binary_arith(const char* tag) {
  Rng rng = named_rng(tag, 3 + 10 * half);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  const Domain da = binary_domain<A>(), db = binary_domain<B>();
  constexpr bool has_bool = std::is_same_v<A, bool> || std::is_same_v<B, bool>;
  constexpr bool both_bool = std::is_same_v<A, bool> && std::is_same_v<B, bool>;
  constexpr bool first = half != 2, second = half != 1;  // 0: both halves
  if constexpr (first) {
  check_op<R, A, B>(name("+").c_str(), rng, {da, db}, 1, [](const auto& a, const auto& b) { return a + b; },
                    [](double a, double b) { return rel(a + b); });
  check_op<R, A, B>(name("*").c_str(), rng, {da, db}, 1, [](const auto& a, const auto& b) { return a * b; },
                    [](double a, double b) { return rel(a * b); });
  }
  if constexpr (first && !both_bool) {  // bool - bool and bool / bool are errors in PyTorch
    check_op<R, A, B>(name("-").c_str(), rng, {da, db}, 1, [](const auto& a, const auto& b) { return a - b; },
                      [](double a, double b) { return rel(a - b); });
    check_op<F, A, B>(name("/").c_str(), rng, {da, binary_domain<B>(true)}, 1,
                      [](const auto& a, const auto& b) { return a / b; }, [](double a, double b) { return rel(a / b); });
  }
  if constexpr (second && !has_bool) {
    // pow: integer exponents on any base (incl. negative bases), then fractional exponents on
    // positive bases. Integers: small bases and exponents 0..6, exact.
    Domain base = std::is_integral_v<A> ? Domain{-5, 5} : Domain{-4, 4, false, true, 0, 0.25, 0.02, 0.125};
    Domain expo = std::is_integral_v<B> ? Domain{0, 6} : Domain{-3, 3, false, true, 0.1, 0, 0.02, 1.0};
    check_op<R, A, B>(name("pow").c_str(), rng, {base, expo}, 4,
                      [](const auto& a, const auto& b) { return weft::pow(a, b); },
                      [](double a, double b) { return rel(std::pow(a, b)); });
    if constexpr (weft_test::is_float_type_v<A> && weft_test::is_float_type_v<B>)
      check_op<R, A, B>(name("pow, fractional exponent").c_str(), rng, {Domain{0.05, 6, true, false}, Domain{-2.5, 2.5}}, 4,
                        [](const auto& a, const auto& b) { return weft::pow(a, b); },
                        [](double a, double b) { return rel(std::pow(a, b)); });
  }
  if constexpr (second) {
  check_op<R, A, B>(name("maximum").c_str(), rng, {da, db}, 0,
                    [](const auto& a, const auto& b) { return weft::maximum(a, b); },
                    [](double a, double b) { return exact(nan_max(a, b)); });
  check_op<R, A, B>(name("minimum").c_str(), rng, {da, db}, 0,
                    [](const auto& a, const auto& b) { return weft::minimum(a, b); },
                    [](double a, double b) { return exact(nan_min(a, b)); });
  if constexpr (is_float_type_v<A> && std::is_same_v<A, B>) {
    // Signed zeros: maximum(-0, +0) = +0 and minimum(+0, -0) = -0 (IEEE 754-2019), for every
    // element whether a SIMD packet or the scalar tail computes it (37 = packets + a tail).
    Tensor<A> neg = weft::full<A>(Shape{37}, make_value<A>(-0.0)), pos = weft::full<A>(Shape{37}, make_value<A>(0.0));
    std::vector<double> mx = values_of(weft::eval(weft::maximum(neg, pos)));
    std::vector<double> mn = values_of(weft::eval(weft::minimum(pos, neg)));
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < 37; ++i) wrong += std::signbit(mx[i]) || !std::signbit(mn[i]);
    INFO(name("signed zeros"));
    CHECK(wrong == 0);
  }
  }
}

/// The six comparisons (bool results, computed in the promoted type; NaN compares unequal):
/// part 1 < <= >, part 2 >= == !=, 0 all.
template <class A, class B, int part = 0>
void run_binary_compare(const char* tag) {
  Rng rng = named_rng(tag, 4 + 10 * part);
  constexpr bool first = part != 2, second = part != 1;
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  const Domain da = binary_domain<A>(), db = binary_domain<B>();
  if constexpr (first) {
  check_op<bool, A, B>(name("<").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a < b; },
                       [](double a, double b) { return exact(a < b); });
  check_op<bool, A, B>(name("<=").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a <= b; },
                       [](double a, double b) { return exact(a <= b); });
  check_op<bool, A, B>(name(">").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a > b; },
                       [](double a, double b) { return exact(a > b); });
  }
  if constexpr (second) {
  check_op<bool, A, B>(name(">=").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a >= b; },
                       [](double a, double b) { return exact(a >= b); });
  check_op<bool, A, B>(name("==").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a == b; },
                       [](double a, double b) { return exact(a == b); });
  check_op<bool, A, B>(name("!=").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a != b; },
                       [](double a, double b) { return exact(a != b); });
  }
}

/// A mixed-dtype pair through + * (part 1) and / < maximum (part 2): promotion of the result
/// and the compute type.
template <class A, class B, class R, class F, int part = 0>
void run_binary_mixed(const char* tag) {
  Rng rng = named_rng(tag, 5 + 10 * part);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  const Domain da = binary_domain<A>(), db = binary_domain<B>();
  if constexpr (part != 2) {
  check_op<R, A, B>(name("+").c_str(), rng, {da, db}, 1, [](const auto& a, const auto& b) { return a + b; },
                    [](double a, double b) { return rel(a + b); });
  check_op<R, A, B>(name("*").c_str(), rng, {da, db}, 1, [](const auto& a, const auto& b) { return b * a; },
                    [](double a, double b) { return rel(b * a); });
  }
  if constexpr (part != 1) {
  check_op<F, A, B>(name("/").c_str(), rng, {da, binary_domain<B>(true)}, 1, [](const auto& a, const auto& b) { return a / b; },
                    [](double a, double b) { return rel(a / b); });
  check_op<bool, A, B>(name("<").c_str(), rng, {da, db}, 0, [](const auto& a, const auto& b) { return a < b; },
                       [](double a, double b) { return exact(a < b); });
  check_op<R, A, B>(name("maximum").c_str(), rng, {da, db}, 0,
                    [](const auto& a, const auto& b) { return weft::maximum(a, b); },
                    [](double a, double b) { return exact(nan_max(a, b)); });
  }
}

}  // namespace weft_test
