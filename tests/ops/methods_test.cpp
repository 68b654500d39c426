// SPDX-License-Identifier: MIT
/// @file ops: the methods that mirror free functions (core/tensor_methods.hpp): x.f(args...) has the
/// type of f(x, args...) (a Tensor, or the same lazy node) and its values, element for element
/// (NaN where it gives NaN), on a tensor, a strided view, a const TensorBase& and an expression; the
/// free functions' own tests check their values against references.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include <weft/weft.hpp>

#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

/// The method's result has the free function's type and the same values.
template <class Method, class Free>
void check_same(const Method& method, const Free& free) {
  static_assert(std::is_same_v<Method, Free>, "a method returns exactly what its free function returns");
  const std::vector<double> got = values_of(method), want = values_of(free);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(((std::isnan(got[i]) && std::isnan(want[i])) || got[i] == want[i]));
  }
}

// x.name(args...) against weft::name(x, args...).
#define CHECK_METHOD(x, name, ...) check_same((x).name(__VA_ARGS__), weft::name((x)__VA_OPT__(, ) __VA_ARGS__))

/// Every method on one operand x of shape [4, 5] (y: another [4, 5] operand, w: a [5, 3] one).
template <class X, class Y, class W>
void check_methods(const X& x, const Y& y, const W& w) {
  CHECK_METHOD(x, exp);
  CHECK_METHOD(x, log);
  CHECK_METHOD(x, log1p);
  CHECK_METHOD(x, expm1);
  CHECK_METHOD(x, sqrt);
  CHECK_METHOD(x, rsqrt);
  CHECK_METHOD(x, abs);
  CHECK_METHOD(x, sin);
  CHECK_METHOD(x, cos);
  CHECK_METHOD(x, tanh);
  CHECK_METHOD(x, sigmoid);
  CHECK_METHOD(x, relu);
  CHECK_METHOD(x, gelu);
  CHECK_METHOD(x, silu);
  CHECK_METHOD(x, erf);
  CHECK_METHOD(x, square);
  CHECK_METHOD(x, reciprocal);
  CHECK_METHOD(x, sign);
  CHECK_METHOD(x, floor);
  CHECK_METHOD(x, ceil);
  CHECK_METHOD(x, trunc);
  CHECK_METHOD(x, round);
  CHECK_METHOD(x, isnan);
  CHECK_METHOD(x, isinf);
  CHECK_METHOD(x, isfinite);
  CHECK_METHOD(x, logical_not);

  CHECK_METHOD(x, pow, 3);
  CHECK_METHOD(x, pow, y);
  CHECK_METHOD(x, maximum, y);
  CHECK_METHOD(x, minimum, 0.5);
  CHECK_METHOD(x, fmod, y);
  CHECK_METHOD(x, remainder, 0.75);
  CHECK_METHOD(x, logical_and, y);
  CHECK_METHOD(x, logical_or, y);
  CHECK_METHOD(x, logical_xor, y);
  CHECK_METHOD(x, clamp, 0.25, y);
  CHECK_METHOD(x, matmul, w);

  CHECK_METHOD(x, sum);
  CHECK_METHOD(x, sum, 1);
  CHECK_METHOD(x, sum, {0, 1}, true);
  CHECK_METHOD(x, mean);
  CHECK_METHOD(x, mean, -1, true);
  CHECK_METHOD(x, prod);
  CHECK_METHOD(x, prod, 0);
  CHECK_METHOD(x, max);
  CHECK_METHOD(x, max, 1);
  CHECK_METHOD(x, min);
  CHECK_METHOD(x, min, std::vector<std::int64_t>{0}, true);
  CHECK_METHOD(x, amax);
  CHECK_METHOD(x, amax, 0);
  CHECK_METHOD(x, amin);
  CHECK_METHOD(x, amin, 1, true);
  CHECK_METHOD(x, all);
  CHECK_METHOD(x, all, 1);
  CHECK_METHOD(x, any);
  CHECK_METHOD(x, any, 0, true);
  CHECK_METHOD(x, norm);
  CHECK_METHOD(x, norm, 1);
  CHECK_METHOD(x, norm, 3, {1}, true);
  CHECK_METHOD(x, var);
  CHECK_METHOD(x, var, 1);
  CHECK_METHOD(x, var, 0, 0, true);
  CHECK_METHOD(x, std);
  CHECK_METHOD(x, std, {0, 1}, 2);
  CHECK_METHOD(x, logsumexp, 1);
  CHECK_METHOD(x, logsumexp, 0, true);
  CHECK_METHOD(x, argmax);
  CHECK_METHOD(x, argmax, 1);
  CHECK_METHOD(x, argmax, 0, true);
  CHECK_METHOD(x, argmin);
  CHECK_METHOD(x, argmin, -1, true);
  CHECK_METHOD(x, softmax, 1);
  CHECK_METHOD(x, log_softmax, 0);
  CHECK_METHOD(x, cumsum, 1);
}

}  // namespace

