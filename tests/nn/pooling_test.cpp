// SPDX-License-Identifier: MIT
/// @file cpu: nn::max_pool2d (+ indices), avg_pool2d and adaptive_avg_pool2d and their backward against naive double references of torch's rules (random configs, NCHW, channels-last and W-strided inputs, float32, float64, float16, bfloat16), NaN propagation, gradchecks of the Var forms, the modules and every error.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>
#include <weft/nn/modules/pooling.hpp>
#include <weft/nn/pooling.hpp>

#include "ad/gradcheck.hpp"
#include "error_check.hpp"
#include "nn/vision_taps.hpp"

using namespace weft_test;
using weft::nn::Size2;

namespace {

/// A pooling configuration: input shape and torch's arguments.
struct PoolCase {
  Shape shape;
  Size2 kernel, stride, padding, dilation;
  bool ceil_mode = false, count_include_pad = true;
};

/// torch's output size, from its definition: floor (ceil in ceil_mode) of
/// (in + 2 p - d (k - 1) - 1) / s, plus 1, less the last window if it starts at or past in + p.
std::int64_t reference_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d,
                           bool ceil_mode) {
  const double q = double(in + 2 * p - d * (k - 1) - 1) / double(s);
  std::int64_t out = std::int64_t(ceil_mode ? std::ceil(q) : std::floor(q)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

/// A random valid configuration (output at least 1x1); dilation 1 when `dilated` is false.
PoolCase random_case(Rng& rng, bool dilated) {
  for (;;) {
    PoolCase c;
    const std::int64_t H = rng.integer(1, 11), W = rng.integer(1, 11);
    c.shape = Shape{rng.integer(1, 2), rng.integer(1, 5), H, W};
    c.kernel = Size2(rng.integer(1, 4), rng.integer(1, 4));
    c.stride = Size2(rng.integer(1, 3), rng.integer(1, 3));
    c.padding = Size2(rng.integer(0, c.kernel.h / 2), rng.integer(0, c.kernel.w / 2));
    c.dilation = dilated ? Size2(rng.integer(1, 2), rng.integer(1, 2)) : Size2(1);
    c.ceil_mode = rng.chance(0.5);
    c.count_include_pad = rng.chance(0.5);
    if (reference_out(H, c.kernel.h, c.stride.h, c.padding.h, c.dilation.h, c.ceil_mode) >= 1 &&
        reference_out(W, c.kernel.w, c.stride.w, c.padding.w, c.dilation.w, c.ceil_mode) >= 1)
      return c;
  }
}

std::string describe(const PoolCase& c) {
  return weft::detail::cat("x ", shape_str(c.shape), " kernel ", c.kernel.h, "x", c.kernel.w, " stride ", c.stride.h,
                           "x", c.stride.w, " padding ", c.padding.h, "x", c.padding.w, " dilation ", c.dilation.h, "x",
                           c.dilation.w, " ceil_mode ", c.ceil_mode, " count_include_pad ", c.count_include_pad);
}

/// max_pool2d's reference for one plane: per output, the maximum over the window's inputs in
/// torch's order (kh, then kw), x > m or x NaN taking over, from -inf at the window's first
/// position stepped past the left padding (torch's index of a window that holds no input, which
/// then gives -inf: possible with dilation). The taps are {(argmax, 1)}: the backward scatters
/// there, as torch's, also for such a window (none when its index is past the plane); `indices`
/// and `values` get the argmaxes and maxima.
template <class T>
std::vector<Taps> reference_max_taps(const TensorView<const T>& x, std::int64_t n, std::int64_t c, const PoolCase& p,
                                     std::int64_t OH, std::int64_t OW, std::vector<std::int64_t>& indices,
                                     std::vector<double>& values) {
  const std::int64_t H = p.shape[2], W = p.shape[3];
  std::vector<Taps> taps;
  for (std::int64_t oh = 0; oh < OH; ++oh)
    for (std::int64_t ow = 0; ow < OW; ++ow) {
      std::int64_t h0 = oh * p.stride.h - p.padding.h, w0 = ow * p.stride.w - p.padding.w;
      while (h0 < 0) h0 += p.dilation.h;
      while (w0 < 0) w0 += p.dilation.w;
      double m = -std::numeric_limits<double>::infinity();
      std::int64_t arg = h0 * W + w0;
      for (std::int64_t kh = 0; kh < p.kernel.h; ++kh)
        for (std::int64_t kw = 0; kw < p.kernel.w; ++kw) {
          const std::int64_t ih = oh * p.stride.h - p.padding.h + kh * p.dilation.h;
          const std::int64_t iw = ow * p.stride.w - p.padding.w + kw * p.dilation.w;
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          const double v = vision_at(x, n, c, ih, iw);
          if (v > m || std::isnan(v)) m = v, arg = ih * W + iw;
        }
      indices.push_back(arg);
      values.push_back(m);
      taps.push_back(arg < H * W ? Taps{{arg, 1.0}} : Taps{});
    }
  return taps;
}

/// avg_pool2d's taps (the same for every plane): the window clipped to the input, each input
/// weighted 1 / divisor; the divisor the window clipped to the padded input (count_include_pad)
/// or the inputs' count. A window with no input gives no taps (output 0).
std::vector<Taps> reference_avg_taps(const PoolCase& p, std::int64_t OH, std::int64_t OW) {
  const std::int64_t H = p.shape[2], W = p.shape[3];
  std::vector<Taps> taps;
  for (std::int64_t oh = 0; oh < OH; ++oh)
    for (std::int64_t ow = 0; ow < OW; ++ow) {
      const std::int64_t h0 = oh * p.stride.h - p.padding.h, w0 = ow * p.stride.w - p.padding.w;
      const std::int64_t h1 = std::min(h0 + p.kernel.h, H + p.padding.h),
                         w1 = std::min(w0 + p.kernel.w, W + p.padding.w);
      Taps t;
      for (std::int64_t ih = std::max<std::int64_t>(h0, 0); ih < std::min(h1, H); ++ih)
        for (std::int64_t iw = std::max<std::int64_t>(w0, 0); iw < std::min(w1, W); ++iw)
          t.push_back({ih * W + iw, 1.0});
      const double divisor = p.count_include_pad ? double((h1 - h0) * (w1 - w0)) : double(t.size());
      for (auto& tap : t) tap.second = 1.0 / divisor;
      taps.push_back(t);
    }
  return taps;
}

/// adaptive_avg_pool2d's taps: output o's window along a dim of in inputs split into out is
/// [floor(o in / out), ceil((o + 1) in / out)), each input weighted 1 / the window's size.
std::vector<Taps> reference_adaptive_taps(std::int64_t H, std::int64_t W, std::int64_t OH, std::int64_t OW) {
  std::vector<Taps> taps;
  for (std::int64_t oh = 0; oh < OH; ++oh)
    for (std::int64_t ow = 0; ow < OW; ++ow) {
      const auto h0 = std::int64_t(std::floor(double(oh * H) / double(OH))),
                 h1 = std::int64_t(std::ceil(double((oh + 1) * H) / double(OH)));
      const auto w0 = std::int64_t(std::floor(double(ow * W) / double(OW))),
                 w1 = std::int64_t(std::ceil(double((ow + 1) * W) / double(OW)));
      Taps t;
      for (std::int64_t ih = h0; ih < h1; ++ih)
        for (std::int64_t iw = w0; iw < w1; ++iw) t.push_back({ih * W + iw, 1.0 / double((h1 - h0) * (w1 - w0))});
      taps.push_back(t);
    }
  return taps;
}

}  // namespace

TEST_SUITE("cpu") {
TEST_CASE_TEMPLATE("nn::max_pool2d and its indices and backward: random configs, every layout", T, float, double, half,
                   bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 24; ++trial) {
    const PoolCase p = random_case(rng, true);
    for (VisionLayout layout : kVisionLayouts) {
      INFO(describe(p), " layout ", std::string(vision_layout_name(layout)));
      const VisionInput<T> in = vision_input<T>(rng, p.shape, layout);
      const auto r = weft::nn::max_pool2d_with_indices(in.x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
      const std::int64_t OH = reference_out(p.shape[2], p.kernel.h, p.stride.h, p.padding.h, p.dilation.h, p.ceil_mode);
      const std::int64_t OW = reference_out(p.shape[3], p.kernel.w, p.stride.w, p.padding.w, p.dilation.w, p.ceil_mode);
      REQUIRE(r.values.shape() == Shape{p.shape[0], p.shape[1], OH, OW});
      REQUIRE(r.indices.shape() == r.values.shape());
      std::vector<std::vector<Taps>> planes;
      std::vector<std::int64_t> indices;
      std::vector<double> values;
      for (std::int64_t n = 0; n < p.shape[0]; ++n)
        for (std::int64_t c = 0; c < p.shape[1]; ++c)
          planes.push_back(reference_max_taps(in.x, n, c, p, OH, OW, indices, values));
      auto taps_of = [&](std::int64_t n, std::int64_t c) -> const std::vector<Taps>& {
        return planes[std::size_t(n * p.shape[1] + c)];
      };
      CHECK(r.indices.to_vector() == indices);
      // the values are exactly the inputs at the argmaxes (-inf for a window without input)
      for (std::int64_t o = 0; o < r.values.numel(); ++o) CHECK(value_of(r.values.data()[o]) == values[std::size_t(o)]);
      const Tensor<T> dy = vision_gradient<T>(rng, r.values.shape());
      check_taps_backward(weft::nn::max_pool2d_backward(dy, r.indices, p.shape), p.shape, dy.view(), taps_of);
      const Tensor<T> plain = weft::nn::max_pool2d(in.x, p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
      CHECK(plain.to_vector() == r.values.to_vector());
    }
  }
}

TEST_CASE_TEMPLATE("nn::avg_pool2d and its backward: random configs, every layout", T, float, double, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 24; ++trial) {
    const PoolCase p = random_case(rng, false);
    const std::int64_t OH = reference_out(p.shape[2], p.kernel.h, p.stride.h, p.padding.h, 1, p.ceil_mode);
    const std::int64_t OW = reference_out(p.shape[3], p.kernel.w, p.stride.w, p.padding.w, 1, p.ceil_mode);
    const std::vector<Taps> taps = reference_avg_taps(p, OH, OW);
    for (VisionLayout layout : kVisionLayouts) {
      INFO(describe(p), " layout ", std::string(vision_layout_name(layout)));
      const VisionInput<T> in = vision_input<T>(rng, p.shape, layout);
      const Tensor<T> y = weft::nn::avg_pool2d(in.x, p.kernel, p.stride, p.padding, p.ceil_mode, p.count_include_pad);
      check_taps_forward(y, in.x, same_taps(taps));
      const Tensor<T> dy = vision_gradient<T>(rng, y.shape());
      // dy read in place through strides too: a transposed copy's permuted view
      const Tensor<T> dy_t = weft::eval(dy.view().transpose(2, 3));
      const TensorView<const T> dy_view = static_cast<const Tensor<T>&>(dy_t).view().transpose(2, 3);
      const Tensor<T> dx = weft::nn::avg_pool2d_backward(dy_view, p.shape, p.kernel, p.stride, p.padding, p.ceil_mode,
                                                         p.count_include_pad);
      check_taps_backward(dx, p.shape, dy.view(), same_taps(taps));
    }
  }
}

TEST_CASE_TEMPLATE("nn::adaptive_avg_pool2d and its backward: random sizes, every layout", T, float, double, half,
                   bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int trial = 0; trial < 20; ++trial) {
    const Shape s{rng.integer(1, 2), rng.integer(1, 5), rng.integer(1, 20),
                  rng.integer(1, 20)};                      // rows past 16: the vectorized sums
    const Size2 out(rng.integer(1, 9), rng.integer(1, 9));  // larger than the input too: windows of 1
    const std::vector<Taps> taps = reference_adaptive_taps(s[2], s[3], out.h, out.w);
    for (VisionLayout layout : kVisionLayouts) {
      INFO("x ", shape_str(s), " output ", out.h, "x", out.w, " layout ", std::string(vision_layout_name(layout)));
      const VisionInput<T> in = vision_input<T>(rng, s, layout);
      const Tensor<T> y = weft::nn::adaptive_avg_pool2d(in.x, out);
      REQUIRE(y.shape() == Shape{s[0], s[1], out.h, out.w});
      check_taps_forward(y, in.x, same_taps(taps));
      const Tensor<T> dy = vision_gradient<T>(rng, y.shape());
      check_taps_backward(weft::nn::adaptive_avg_pool2d_backward(dy, s), s, dy.view(), same_taps(taps));
    }
  }
}

TEST_CASE("nn pooling: the same bits on 1 and 2 threads (inputs large enough to split), both layouts") {
  WEFT_TEST_RNG(rng);
  const Shape s{2, 8, 64, 64};
  for (VisionLayout layout : kVisionLayouts) {
    INFO("layout ", std::string(vision_layout_name(layout)));
    const VisionInput<float> in = vision_input<float>(rng, s, layout);
    const Tensor<float> dy = vision_gradient<float>(rng, {2, 8, 32, 32});
    check_same_on_1_and_2_threads([&] {
      const auto r = weft::nn::max_pool2d_with_indices(in.x, 3, 2, 1);
      const std::vector<std::int64_t> indices = r.indices.to_vector();
      return std::vector<std::vector<float>>{r.values.to_vector(),
                                             std::vector<float>(indices.begin(), indices.end()),
                                             weft::nn::avg_pool2d(in.x, 2, 2, 1, true).to_vector(),
                                             weft::nn::adaptive_avg_pool2d(in.x, {7, 5}).to_vector(),
                                             weft::nn::max_pool2d_backward(dy, r.indices, s).to_vector(),
                                             weft::nn::avg_pool2d_backward(dy, s, 2).to_vector(),
                                             weft::nn::adaptive_avg_pool2d_backward(dy, s).to_vector()};
    });
  }
}

TEST_CASE("nn::max_pool2d: a NaN wins its windows, the first of equal maxima is the index, -inf windows") {
  // x = [[1, nan, 3], [3, 2, 1], [-inf, -inf, 0]], kernel 2, stride 1
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const Tensor<double> x = weft::from_vector<double>({1, nan, 3, 3, 2, 1, -inf, -inf, 0}, {1, 1, 3, 3});
  const auto r = weft::nn::max_pool2d_with_indices(x, 2, 1);
  const std::vector<double> v = r.values.to_vector();
  CHECK(std::isnan(v[0]));
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == 3);  // [3, 2; -inf, -inf]: 3 at (1, 0)
  CHECK(v[3] == 2);
  CHECK(r.indices.to_vector() == std::vector<std::int64_t>{1, 1, 3, 4});
  // every input -inf: the window's first input is the index (torch's)
  const Tensor<float> all_inf = weft::full<float>({1, 1, 2, 2}, -std::numeric_limits<float>::infinity());
  const auto ri = weft::nn::max_pool2d_with_indices(all_inf, 2, 1, 1);
  CHECK(ri.indices.to_vector() == std::vector<std::int64_t>{0, 0, 1, 0, 0, 1, 2, 2, 3});
}

