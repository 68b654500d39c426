// SPDX-License-Identifier: MIT
/// @file cpu: softmax and log_softmax against double-precision references: random shapes, dims and
/// layouts, every floating dtype, large magnitudes, -inf rows, NaN, every error.
#include <memory>

#include <weft/ops/softmax.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

/// Calls f(row_indices) for each row along `dim` of `shape`: the flat row-major indices of the
/// elements that one softmax normalizes together.
template <class F>
void for_each_row(const Shape& shape, int dim, F&& f) {
  std::int64_t outer = 1, n = 1, inner = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (d < dim) outer *= shape[d];
    else if (d == dim) n = shape[d];
    else inner *= shape[d];
  }
  std::vector<std::int64_t> row(static_cast<std::size_t>(n));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t c = 0; c < inner; ++c) {
      for (std::int64_t i = 0; i < n; ++i) row[std::size_t(i)] = (o * n + i) * inner + c;
      f(row);
    }
}

/// softmax / log_softmax along `dim` in double, with error bounds for a run computing in a type
/// with machine epsilon `eps` and rounding to T: x_i - m rounds (eps |x_i - m|, which exp turns into
/// a relative error), exp is accurate to a few ulps, the sum of exps is a pairwise sum of positive
/// terms ((log2 n + 16) eps relative), then one division or log and the rounding to T.
template <class T>
std::vector<Expect> softmax_reference(const std::vector<double>& x, const Shape& shape, int dim, bool log) {
  constexpr double eps = compute_eps<T>();
  std::vector<Expect> out(x.size());
  for_each_row(shape, dim, [&](const std::vector<std::int64_t>& row) {
    double m = -INFINITY;
    bool nan = false;
    for (std::int64_t i : row) m = std::max(m, x[std::size_t(i)]), nan |= std::isnan(x[std::size_t(i)]);
    CompensatedSum sum;
    for (std::int64_t i : row) sum.add(std::exp(x[std::size_t(i)] - m));
    const double s = sum.value();
    const double rel_s = (std::log2(double(row.size())) + 16) * eps;
    for (std::int64_t i : row) {
      const double d = x[std::size_t(i)] - m;
      Expect& e = out[std::size_t(i)];
      if (nan || std::isnan(d)) {  // a NaN input, or a row of only -inf (-inf - -inf)
        e.want = NAN;
        continue;
      }
      if (log) {
        e.want = d - std::log(s);
        e.tol = (std::fabs(d) + std::fabs(std::log(s)) + std::fabs(e.want) + rel_s / eps + 8) * eps + ulp_of<T>(e.want);
      } else {
        e.want = std::exp(d) / s;
        e.tol = e.want * (std::fabs(d) + rel_s / eps + 8) * eps + ulp_of<T>(e.want);
      }
    }
  });
  return out;
}

