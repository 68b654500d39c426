// SPDX-License-Identifier: MIT
/// @file cpu: nn::group_norm, its backward and its Var form against double-precision references of torch's formulas (NCHW and channels-last inputs read in place, [N, C] and [N, C, L] too, float/double/bfloat16, every group count, with and without weight and bias), gradchecks in double, and every error.
#include <cmath>
#include <vector>

#include <weft/nn/group_norm.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "norm_reference.hpp"

using namespace weft_test;
namespace nn = weft::nn;

namespace {

template <class T>
void check_group_norm(Rng& rng, const Shape& s, std::int64_t groups, bool channels_last) {
  constexpr double eps = compute_eps<T>();
  const std::int64_t n = s[0], c = s[1], sp = s.numel() / (n * c);
  const bool affine = rng.chance(0.7), with_bias = rng.chance(0.7);
  const std::string what = "shape " + shape_str(s) + " groups " + std::to_string(groups) +
                           (channels_last ? " channels-last" : " contiguous") + (affine ? " weight" : "") +
                           (with_bias ? " bias" : "");
  INFO(what);
  const TensorView<T> x = channel_input<T>(rng, s, channels_last, rng.uniform(-4, 4));
  const TensorView<T> dy = channel_input<T>(rng, s, !channels_last, 0.0);
  Domain any;
  any.lo = -1, any.hi = 1;
  const Tensor<T> weight = affine ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  const Tensor<T> bias = with_bias ? random_contiguous<T>(rng, {c}, any) : Tensor<T>();
  const std::vector<double> xv = values_of(x);
  const std::vector<double> w = affine ? values_of(weight) : std::vector<double>(std::size_t(c), 1.0);
  const std::vector<double> b = with_bias ? values_of(bias) : std::vector<double>(std::size_t(c), 0.0);
  const double gn_eps = rng.chance(0.5) ? 1e-5 : 0.1;

  const std::vector<std::vector<std::size_t>> sets = group_sets(n, c, sp, groups);
  std::vector<Moments> stats;
  for (const auto& set : sets) stats.push_back(moments(xv, set, eps));
  const NormReference<T> want = norm_reference<T>(xv, values_of(dy), sets, stats, false, c, sp, w, b, gn_eps);

  const Tensor<T> y = nn::group_norm(x, groups, weight, bias, gn_eps);
  REQUIRE(y.shape() == s);
  CHECK(y.is_contiguous());
  const Report r = check_output(y, want.y);
  CHECK_MESSAGE(r.ok(), r.text);
  const nn::GroupNormGradients<T> g = nn::group_norm_backward(dy, x, groups, weight, gn_eps);
  check_gradients(g, want);
}

}  // namespace

TEST_CASE_TEMPLATE("nn::group_norm and its backward match torch's formulas in double", T, float, double, bfloat16) {
  WEFT_TEST_RNG(rng);
  const std::vector<std::pair<Shape, std::vector<std::int64_t>>> cases{
      {{2, 6, 5, 7}, {1, 2, 3, 6}}, {{3, 8, 4, 3}, {4, 8}}, {{4, 6}, {2, 3}}, {{2, 4, 13}, {1, 2}}, {{1, 12, 3, 3}, {3}}};
  for (const auto& [s, group_counts] : cases)
    for (std::int64_t groups : group_counts)
      for (bool channels_last : {false, true}) check_group_norm<T>(rng, s, groups, channels_last);
}

TEST_CASE("nn::group_norm over Vars: gradcheck in double, with and without weight and bias") {
  WEFT_TEST_RNG(rng);
  for (bool channels_last : {false, true}) {
    const std::string what = channels_last ? "channels-last" : "contiguous";
    INFO(what);
    const Tensor<double> x0 = weft::eval(channel_input<double>(rng, {2, 4, 2, 3}, channels_last, 1.0));
    const Tensor<double> w0 = uniform_tensor(rng, {4}, 0.5, 1.5), b0 = uniform_tensor(rng, {4}, -1, 1);
    gradcheck(rng, [](const Vars& v) { return nn::group_norm(v[0], 2, v[1], v[2]); }, {x0, w0, b0});
    gradcheck(rng, [](const Vars& v) { return nn::group_norm(v[0], 4, VarD(), VarD(), 0.01); }, {x0});
  }
}

TEST_CASE("nn::group_norm: bad input is an error naming the op and the shapes") {
  const Tensor<float> x = weft::ones<float>({2, 6, 4});
  std::string e = error_of([&] { (void)nn::group_norm(x, 4, {}, {}); });
  CHECK(has(e, "nn::group_norm"));
  CHECK(has(e, "Expected number of channels in input to be divisible by num_groups, but got input of shape [2, 6, 4] and num_groups=4"));
  CHECK(has(e, "channels 6 not divisible by groups 4"));
  e = error_of([&] { (void)nn::group_norm(x, 0, {}, {}); });
  CHECK(has(e, "groups must be >= 1, got 0"));
  e = error_of([&] { (void)nn::group_norm(x, 3, weft::ones<float>({3}), {}); });
  CHECK(has(e, "weight of shape [3] does not fit the input of shape [2, 6, 4]"));
  e = error_of([&] { (void)nn::group_norm(x, 3, {}, weft::ones<float>({6, 1})); });
  CHECK(has(e, "bias of shape [6, 1]"));
  e = error_of([&] { (void)nn::group_norm(weft::ones<float>({6}), 3, {}, {}); });
  CHECK(has(e, "needs at least 2 dims"));
  e = error_of([&] { (void)nn::group_norm_backward(weft::ones<float>({2, 6, 5}), x, 3, {}); });
  CHECK(has(e, "nn::group_norm_backward"));
  CHECK(has(e, "dy of shape [2, 6, 5] differs from x's shape [2, 6, 4]"));
}
