// SPDX-License-Identifier: MIT
/// @file cpu: argmax and argmin against plain loops (exact indices) on every dtype: random shapes, layouts, dims and
/// keepdim, ties and NaN, long rows split across threads, expressions, empty and rank-0 tensors, every error.
#include <weft/ops/arg_reduce.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;

namespace {

static_assert(std::is_same_v<decltype(weft::argmax(std::declval<Tensor<half>>())), Tensor<std::int64_t>>);
static_assert(std::is_same_v<decltype(weft::argmin(std::declval<Tensor<bool>>(), 0, true)), Tensor<std::int64_t>>);

/// The first index of the largest (is_max) or smallest value; a NaN is both, and the first NaN wins.
std::int64_t ref_arg(const std::vector<double>& v, bool is_max) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < v.size() && !std::isnan(v[best]); ++i)
    if (std::isnan(v[i]) || (is_max ? v[i] > v[best] : v[i] < v[best])) best = i;
  return std::int64_t(best);
}

/// Checks out = argmax / argmin along dim d (wrapped) of an input with these row-major values.
void check_along(const Tensor<std::int64_t>& out, const std::vector<double>& values, const Shape& full, int d,
                 bool keepdim, bool is_max) {
  INFO((is_max ? "argmax" : "argmin"), " over dim ", d, " of ", shape_str(full), ", keepdim ", keepdim);
  Shape want;
  for (int k = 0; k < full.rank(); ++k)
    if (k != d) want.push_back(full[k]);
    else if (keepdim) want.push_back(1);
  REQUIRE(out.shape() == want);
  const AlongDim a(full, d);
  const std::vector<double> got = values_of(out);
  std::int64_t wrong = 0;
  for (std::int64_t o = 0; o < a.outer; ++o)
    for (std::int64_t c = 0; c < a.inner; ++c) {
      std::vector<double> row;
      for (std::int64_t i = 0; i < a.n; ++i) row.push_back(values[a.at(o, i, c)]);
      wrong += got[std::size_t(o * a.inner + c)] != double(ref_arg(row, is_max));
    }
  CHECK(wrong == 0);
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("argmax / argmin: random shapes, layouts, dims, ties and NaN on every dtype", T, float, double, half,
                   bfloat16, std::int32_t, std::int64_t, bool) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) {
    const Shape full = random_shape(rng, 0, 4, 3000);
    const Layout layout = random_layout(rng, false);
    const TensorView<T> x = make_view<T>(rng, full, tie_domain<T>(rng.chance(0.3) ? 0.02 : 0.0), layout);
    const std::vector<double> values = values_of(x);
    INFO("dtype ", type_name<T>(), ", iteration ", iter, ", layout ", layout_name(layout));
    if (full.numel() == 0) {
      CHECK(has(error_of([&] { weft::argmax(x); }), "no elements"));
    } else {
      const Tensor<std::int64_t> mx = weft::argmax(x), mn = weft::argmin(x);
      CHECK(mx.dim() == 0);
      CHECK(mx.item() == ref_arg(values, true));
      CHECK(mn.item() == ref_arg(values, false));
    }
    const auto random = random_dim(rng, full.rank());
    const std::int64_t dim = random.dim;
    const int d = random.wrapped;
    const bool keepdim = rng.chance(0.5);
    if (full.rank() > 0 && full[d] == 0) {
      CHECK(has(error_of([&] { weft::argmin(x, dim, keepdim); }), "of size 0"));
      continue;
    }
    check_along(weft::argmax(x, dim, keepdim), values, full, d, keepdim, true);
    check_along(weft::argmin(x, dim, keepdim), values, full, d, keepdim, false);
  }
}

TEST_CASE("argmax / argmin: NaN, infinities, signed zeros and ties pick the documented index") {
  const auto row = [](std::vector<float> v) { return weft::from_vector(v); };
  CHECK(weft::argmax(row({1, NAN, 3, NAN, 5})).item() == 1);  // a NaN is the max: the first NaN
  CHECK(weft::argmin(row({1, NAN, 3, NAN, -5})).item() == 1);  // and the min
  CHECK(weft::argmax(row({NAN, NAN})).item() == 0);
  CHECK(weft::argmax(row({-INFINITY, INFINITY, 2})).item() == 1);
  CHECK(weft::argmin(row({-INFINITY, INFINITY, 2})).item() == 0);
  CHECK(weft::argmax(row({-INFINITY, -INFINITY})).item() == 0);
  CHECK(weft::argmax(row({2, 5, 5, 1, 1})).item() == 1);  // ties: the first index
  CHECK(weft::argmin(row({2, 5, 5, 1, 1})).item() == 3);
  CHECK(weft::argmax(row({-0.0f, 0.0f})).item() == 0);  // -0 == +0: a tie
  CHECK(weft::argmin(row({0.0f, -0.0f})).item() == 0);
  const Tensor<bool> b = weft::from_vector<bool>({false, true, true, false}, Shape{2, 2});
  CHECK(values_of(weft::argmax(b, 1)) == std::vector<double>{1, 0});
  CHECK(values_of(weft::argmin(b, 0, true)) == std::vector<double>{0, 1});
  CHECK(weft::argmin(b).item() == 0);
  const Tensor<half> h = weft::from_vector<half>({half(1.0f), half(NAN), half(2.0f)});
  CHECK(weft::argmin(h).item() == 1);
}