TEST_CASE("nn pooling over Vars: gradcheck in double") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> x = uniform_tensor(rng, {2, 2, 5, 6}, -1, 1);
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::max_pool2d(v[0], 2); }, {x});
  gradcheck(rng,
            [](const Vars& v) -> VarD {
              return weft::nn::max_pool2d(v[0], {3, 2}, Size2{2, 1}, 1, {1, 2}, true);
            },
            {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::avg_pool2d(v[0] * 2.0, 3, 2, 1, true, false); }, {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::avg_pool2d(v[0], {2, 3}, Size2{1, 2}, {1, 0}); }, {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::adaptive_avg_pool2d(v[0], {3, 4}); }, {x});
  gradcheck(rng, [](const Vars& v) -> VarD { return weft::nn::adaptive_avg_pool2d(weft::sin(v[0]), 1); }, {x});
}

TEST_CASE("nn::MaxPool2d, AvgPool2d, AdaptiveAvgPool2d: the functional ops with their arguments, no parameters") {
  WEFT_TEST_RNG(rng);
  const Tensor<double> x = uniform_tensor(rng, {1, 3, 7, 6}, -1, 1);
  const auto v = weft::ad::param(Tensor<double>(x));
  weft::nn::MaxPool2d<double> max_pool(3, 2, 1, 1, true);
  weft::nn::AvgPool2d<double> avg_pool({2, 3}, std::nullopt, {1, 1}, false, false);
  weft::nn::AdaptiveAvgPool2d<double> adaptive({2, 5});
  CHECK(max_pool.parameters().empty());
  CHECK(avg_pool.state_dict().empty());
  CHECK(max_pool(v).value().to_vector() == weft::nn::max_pool2d(x, 3, 2, 1, 1, true).to_vector());
  CHECK(avg_pool(v).value().to_vector() ==
        weft::nn::avg_pool2d(x, {2, 3}, Size2{2, 3}, {1, 1}, false, false).to_vector());
  CHECK(adaptive(v).value().to_vector() == weft::nn::adaptive_avg_pool2d(x, {2, 5}).to_vector());
  weft::sum(adaptive(v)).backward();
  CHECK(v.grad().to_vector() ==
        weft::nn::adaptive_avg_pool2d_backward(weft::ones<double>({1, 3, 2, 5}), x.shape()).to_vector());
}

