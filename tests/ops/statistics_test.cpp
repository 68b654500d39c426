// SPDX-License-Identifier: MIT
/// @file cpu: logsumexp, var, std and var_mean against compensated double references on every floating dtype: random
/// shapes, layouts, dims, keepdim and corrections; large values (no overflow), infinities and NaN, n <= correction,
/// mean-dominated inputs, expressions, empty ranges, every error.
#include <weft/ops/statistics.hpp>

#include "dense_reference.hpp"
#include "reduce_sweep.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::logsumexp(std::declval<Tensor<half>>(), 0)), Tensor<half>>);
static_assert(std::is_same_v<decltype(weft::var(std::declval<Tensor<double>>())), Tensor<double>>);
static_assert(std::is_same_v<decltype(weft::std(std::declval<Tensor<bfloat16>>(), {0, 1}))::value_type, bfloat16>);

enum class Stat { logsumexp, var, std };

/// Checks `out` = stat over `mask` of an input with these values and shape.
template <class X>
void check_stat(const X& result, Stat stat, const std::vector<double>& values, const Shape& full,
                const std::vector<bool>& mask, bool keepdim, double correction) {
  const auto out = weft::eval(result);  // var(x, dim) is a lazy node
  using R = typename decltype(out)::value_type;
  INFO("stat ", int(stat), ", correction ", correction, ", input shape ", shape_str(full), ", keepdim ", keepdim);
  REQUIRE(out.shape() == reduced_shape(full, mask, keepdim));
  const ReductionReference ref(values, full, mask);
  constexpr double eps = accumulator_eps<R>();
  std::vector<Expect> want;
  for (const std::vector<double>& g : ref.groups)
    want.push_back(stat == Stat::logsumexp ? expect_logsumexp<R>(g, eps)
                                           : expect_variance<R>(g, correction, stat == Stat::std, eps));
  WEFT_CHECK_REPORT(check_output(out, want));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("logsumexp, var, std: random shapes, layouts, dims, keepdim and corrections", T, float, double,
                   half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    Domain dom;
    dom.nan_chance = rng.chance(0.1) ? 0.01 : 0.0;
    if (rng.chance(0.3)) dom.lo = -30, dom.hi = 30;  // exp of these spans 26 decades
    const TensorView<T> x = make_view<T>(rng, full, dom, layout);
    const RandomReduction c(rng, x);
    const double correction = rng.pick(std::vector<double>{0, 1, 1, 2.5});
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    check_stat(weft::logsumexp(x, c.dims, c.keepdim), Stat::logsumexp, c.values, full, c.mask, c.keepdim, 0);
    check_stat(weft::var(x, c.dims, correction, c.keepdim), Stat::var, c.values, full, c.mask, c.keepdim, correction);
    check_stat(weft::std(x, c.dims, correction, c.keepdim), Stat::std, c.values, full, c.mask, c.keepdim, correction);
  }
}

TEST_CASE("logsumexp: large values do not overflow; infinities, NaN and empty ranges follow PyTorch") {
  WEFT_TEST_RNG(rng);
  // exp(1000) overflows even double: the max shift keeps every term <= 1.
  Domain big;
  big.lo = 990, big.hi = 1010;
  for (const Shape& s : {Shape{3, 5000}, Shape{70, 300}}) {
    const TensorView<float> x = make_view<float>(rng, s, big, Layout::permuted);
    const std::vector<double> v = values_of(x);
    for (int d = 0; d < 2; ++d)
      check_stat(weft::logsumexp(x, d), Stat::logsumexp, v, s, reduce_mask(2, {d}), false, 0);
    const Tensor<float> neg = weft::eval(-x);
    check_stat(weft::logsumexp(neg, {0, 1}, true), Stat::logsumexp, values_of(neg), s, reduce_mask(2, {}), true, 0);
  }
  const Tensor<half> h = weft::full<half>(Shape{4096}, half(60000.0f));
  CHECK(double(weft::logsumexp(h, 0).item()) == round_half(60000.0 + std::log(4096.0)));
  const float inf = INFINITY;
  const Tensor<float> rows = weft::from_vector<float>({-inf, -inf, -inf, inf, 1, 2, NAN, 1, 2, inf, -inf, 0}, Shape{4, 3});
  const std::vector<double> got = values_of(weft::logsumexp(rows, 1));
  CHECK(got[0] == -inf);  // all -inf: -inf, not NaN from -inf - -inf
  CHECK(got[1] == inf);
  CHECK(std::isnan(got[2]));
  CHECK(got[3] == inf);
  const Tensor<double> e = weft::zeros<double>(Shape{3, 0});
  CHECK(values_of(weft::logsumexp(e, 1)) == std::vector<double>(3, -inf));
  CHECK(weft::logsumexp(e, 0, true).shape() == Shape{1, 0});
}