TEST_CASE("argmax / argmin: long rows and long columns split across threads keep the first index") {
  // One row of ~2^20 elements (chunks across threads): the two maxima and the two NaNs lie in
  // different chunks; the first one must win whichever thread finds it.
  const std::int64_t n = (std::int64_t(1) << 20) + 3;
  std::vector<float> v(std::size_t(n), 1.0f);
  v[700001] = 2, v[900000] = 2, v[5] = 0, v[1000000] = 0;
  CHECK(weft::argmax(weft::from_vector(v)).item() == 700001);
  CHECK(weft::argmin(weft::from_vector(v)).item() == 5);
  v[800000] = NAN, v[900001] = NAN;
  CHECK(weft::argmax(weft::from_vector(v)).item() == 800000);
  CHECK(weft::argmin(weft::from_vector(v), 0).item() == 800000);
  // Few long columns: column blocks, split along the dim.
  WEFT_TEST_RNG(rng);
  for (const Shape& s : {Shape{100000, 3}, Shape{2, 8000, 70}, Shape{3, 3, 60000}}) {
    Domain dom;
    dom.grid = 0.25;
    const TensorView<float> x = make_view<float>(rng, s, dom, Layout::contiguous);
    const std::vector<double> values = values_of(x);
    for (int d = 0; d < s.rank(); ++d) {
      check_along(weft::argmax(x, d), values, s, d, false, true);
      check_along(weft::argmin(x, d, true), values, s, d, true, false);
    }
  }
}

TEST_CASE("argmax / argmin: an expression input is evaluated first") {
  WEFT_TEST_RNG(rng);
  const Tensor<float> a = random_contiguous<float>(rng, Shape{13, 37}, Domain{});
  const TensorView<float> b = make_view<float>(rng, Shape{37}, Domain{}, Layout::strided);
  const std::vector<double> values = values_of(weft::eval(a * b - 1.0));
  check_along(weft::argmax(a * b - 1.0, 1), values, Shape{13, 37}, 1, false, true);
  check_along(weft::argmin(a * b - 1.0, -2, true), values, Shape{13, 37}, 0, true, false);
  CHECK(weft::argmax(a * b - 1.0).item() == ref_arg(values, true));
}

TEST_CASE("argmax / argmin: empty outputs, size-1 dims and rank-0 tensors") {
  const Tensor<float> e = weft::zeros<float>(Shape{0, 3});
  CHECK(weft::argmax(e, 1).shape() == Shape{0});
  CHECK(weft::argmin(e, -1, true).shape() == Shape{0, 1});
  const Tensor<float> scalar = weft::full<float>(Shape{}, 2.5f);
  CHECK(weft::argmax(scalar).item() == 0);
  CHECK(weft::argmax(scalar, 0).dim() == 0);
  CHECK(weft::argmin(scalar, -1, true).dim() == 0);
  const Tensor<std::int32_t> ones = weft::full<std::int32_t>(Shape{4, 1}, 7);
  CHECK(values_of(weft::argmax(ones, 1)) == std::vector<double>(4, 0));
}

TEST_CASE("argmax / argmin: errors name the op, the shape and the fix, and allocate nothing") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_before_allocation([&] { weft::argmax(x, 2); });
  CHECK(has(m, "weft::argmax"));
  CHECK(has(m, "dim 2 is out of range for an input of shape [2, 3]"));
  CHECK(has(error_before_allocation([&] { weft::argmin(x, -3, true); }), "weft::argmin"));

  const Tensor<float> e = weft::zeros<float>(Shape{4, 0});
  m = error_before_allocation([&] { weft::argmax(e, 1); });
  CHECK(has(m, "weft::argmax"));
  CHECK(has(m, "dim 1 of size 0"));
  CHECK(has(m, "[4, 0]"));
  CHECK(has(m, "non-empty"));
  m = error_before_allocation([&] { weft::argmin(e); });
  CHECK(has(m, "weft::argmin"));
  CHECK(has(m, "[4, 0]"));
  CHECK(has(m, "no elements"));
  CHECK(has(error_before_allocation([&] { weft::argmax(Tensor<float>()); }), "empty (default-constructed)"));

  const weft::TensorView<float> gpu = fake_cuda_view<float>(Shape{2, 3});
  m = error_before_allocation([&] { weft::argmax(gpu, 0); });
  CHECK(has(m, "weft::argmax"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE
