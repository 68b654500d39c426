// SPDX-License-Identifier: MIT
/// @file clamp, where and lerp (tensor and number operands), instantiated per dtype by ternary_*.cpp.
///
/// clamp and where are exact. lerp(a, b, w) = a + w (b - a) rounds three times in the compute
/// type: |err| <= u (|b - a| |w| + |w (b - a)| + |v|), u = eps / 2; the check uses
/// 1 eps * (|v| + 2 |w (b - a)|), a factor 2 above that bound.
#pragma once

#include "binary_suite.hpp"

namespace weft_test {

/// clamp(x, lo, hi) with tensor bounds (lo > hi happens: the result is hi, as in PyTorch) and
/// with number bounds. NaN anywhere gives NaN.
template <class T>
void run_clamp(const char* tag) {
  Rng rng = named_rng(tag, 6);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  Domain x = binary_domain<T>();
  Domain lo = std::is_integral_v<T> ? Domain{-10, 2} : Domain{-4, 1, false, true, 0, 0, 0.02, 0.25};
  Domain hi = std::is_integral_v<T> ? Domain{-2, 10} : Domain{-1, 4, false, true, 0, 0, 0.02, 0.25};
  check_op<T, T, T, T>(name("clamp(x, lo, hi)").c_str(), rng, {x, lo, hi}, 0,
                       [](const auto& a, const auto& l, const auto& h) { return weft::clamp(a, l, h); },
                       [](double a, double l, double h) { return exact(nan_min(nan_max(a, l), h)); });
  check_op<T, T>(name("clamp(x, -3, 5)").c_str(), rng, {x}, 0, [](const auto& a) { return weft::clamp(a, -3, 5); },
                 [](double a) { return exact(nan_min(nan_max(a, -3), 5)); });
}

/// where(cond, a, b): a bool tensor, a comparison, and a number as the other branch.
template <class T>
void run_where(const char* tag) {
  using R = std::conditional_t<is_float_type_v<T>, T, float>;  // T with a float number: float32 for int/bool
  Rng rng = named_rng(tag, 7);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  Domain d = binary_domain<T>();
  check_op<T, bool, T, T>(name("where(c, a, b)").c_str(), rng, {Domain{}, d, d}, 0,
                          [](const auto& c, const auto& a, const auto& b) { return weft::where(c, a, b); },
                          [](double c, double a, double b) { return exact(c != 0 ? a : b); });
  check_op<T, T, T>(name("where(a > b, a, b)").c_str(), rng, {d, d}, 0,
                    [](const auto& a, const auto& b) { return weft::where(a > b, a, b); },
                    [](double a, double b) { return exact(a > b ? a : b); });
  check_op<R, bool, T>(name("where(c, a, 0.5)").c_str(), rng, {Domain{}, d}, 0,
                       [](const auto& c, const auto& a) { return weft::where(c, a, 0.5); },
                       [](double c, double a) { return exact(c != 0 ? a : 0.5); });
}

/// lerp(a, b, w) with a tensor weight and with a number weight.
template <class T>
void run_lerp(const char* tag) {
  Rng rng = named_rng(tag, 8);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  Domain d{-8, 8, false, true, 0, 0, 0.02};
  Domain w{-0.5, 1.5, false, true, 0.05, 0, 0.02};
  auto ref = [](double a, double b, double wt) {
    double v = a + wt * (b - a);
    return RefVal{v, std::fabs(v) + 2 * std::fabs(wt * (b - a))};
  };
  check_op<T, T, T, T>(name("lerp(a, b, w)").c_str(), rng, {d, d, w}, 1,
                       [](const auto& a, const auto& b, const auto& wt) { return weft::lerp(a, b, wt); }, ref);
  check_op<T, T, T>(name("lerp(a, b, 0.25)").c_str(), rng, {d, d}, 1,
                    [](const auto& a, const auto& b) { return weft::lerp(a, b, 0.25); },
                    [&](double a, double b) { return ref(a, b, 0.25); });
}

}  // namespace weft_test
