// SPDX-License-Identifier: MIT
/// @file cpu: cumsum against compensated double prefix sums on every dtype (integers exact in int64; floats within
/// the bound of a sequential sum in the accumulator plus one rounding): random shapes, layouts and dims, long rows,
/// expressions, empty and rank-0 tensors, every error.
#include <weft/ops/cumsum.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"
#include "reduce_sweep.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::cumsum(std::declval<Tensor<bool>>(), 0)), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::cumsum(std::declval<Tensor<std::int32_t>>(), 0)), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::cumsum(std::declval<Tensor<bfloat16>>(), 0)), Tensor<bfloat16>>);

/// Checks y = cumsum along dim d of an input with these row-major values: output i of a row is
/// the sequential sum of i + 1 terms in the accumulator (eps_acc), |error| <= i eps_acc sum|x_j|
/// (first order, with a margin of 2), then rounded once to R.
template <class R>
void check_cumsum(const Tensor<R>& y, const std::vector<double>& values, const Shape& full, int d, double eps_acc) {
  INFO("cumsum over dim ", d, " of ", shape_str(full));
  REQUIRE(y.shape() == full);
  const AlongDim a(full, d);
  std::vector<Expect> want(values.size());
  for (std::int64_t o = 0; o < a.outer; ++o)
    for (std::int64_t c = 0; c < a.inner; ++c) {
      CompensatedSum s, s_abs;
      for (std::int64_t i = 0; i < a.n; ++i) {
        s.add(values[a.at(o, i, c)]);
        s_abs.add(std::fabs(values[a.at(o, i, c)]));
        Expect& e = want[a.at(o, i, c)];
        e.want = s.value();
        e.tol = 2 * double(i + 1) * eps_acc * s_abs.value() + ulp_of<R>(e.want);
      }
    }
  WEFT_CHECK_REPORT(check_output(y, want));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("cumsum: random shapes, layouts and dims on every dtype", T, float, double, half, bfloat16,
                   std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    Domain dom;
    if constexpr (std::is_integral_v<T>) dom.lo = -1000, dom.hi = 1000;
    const TensorView<T> x = make_view<T>(rng, full, dom, layout);
    const auto random = random_dim(rng, full.rank());
    const std::int64_t dim = random.dim;
    const int d = random.wrapped;
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    check_cumsum(weft::cumsum(x, dim), values_of(x), full, d, accumulator_eps<T>());
  }
}

TEST_CASE("cumsum: long rows, long columns, and 16-bit running sums kept in float") {
  WEFT_TEST_RNG(rng);
  for (const Shape& s : {Shape{2, 30000}, Shape{5000, 70}, Shape{3, 1000, 5}}) {
    const TensorView<float> x = make_view<float>(rng, s, Domain{}, Layout::permuted_strided);
    for (int d = 0; d < s.rank(); ++d) check_cumsum(weft::cumsum(x, d), values_of(x), s, d, eps_of<float>());
  }
  // 4096 ones in half: a half running sum would stop at 2048; in float every output is exact.
  const std::vector<double> ramp = values_of(weft::cumsum(weft::ones<half>(Shape{4096}), 0));
  for (std::size_t i = 0; i < ramp.size(); ++i) CHECK(ramp[i] == round_half(double(i + 1)));
  // int32 running sums beyond the int32 range do not wrap: they are int64.
  const Tensor<std::int32_t> big = weft::full<std::int32_t>(Shape{3}, 2000000000);
  CHECK(values_of(weft::cumsum(big, 0)) == std::vector<double>{2e9, 4e9, 6e9});
  const Tensor<bool> b = weft::from_vector<bool>({true, false, true, true});
  CHECK(values_of(weft::cumsum(b, 0)) == std::vector<double>{1, 1, 2, 3});
}

TEST_CASE("cumsum: an expression input is evaluated first; NaN and inf propagate along the dim") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{7, 19}, Domain{});
  check_cumsum(weft::cumsum(a * 2.0 - 1.0, -1), values_of(weft::eval(a * 2.0 - 1.0)), Shape{7, 19}, 1,
               eps_of<float>());
  const Tensor<float> x = weft::from_vector<float>({1, NAN, 2, INFINITY}, Shape{2, 2});
  const std::vector<double> y = values_of(weft::cumsum(x, 0));
  CHECK(y[0] == 1);
  CHECK(std::isnan(y[1]));
  CHECK(y[2] == 3);
  CHECK(std::isnan(y[3]));
  CHECK(values_of(weft::cumsum(x, 1))[3] == INFINITY);
}

TEST_CASE("cumsum: empty and rank-0 tensors") {
  CHECK(weft::cumsum(weft::zeros<float>(Shape{0, 3}), 0).shape() == Shape{0, 3});
  CHECK(weft::cumsum(weft::zeros<std::int32_t>(Shape{2, 0}), 0).shape() == Shape{2, 0});
  const Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f);
  CHECK(weft::cumsum(scalar, 0).dim() == 0);
  CHECK(weft::cumsum(scalar, -1).item() == 2.5f);
}

TEST_CASE("cumsum: errors name the op, the shape and the fix, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_before_allocation([&] { weft::cumsum(x, 2); });
  CHECK(has(m, "weft::cumsum"));
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));
  CHECK(has(error_before_allocation([&] { weft::cumsum(x, -3); }), "dims go from -2 to 1"));
  CHECK(has(error_before_allocation([&] { weft::cumsum(Tensor<float>(), 0); }), "empty (default-constructed)"));
  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::cumsum(gpu, 0); });
  CHECK(has(m, "weft::cumsum"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE
