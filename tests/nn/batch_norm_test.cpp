// SPDX-License-Identifier: MIT
/// @file cpu: nn::batch_norm, its backward and its Var form against double-precision references of torch's formulas (NCHW and channels-last inputs read in place, [N, C] and [N, C, L] too, float/double/bfloat16, with and without weight and bias, training and eval), running statistics over several steps, gradchecks in double, and every error.
#include <cmath>
#include <vector>

#include <weft/nn/batch_norm.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
namespace nn = weft::nn;

namespace {

/// An [N, C, *] input of random values around a per-channel offset (so that the mean matters),
/// either contiguous or channels-last: the same shape over NHWC memory, a permuted view.
template <class T>
TensorView<T> channel_input(Rng& rng, const Shape& s, bool channels_last, double offset) {
  Domain d;
  d.lo = offset - 2, d.hi = offset + 2;
  if (!channels_last || s.rank() < 3) return random_contiguous<T>(rng, s, d);
  std::vector<std::int64_t> nhwc{s[0]}, to_nchw{0, s.rank() - 1};
  for (int k = 2; k < s.rank(); ++k) nhwc.push_back(s[k]), to_nchw.push_back(k - 1);
  nhwc.push_back(s[1]);
  return TensorView<T>(random_contiguous<T>(rng, Shape(nhwc), d)).permute(to_nchw);
}

/// Per-channel statistics of values v (row-major [N, C, S]) in double, and the error bounds of a
/// run in precision eps: the sums of M = N S terms err by up to gamma = (M / 4 + 20) eps relative
/// to the sum of |terms| (a few packet accumulators per thread, then the partial sums), so
/// mean by dmean = gamma mean|x|; var sums squared deviations from the computed mean, which adds
/// dmean^2 (the cross term sums to zero): var_err = (gamma + 2 eps) var + dmean^2.
struct ChannelStats {
  std::vector<double> mean, var, dmean, var_err;
};

/// The relative error of rstd = 1 / sqrt(var + bn_eps): half var's, plus a few roundings.
inline double rstd_rel(const ChannelStats& st, std::size_t u, double bn_eps, double eps) {
  return st.var_err[u] / (2 * (st.var[u] + bn_eps)) + 4 * eps;
}
ChannelStats channel_stats(const std::vector<double>& v, std::int64_t n, std::int64_t c, std::int64_t s, double eps) {
  ChannelStats st;
  const double m = double(n * s), gamma = (m / 4 + 20) * eps;
  for (std::int64_t ch = 0; ch < c; ++ch) {
    double sum = 0, sum_abs = 0, sq = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < s; ++k) sum += v[std::size_t((i * c + ch) * s + k)], sum_abs += std::fabs(v[std::size_t((i * c + ch) * s + k)]);
    const double mean = sum / m;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < s; ++k) sq += std::pow(v[std::size_t((i * c + ch) * s + k)] - mean, 2);
    const double var = sq / m, dmean = gamma * sum_abs / m;
    st.mean.push_back(mean), st.var.push_back(var), st.dmean.push_back(dmean);
    st.var_err.push_back((gamma + 2 * eps) * var + dmean * dmean);
  }
  return st;
}

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
  const double offset = rng.uniform(-4, 4);
  const TensorView<T> x = channel_input<T>(rng, s, k.channels_last, offset);
  Domain pos, any;
  pos.lo = 0.5, pos.hi = 2, any.lo = -1, any.hi = 1;
  Tensor<T> weight = k.affine ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  Tensor<T> bias = k.bias ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  Tensor<T> rm = random_contiguous<T>(rng, {c}, any), rv = random_contiguous<T>(rng, {c}, pos);
  const std::vector<double> xv = values_of(x), w = values_or(weight, c, 1.0), b = values_or(bias, c, 0.0);
  const std::vector<double> rm0 = values_of(rm), rv0 = values_of(rv);
  const double momentum = rng.uniform(0.05, 0.5), bn_eps = 1e-5;

  ChannelStats st = channel_stats(xv, n, c, sp, eps);
  if (!k.training) {
    st = ChannelStats{rm0, rv0, std::vector<double>(std::size_t(c), 0.0), {}};
    for (double v : rv0) st.var_err.push_back(2 * eps * v);
  }
  const Tensor<T> y = nn::batch_norm(x, rm, rv, weight, bias, k.training, momentum, bn_eps);
  REQUIRE(y.shape() == s);
  CHECK(y.is_contiguous());
  std::vector<Expect> want(xv.size());
  std::vector<double> rstd(static_cast<std::size_t>(c));
  for (std::int64_t ch = 0; ch < c; ++ch) rstd[std::size_t(ch)] = 1 / std::sqrt(st.var[std::size_t(ch)] + bn_eps);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ch = 0; ch < c; ++ch)
      for (std::int64_t q = 0; q < sp; ++q) {
        const std::size_t at = std::size_t((i * c + ch) * sp + q), u = std::size_t(ch);
        const double xhat = (xv[at] - st.mean[u]) * rstd[u];
        // the mean's error moves x - mean; var's relative error moves rstd by half of it
        const double xhat_err = st.dmean[u] * rstd[u] + std::fabs(xhat) * rstd_rel(st, u, bn_eps, eps);
        Expect& e = want[at];
        e.want = xhat * w[u] + b[u];
        e.tol = std::fabs(w[u]) * xhat_err + 4 * eps * (std::fabs(xhat * w[u]) + std::fabs(b[u])) + ulp_of<T>(e.want);
      }
  const Report r = check_output(y, want);
  CHECK_MESSAGE(r.ok(), r.text);

  // running = (1 - momentum) running + momentum * statistic (var unbiased); untouched in eval
  const std::vector<double> rm1 = values_of(rm), rv1 = values_of(rv);
  const double unbiased = double(n * sp) / double(n * sp - 1);
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const std::size_t u = std::size_t(ch);
    if (!k.training) {
      CHECK(rm1[u] == rm0[u]);
      CHECK(rv1[u] == rv0[u]);
      continue;
    }
    const double want_m = (1 - momentum) * rm0[u] + momentum * st.mean[u];
    const double want_v = (1 - momentum) * rv0[u] + momentum * st.var[u] * unbiased;
    CHECK(std::fabs(rm1[u] - want_m) <= momentum * st.dmean[u] + 4 * eps * (std::fabs(rm0[u]) + std::fabs(st.mean[u])) + ulp_of<T>(want_m));
    CHECK(std::fabs(rv1[u] - want_v) <= momentum * unbiased * st.var_err[u] + 4 * eps * (rv0[u] + st.var[u]) + ulp_of<T>(want_v));
  }

  // backward: dx = w rstd (dy - mean(dy) - xhat mean(dy xhat)) in training, w rstd dy in eval;
  // dweight = sum dy xhat, dbias = sum dy. The running stats the forward used, for eval.
  Domain dd;
  dd.lo = -1, dd.hi = 1;
  const TensorView<T> dy = channel_input<T>(rng, s, !k.channels_last, 0.0);
  const std::vector<double> dyv = values_of(dy);
  write_values(rm, rm0), write_values(rv, rv0);
  const nn::BatchNormGradients<T> g = nn::batch_norm_backward(dy, x, rm, rv, weight, k.training, bn_eps);
  const double m = double(n * sp), gamma = (m / 4 + 20) * eps;
  std::vector<Expect> want_dx(xv.size()), want_dw(static_cast<std::size_t>(c)), want_db(static_cast<std::size_t>(c));
  for (std::int64_t ch = 0; ch < c; ++ch) {
    const std::size_t u = std::size_t(ch);
    double sdy = 0, sdyx = 0, sdy_abs = 0, sdyx_abs = 0;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t q = 0; q < sp; ++q) {
        const std::size_t at = std::size_t((i * c + ch) * sp + q);
        const double xhat = (xv[at] - st.mean[u]) * rstd[u];
        sdy += dyv[at], sdyx += dyv[at] * xhat, sdy_abs += std::fabs(dyv[at]), sdyx_abs += std::fabs(dyv[at] * xhat);
      }
    const double rel = rstd_rel(st, u, bn_eps, eps), xhat_abs_err = st.dmean[u] * rstd[u];
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t q = 0; q < sp; ++q) {
        const std::size_t at = std::size_t((i * c + ch) * sp + q);
        const double xhat = (xv[at] - st.mean[u]) * rstd[u];
        Expect& e = want_dx[at];
        if (k.training) {
          e.want = w[u] * rstd[u] * (dyv[at] - sdy / m - xhat * sdyx / m);
          const double terms = std::fabs(dyv[at]) + sdy_abs / m + std::fabs(xhat) * sdyx_abs / m;
          e.tol = std::fabs(w[u]) * rstd[u] *
                      ((gamma + 2 * rel + 8 * eps) * terms + xhat_abs_err * (sdyx_abs / m + std::fabs(xhat) * sdy_abs / m)) +
                  ulp_of<T>(e.want);
        } else {
          e.want = w[u] * rstd[u] * dyv[at];
          e.tol = std::fabs(e.want) * (rel + 4 * eps) + ulp_of<T>(e.want);
        }
      }
    want_dw[u].want = sdyx;
    want_dw[u].tol = (gamma + rel + 4 * eps) * sdyx_abs + xhat_abs_err * sdy_abs + ulp_of<T>(sdyx);
    want_db[u].want = sdy;
    want_db[u].tol = gamma * sdy_abs + ulp_of<T>(sdy);
  }
  const Report rdx = check_output(g.dx, want_dx), rdw = check_output(g.dweight, want_dw),
               rdb = check_output(g.dbias, want_db);
  CHECK_MESSAGE(rdx.ok(), "dx: ", rdx.text);
  CHECK_MESSAGE(rdw.ok(), "dweight: ", rdw.text);
  CHECK_MESSAGE(rdb.ok(), "dbias: ", rdb.text);
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
    const ChannelStats st = channel_stats(values_of(x), n, c, h * w, eps);
    (void)nn::batch_norm(x, rm, rv, {}, {}, true, momentum);
    const std::vector<double> got_m = values_of(rm), got_v = values_of(rv);
    for (std::size_t u = 0; u < std::size_t(c); ++u) {
      const double unbiased = double(n * h * w) / double(n * h * w - 1);
      ref_m[u] = (1 - momentum) * ref_m[u] + momentum * st.mean[u];
      ref_v[u] = (1 - momentum) * ref_v[u] + momentum * unbiased * st.var[u];
      // each step's error: the statistic's, a few roundings; earlier errors shrink by 1 - momentum
      tol[u] = (1 - momentum) * tol[u] + momentum * (st.dmean[u] + unbiased * st.var_err[u]) +
               8 * eps * (std::fabs(ref_m[u]) + ref_v[u] + std::fabs(st.mean[u]) + st.var[u]);
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
