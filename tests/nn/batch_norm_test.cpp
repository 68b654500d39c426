// SPDX-License-Identifier: MIT
/// @file cpu: nn::batch_norm, its backward and its Var form against double-precision references of torch's formulas (NCHW and channels-last inputs read in place, [N, C] and [N, C, L] too, float/double/bfloat16, with and without weight and bias, training and eval), running statistics over several steps, gradchecks in double, and every error.
#include <cmath>
#include <vector>

#include <weft/nn/batch_norm.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "norm_reference.hpp"

using namespace weft_test;
namespace nn = weft::nn;

namespace {

template <class T>
std::vector<double> values_or(const Tensor<T>& t, std::int64_t c, double fallback) {
  return t.defined() ? values_of(t) : std::vector<double>(std::size_t(c), fallback);
}

struct Case {
  Shape shape;
  bool channels_last, affine, bias, training;
};

template <class T>
void check_forward_and_backward(Rng& rng, const Case& k) {
  constexpr double eps = compute_eps<T>();
  const Shape& s = k.shape;
  const std::int64_t n = s[0], c = s[1], sp = s.numel() / (n * c);
  const std::string what = "shape " + shape_str(s) + (k.channels_last ? " channels-last" : " contiguous") +
                           (k.affine ? " weight" : "") + (k.bias ? " bias" : "") + (k.training ? " training" : " eval");
  INFO(what);
  const TensorView<T> x = channel_input<T>(rng, s, k.channels_last, rng.uniform(-4, 4));
  Domain pos, any;
  pos.lo = 0.5, pos.hi = 2, any.lo = -1, any.hi = 1;
  Tensor<T> weight = k.affine ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  Tensor<T> bias = k.bias ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  Tensor<T> rm = random_contiguous<T>(rng, {c}, any), rv = random_contiguous<T>(rng, {c}, pos);
  const std::vector<double> xv = values_of(x), w = values_or(weight, c, 1.0), b = values_or(bias, c, 0.0);
  const std::vector<double> rm0 = values_of(rm), rv0 = values_of(rv);
  const double momentum = rng.uniform(0.05, 0.5), bn_eps = 1e-5;
  // dy in the other layout than x
  const TensorView<T> dy = channel_input<T>(rng, s, !k.channels_last, 0.0);

  const std::vector<std::vector<std::size_t>> sets = channel_sets(n, c, sp);
  std::vector<Moments> stats;
  for (std::size_t u = 0; u < std::size_t(c); ++u)
    stats.push_back(k.training ? moments(xv, sets[u], eps) : Moments{rm0[u], rv0[u], 0.0, 2 * eps * rv0[u]});
  const NormReference<T> want = norm_reference<T>(xv, values_of(dy), sets, stats, !k.training, c, sp, w, b, bn_eps);

  const Tensor<T> y = nn::batch_norm(x, rm, rv, weight, bias, k.training, momentum, bn_eps);
  REQUIRE(y.shape() == s);
  CHECK(y.is_contiguous());
  const Report r = check_output(y, want.y);
  CHECK_MESSAGE(r.ok(), r.text);

  // running = (1 - momentum) running + momentum * statistic (var unbiased); untouched in eval
  const std::vector<double> rm1 = values_of(rm), rv1 = values_of(rv);
  const double unbiased = double(n * sp) / double(n * sp - 1);
  for (std::size_t u = 0; u < std::size_t(c); ++u) {
    if (!k.training) {
      CHECK(rm1[u] == rm0[u]);
      CHECK(rv1[u] == rv0[u]);
      continue;
    }
    const Moments& st = stats[u];
    const double want_m = (1 - momentum) * rm0[u] + momentum * st.mean;
    const double want_v = (1 - momentum) * rv0[u] + momentum * st.var * unbiased;
    CHECK(std::fabs(rm1[u] - want_m) <= momentum * st.dmean + 4 * eps * (std::fabs(rm0[u]) + std::fabs(st.mean)) + ulp_of<T>(want_m));
    CHECK(std::fabs(rv1[u] - want_v) <= momentum * unbiased * st.var_err + 4 * eps * (rv0[u] + st.var) + ulp_of<T>(want_v));
  }

  // backward, from the running statistics the forward used (eval reads them)
  write_values(rm, rm0), write_values(rv, rv0);
  const nn::BatchNormGradients<T> g = nn::batch_norm_backward(dy, x, rm, rv, weight, k.training, bn_eps);
  check_gradients(g, want);
  // dy's values in x's layout: both read in place (NCHW planes, or channels-last's strided sums)
  TensorView<T> dy_alike = channel_input<T>(rng, s, k.channels_last, 0.0);
  dy_alike = dy;
  check_gradients(nn::batch_norm_backward(dy_alike, x, rm, rv, weight, k.training, bn_eps), want);
}

}  // namespace

