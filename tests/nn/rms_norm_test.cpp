// SPDX-License-Identifier: MIT
/// @file cpu: nn::rms_norm, its backward and its Var form against a double-precision reference of torch's formula (contiguous and strided inputs, one or two normalized dims, float/double/bfloat16, with and without weight, torch's default eps), gradchecks in double, and every error.
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include <weft/nn/rms_norm.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "reference.hpp"

using namespace weft_test;
namespace nn = weft::nn;

namespace {

/// y = x r w, r = 1 / sqrt(mean(x^2) + eps) per row of n; dx = r (g - x r^2 mean(g x)), g = dy w;
/// dweight = sum over rows of dy x r. Bounds: the row sums of n terms err by gamma = (n / 4 + 20)
/// eps relative to their sums of |terms|, r by half of mean(x^2)'s relative error plus a few
/// roundings, then T's rounding.
template <class T>
void check_rms_norm(Rng& rng, const Shape& s, int normalized_dims, bool strided, bool with_weight, bool default_eps,
                    double magnitude) {
  constexpr double eps = compute_eps<T>();
  const std::string what = "shape " + shape_str(s) + " over " + std::to_string(normalized_dims) + " dim(s)" +
                           (strided ? " strided" : " contiguous") + (with_weight ? " weight" : "") +
                           (default_eps ? " default eps" : "");
  INFO(what);
  Domain d, any;
  d.lo = -magnitude, d.hi = magnitude, any.lo = -1, any.hi = 1;
  const TensorView<T> x = make_view<T>(rng, s, d, strided ? Layout::permuted_strided : Layout::contiguous);
  const TensorView<T> dy = make_view<T>(rng, s, any, strided ? Layout::contiguous : Layout::strided);
  std::vector<std::int64_t> ns_dims;
  for (int k = s.rank() - normalized_dims; k < s.rank(); ++k) ns_dims.push_back(s[k]);
  const Shape ns(ns_dims);
  const Tensor<T> weight = with_weight ? random_contiguous<T>(rng, ns, any) : Tensor<T>();
  const std::int64_t n = ns.numel(), rows = s.numel() / n;
  const std::optional<double> given_eps = default_eps ? std::nullopt : std::optional<double>(rng.uniform(1e-6, 1e-2));
  // torch's default: the epsilon of the type the op computes in (float for bfloat16)
  const double rms_eps = given_eps.value_or(compute_eps<T>());
  const std::vector<double> xv = values_of(x), dyv = values_of(dy);
  const std::vector<double> w = with_weight ? values_of(weight) : std::vector<double>(std::size_t(n), 1.0);

  const double gamma = (double(n) / 4 + 20) * eps, gamma_rows = (double(rows) / 4 + 20) * eps;
  std::vector<Expect> want_y(xv.size()), want_dx(xv.size());
  std::vector<double> dw(static_cast<std::size_t>(n), 0.0), dw_abs(static_cast<std::size_t>(n), 0.0);
  std::vector<double> rs(static_cast<std::size_t>(rows));
  const double r_rel = gamma / 2 + 4 * eps;
  for (std::int64_t i = 0; i < rows; ++i) {
    double sq = 0, sgx = 0, sgx_abs = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t at = std::size_t(i * n + j);
      sq += xv[at] * xv[at], sgx += dyv[at] * w[std::size_t(j)] * xv[at], sgx_abs += std::fabs(dyv[at] * w[std::size_t(j)] * xv[at]);
    }
    const double r = 1 / std::sqrt(sq / double(n) + rms_eps);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::size_t at = std::size_t(i * n + j), u = std::size_t(j);
      const double g = dyv[at] * w[u];
      Expect& y = want_y[at];
      y.want = xv[at] * r * w[u];
      y.tol = std::fabs(y.want) * (r_rel + 3 * eps) + ulp_of<T>(y.want);
      Expect& dx = want_dx[at];
      dx.want = r * (g - xv[at] * r * r * sgx / double(n));
      dx.tol = r * (gamma + 3 * r_rel + 8 * eps) * (std::fabs(g) + std::fabs(xv[at]) * r * r * sgx_abs / double(n)) +
               ulp_of<T>(dx.want);
      dw[u] += dyv[at] * xv[at] * r, dw_abs[u] += std::fabs(dyv[at] * xv[at] * r);
    }
  }
  std::vector<Expect> want_dw;
  for (std::size_t u = 0; u < std::size_t(n); ++u)
    want_dw.push_back({dw[u], (gamma_rows + r_rel + 4 * eps) * dw_abs[u] + ulp_of<T>(dw[u])});

  const Tensor<T> y = nn::rms_norm(x, ns, weight, given_eps);
  REQUIRE(y.shape() == s);
  const Report ry = check_output(y, want_y);
  CHECK_MESSAGE(ry.ok(), ry.text);
  const nn::RmsNormGradients<T> g = nn::rms_norm_backward(dy, x, ns, weight, given_eps);
  const Report rdx = check_output(g.dx, want_dx), rdw = check_output(g.dweight, want_dw);
  CHECK_MESSAGE(rdx.ok(), "dx: ", rdx.text);
  CHECK_MESSAGE(rdw.ok(), "dweight: ", rdw.text);
}

}  // namespace

