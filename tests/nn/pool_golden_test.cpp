// SPDX-License-Identifier: MIT
/// @file cpu: max_pool2d (values and indices), avg_pool2d, adaptive_avg_pool2d and interpolate, forward and backward in float64, against torch's on 57 random and edge-case configurations (tests/golden/make_pool_golden.py), NCHW and channels-last.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <weft/nn/interpolate.hpp>
#include <weft/nn/pooling.hpp>

#include "vision_golden.hpp"

using weft::Shape;
using weft::Tensor;
using weft::TensorView;
using weft::nn::InterpolateMode;
using weft::nn::Size2;

namespace {

const weft::io::SafeTensors& pool_golden() { return weft_test::vision_golden("pool_random"); }

/// One case's call, decoded from its args (make_pool_golden.py's order).
struct GoldenCase {
  int kind;
  double a, b;
  Size2 stride, padding, dilation;
  bool ceil_mode, count_include_pad, align_corners, by_scale;
  Size2 ab() const { return Size2(std::int64_t(a), std::int64_t(b)); }
  InterpolateMode mode() const { return kind == 3 ? InterpolateMode::nearest : InterpolateMode::bilinear; }
};
GoldenCase decode(const std::vector<double>& v) {
  auto i = [&](int k) { return std::int64_t(v[std::size_t(k)]); };
  return {int(v[0]),         v[1],      v[2],       Size2(i(3), i(4)), Size2(i(5), i(6)),
          Size2(i(7), i(8)), v[9] != 0, v[10] != 0, v[11] != 0,        v[12] != 0};
}

/// The output and input gradient of a case on x (any layout), through the tensor functions;
/// max_pool2d's indices too.
struct Run {
  Tensor<double> y, dx;
  Tensor<std::int64_t> indices;
};
Run run(const GoldenCase& c, const TensorView<const double>& x, const Tensor<double>& dy) {
  Run r;
  switch (c.kind) {
    case 0: {
      weft::nn::MaxPool2dResult<double> m =
          weft::nn::max_pool2d_with_indices(x, c.ab(), c.stride, c.padding, c.dilation, c.ceil_mode);
      r.dx = weft::nn::max_pool2d_backward(dy, m.indices, x.shape());
      r.y = std::move(m.values), r.indices = std::move(m.indices);
      break;
    }
    case 1:
      r.y = weft::nn::avg_pool2d(x, c.ab(), c.stride, c.padding, c.ceil_mode, c.count_include_pad);
      r.dx =
          weft::nn::avg_pool2d_backward(dy, x.shape(), c.ab(), c.stride, c.padding, c.ceil_mode, c.count_include_pad);
      break;
    case 2:
      r.y = weft::nn::adaptive_avg_pool2d(x, c.ab());
      r.dx = weft::nn::adaptive_avg_pool2d_backward(dy, x.shape());
      break;
    default:
      if (c.by_scale) {
        r.y = weft::nn::interpolate(x, c.a, c.b, c.mode(), c.align_corners);
        r.dx = weft::nn::interpolate_backward(dy, x.shape(), c.a, c.b, c.mode(), c.align_corners);
      } else {
        r.y = weft::nn::interpolate(x, c.ab(), c.mode(), c.align_corners);
        r.dx = weft::nn::interpolate_backward(dy, x.shape(), c.mode(), c.align_corners);
      }
  }
  return r;
}

/// |got - want| <= 64 eps (1 + |want|): float64 sums of at most a few dozen terms of magnitude
/// up to 2, in another order than torch's; -inf (a max_pool2d window without input) exactly.
void check_close(const Tensor<double>& got, const Tensor<double>& want) {
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = got.to_vector(), w = want.to_vector();
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element ", i, ": got ", g[i], ", torch ", w[i]);
    if (std::isinf(w[i])) CHECK(g[i] == w[i]);
    else CHECK(std::fabs(g[i] - w[i]) <= 64 * 0x1p-52 * (1 + std::fabs(w[i])));
  }
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE("nn pooling and interpolate against torch: random and edge configurations, NCHW and channels-last") {
  const int cases = std::stoi(pool_golden().metadata().at("cases"));
  CHECK(cases >= 50);
  for (int i = 0; i < cases; ++i) {
    const std::string name = "c" + std::to_string(i);
    const GoldenCase c = decode(weft_test::golden_double(pool_golden(), name + ".args").to_vector());
    const Tensor<double> x = weft_test::golden_double(pool_golden(), name + ".x");
    const Tensor<double> dy = weft_test::golden_double(pool_golden(), name + ".dy");
    const Tensor<double> nhwc = weft::eval(x.permute({0, 2, 3, 1}));
    const TensorView<const double> channels_last = nhwc.permute({0, 3, 1, 2});
    for (const TensorView<const double>& in : {x.view(), channels_last}) {
      INFO("case ", name, " kind ", c.kind, " x ", weft_test::shape_str(x.shape()), " channels-last ",
           in.strides()[1] == 1);
      const Run r = run(c, in, dy);
      check_close(r.y, weft_test::golden_double(pool_golden(), name + ".y"));
      if (c.kind == 0) CHECK(r.indices.to_vector() == pool_golden().get<std::int64_t>(name + ".indices").to_vector());
      if (pool_golden().contains(name + ".dx")) check_close(r.dx, weft_test::golden_double(pool_golden(), name + ".dx"));
    }
  }
}

}  // TEST_SUITE("cpu")