TEST_CASE_TEMPLATE("nn::batch_norm and its backward match torch's formulas in double", T, float, double, bfloat16) {
  WEFT_TEST_RNG(rng);
  const std::vector<Shape> shapes{{4, 3, 5, 7}, {2, 5, 9, 4}, {6, 4}, {3, 2, 11}, {1, 3, 2, 1}, {2, 16, 3, 3}};
  for (const Shape& s : shapes)
    for (bool channels_last : {false, true})
      for (bool training : {true, false})
        check_forward_and_backward<T>(rng, {s, channels_last, rng.chance(0.7), rng.chance(0.7), training});
}

TEST_CASE("nn::batch_norm's running statistics over several training steps follow a double reference") {
  WEFT_TEST_RNG(rng);
  const std::int64_t n = 3, c = 4, h = 5, w = 2;
  Tensor<float> rm = weft::zeros<float>({c}), rv = weft::ones<float>({c});
  std::vector<double> ref_m(std::size_t(c), 0.0), ref_v(std::size_t(c), 1.0), tol(std::size_t(c), 0.0);
  const double momentum = 0.1, eps = compute_eps<float>();
  for (int step = 0; step < 5; ++step) {
    const TensorView<float> x = channel_input<float>(rng, {n, c, h, w}, step % 2 == 1, rng.uniform(-3, 3));
    const std::vector<double> xv = values_of(x);
    const std::vector<std::vector<std::size_t>> sets = channel_sets(n, c, h * w);
    (void)nn::batch_norm(x, rm, rv, {}, {}, true, momentum);
    const std::vector<double> got_m = values_of(rm), got_v = values_of(rv);
    for (std::size_t u = 0; u < std::size_t(c); ++u) {
      const Moments st = moments(xv, sets[u], eps);
      const double unbiased = double(n * h * w) / double(n * h * w - 1);
      ref_m[u] = (1 - momentum) * ref_m[u] + momentum * st.mean;
      ref_v[u] = (1 - momentum) * ref_v[u] + momentum * unbiased * st.var;
      // each step's error: the statistic's, a few roundings; earlier errors shrink by 1 - momentum
      tol[u] = (1 - momentum) * tol[u] + momentum * (st.dmean + unbiased * st.var_err) +
               8 * eps * (std::fabs(ref_m[u]) + ref_v[u] + std::fabs(st.mean) + st.var);
      INFO("step ", step, " channel ", u);
      CHECK(std::fabs(got_m[u] - ref_m[u]) <= tol[u]);
      CHECK(std::fabs(got_v[u] - ref_v[u]) <= tol[u]);
    }
  }
}

