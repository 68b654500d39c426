// SPDX-License-Identifier: MIT
/// @file cpu: nn::interpolate (nearest, bilinear with and without align_corners, by size and by scale factors) and its backward against naive double references of torch's rules (random sizes, NCHW, channels-last and W-strided inputs, float32, float64, float16, bfloat16), gradchecks of the Var forms and every error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <weft/nn/interpolate.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "nn/vision_taps.hpp"

using namespace weft_test;
using weft::nn::InterpolateMode;
using weft::nn::Size2;

namespace {

/// One dim of an interpolation: in -> out, and the scale factor when one was given.
struct Axis {
  std::int64_t in, out;
  std::optional<double> scale;
};

/// nearest's source along a dim, as torch computes it: o where out = in and o / 2 where out = 2 in
/// (whatever the scale factor), else floor(o step) in float with step = float(1 / scale) given a
/// scale, else float(in) / float(out); at most in - 1.
std::int64_t reference_nearest(std::int64_t o, const Axis& a) {
  if (a.out == a.in) return o;
  if (a.out == 2 * a.in) return o / 2;
  const float step = a.scale ? float(1.0 / *a.scale) : float(a.in) / float(a.out);
  return std::min<std::int64_t>(std::int64_t(std::floor(float(o) * step)), a.in - 1);
}

/// bilinear's sources along a dim and their weights, in double: the source position is o step
/// (align_corners, step (in - 1) / (out - 1)) or (o + 1/2) step - 1/2 clamped at 0 (step 1 where
/// out = in, else 1 / scale given a scale, else in / out); its floor and the next input (the last
/// one repeated at the end).
std::vector<std::pair<std::int64_t, double>> reference_linear(std::int64_t o, const Axis& a, bool align_corners) {
  double real;
  if (align_corners) {
    real = a.out > 1 ? double(o) * double(a.in - 1) / double(a.out - 1) : 0.0;
  } else {
    const double step = a.out == a.in ? 1.0 : a.scale ? 1.0 / *a.scale : double(a.in) / double(a.out);
    real = std::max((double(o) + 0.5) * step - 0.5, 0.0);
  }
  const std::int64_t i0 = std::min<std::int64_t>(std::int64_t(std::floor(real)), a.in - 1);
  const double l1 = std::min(real - double(i0), 1.0);
  return {{i0, 1.0 - l1}, {std::min(i0 + 1, a.in - 1), l1}};
}

/// The taps of every output of a plane: nearest's one source, bilinear's four (weights the
/// products of the two dims').
std::vector<Taps> reference_taps(const Axis& h, const Axis& w, InterpolateMode mode, bool align_corners) {
  std::vector<Taps> taps;
  for (std::int64_t oh = 0; oh < h.out; ++oh)
    for (std::int64_t ow = 0; ow < w.out; ++ow) {
      if (mode == InterpolateMode::nearest) {
        taps.push_back({{reference_nearest(oh, h) * w.in + reference_nearest(ow, w), 1.0}});
        continue;
      }
      Taps t;
      for (const auto& [ih, lh] : reference_linear(oh, h, align_corners))
        for (const auto& [iw, lw] : reference_linear(ow, w, align_corners)) t.push_back({ih * w.in + iw, lh * lw});
      taps.push_back(t);
    }
  return taps;
}

/// A random output size or scale factor for a dim of `in` inputs (at least one output).
Axis random_axis(Rng& rng, std::int64_t in, bool by_scale) {
  if (!by_scale) return {in, rng.integer(1, 14), std::nullopt};
  for (;;) {
    const double scale = rng.pick(std::vector<double>{0.5, 0.7, 1.0, 1.3, 2.0, 2.5, 3.0});
    const auto out = std::int64_t(std::floor(double(in) * scale));
    if (out >= 1) return {in, out, scale};
  }
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE_TEMPLATE("nn::interpolate and its backward: nearest and bilinear, by size and by scale, every layout", T,
                   float, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  constexpr double eps = compute_eps<T>();
  for (int trial = 0; trial < 36; ++trial) {
    const Shape s{rng.integer(1, 2), rng.integer(1, 5), rng.integer(1, 9), rng.integer(1, 9)};
    const bool by_scale = rng.chance(0.5);
    const Axis h = random_axis(rng, s[2], by_scale), w = random_axis(rng, s[3], by_scale);
    const InterpolateMode mode = trial % 3 == 0 ? InterpolateMode::nearest : InterpolateMode::bilinear;
    const bool align_corners = mode == InterpolateMode::bilinear && trial % 3 == 2;
    const std::vector<Taps> taps = reference_taps(h, w, mode, align_corners);
    // bilinear's weights come from source positions up to max(H, W) computed in the compute type
    const double weight_error = mode == InterpolateMode::bilinear ? 8 * double(std::max(s[2], s[3]) + 1) * eps : 0.0;
    for (VisionLayout layout : kVisionLayouts) {
      INFO("x ", shape_str(s), " -> ", h.out, "x", w.out, std::string(by_scale ? " by scale " : " by size "),
           h.scale.value_or(0), "x", w.scale.value_or(0),
           std::string(mode == InterpolateMode::nearest ? " nearest" : " bilinear"), " align_corners ", align_corners,
           " layout ", std::string(vision_layout_name(layout)));
      const VisionInput<T> in = vision_input<T>(rng, s, layout);
      const Tensor<T> y = by_scale ? weft::nn::interpolate(in.x, *h.scale, *w.scale, mode, align_corners)
                                   : weft::nn::interpolate(in.x, Size2(h.out, w.out), mode, align_corners);
      REQUIRE(y.shape() == Shape{s[0], s[1], h.out, w.out});
      check_taps_forward(y, in.x, same_taps(taps), weight_error);
      const Tensor<T> dy = vision_gradient<T>(rng, y.shape());
      const Tensor<T> dx = by_scale ? weft::nn::interpolate_backward(dy, s, *h.scale, *w.scale, mode, align_corners)
                                    : weft::nn::interpolate_backward(dy, s, mode, align_corners);
      check_taps_backward(dx, s, dy.view(), same_taps(taps), weight_error);
    }
  }
}

TEST_CASE("nn::interpolate: the same bits on 1 and 2 threads (inputs large enough to split), both layouts") {
  WEFT_TEST_RNG(rng);
  const Shape s{2, 8, 30, 30};
  for (VisionLayout layout : kVisionLayouts) {
    INFO("layout ", std::string(vision_layout_name(layout)));
    const VisionInput<float> in = vision_input<float>(rng, s, layout);
    const Tensor<float> dy = vision_gradient<float>(rng, {2, 8, 45, 75});
    check_same_on_1_and_2_threads([&] {
      return std::vector<std::vector<float>>{
          weft::nn::interpolate(in.x, 1.5, 2.5).to_vector(),
          weft::nn::interpolate(in.x, 1.5, 2.5, InterpolateMode::bilinear).to_vector(),
          weft::nn::interpolate_backward(dy, s, 1.5, 2.5, InterpolateMode::bilinear).to_vector()};
    });
  }
}

TEST_CASE("nn::interpolate: torch's known values (nearest doubling, bilinear half-pixel and aligned corners)") {
  const Tensor<float> x = weft::from_vector<float>({1, 2, 3, 4}, {1, 1, 2, 2});
  CHECK(weft::nn::interpolate(x, 2.0, 2.0).to_vector() ==
        std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  // torch: F.interpolate(x, size=3, mode='bilinear', align_corners=True)
  CHECK(weft::nn::interpolate(x, 3, InterpolateMode::bilinear, true).to_vector() ==
        std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4});
  // torch: F.interpolate(x, size=4, mode='bilinear'): sources -0.25 (clamped to 0), 0.25, 0.75, 1.25
  CHECK(weft::nn::interpolate(weft::from_vector<float>({0, 4}, {1, 1, 1, 2}), {1, 4}, InterpolateMode::bilinear)
            .to_vector() == std::vector<float>{0, 1, 3, 4});
}

TEST_CASE("nn::interpolate over Vars: gradcheck in double") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> x = uniform_tensor(rng, {1, 2, 4, 5}, -1, 1);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::interpolate(v[0], {7, 3}); }, {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::interpolate(v[0] * v[0], 1.5, 2.0); }, {x});
  gradcheck(rng,
            [](const Vars& v) -> VarD {
              return weft::nn::interpolate(v[0], {6, 9}, InterpolateMode::bilinear);
            },
            {x});
  gradcheck(rng,
            [](const Vars& v) -> VarD {
              return weft::nn::interpolate(v[0], {3, 8}, InterpolateMode::bilinear, true);
            },
            {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::interpolate(v[0], 2.5, 0.7, InterpolateMode::bilinear); },
            {x});
}

