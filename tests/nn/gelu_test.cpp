// SPDX-License-Identifier: MIT
/// @file cpu: gelu_tanh and the GELU gradients nn::gelu_backward / nn::gelu_tanh_backward against double-precision
/// formulas (random shapes and layouts, every floating dtype, poisoned destination views, a fused statement) and
/// against finite differences of weft::gelu / weft::gelu_tanh in double.
#include <weft/nn/gelu.hpp>

#include "reference.hpp"

using namespace weft_test;

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kCubic = 0.044715;

/// tanh's argument u = sqrt(2/pi) (x + 0.044715 x^3), t = tanh(u), and the absolute error of t in
/// a run of precision eps: u's few roundings (relative), moved by tanh'(u) = 1 - t^2, plus tanh's own.
struct TanhPart {
  double u, t, dt;
};
TanhPart tanh_part(double x, double eps) {
  TanhPart p;
  p.u = kSqrt2OverPi * (x + kCubic * x * x * x);
  p.t = std::tanh(p.u);
  p.dt = (1 - p.t * p.t) * std::fabs(p.u) * 6 * eps + 4 * eps;
  return p;
}

/// gelu_tanh(x) = x/2 (1 + t) in double, with the bound of a run in precision eps.
template <class T>
Expect gelu_tanh_reference(double x) {
  constexpr double eps = compute_eps<T>();
  const TanhPart p = tanh_part(x, eps);
  Expect e;
  e.want = 0.5 * x * (1 + p.t);
  e.tol = 0.5 * std::fabs(x) * (p.dt + 3 * eps * (1 + p.t)) + ulp_of<T>(e.want);
  return e;
}

/// dy * ((1 + t)/2 + x/2 (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)) in double, with its bound.
template <class T>
Expect gelu_tanh_backward_reference(double dy, double x) {
  constexpr double eps = compute_eps<T>();
  const TanhPart p = tanh_part(x, eps);
  const double slope = kSqrt2OverPi * (1 + 3 * kCubic * x * x);
  const double d = 0.5 * (1 + p.t) + 0.5 * x * (1 - p.t * p.t) * slope;
  const double d_err =
      0.5 * p.dt + 0.5 * std::fabs(x) * slope * (2 * p.dt + 3 * eps + (1 - p.t * p.t) * 4 * eps) + 4 * eps * std::fabs(d);
  Expect e;
  e.want = dy * d;
  e.tol = std::fabs(dy) * d_err + 2 * eps * std::fabs(e.want) + ulp_of<T>(e.want);
  return e;
}

/// dy * (Phi(x) + x phi(x)) in double, with its bound (erf within a few eps absolute; exp's
/// argument -x^2/2 rounded, so exp off by eps x^2 relative).
template <class T>
Expect gelu_backward_reference(double dy, double x) {
  constexpr double eps = compute_eps<T>();
  const double cdf = 0.5 * (1 + std::erf(x / std::sqrt(2.0)));
  const double pdf = std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  const double d = cdf + x * pdf;
  const double d_err = 4 * eps + std::fabs(x) * pdf * (6 * eps + eps * x * x) + 4 * eps * std::fabs(d);
  Expect e;
  e.want = dy * d;
  e.tol = std::fabs(dy) * d_err + 2 * eps * std::fabs(e.want) + ulp_of<T>(e.want);
  return e;
}

/// Inputs: the central range, past where the tanh and erf forms saturate, or magnitudes from 1e-4 to 30.
Domain gelu_domain(Rng& rng) {
  switch (rng.integer(0, 2)) {
    case 0: return Domain{-4, 4};
    case 1: return Domain{-12, 12};
    default: {
      Domain d{1e-4, 30, true};
      return d;
    }
  }
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("gelu_tanh: values against the double formula, into poisoned views", T, float, double, half,
                   bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) {
    const Shape shape = random_shape(rng, 0, 4, 3000);
    const TensorView<T> x = make_view<T>(rng, shape, gelu_domain(rng), random_layout(rng, false));
    INFO(type_name<T>(), ", shape ", shape_str(shape));
    std::vector<Expect> want;
    for (double v : values_of(x)) want.push_back(gelu_tanh_reference<T>(v));
    WEFT_CHECK_REPORT(check_output(Tensor<T>(weft::gelu_tanh(x)), want));
    TensorView<T> out = make_destination<T>(rng, shape, random_layout(rng, true));
    out = weft::gelu_tanh(x);
    WEFT_CHECK_REPORT(check_output(out, want));
  }
}

