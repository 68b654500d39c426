// SPDX-License-Identifier: MIT
/// @file The bool-valued ops besides comparisons: logical_and / or / xor / not (and && || ! on
/// bool operands), isnan / isinf / isfinite, isclose; against double references on every dtype.
/// A value is true when it is nonzero (NaN is true, -0 false), as in PyTorch.
#include <weft/ops/reduce.hpp>

#include "binary_suite.hpp"

using namespace weft_test;

namespace {

bool truth(double x) { return x != 0; }  // NaN != 0 holds

template <class A, class B>
concept CanAnd = requires(A a, B b) { a && b; };
template <class A>
concept CanNot = requires(A a) { !a; };

/// Inputs with many zeros (and -0, NaN for floating types), so every truth combination occurs.
template <class T>
Domain logical_domain() {
  if constexpr (std::is_same_v<T, bool>) return Domain{};
  else if constexpr (std::is_integral_v<T>) return Domain{-3, 3, false, true, 0.4};
  else return Domain{-2, 2, false, true, 0.4, 0, 0.1, 0.5};
}

template <class A, class B>
void run_logical(const char* tag) {
  Rng rng = named_rng(tag, 41);
  auto name = [&](const char* op) { return std::string(op) + "(" + tag + ")"; };
  const Domain da = logical_domain<A>(), db = logical_domain<B>();
  check_op<bool, A, B>(name("logical_and").c_str(), rng, {da, db}, 0,
                       [](const auto& a, const auto& b) { return weft::logical_and(a, b); },
                       [](double a, double b) { return exact(truth(a) && truth(b)); });
  check_op<bool, A, B>(name("logical_or").c_str(), rng, {da, db}, 0,
                       [](const auto& a, const auto& b) { return weft::logical_or(a, b); },
                       [](double a, double b) { return exact(truth(a) || truth(b)); });
  check_op<bool, A, B>(name("logical_xor").c_str(), rng, {da, db}, 0,
                       [](const auto& a, const auto& b) { return weft::logical_xor(a, b); },
                       [](double a, double b) { return exact(truth(a) != truth(b)); });
  check_op<bool, A>(name("logical_not").c_str(), rng, {da}, 0, [](const auto& a) { return weft::logical_not(a); },
                    [](double a) { return exact(!truth(a)); });
}

/// isnan / isinf / isfinite: floating inputs with NaN and both infinities (a grid value past the
/// dtype's range: the domain's top end overflows to inf when stored); integers are always finite.
template <class T>
void run_predicates() {
  Rng rng = named_rng(type_name<T>(), 42);
  auto name = [&](const char* op) { return std::string(op) + "(" + type_name<T>() + ")"; };
  Domain d;
  if constexpr (std::is_integral_v<T>) d = Domain{-1000, 1000, false, true, 0.1};
  else d = Domain{1, 1e300, true, true, 0.1, 0, 0.1};  // float16/32, bfloat16: the upper part overflows to inf
  check_op<bool, T>(name("isnan").c_str(), rng, {d}, 0, [](const auto& x) { return weft::isnan(x); },
                    [](double x) { return exact(std::isnan(x)); });
  check_op<bool, T>(name("isinf").c_str(), rng, {d}, 0, [](const auto& x) { return weft::isinf(x); },
                    [](double x) { return exact(std::isinf(x)); });
  check_op<bool, T>(name("isfinite").c_str(), rng, {d}, 0, [](const auto& x) { return weft::isfinite(x); },
                    [](double x) { return exact(std::isfinite(x)); });
  if constexpr (!std::is_integral_v<T>) {
    // Both infinities for every floating dtype (float64's range holds the random ones), in packets and a tail.
    std::vector<T> v;
    for (int r = 0; r < 9; ++r)
      for (double x : {double(INFINITY), -double(INFINITY), std::nan(""), 1.0, -0.0, 65504.0, -3.0}) v.push_back(T(x));
    const Tensor<T> t = weft::from_vector<T>(v, Shape{std::int64_t(v.size())});
    const std::vector<double> vals = values_of(t), n = values_of(weft::eval(weft::isnan(t))),
                              i = values_of(weft::eval(weft::isinf(t))), f = values_of(weft::eval(weft::isfinite(t)));
    for (std::size_t k = 0; k < v.size(); ++k) {
      CHECK(n[k] == double(std::isnan(vals[k])));
      CHECK(i[k] == double(std::isinf(vals[k])));
      CHECK(f[k] == double(std::isfinite(vals[k])));
    }
  }
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE("logical ops: every truth combination, in the promoted type") {
  run_logical<bool, bool>("bool, bool");
  run_logical<std::int32_t, std::int32_t>("int32, int32");
#if !WEFT_TESTS_ISA_SCOPE
  run_logical<float, float>("float32, float32");
  run_logical<double, std::int64_t>("float64, int64");
  run_logical<half, bool>("float16, bool");
  run_logical<bfloat16, float>("bfloat16, float32");
#endif
}

TEST_CASE_TEMPLATE("isnan, isinf, isfinite", T, float, std::int32_t
#if !WEFT_TESTS_ISA_SCOPE
                   , double, half, bfloat16, std::int64_t
#endif
) {
  run_predicates<T>();
}

#if !WEFT_TESTS_ISA_SCOPE
TEST_CASE("&&, || and ! on bool operands fuse into one kernel") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> x = make_view<float>(rng, Shape{67, 33}, Domain{-2, 2, false, true, 0.2, 0, 0.1}, Layout::contiguous);
  const std::vector<double> v = values_of(x);
  const Tensor<bool> mask = weft::isfinite(x) && (x > 0);
  const Tensor<bool> either = (x < -1) || !weft::isfinite(x);
  const Tensor<bool> with_number = (x > 0) && true;
  const std::vector<double> m = values_of(mask), e = values_of(either), w = values_of(with_number);
  for (std::size_t i = 0; i < v.size(); ++i) {
    CHECK(m[i] == double(std::isfinite(v[i]) && v[i] > 0));
    CHECK(e[i] == double(v[i] < -1 || !std::isfinite(v[i])));
    CHECK(w[i] == double(v[i] > 0));
  }
  // && and || take bool operands only; logical_and and logical_or take any dtype.
  using F = TensorView<float>;
  using B = TensorView<bool>;
  static_assert(CanAnd<B, B> && CanAnd<B, bool>);
  static_assert(!CanAnd<F, B> && !CanNot<F>);
}

TEST_CASE("isclose: |a - b| <= atol + rtol |b|, equal values (inf) close, NaN only with equal_nan") {
  WEFT_TEST_RNG(rng);
  // b near a: some differences inside the tolerance, some outside; NaN and inf included.
  const Shape s{1031};
  const TensorView<double> a = make_view<double>(rng, s, Domain{-10, 10, false, true, 0.05, 0, 0.05}, Layout::contiguous);
  std::vector<double> va = values_of(a);
  std::vector<double> vb(va.size());
  for (std::size_t i = 0; i < va.size(); ++i) {
    const double scale = std::pow(10.0, -double(rng.integer(2, 9)));  // 1e-2 .. 1e-9 apart
    vb[i] = i % 17 == 0 ? va[i] : va[i] + scale * (rng.chance(0.5) ? 1 : -1);
    if (i % 29 == 0) vb[i] = va[i] = INFINITY;
    if (i % 31 == 0) vb[i] = std::nan("");
  }
  const Tensor<double> ta = weft::from_vector<double>(va, s), tb = weft::from_vector<double>(vb, s);
  for (const bool equal_nan : {false, true}) {
    const double rtol = 1e-5, atol = 1e-8;
    const std::vector<double> got = values_of(weft::eval(weft::isclose(ta, tb, rtol, atol, equal_nan)));
    bool all = true;
    for (std::size_t i = 0; i < va.size(); ++i) {
      const bool want = va[i] == vb[i] || std::fabs(va[i] - vb[i]) <= atol + rtol * std::fabs(vb[i]) ||
                        (equal_nan && std::isnan(va[i]) && std::isnan(vb[i]));
      CHECK(got[i] == double(want));
      all = all && want;
    }
    CHECK(weft::allclose(ta, tb, rtol, atol, equal_nan) == all);
  }
  // Integer operands compare as float; a number operand broadcasts.
  const Tensor<std::int32_t> i = weft::from_vector<std::int32_t>({7, 8, -7}, Shape{3});
  CHECK(values_of(weft::eval(weft::isclose(i, 7))) == std::vector<double>{1, 0, 0});
  CHECK(weft::allclose(weft::ones<float>(Shape{5, 3}), 1.0 + 1e-7));
  CHECK_THROWS_WITH_AS(weft::isclose(ta, tb, -1.0), doctest::Contains("rtol and atol must be >= 0"), weft::Error);
}
#endif
}