template <class T>
void check_softmax(Rng& rng, const Shape& shape, int dim, Layout layout, const Domain& dom = Domain{}) {
  const TensorView<T> x = make_view<T>(rng, shape, dom, layout);
  const std::vector<double> xv = values_of(x);
  const int d = shape.rank() ? (dim < 0 ? dim + shape.rank() : dim) : 0;
  INFO("dtype ", type_name<T>(), ", shape ", shape_str(shape), ", dim ", dim, ", layout ", layout_name(layout));
  for (bool log : {false, true}) {
    INFO(std::string(log ? "log_softmax" : "softmax"));
    const Tensor<T> y = log ? weft::log_softmax(x, dim) : weft::softmax(x, dim);
    REQUIRE(y.shape() == shape);
    const std::vector<Expect> want = softmax_reference<T>(xv, shape, d, log);
    std::int64_t k = 0;
    WEFT_CHECK_REPORT(check_output(y, [&](const std::vector<std::int64_t>&) { return want[std::size_t(k++)]; }));
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("softmax, log_softmax: random shapes, dims and layouts", T, float, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 25; ++iter) {
    const Shape shape = random_shape(rng, 0, 4, 4000);
    const int dim = shape.rank() ? int(rng.integer(-shape.rank(), shape.rank() - 1)) : int(rng.integer(-1, 0));
    check_softmax<T>(rng, shape, dim, random_layout(rng, false));
  }
}

TEST_CASE("softmax: executor paths (contiguous rows, wide and narrow columns)") {
  WEFT_TEST_RNG(rng);
  const struct {
    Shape shape;
    int dim;
  } cases[] = {
      {{5, 37}, 1},       {{3, 4099}, -1},    {{37, 5}, 0},      {{7, 3, 100}, 1}, {{2, 1000, 17}, 1},
      {{4, 16}, 0},       {{1}, 0},           {{6, 1}, 1},       {{}, 0},          {{0, 5}, 1},
      {{3, 0, 2}, 1},     {{2, 3, 64}, -2},
  };
  for (const auto& c : cases) {
    check_softmax<float>(rng, c.shape, c.dim, Layout::contiguous);
    check_softmax<float>(rng, c.shape, c.dim, Layout::permuted_strided);
  }
}

TEST_CASE("softmax: large magnitudes, -inf entries and NaN") {
  WEFT_TEST_RNG(rng);
  // exp(1000) overflows: only the max-subtracted form is finite.
  check_softmax<float>(rng, Shape{4, 50}, 1, Layout::contiguous, Domain{990, 1010});
  check_softmax<float>(rng, Shape{50, 20}, 0, Layout::contiguous, Domain{-1010, -990});

  const float inf = INFINITY;
  const Tensor<float> x = weft::from_vector<float>({1, -inf, 2, -inf, -inf, -inf, 0, NAN, 3}, Shape{3, 3});
  const std::vector<double> s = values_of(weft::softmax(x, 1));
  CHECK(s[1] == 0.0);  // exp(-inf) = 0
  CHECK(std::fabs(s[0] - 1 / (1 + std::exp(1.0))) < 1e-6);
  for (int i = 3; i < 9; ++i) CHECK(std::isnan(s[std::size_t(i)]));  // all -inf: NaN (PyTorch); a NaN: NaN
  const std::vector<double> l = values_of(weft::log_softmax(x, 1));
  CHECK(l[1] == -INFINITY);
  for (int i = 3; i < 9; ++i) CHECK(std::isnan(l[std::size_t(i)]));
  // The same rows down columns (the column layout).
  const std::vector<double> sc = values_of(weft::softmax(x.transpose(0, 1).contiguous(), 0));
  CHECK(sc[3] == 0.0);
  for (int i : {1, 4, 7, 2, 5, 8}) CHECK(std::isnan(sc[std::size_t(i)]));
}

TEST_CASE("softmax: expression inputs are evaluated first") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> a = make_view<float>(rng, Shape{6, 40}, Domain{}, Layout::contiguous);
  const Tensor<float> y = weft::softmax(a * 2.0f, -1);
  const Tensor<float> z = weft::softmax(weft::eval(a * 2.0f), -1);
  CHECK(values_of(y) == values_of(z));
}

TEST_CASE("softmax: errors name the op and the shape") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3});
  std::string m = error_of([&] { weft::softmax(x, 2); });
  CHECK(has(m, "weft::softmax"));
  CHECK(has(m, "out of range"));
  CHECK(has(m, "[2, 3]"));
  m = error_of([&] { weft::log_softmax(x, -3); });
  CHECK(has(m, "weft::log_softmax"));
  CHECK(has(error_of([&] { weft::softmax(Tensor<float>(), 0); }), "empty"));
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<float> gpu(fake, Shape{2, 3}, weft::contiguous_strides(Shape{2, 3}), 0);
  m = error_of([&] { weft::softmax(gpu, 0); });
  CHECK(has(m, "weft::softmax"));
  CHECK(has(m, "nvcc"));
}

}  // TEST_SUITE