TEST_CASE("methods return what their free functions return: tensors, views, TensorBase, expressions") {
  WEFT_TEST_RNG(rng);
  Domain positive;  // log, sqrt and pow stay real on most elements; some zeros test the rest
  positive.lo = 0.125;
  positive.hi = 3;
  positive.zero_chance = 0.1;
  const Tensor<float> x = random_contiguous<float>(rng, Shape{4, 5}, positive);
  const Tensor<float> y = random_contiguous<float>(rng, Shape{4, 5}, Domain{});
  const Tensor<float> w = random_contiguous<float>(rng, Shape{5, 3}, Domain{});
  const TensorView<float> strided = make_view<float>(rng, Shape{4, 5}, positive, Layout::permuted_strided);
  SUBCASE("tensor") { check_methods(x, y, w); }
  SUBCASE("strided view") { check_methods(strided, y.view(), w.transpose(0, 1).contiguous().t()); }
  SUBCASE("const TensorBase&") { check_methods(static_cast<const weft::TensorBase<float>&>(x), y, w); }
  SUBCASE("read-only view") { check_methods(x.view(), y.view(), w.view()); }
  SUBCASE("expression") { check_methods(x * 2 - y, y + 0, w * 1); }
}

TEST_CASE("methods chain as their free functions nest, lazily") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{3, 4}, Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{4, 6}, Domain{});
  const Tensor<float> bias = random_contiguous<float>(rng, Shape{6}, Domain{});
  check_same((a.matmul(b) + bias).relu().sum(1), weft::sum(weft::relu(weft::matmul(a, b) + bias), 1));
  check_same(a.t().matmul(a).softmax(-1), weft::softmax(weft::matmul(a.t(), a), -1));
  const Tensor<std::int32_t> counts = weft::randint<std::int32_t>(-5, 5, {3, 4}, rng.bits());
  check_same(counts.sum(), weft::sum(counts));  // int32 sums to int64, as the function
  check_same(counts.abs().max(0), weft::max(weft::abs(counts), 0));
  check_same(weft::sum(a, 1, true).exp().mean(), weft::mean(weft::exp(weft::sum(a, 1, true))));  // on a Reduced node
  check_same(weft::matmul(a, b).max(1), weft::max(weft::matmul(a, b), 1));                      // on a Matmul node
}

TEST_CASE("a lazy softmax's matmul method finds nn's attention overload, as matmul(weights, v) does") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> q = random_contiguous<float>(rng, Shape{2, 5, 8}, Domain{});
  const Tensor<float> k = random_contiguous<float>(rng, Shape{2, 7, 8}, Domain{});
  const Tensor<float> v = random_contiguous<float>(rng, Shape{2, 7, 4}, Domain{});
  const auto weights = (q.matmul(k.transpose(1, 2)) * 0.25).softmax(-1);
  static_assert(weft::detail::is_instance_v<decltype(weights.matmul(v)), weft::nn::SoftmaxMatmul>);
  check_same(weights.matmul(v), weft::matmul(weights, v));
}

TEST_CASE("normal_ and uniform_ methods draw in place what the free functions draw") {
  WEFT_TEST_RNG(rng);
  const std::uint64_t seed = rng.bits();
  Tensor<float> a = weft::full<float>({3, 4}, std::nanf("")), b = weft::full<float>({3, 4}, std::nanf(""));
  static_assert(std::is_same_v<decltype(a.normal_()), decltype(weft::normal_(a))>);  // Tensor<float>&
  CHECK(&a.normal_(1, 2, seed) == &a);
  weft::normal_(b, 1, 2, seed);
  CHECK(values_of(a) == values_of(b));
  for (double v : values_of(a)) CHECK(std::isfinite(v));
  // The global generator: the same draw after the same seed.
  TensorView<float> columns = a.slice(1, 0, 4, 2), same = b.slice(1, 0, 4, 2);
  static_assert(std::is_same_v<decltype(columns.uniform_()), decltype(weft::uniform_(columns))>);
  weft::manual_seed(seed);
  CHECK(&columns.uniform_(-1, 1) == &columns);
  weft::manual_seed(seed);
  weft::uniform_(same, -1, 1);
  CHECK(values_of(a) == values_of(b));
  for (double v : values_of(columns)) CHECK((v >= -1 && v <= 1));
}

TEST_CASE("a method's errors are its free function's") {
  const Tensor<float> x = weft::zeros<float>({2, 3});
  CHECK(error_of([&] { (void)x.sum(2); }) == error_of([&] { (void)weft::sum(x, 2); }));
  CHECK(has(error_of([&] { (void)weft::eval(x.matmul(weft::zeros<float>({2, 3}))); }), "weft::matmul: shapes [2, 3] and [2, 3]"));
  CHECK(has(error_of([&] { (void)x.softmax(5); }), "softmax"));
}
