// SPDX-License-Identifier: MIT
/// @file cpu: layer_norm against a double-precision reference: random shapes, normalized dims and
/// layouts, every floating dtype, with and without bias, long and constant rows, every error.
#include <memory>

#include <weft/ops/layer_norm.hpp>

#include "dense_reference.hpp"
#include "reference.hpp"

using namespace weft_test;
using weft::Device;

namespace {

/// layer_norm over the last `norm_rank` dims in double, with bounds for a float (eps) run: the
/// mean and the variance are pairwise sums ((log2 n + 20) eps relative to their terms), the rest
/// a few roundings, then the rounding to T.
template <class T>
std::vector<Expect> layer_norm_reference(const std::vector<double>& x, const std::vector<double>& w,
                                         const std::vector<double>& b, std::int64_t n, double eps_ln) {
  constexpr double eps = compute_eps<T>();
  std::vector<Expect> out(x.size());
  const double rel = (std::log2(double(std::max<std::int64_t>(n, 1))) + 20) * eps;
  for (std::size_t r = 0; r < x.size() / std::size_t(n); ++r) {
    const double* xr = x.data() + r * std::size_t(n);
    CompensatedSum sum, sum_abs;
    for (std::int64_t i = 0; i < n; ++i) sum.add(xr[i]), sum_abs.add(std::fabs(xr[i]));
    const double mean = sum.value() / double(n);
    CompensatedSum sq;
    for (std::int64_t i = 0; i < n; ++i) sq.add((xr[i] - mean) * (xr[i] - mean));
    const double var = sq.value() / double(n);
    const double rstd = 1 / std::sqrt(var + eps_ln);
    const double mean_err = rel * sum_abs.value() / double(n);
    for (std::int64_t i = 0; i < n; ++i) {
      Expect& e = out[r * std::size_t(n) + std::size_t(i)];
      const double wi = w[std::size_t(i)], bi = b.empty() ? 0.0 : b[std::size_t(i)];
      const double norm = (xr[i] - mean) * rstd;
      e.want = norm * wi + bi;
      // The mean's error shifts every deviation; the variance's relative error (rel, plus the
      // deviations' own) moves rstd by half of it; a few roundings in the affine step.
      e.tol = std::fabs(wi) * rstd * (std::fabs(xr[i] - mean) * (rel + 8 * eps) + mean_err) +
              4 * eps * (std::fabs(norm * wi) + std::fabs(bi)) + ulp_of<T>(e.want);
    }
  }
  return out;
}

template <class T>
void check_layer_norm(Rng& rng, const Shape& shape, int norm_rank, bool with_bias, double eps_ln,
                      const Domain& dom = Domain{}) {
  const Shape ws(shape.end() - norm_rank, shape.end());
  const TensorView<T> x = make_view<T>(rng, shape, dom, random_layout(rng, false));
  const TensorView<T> w = make_view<T>(rng, ws, Domain{0.5, 2}, random_layout(rng, false));
  const TensorView<T> b = with_bias ? make_view<T>(rng, ws, Domain{}, random_layout(rng, false)) : TensorView<T>();
  INFO("dtype ", type_name<T>(), ", x ", shape_str(shape), ", weight ", shape_str(ws), ", bias ", with_bias, ", eps ",
       eps_ln);
  const Tensor<T> y = with_bias ? weft::layer_norm(x, w, b, eps_ln) : weft::layer_norm(x, w, TensorView<T>(), eps_ln);
  REQUIRE(y.shape() == shape);
  if (ws.numel() == 0) return;
  const std::vector<Expect> want =
      layer_norm_reference<T>(values_of(x), values_of(w), with_bias ? values_of(b) : std::vector<double>{},
                              ws.numel(), eps_ln);
  std::int64_t k = 0;
  WEFT_CHECK_REPORT(check_output(y, [&](const std::vector<std::int64_t>&) { return want[std::size_t(k++)]; }));
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("layer_norm: random shapes, normalized dims and layouts", T, float, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) {
    const Shape shape = random_shape(rng, 1, 4, 4000);
    const int norm_rank = int(rng.integer(1, shape.rank()));
    check_layer_norm<T>(rng, shape, norm_rank, rng.chance(0.7), rng.chance(0.5) ? 1e-5 : 0.1);
  }
}

TEST_CASE("layer_norm: long rows, constant rows and a large mean") {
  WEFT_TEST_RNG(rng);
  check_layer_norm<float>(rng, Shape{3, 5000}, 1, true, 1e-5);
  check_layer_norm<float>(rng, Shape{2, 7, 33}, 2, true, 1e-5);
  // A mean 1000 times the spread: E[x^2] - mean^2 would lose ~6 digits in float; two passes do not.
  check_layer_norm<float>(rng, Shape{8, 256}, 1, true, 1e-5, Domain{999, 1001});
  // A constant row has variance 0: y = b exactly (up to the eps term's rounding).
  const Tensor<float> x = weft::full<float>(Shape{2, 40}, 3.0f);
  const Tensor<float> w = weft::full<float>(Shape{40}, 2.0f), b = weft::full<float>(Shape{40}, 0.5f);
  for (double v : values_of(weft::layer_norm(x, w, b))) CHECK(v == 0.5);
  // A 1-element normalized shape: every element is its own mean.
  for (double v : values_of(weft::layer_norm(weft::full<float>(Shape{5, 1}, 7.0f), weft::ones<float>(Shape{1}),
                                             weft::zeros<float>(Shape{1}))))
    CHECK(v == 0.0);
}

TEST_CASE("layer_norm: errors name the shapes and the fix") {
  const Tensor<float> x = weft::zeros<float>(Shape{2, 3, 5});
  std::string m = error_of([&] { weft::layer_norm(x, weft::ones<float>(Shape{4}), Tensor<float>()); });
  CHECK(has(m, "weft::layer_norm"));
  CHECK(has(m, "[2, 3, 5]"));
  CHECK(has(m, "[4]"));
  m = error_of([&] { weft::layer_norm(x, weft::ones<float>(Shape{3, 5}), weft::zeros<float>(Shape{5})); });
  CHECK(has(m, "bias of shape [5]"));
  CHECK(has(m, "[3, 5]"));
  m = error_of([&] { weft::layer_norm(x, weft::ones<float>(Shape{1, 2, 3, 5}), Tensor<float>()); });
  CHECK(has(m, "[1, 2, 3, 5]"));
  m = error_of([&] { weft::layer_norm(x, Tensor<float>(), Tensor<float>()); });
  CHECK(has(m, "weight is an empty tensor"));
  m = error_of([&] { weft::layer_norm(x, weft::ones<float>(Shape{5}), Tensor<float>(), -1.0); });
  CHECK(has(m, "eps"));
  auto fake = std::make_shared<weft::Storage>(nullptr, 0, Device::cuda(), nullptr);
  const weft::TensorView<float> gpu(fake, Shape{5}, weft::contiguous_strides(Shape{5}), 0);
  m = error_of([&] { weft::layer_norm(x, gpu, Tensor<float>()); });
  CHECK(has(m, "cuda:0"));
  CHECK(has(m, "[2, 3, 5]"));
}

}  // TEST_SUITE
