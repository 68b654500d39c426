// SPDX-License-Identifier: MIT
/// @file floor, ceil, trunc, round, fmod and remainder on every dtype they take, against double
/// references; see pointwise_check.hpp for the harness.
///
/// Rounding to an integer is exact in every dtype (the result is representable), so are fmod
/// (C's fmod: a - n b is exact) and remainder when fmod's sign already matches the divisor's;
/// when it does not, remainder adds b once: one rounding (1 ulp).
/// The ISA-level builds run float32 and int32: the packet code of the rounding ops differs per
/// ISA only in its lane width, and fmod / remainder run lane by lane.
#include "binary_suite.hpp"

using namespace weft_test;

namespace {

/// Values on a grid of 0.5 (ties for round: ±0.5, ±1.5, ...) with NaNs and zeros, and values up
/// to 1e10 in magnitude, past float's 2^23 where every float is an integer and the packet
/// rounding passes the value through.
template <class T>
std::array<Domain, 2> rounding_domains() {
  if constexpr (std::is_integral_v<T>) {
    return {Domain{-1000, 1000, false, true, 0.05}, Domain{-1000000, 1000000, false, true, 0.05}};
  } else {
    const double top = std::is_same_v<T, half> ? 6e4 : std::is_same_v<T, bfloat16> ? 1e30 : 1e10;
    return {Domain{-20, 20, false, true, 0.05, 0, 0.02, 0.5}, Domain{1e-3, top, true, true, 0.02, 0, 0.02}};
  }
}

double round_half_even(double x) { return std::nearbyint(x); }  // the default mode: to nearest, ties to even

template <class T>
void run_rounding() {
  Rng rng = named_rng(type_name<T>(), 31);
  for (const Domain& d : rounding_domains<T>()) {
    auto name = [&](const char* op) { return std::string(op) + "(" + type_name<T>() + ")"; };
    check_op<T, T>(name("floor").c_str(), rng, {d}, 0, [](const auto& x) { return weft::floor(x); },
                   [](double x) { return exact(std::floor(x)); });
    check_op<T, T>(name("ceil").c_str(), rng, {d}, 0, [](const auto& x) { return weft::ceil(x); },
                   [](double x) { return exact(std::ceil(x)); });
    check_op<T, T>(name("trunc").c_str(), rng, {d}, 0, [](const auto& x) { return weft::trunc(x); },
                   [](double x) { return exact(std::trunc(x)); });
    check_op<T, T>(name("round").c_str(), rng, {d}, 0, [](const auto& x) { return weft::round(x); },
                   [](double x) { return exact(round_half_even(x)); });
  }
}

/// fmod and remainder of a by b (the same dtype T). Integer divisors include 0 (the result is 0:
/// weft's documented rule where PyTorch raises) and -1.
template <class T>
void run_modulo() {
  Rng rng = named_rng(type_name<T>(), 32);
  auto name = [&](const char* op) { return std::string(op) + "(" + type_name<T>() + ")"; };
  Domain a, b;
  if constexpr (std::is_integral_v<T>) {
    a = Domain{-1000, 1000, false, true, 0.05};
    b = Domain{-20, 20, false, true, 0.1};
  } else {
    a = Domain{-100, 100, false, true, 0.05, 0, 0.02, 0.25};
    b = Domain{-8, 8, false, true, 0.05, 0, 0.02, 0.25};
  }
  auto ref_fmod = [](double x, double y) {
    if constexpr (std::is_integral_v<T>) return exact(y == 0 || y == -1 ? 0.0 : std::fmod(x, y));
    else return exact(std::fmod(x, y));
  };
  check_op<T, T, T>(name("fmod").c_str(), rng, {a, b}, 0, [](const auto& x, const auto& y) { return weft::fmod(x, y); },
                    ref_fmod);
  check_op<T, T, T>(name("remainder").c_str(), rng, {a, b}, 1,
                    [](const auto& x, const auto& y) { return weft::remainder(x, y); },
                    [&](double x, double y) {
                      const double r = ref_fmod(x, y).v;
                      return rel(r != 0 && ((r < 0) != (y < 0)) ? r + y : r);
                    });
  // A number divisor (an integer tensor by a float number gives float32, as in PyTorch).
  using R = std::conditional_t<std::is_integral_v<T>, float, T>;
  check_op<R, T>(name("fmod by -3.5").c_str(), rng, {a}, 0, [](const auto& x) { return weft::fmod(x, -3.5); },
                 [](double x) { return exact(std::fmod(x, -3.5)); });
  check_op<R, T>(name("remainder by 2.5").c_str(), rng, {a}, 1, [](const auto& x) { return weft::remainder(x, 2.5); },
                 [](double x) {
                   const double r = std::fmod(x, 2.5);
                   return rel(r != 0 && r < 0 ? r + 2.5 : r);
                 });
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE_TEMPLATE("floor, ceil, trunc, round: exact, ties to even, large values pass through", T, float,
                   std::int32_t
#if !WEFT_TESTS_ISA_SCOPE
                   , double, half, bfloat16, std::int64_t
#endif
) {
  run_rounding<T>();
}

TEST_CASE_TEMPLATE("fmod and remainder: the signs of the dividend and of the divisor", T, float, std::int32_t
#if !WEFT_TESTS_ISA_SCOPE
                   , double, half, bfloat16, std::int64_t
#endif
) {
  run_modulo<T>();
}

TEST_CASE("rounding keeps the sign of zero and passes inf and NaN through") {
  // Enough elements for full packets at every width, then a scalar tail.
  const std::vector<float> specials = {-0.0f, 0.0f, -0.4f, 0.4f, -0.5f, 0.5f, 2.5f, -2.5f,
                                       INFINITY, -INFINITY, NAN, 8388609.0f, -8388609.0f, 1e30f, 3.5f, -3.5f};
  std::vector<float> v;
  for (int r = 0; r < 5; ++r) v.insert(v.end(), specials.begin(), specials.end());
  const Tensor<float> x = weft::from_vector<float>(v, Shape{std::int64_t(v.size())});
  auto same = [](float got, double want) {
    return (std::isnan(got) && std::isnan(want)) || (got == want && std::signbit(got) == std::signbit(want));
  };
  const std::vector<double> fl = values_of(weft::eval(weft::floor(x))), ce = values_of(weft::eval(weft::ceil(x))),
                            tr = values_of(weft::eval(weft::trunc(x))), ro = values_of(weft::eval(weft::round(x)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("x = ", v[i]);
    CHECK(same(float(fl[i]), std::floor(double(v[i]))));
    CHECK(same(float(ce[i]), std::ceil(double(v[i]))));
    CHECK(same(float(tr[i]), std::trunc(double(v[i]))));
    CHECK(same(float(ro[i]), std::nearbyint(double(v[i]))));
  }
}

TEST_CASE("fmod and remainder: integer extremes do not trap") {
  const std::int32_t lo = std::numeric_limits<std::int32_t>::min();
  const Tensor<std::int32_t> a = weft::full<std::int32_t>(Shape{37}, lo);
  CHECK(values_of(weft::eval(weft::fmod(a, -1))) == std::vector<double>(37, 0.0));
  CHECK(values_of(weft::eval(weft::remainder(a, 0))) == std::vector<double>(37, 0.0));
  CHECK(values_of(weft::eval(weft::remainder(a, 3))) == std::vector<double>(37, double(((std::int64_t(lo) % 3) + 3) % 3)));
}
}
