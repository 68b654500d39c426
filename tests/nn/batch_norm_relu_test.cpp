// SPDX-License-Identifier: MIT
/// @file cpu: nn::batch_norm_relu (relu(batch_norm(x) + residual) as one op) and BatchNorm2d::forward_relu: values and the gradients of x, weight, bias and the residual against a double reference of torch's formulas (a channels-last residual read in place, with and without residual, weight and bias, training and eval, float/double/bfloat16), gradchecks in double, the running statistics as nn::batch_norm's, the module equal to the three unfused ops, and every error.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <weft/nn/batch_norm.hpp>
#include <weft/nn/modules/batch_norm.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "norm_reference.hpp"

using namespace weft_test;

namespace batch_norm_relu_test {

namespace nn = weft::nn;
namespace ad = weft::ad;

/// The residual: none, a Var (contiguous), or a constant channels-last view.
enum class Residual { none, var, channels_last_view };

struct FusedCase {
  Shape shape;
  Residual residual;
  bool affine, bias, training;
};

template <class T>
std::vector<double> per_channel_or(const Tensor<T>& t, std::int64_t c, double fallback) {
  return t.defined() ? values_of(t) : std::vector<double>(std::size_t(c), fallback);
}

/// One random case: y = relu(batch_norm(x) + r) and its gradients for a random dy against
/// norm_reference (batch_norm's double reference) composed with the residual and relu.
template <class T>
void check_fused(Rng& rng, const FusedCase& k) {
  constexpr double eps = compute_eps<T>();
  const Shape& s = k.shape;
  const std::int64_t n = s[0], c = s[1], sp = s.numel() / (n * c);
  const bool has_residual = k.residual != Residual::none, residual_var = k.residual == Residual::var;
  const std::string what = "shape " + shape_str(s) +
                           (residual_var ? " residual" : has_residual ? " channels-last residual" : "") +
                           (k.affine ? " weight" : "") + (k.bias ? " bias" : "") + (k.training ? " training" : " eval");
  INFO(what);
  Domain pos, any;
  pos.lo = 0.5, pos.hi = 2, any.lo = -1, any.hi = 1;
  // x a Var (contiguous); a channels-last residual is read in place
  const Tensor<T> x = weft::eval(channel_input<T>(rng, s, false, rng.uniform(-4, 4)));
  const TensorView<T> r = has_residual ? channel_input<T>(rng, s, !residual_var, 0.0) : TensorView<T>();
  const Tensor<T> weight = k.affine ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  const Tensor<T> bias = k.bias ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  Tensor<T> rm = random_contiguous<T>(rng, {c}, any), rv = random_contiguous<T>(rng, {c}, pos);
  Tensor<T> rm_unfused = weft::eval(rm), rv_unfused = weft::eval(rv);
  const std::vector<double> xv = values_of(x), w = per_channel_or(weight, c, 1.0), b = per_channel_or(bias, c, 0.0);
  const std::vector<double> rv0 = values_of(rv), rm0 = values_of(rm);
  const std::vector<double> residual = has_residual ? values_of(r) : std::vector<double>(xv.size(), 0.0);
  const double momentum = rng.uniform(0.05, 0.5), bn_eps = 1e-5;

  const ad::Var<T> vx = ad::param(weft::eval(x)), vw = k.affine ? ad::param(weft::eval(weight)) : ad::Var<T>(),
                   vb = k.bias ? ad::param(weft::eval(bias)) : ad::Var<T>(),
                   vr = residual_var ? ad::param(Tensor<T>(r)) : ad::Var<T>();
  ad::Var<T> y = k.residual == Residual::channels_last_view
                     ? nn::batch_norm_relu(vx, rm, rv, vw, vb, TensorView<const T>(r), k.training, momentum, bn_eps)
                     : nn::batch_norm_relu(vx, rm, rv, vw, vb, vr, k.training, momentum, bn_eps);
  REQUIRE(y.shape() == s);

  // values: relu is 1-Lipschitz, so batch_norm's bound plus the add's rounding carries over
  const std::vector<std::vector<std::size_t>> sets = channel_sets(n, c, sp);
  std::vector<Moments> stats;
  for (std::size_t u = 0; u < std::size_t(c); ++u)
    stats.push_back(k.training ? moments(xv, sets[u], eps) : Moments{rm0[u], rv0[u], 0.0, 2 * eps * rv0[u]});
  const std::vector<double> no_dy(xv.size(), 0.0);
  std::vector<Expect> want_y = norm_reference<T>(xv, no_dy, sets, stats, !k.training, c, sp, w, b, bn_eps).y;
  for (std::size_t i = 0; i < want_y.size(); ++i) {
    const double sum = want_y[i].want + residual[i];
    want_y[i].tol += 2 * eps * (std::fabs(want_y[i].want) + std::fabs(residual[i])) + ulp_of<T>(sum);
    want_y[i].want = std::max(sum, 0.0);
  }
  const Report ry = check_output(y.value(), want_y);
  CHECK_MESSAGE(ry.ok(), "y: ", ry.text);

  // the running statistics: those nn::batch_norm writes (its tests check them in double)
  (void)nn::batch_norm(x, rm_unfused, rv_unfused, weight, bias, k.training, momentum, bn_eps);
  CHECK(values_of(rm) == values_of(rm_unfused));
  CHECK(values_of(rv) == values_of(rv_unfused));

  // gradients: dz = dy where y > 0 (relu's derivative; the mask from y, which the check above
  // tied to the reference), the residual's gradient; x, weight and bias get batch_norm's for dz
  const Tensor<T> dy = random_contiguous<T>(rng, s, any);
  const std::vector<double> dyv = values_of(dy), yv = values_of(y.value());
  std::vector<double> dz(dyv.size());
  for (std::size_t i = 0; i < dz.size(); ++i) dz[i] = yv[i] > 0 ? dyv[i] : 0.0;
  y.backward(dy);
  const NormReference<T> want = norm_reference<T>(xv, dz, sets, stats, !k.training, c, sp, w, b, bn_eps);
  const Report rdx = check_output(vx.grad(), want.dx);
  CHECK_MESSAGE(rdx.ok(), "dx: ", rdx.text);
  if (k.affine) {
    const Report rdw = check_output(vw.grad(), want.dweight);
    CHECK_MESSAGE(rdw.ok(), "dweight: ", rdw.text);
  }
  if (k.bias) {
    const Report rdb = check_output(vb.grad(), want.dbias);
    CHECK_MESSAGE(rdb.ok(), "dbias: ", rdb.text);
  }
  if (residual_var) CHECK(values_of(vr.grad()) == dz);  // the mask passes dy's values exactly
}

TEST_CASE_TEMPLATE("nn::batch_norm_relu and its gradients match torch's formulas in double", T, float, double, bfloat16) {
  WEFT_TEST_RNG(rng);
  const std::vector<Shape> shapes{{4, 3, 5, 7}, {2, 5, 9, 4}, {6, 4}, {3, 2, 11}, {2, 16, 3, 3}};
  for (const Shape& s : shapes)
    for (Residual residual : {Residual::none, Residual::var, Residual::channels_last_view})
      for (bool training : {true, false})
        check_fused<T>(rng, {s, residual, rng.chance(0.7), rng.chance(0.7), training});
}

TEST_CASE("nn::batch_norm_relu: gradcheck in double, training and eval, with and without residual") {
  WEFT_TEST_RNG(rng);
  const Shape s{3, 2, 2, 3};
  const Tensor<double> x0 = uniform_tensor(rng, s, -1, 3), r0 = uniform_tensor(rng, s, -1, 1);
  const Tensor<double> w0 = uniform_tensor(rng, {2}, 0.5, 1.5), b0 = uniform_tensor(rng, {2}, -1, 1);
  Tensor<double> rm = uniform_tensor(rng, {2}, -1, 1), rv = uniform_tensor(rng, {2}, 0.5, 2);
  for (bool training : {true, false}) {
    const std::string mode = training ? "training" : "eval";
    INFO(mode);
    // training repeats the forward: without running statistics, each call normalizes alike
    Tensor<double> run_m = training ? Tensor<double>() : rm, run_v = training ? Tensor<double>() : rv;
    gradcheck(rng, [&](const Vars& v) { return nn::batch_norm_relu(v[0], run_m, run_v, v[1], v[2], v[3], training); },
              {x0, w0, b0, r0});
    gradcheck(rng, [&](const Vars& v) { return nn::batch_norm_relu(v[0], run_m, run_v, v[1], VarD(), VarD(), training); },
              {x0, w0});
  }
}

TEST_CASE("nn::BatchNorm2d::forward_relu equals relu(bn(x) + residual): values, gradients, running statistics") {
  WEFT_TEST_RNG(rng);
  Domain any;
  any.lo = -1, any.hi = 1;
  const Shape s{4, 6, 5, 5};
  nn::BatchNorm2d<float> fused(6), unfused(6);
  fused.weight = ad::param(random_contiguous<float>(rng, {6}, any));
  fused.bias = ad::param(random_contiguous<float>(rng, {6}, any));
  unfused.weight = ad::param(weft::eval(fused.weight.value()));
  unfused.bias = ad::param(weft::eval(fused.bias.value()));
  // float: the fused op rounds batch_norm's value once less than the unfused ops at most, so
  // they agree to a few roundings of the values' scale (which BatchNorm keeps near 1)
  const double tol = 16 * compute_eps<float>();
  auto close = [&](const Tensor<float>& a, const Tensor<float>& b) {
    const std::vector<double> va = values_of(a), vb = values_of(b);
    REQUIRE(va.size() == vb.size());
    double scale = 1;
    for (double v : vb) scale = std::max(scale, std::fabs(v));
    for (std::size_t i = 0; i < va.size(); ++i)
      if (!(std::fabs(va[i] - vb[i]) <= tol * scale)) return false;
    return true;
  };
  for (bool training : {true, false}) {
    const std::string mode = training ? "training" : "eval";
    INFO(mode);
    if (training) fused.train(), unfused.train();
    else fused.eval(), unfused.eval();
    for (bool with_residual : {true, false}) {
      const Tensor<float> x0 = weft::eval(channel_input<float>(rng, s, false, 1.5)), r0 = random_contiguous<float>(rng, s, any);
      const Tensor<float> dy = random_contiguous<float>(rng, s, any);
      const ad::Var<float> xa = ad::param(weft::eval(x0)), xb = ad::param(weft::eval(x0));
      const ad::Var<float> ra = ad::param(weft::eval(r0)), rb = ad::param(weft::eval(r0));
      ad::Var<float> ya = with_residual ? fused.forward_relu(xa, ra) : fused.forward_relu(xa);
      ad::Var<float> yb = with_residual ? ad::Var<float>(weft::relu(unfused(xb) + rb)) : ad::Var<float>(weft::relu(unfused(xb)));
      CHECK(close(ya.value(), yb.value()));
      ya.backward(dy), yb.backward(dy);
      CHECK(close(xa.grad(), xb.grad()));
      if (with_residual) CHECK(close(ra.grad(), rb.grad()));
      CHECK(close(fused.weight.grad(), unfused.weight.grad()));
      CHECK(close(fused.bias.grad(), unfused.bias.grad()));
      CHECK(values_of(fused.running_mean) == values_of(unfused.running_mean));
      CHECK(values_of(fused.running_var) == values_of(unfused.running_var));
      CHECK(values_of(fused.num_batches_tracked) == values_of(unfused.num_batches_tracked));
    }
  }
}

TEST_CASE("nn::batch_norm_relu: a residual of another shape is an error naming the op and the shapes; nothing is written") {
  Tensor<float> x = weft::ones<float>({2, 3, 4, 4}), rm = weft::zeros<float>({3}), rv = weft::ones<float>({3});
  const ad::Var<float> vx = ad::param(Tensor<float>(x)), r = ad::param(weft::ones<float>({2, 3, 4, 5}));
  const std::string e = error_of([&] { (void)nn::batch_norm_relu(vx, rm, rv, ad::Var<float>(), ad::Var<float>(), r, true); });
  CHECK(has(e, "nn::batch_norm_relu"));
  CHECK(has(e, "the residual of shape [2, 3, 4, 5]"));
  CHECK(has(e, "does not fit the input of shape [2, 3, 4, 4]"));
  CHECK(values_of(rm) == std::vector<double>(3, 0.0));
  CHECK(values_of(rv) == std::vector<double>(3, 1.0));
  // batch_norm's own checks name the fused op too
  Tensor<float> rm4 = weft::zeros<float>({4});
  CHECK(has(error_of([&] { (void)nn::batch_norm_relu(vx, rm4, rv, ad::Var<float>(), ad::Var<float>(), ad::Var<float>(), true); }),
            "nn::batch_norm_relu: running_mean of shape [4]"));
}

}  // namespace batch_norm_relu_test