TEST_CASE("nn::batch_norm over Vars: gradcheck in double, training and eval, with and without weight and bias") {
  WEFT_TEST_RNG(rng);
  for (bool channels_last : {false, true}) {
    const Shape s{3, 2, 2, 3};
    const Tensor<double> x0 = weft::eval(channel_input<double>(rng, s, channels_last, 1.0));
    const Tensor<double> w0 = uniform_tensor(rng, {2}, 0.5, 1.5), b0 = uniform_tensor(rng, {2}, -1, 1);
    Tensor<double> rm = uniform_tensor(rng, {2}, -1, 1), rv = uniform_tensor(rng, {2}, 0.5, 2);
    for (bool training : {true, false}) {
      const std::string what = std::string(channels_last ? "channels-last" : "contiguous") + (training ? " training" : " eval");
      INFO(what);
      // training normalizes with the batch's statistics, so the running ones may be absent
      Tensor<double> run_m = training ? Tensor<double>() : rm, run_v = training ? Tensor<double>() : rv;
      gradcheck(rng, [&](const Vars& v) { return nn::batch_norm(v[0], run_m, run_v, v[1], v[2], training); },
                {x0, w0, b0});
      if (!training)
        gradcheck(rng, [&](const Vars& v) { return nn::batch_norm(v[0], rm, rv, VarD(), VarD(), false); }, {x0});
    }
  }
  // the Var form updates the running statistics as the tensor form does
  const Tensor<double> x = uniform_tensor(rng, {4, 3}, -2, 2);
  Tensor<double> rm1 = weft::zeros<double>({3}), rv1 = weft::ones<double>({3}), rm2 = weft::zeros<double>({3}),
                 rv2 = weft::ones<double>({3});
  const VarD y = nn::batch_norm(weft::ad::param(Tensor<double>(x)), rm1, rv1, VarD(), VarD(), true, 0.3);
  const Tensor<double> y2 = nn::batch_norm(x, rm2, rv2, {}, {}, true, 0.3);
  CHECK(values_of(y.value()) == values_of(y2));
  CHECK(values_of(rm1) == values_of(rm2));
  CHECK(values_of(rv1) == values_of(rv2));
}

TEST_CASE("nn::batch_norm evaluates an expression input once, as the tensor it gives") {
  WEFT_TEST_RNG(rng);
  const TensorView<float> x = channel_input<float>(rng, {3, 2, 4, 5}, true, 1.0);
  Tensor<float> rm1 = weft::zeros<float>({2}), rv1 = weft::ones<float>({2}), rm2 = weft::zeros<float>({2}),
                rv2 = weft::ones<float>({2});
  const Tensor<float> doubled = weft::eval(x * 2.0f);
  CHECK(values_of(nn::batch_norm(x * 2.0f, rm1, rv1, {}, {}, true)) == values_of(nn::batch_norm(doubled, rm2, rv2, {}, {}, true)));
  CHECK(values_of(rm1) == values_of(rm2));
  CHECK(values_of(rv1) == values_of(rv2));
}

TEST_CASE("nn::batch_norm: bad input is an error naming the op and the shapes; nothing is written") {
  Tensor<float> x = weft::ones<float>({2, 3, 4, 4}), rm = weft::zeros<float>({3}), rv = weft::ones<float>({3});
  const Tensor<float> w4 = weft::ones<float>({4});
  std::string e = error_of([&] { (void)nn::batch_norm(x, rm, rv, w4, {}, true); });
  CHECK(has(e, "nn::batch_norm"));
  CHECK(has(e, "weight of shape [4]"));
  CHECK(has(e, "needs shape [3]"));
  Tensor<float> rm4 = weft::zeros<float>({4});
  e = error_of([&] { (void)nn::batch_norm(x, rm4, rv, {}, {}, true); });
  CHECK(has(e, "running_mean of shape [4]"));
  CHECK(values_of(rv) == std::vector<double>(3, 1.0));
  e = error_of([&] { (void)nn::batch_norm(weft::ones<float>({1, 3}), rm, rv, {}, {}, true); });
  CHECK(has(e, "Expected more than 1 value per channel when training, got input size [1, 3]"));
  CHECK(values_of(rm) == std::vector<double>(3, 0.0));
  e = error_of([&] { (void)nn::batch_norm(weft::ones<float>({1, 3, 1, 1}), rm, rv, {}, {}, true); });
  CHECK(has(e, "Expected more than 1 value per channel"));
  e = error_of([&] { (void)nn::batch_norm(x, Tensor<float>(), Tensor<float>(), {}, {}, false); });
  CHECK(has(e, "needed in evaluation mode"));
  e = error_of([&] { (void)nn::batch_norm(x, rm, Tensor<float>(), {}, {}, true); });
  CHECK(has(e, "give both running statistics or neither"));
  e = error_of([&] { (void)nn::batch_norm(weft::ones<float>({5}), rm, rv, {}, {}, true); });
  CHECK(has(e, "needs at least 2 dims"));
  e = error_of([&] { (void)nn::batch_norm_backward(weft::ones<float>({2, 3, 4, 5}), x, rm, rv, {}, true); });
  CHECK(has(e, "nn::batch_norm_backward"));
  CHECK(has(e, "dy of shape [2, 3, 4, 5] differs from x's shape [2, 3, 4, 4]"));
}