TEST_CASE_TEMPLATE("nn::gelu_backward and gelu_tanh_backward: values against the double formulas", T, float, double,
                   half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 12; ++iter) {
    const Shape shape = random_shape(rng, 0, 4, 3000);
    const TensorView<T> dy = make_view<T>(rng, shape, Domain{-3, 3}, random_layout(rng, false));
    const TensorView<T> x = make_view<T>(rng, shape, gelu_domain(rng), random_layout(rng, false));
    INFO(type_name<T>(), ", shape ", shape_str(shape));
    const std::vector<double> dv = values_of(dy), xv = values_of(x);
    std::vector<Expect> exact, approx;
    for (std::size_t k = 0; k < xv.size(); ++k) {
      exact.push_back(gelu_backward_reference<T>(dv[k], xv[k]));
      approx.push_back(gelu_tanh_backward_reference<T>(dv[k], xv[k]));
    }
    // Returned as new tensors, and assigned into existing (poisoned, strided) views: one kernel each.
    WEFT_CHECK_REPORT(check_output(Tensor<T>(weft::nn::gelu_backward(dy, x)), exact));
    WEFT_CHECK_REPORT(check_output(Tensor<T>(weft::nn::gelu_tanh_backward(dy, x)), approx));
    TensorView<T> out = make_destination<T>(rng, shape, random_layout(rng, true));
    out = weft::nn::gelu_tanh_backward(dy, x);
    WEFT_CHECK_REPORT(check_output(out, approx));
    out = weft::nn::gelu_backward(dy, x);
    WEFT_CHECK_REPORT(check_output(out, exact));
  }
}

TEST_CASE("gelu_tanh and its gradient fuse into one statement with other ops") {
  WEFT_TEST_RNG(rng);
  const Shape shape{37, 19};
  const Tensor<float> x = random_contiguous<float>(rng, shape, Domain{-5, 5});
  const Tensor<float> dy = random_contiguous<float>(rng, shape, Domain{-2, 2});
  // The MLP's backward in GPT-2: dx = gelu_tanh_backward(dy, x) scaled, next to the forward.
  Tensor<float> y = weft::empty<float>(shape), dx = weft::empty<float>(shape);
  weft::fuse(weft::assign(y, weft::gelu_tanh(x) * 2.0f), weft::assign(dx, weft::nn::gelu_tanh_backward(dy, x) + 1.0f));
  const std::vector<double> xv = values_of(x), dv = values_of(dy), yv = values_of(y), dxv = values_of(dx);
  for (std::size_t k = 0; k < xv.size(); ++k) {
    const Expect g = gelu_tanh_reference<float>(xv[k]), b = gelu_tanh_backward_reference<float>(dv[k], xv[k]);
    CHECK(std::fabs(yv[k] - 2 * g.want) <= 2 * g.tol + ulp_of<float>(yv[k]));
    CHECK(std::fabs(dxv[k] - (b.want + 1)) <= b.tol + 2 * ulp_of<float>(dxv[k]));
  }
}

TEST_CASE("gelu gradients: finite differences of weft::gelu and weft::gelu_tanh in double") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> x = random_contiguous<double>(rng, Shape{200}, Domain{-6, 6});
  const double h = 1e-5;
  const Tensor<double> ones = weft::full<double>(Shape{200}, 1.0);
  const std::vector<double> exact = values_of(Tensor<double>(weft::nn::gelu_backward(ones, x)));
  const std::vector<double> approx = values_of(Tensor<double>(weft::nn::gelu_tanh_backward(1.0, x)));
  const std::vector<double> e_up = values_of(Tensor<double>(weft::gelu(x + h)));
  const std::vector<double> e_down = values_of(Tensor<double>(weft::gelu(x - h)));
  const std::vector<double> t_up = values_of(Tensor<double>(weft::gelu_tanh(x + h)));
  const std::vector<double> t_down = values_of(Tensor<double>(weft::gelu_tanh(x - h)));
  for (std::size_t k = 0; k < exact.size(); ++k) {
    // central differences: O(h^2) truncation (third derivatives stay below ~1) and eps / h rounding
    CHECK(std::fabs((e_up[k] - e_down[k]) / (2 * h) - exact[k]) <= 1e-9);
    CHECK(std::fabs((t_up[k] - t_down[k]) / (2 * h) - approx[k]) <= 1e-9);
  }
  // Far tails: gelu'(x) -> 1 for large x and -> 0 for very negative x, with no NaN from x^3.
  const Tensor<float> tails = weft::from_vector<float>({-1e6f, -60.0f, 60.0f, 1e6f});
  const std::vector<double> g = values_of(Tensor<float>(weft::nn::gelu_tanh_backward(1.0f, tails)));
  const std::vector<double> ge = values_of(Tensor<float>(weft::nn::gelu_backward(1.0f, tails)));
  CHECK(g == std::vector<double>{0, 0, 1, 1});
  CHECK(ge == std::vector<double>{0, 0, 1, 1});
}

}  // TEST_SUITE
