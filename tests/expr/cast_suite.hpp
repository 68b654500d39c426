// SPDX-License-Identifier: MIT
/// @file cast<U>(x) for every pair of dtypes, instantiated per source dtype by cast_test.cpp.
/// Casts are exact conversions, so the reference rounds independently and the result must match
/// bit for bit: round to nearest even (16-bit floats from double or int64 go through float, as
/// c10::Half does), float to integer truncates toward zero, anything to bool tests != 0 (NaN is
/// true), integers to 16-bit floats overflow to inf from 65520 up.
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

/// The independent model of cast<To>(x) for x of dtype From.
template <class From, class To>
double cast_ref(double x) {
  if constexpr (is_float16_v<To> && (std::is_same_v<From, double> || std::is_same_v<From, std::int64_t>))
    return round_to<To>(round_float(x));
  else
    return round_to<To>(x);
}

/// Values that exercise the conversion: subnormals, overflow and NaN for floating targets; the
/// target's range with fractions of both signs for integer targets; many zeros for bool.
template <class From, class To>
Domain cast_domain() {
  if constexpr (std::is_same_v<From, bool>) {
    return Domain{};
  } else if constexpr (std::is_integral_v<From>) {
    if constexpr (std::is_same_v<To, bool>) return Domain{-3, 3, false, true, 0.3};
    if constexpr (std::is_same_v<From, std::int64_t> && !std::is_same_v<To, std::int32_t>)
      return Domain{-0x1p40, 0x1p40};  // rounds in float and 16-bit targets
    if constexpr (std::is_same_v<From, std::int64_t>) return Domain{-0x1p31, 0x1p31 - 1};
    return Domain{-70000, 70000};  // beyond float16's 65504
  } else {
    constexpr bool to_int = std::is_integral_v<To>;
    constexpr double from_max = is_float16_v<From> ? (std::is_same_v<From, half> ? 6e4 : 1e30) : 1e38;
    Domain d{to_int ? 0.01 : 1e-42, to_int ? std::min(from_max, 1e6) : from_max, true, true, 0.05};
    if constexpr (std::is_same_v<To, bool>) d.zero_chance = 0.3;
    if constexpr (is_float16_v<To>) d = Domain{1e-9, 8e4, true, true, 0.05};  // half: subnormals and overflow
    if constexpr (std::is_same_v<To, bfloat16>) d = Domain{1e-41, 1e38, true, true, 0.05};
    if constexpr (!to_int) d.nan_chance = 0.03;
    if constexpr (std::is_same_v<To, bool>) d.nan_chance = 0.03;
    return d;
  }
}

template <class From, class To>
void check_cast(Rng& rng) {
  std::string name = std::string("cast<") + type_name<To>() + ">(" + type_name<From>() + ")";
  check_op<To, From>(name.c_str(), rng, {cast_domain<From, To>()}, 0, [](const auto& x) { return weft::cast<To>(x); },
                     [](double x) { return stored(cast_ref<From, To>(x)); });
}

/// Casts from From to the floating dtypes (floating = true) or to int32, int64 and bool.
template <class From, bool floating>
void run_casts_from() {
  Rng rng = named_rng(type_name<From>(), floating ? 9 : 10);
  if constexpr (floating) {
    check_cast<From, float>(rng);
    check_cast<From, double>(rng);
    check_cast<From, half>(rng);
    check_cast<From, bfloat16>(rng);
  } else {
    check_cast<From, std::int32_t>(rng);
    check_cast<From, std::int64_t>(rng);
    check_cast<From, bool>(rng);
  }
}

}  // namespace weft_test