TEST_CASE("nn::interpolate: bad input throws weft::Error naming the op, the shapes and the fix") {
  const Tensor<float> x = weft::ones<float>({1, 2, 3, 3});
  std::string m = error_of([&] { (void)weft::nn::interpolate(x, 6, InterpolateMode::nearest, true); });
  CHECK(has(m, "nn::interpolate"));
  CHECK(has(m, "align_corners = true needs mode bilinear"));
  m = error_of([&] { (void)weft::nn::interpolate(x, {0, 4}); });
  CHECK(has(m, "the output size 0x4 of x of shape [1, 2, 3, 3] must be at least 1x1"));
  m = error_of([&] { (void)weft::nn::interpolate(x, 0.2, 1.0); });
  CHECK(has(m, "the output size 0x3"));
  m = error_of([&] { (void)weft::nn::interpolate(x, -2.0, 1.0, InterpolateMode::bilinear); });
  CHECK(has(m, "scale factor -2 must be positive and finite"));
  m = error_of([&] { (void)weft::nn::interpolate(weft::ones<float>({2, 3, 3}), 6); });
  CHECK(has(m, "x of shape [2, 3, 3] has rank 3"));
  m = error_of([&] { (void)weft::nn::interpolate_backward(weft::ones<float>({1, 2, 6, 5}), x.shape(), 2.0, 2.0); });
  CHECK(has(m, "nn::interpolate_backward"));
  CHECK(has(m, "dy of shape [1, 2, 6, 5] differs from the forward's output shape [1, 2, 6, 6]"));
  float host[4] = {1, 2, 3, 4};
  const auto on_cuda = weft::from_blob<const float>(host, Shape{1, 1, 2, 2}, Shape{4, 4, 2, 1}, weft::Device::cuda());
  m = error_of([&] { (void)weft::nn::interpolate(on_cuda, 2.0, 2.0); });
  CHECK(has(m, "is on cuda:0; this op runs on the CPU so far"));
}

}  // TEST_SUITE("cpu")