TEST_CASE_TEMPLATE("nn::rms_norm and its backward match torch's formula in double", T, float, double, bfloat16) {
  WEFT_TEST_RNG(rng);
  const std::vector<std::pair<Shape, int>> cases{{{4, 7, 33}, 1}, {{3, 5, 6}, 2}, {{8, 64}, 1}, {{2, 3, 4, 5}, 3}, {{130}, 1}};
  for (const auto& [s, dims] : cases)
    for (bool strided : {false, true}) {
      check_rms_norm<T>(rng, s, dims, strided, rng.chance(0.7), rng.chance(0.5), 2.0);
      // inputs small enough that the default eps weighs in
      check_rms_norm<T>(rng, s, dims, strided, rng.chance(0.5), true, 3e-4);
    }
}

TEST_CASE("nn::rms_norm's default eps is torch's: float's epsilon for float and bfloat16, double's for double") {
  // torch 2.15: F.rms_norm(torch.full((2, 8), 1e-3, dtype=torch.bfloat16), (8,)) is 0.9453 everywhere
  // (bfloat16's own epsilon, 2^-7, would give 0.0113).
  const Tensor<bfloat16> x = weft::full<bfloat16>({2, 8}, bfloat16(1e-3f));
  const std::vector<double> y = values_of(nn::rms_norm(x, {8}));
  for (double v : y) CHECK(v == round_bfloat16(0.9453));
  CHECK(weft::detail::rms_norm_eps<bfloat16>("t", std::nullopt, {1}) == double(std::numeric_limits<float>::epsilon()));
  CHECK(weft::detail::rms_norm_eps<double>("t", std::nullopt, {1}) == std::numeric_limits<double>::epsilon());
}

TEST_CASE("nn::rms_norm over Vars: gradcheck in double, with and without weight") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> x0 = uniform_tensor(rng, {3, 2, 4}, -1.5, 1.5), w0 = uniform_tensor(rng, {2, 4}, 0.5, 1.5);
  gradcheck(rng, [](const Vars& v) { return nn::rms_norm(v[0], {2, 4}, v[1], 1e-3); }, {x0, w0});
  gradcheck(rng, [](const Vars& v) { return nn::rms_norm(v[0], {4}); }, {x0});
  gradcheck(rng, [&](const Vars& v) { return nn::rms_norm(v[0], {4}, weft::ones<double>({4}), 0.1); }, {x0});
}

TEST_CASE("nn::rms_norm: bad input is an error naming the op and the shapes") {
  const Tensor<float> x = weft::ones<float>({2, 3, 4});
  std::string e = error_of([&] { (void)nn::rms_norm(x, {3}); });
  CHECK(has(e, "nn::rms_norm"));
  CHECK(has(e, "input of shape [2, 3, 4] does not end with normalized_shape [3]"));
  e = error_of([&] { (void)nn::rms_norm(x, {4}, weft::ones<float>({3})); });
  CHECK(has(e, "weight of shape [3] differs from normalized_shape [4]"));
  e = error_of([&] { (void)nn::rms_norm(x, {4}, {}, -1.0); });
  CHECK(has(e, "eps must be >= 0, got -1"));
  e = error_of([&] { (void)nn::rms_norm(x, {1, 2, 3, 4}); });
  CHECK(has(e, "normalized_shape is 1 to 3 of the input's last dims"));
  e = error_of([&] { (void)nn::rms_norm_backward(weft::ones<float>({2, 3, 5}), x, {4}); });
  CHECK(has(e, "nn::rms_norm_backward"));
  CHECK(has(e, "dy of shape [2, 3, 5] differs from x's shape [2, 3, 4]"));
}