TEST_CASE("nn pooling: bad input throws weft::Error naming the op, the shapes and the fix") {
  const Tensor<float> x = weft::ones<float>({1, 2, 3, 3});
  std::string m = error_of([&] { (void)weft::nn::max_pool2d(x, 5); });
  CHECK(has(m, "nn::max_pool2d"));
  CHECK(has(m, "kernel 5x5"));
  CHECK(has(m, "larger than the padded input 3x3"));
  m = error_of([&] { (void)weft::nn::avg_pool2d(x, 3, 1, 2); });
  CHECK(has(m, "nn::avg_pool2d"));
  CHECK(has(m, "padding 2x2 must be in [0, kernel / 2] for kernel 3x3"));
  m = error_of([&] { (void)weft::nn::max_pool2d(weft::ones<float>({2, 3, 3}), 2); });
  CHECK(has(m, "x of shape [2, 3, 3] has rank 3"));
  CHECK(has(m, "[N, C, H, W]"));
  m = error_of([&] { (void)weft::nn::max_pool2d(x, 2, 0); });
  CHECK(has(m, "stride 0x0 must be positive"));
  m = error_of([&] { (void)weft::nn::max_pool2d(x, 2, 1, 0, {1, 0}); });
  CHECK(has(m, "dilation 1x0 must be positive"));
  m = error_of([&] { (void)weft::nn::adaptive_avg_pool2d(weft::ones<float>({1, 0, 3, 3}), 2); });
  CHECK(has(m, "empty C, H or W"));
  m = error_of([&] { (void)weft::nn::adaptive_avg_pool2d(x, {-1, 2}); });
  CHECK(has(m, "output_size -1x2 must be >= 0"));
  const auto r = weft::nn::max_pool2d_with_indices(x, 2);
  m = error_of([&] { (void)weft::nn::max_pool2d_backward(weft::ones<float>({1, 2, 2, 2}), r.indices, x.shape()); });
  CHECK(has(m, "nn::max_pool2d_backward"));
  CHECK(has(m, "do not fit input_shape [1, 2, 3, 3]"));
  Tensor<std::int64_t> bad = weft::eval(r.indices - std::int64_t(1));
  m = error_of([&] { (void)weft::nn::max_pool2d_backward(weft::ones<float>({1, 2, 1, 1}), bad, x.shape()); });
  CHECK(has(m, "index -1 at output (0, 0, 0, 0) is negative"));
  m = error_of([&] { (void)weft::nn::avg_pool2d_backward(weft::ones<float>({1, 2, 2, 2}), x.shape(), 2); });
  CHECK(has(m, "dy of shape [1, 2, 2, 2] differs from the forward's output shape [1, 2, 1, 1]"));
  m = error_of([&] { (void)weft::nn::adaptive_avg_pool2d_backward(weft::ones<float>({1, 3, 2, 2}), x.shape()); });
  CHECK(has(m, "nn::adaptive_avg_pool2d_backward"));
  m = error_of([&] { (void)weft::nn::avg_pool2d_backward(weft::ones<float>({1, 2, 1, 1}), Shape{1, 2, 3}, 2); });
  CHECK(has(m, "input_shape [1, 2, 3] is not an [N, C, H, W] shape"));
  // a CUDA tensor (a view of host memory labelled cuda: the check comes before any read)
  float host[4] = {1, 2, 3, 4};
  const auto on_cuda = weft::from_blob<const float>(host, Shape{1, 1, 2, 2}, Shape{4, 4, 2, 1}, weft::Device::cuda());
  m = error_of([&] { (void)weft::nn::avg_pool2d(on_cuda, 2); });
  CHECK(has(m, "nn::avg_pool2d: x (shape [1, 1, 2, 2]) is on cuda:0; this op runs on the CPU so far"));
}

}  // TEST_SUITE("cpu")