TEST_CASE("var / std: corrections, n <= correction, mean-dominated inputs and var_mean") {
  const Tensor<float> x = weft::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
  CHECK(values_of(weft::var(x, 1)) == std::vector<double>{0.5, 0.5});
  CHECK(values_of(weft::var(x, 0, 0.0)) == std::vector<double>{1, 1});
  CHECK(weft::var(x).item() == float(5.0 / 3.0));
  CHECK(weft::eval(weft::std(x, {0, 1}, 0.0)).item() == float(std::sqrt(1.25)));
  // n = 1: correction 1 divides 0 by 0 (NaN), correction 0 gives 0; n < correction with spread: inf.
  const Tensor<double> one = weft::full<double>(Shape{3, 1}, 7.0);
  for (double v : values_of(weft::var(one, 1))) CHECK(std::isnan(v));
  CHECK(values_of(weft::var(one, 1, 0.0)) == std::vector<double>{0, 0, 0});
  CHECK(values_of(weft::std(x, 1, 2.0)) == std::vector<double>{INFINITY, INFINITY});
  CHECK(std::isnan(weft::var(weft::zeros<float>(Shape{0})).item()));
  // 10^4 + noise in float: E[x^2] - mean^2 would lose every digit (x^2 ~ 1e8, eps 1e-7 * 1e8 = 10),
  // the two passes keep them.
  WEFT_TEST_RNG(rng);
  Domain offset;
  offset.lo = 9999, offset.hi = 10001;
  const TensorView<float> y = make_view<float>(rng, Shape{8, 4000}, offset, Layout::strided);
  const std::vector<double> v = values_of(y);
  check_stat(weft::var(y, 1), Stat::var, v, Shape{8, 4000}, reduce_mask(2, {1}), false, 1);
  check_stat(weft::std(y, {0, 1}, 0.0, true), Stat::std, v, Shape{8, 4000}, reduce_mask(2, {}), true, 0);
  for (double s : values_of(weft::std(y, 1))) CHECK(std::fabs(s - std::sqrt(1.0 / 3.0)) < 0.05);  // uniform on 2
  // var_mean: the variance and the mean var computed, in the output's shape.
  const auto [vr, mn] = weft::var_mean(y, 1, 0.0, true);
  CHECK(vr.shape() == Shape{8, 1});
  CHECK(mn.shape() == Shape{8, 1});
  check_stat(vr, Stat::var, v, Shape{8, 4000}, reduce_mask(2, {1}), true, 0);
  check_reduction(mn, Op::mean, v, Shape{8, 4000}, reduce_mask(2, {1}), true, 0, eps_of<float>());
}

TEST_CASE("logsumexp / var / std: expressions read in place; whole-tensor overloads") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{11, 23}, Domain{});
  const TensorView<float> b = make_view<float>(rng, Shape{23}, Domain{}, Layout::strided);
  const std::vector<double> v = values_of(weft::eval(a * b + 1.0));
  const Shape s{11, 23};
  // The expression's own rounding (a * b + 1 once in float) is within the tolerances' slack.
  check_stat(weft::logsumexp(a * b + 1.0, 1), Stat::logsumexp, v, s, reduce_mask(2, {1}), false, 0);
  check_stat(weft::var(a * b + 1.0, {0}, 1.0, true), Stat::var, v, s, reduce_mask(2, {0}), true, 1);
  check_stat(weft::std(a * b + 1.0), Stat::std, v, s, reduce_mask(2, {}), false, 1);
  check_stat(weft::var(a * b + 1.0), Stat::var, v, s, reduce_mask(2, {}), false, 1);
}

TEST_CASE("logsumexp / var / std: errors name the op, the shape and the fix, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_before_allocation([&] { weft::logsumexp(x, 2); });
  CHECK(has(m, "weft::logsumexp"));
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));
  m = error_before_allocation([&] { weft::var(x, {1, -1}); });
  CHECK(has(m, "weft::var"));
  CHECK(has(m, "more than once"));
  CHECK(has(error_before_allocation([&] { weft::std(x, -3); }), "weft::std"));
  CHECK(has(error_before_allocation([&] { weft::var_mean(x, 5); }), "weft::var_mean"));

  const Tensor<std::int32_t> ints = weft::zeros<std::int32_t>(Shape{5});
  // (entry.first/second, not a structured binding: clang 16 cannot capture one under OpenMP)
  for (const auto& entry : {std::pair<const char*, void (*)(const Tensor<std::int32_t>&)>{
                             "weft::logsumexp", [](const Tensor<std::int32_t>& t) { weft::logsumexp(t, 0); }},
                         {"weft::var", [](const Tensor<std::int32_t>& t) { weft::var(t); }},
                         {"weft::std", [](const Tensor<std::int32_t>& t) { weft::std(t, 0); }}}) {
    m = error_before_allocation([&] { entry.second(ints); });
    CHECK(has(m, entry.first));
    CHECK(has(m, "floating-point"));
    CHECK(has(m, "int32"));
    CHECK(has(m, "[5]"));
    CHECK(has(m, "cast"));
  }
  CHECK(has(error_before_allocation([&] { weft::var(Tensor<float>()); }), "empty (default-constructed)"));
  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::logsumexp(gpu, 0); });
  CHECK(has(m, "weft::logsumexp"));
  CHECK(has(m, "nvcc"));
  CHECK(has(error_before_allocation([&] { weft::std(gpu); }), "nvcc"));
}

}  // TEST_SUITE
