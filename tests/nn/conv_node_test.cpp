// SPDX-License-Identifier: MIT
/// @file nn::conv2d on tensors as an expression node: pointwise expressions around it (bias, relu, residual, a scale, gelu, per-channel and per-image operands) run as the convolution's epilogue (the fusion log says so), into poisoned NCHW and channels-last destinations, checked against a direct double-precision convolution; the statements that cannot (an operand whose H and W do not merge, two convolutions, bfloat16) still give the same values; assigned alone it writes destinations of either layout; the destination may be the residual; a bad epilogue operand throws in conv2d's words and writes nothing.
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>

#include "error_check.hpp"
#include "log_capture.hpp"
#include "reference.hpp"

using namespace weft;
using namespace weft_test;

// A named namespace (meson's unity build puts several test files in one translation unit).
namespace conv_node_test {

/// One convolution's sizes and options.
struct Config {
  std::int64_t n, c, h, w, o, k, stride, pad, dilation, groups;
  std::int64_t oh() const { return (h + 2 * pad - dilation * (k - 1) - 1) / stride + 1; }
  std::int64_t ow() const { return (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1; }
  Shape x_shape() const { return {n, c, h, w}; }
  Shape w_shape() const { return {o, c / groups, k, k}; }
  Shape y_shape() const { return {n, o, oh(), ow()}; }
  nn::ConvOptions options() const {
    return {.stride = stride, .padding = nn::ConvPadding(pad, pad), .dilation = dilation, .groups = groups};
  }
};

/// The convolution by its definition, in double: value[n, o, i, j] and the sum of |w x| over its
/// terms (the scale of its rounding error). x and w row-major over their shapes (any layout read
/// through values_of).
struct Direct {
  std::vector<double> value, magnitude;
};
Direct direct(const Config& g, const std::vector<double>& x, const std::vector<double>& w) {
  const std::int64_t cg = g.c / g.groups, og = g.o / g.groups, oh = g.oh(), ow = g.ow();
  Direct d{std::vector<double>(std::size_t(g.n * g.o * oh * ow)), std::vector<double>(std::size_t(g.n * g.o * oh * ow))};
  for (std::int64_t n = 0; n < g.n; ++n)
    for (std::int64_t o = 0; o < g.o; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          double sum = 0, mag = 0;
          for (std::int64_t c = 0; c < cg; ++c)
            for (std::int64_t a = 0; a < g.k; ++a)
              for (std::int64_t b = 0; b < g.k; ++b) {
                const std::int64_t h = i * g.stride - g.pad + a * g.dilation, v = j * g.stride - g.pad + b * g.dilation;
                if (h < 0 || h >= g.h || v < 0 || v >= g.w) continue;
                const double t = w[std::size_t(((o * cg + c) * g.k + a) * g.k + b)] *
                                 x[std::size_t(((n * g.c + o / og * cg + c) * g.h + h) * g.w + v)];
                sum += t, mag += std::fabs(t);
              }
          const std::size_t at = std::size_t(((n * g.o + o) * oh + i) * ow + j);
          d.value[at] = sum, d.magnitude[at] = mag;
        }
  return d;
}

/// The operands the epilogues read: a bias [O] (in the node, and as a [O, 1, 1] tensor), a
/// residual like the output, a per-image scale [N, 1, 1, 1].
template <class T>
struct Operands {
  Tensor<T> bias, bias_c11, residual, per_image;
  std::vector<double> b, r, s;
};

template <class T>
Operands<T> random_operands(Rng& rng, const Config& g) {
  Operands<T> p;
  p.bias = random_contiguous<T>(rng, Shape{g.o}, Domain{});
  p.bias_c11 = Tensor<T>(p.bias.view().view(Shape{g.o, 1, 1}));
  p.residual = random_contiguous<T>(rng, g.y_shape(), Domain{});
  p.per_image = random_contiguous<T>(rng, Shape{g.n, 1, 1, 1}, Domain{.lo = 0.5, .hi = 2});
  p.b = values_of(p.bias), p.r = values_of(p.residual), p.s = values_of(p.per_image);
  return p;
}

/// Checks `out` (shape [N, O, H', W'], any layout) element by element against f(conv, index) from
/// the direct convolution: tolerance = slope x (the sum's rounding: its length + 2 units of the
/// compute precision times sum |w x|) + a few units of the epilogue's own operations.
template <class T>
void check_against(const TensorView<T>& out, const Config& g, const Direct& d, double slope, double operands_magnitude,
                   const std::function<double(double, std::size_t)>& f, const std::string& what) {
  const double terms = double(g.c / g.groups * g.k * g.k), eps = compute_eps<T>();
  std::vector<Expect> expect(std::size_t(out.numel()));
  for (std::size_t i = 0; i < expect.size(); ++i) {
    expect[i].want = f(d.value[i], i);
    expect[i].tol = slope * (terms + 2) * eps * d.magnitude[i] +
                    8 * eps * (std::fabs(d.value[i]) + operands_magnitude + std::fabs(expect[i].want));
  }
  const Report r = check_output(out, expect);
  CHECK_MESSAGE(r.ok(), what, ": ", r.text);
  CHECK(r.checked == out.numel());
}

/// A destination of the output's shape, NCHW or channels-last, every element poisoned.
template <class T>
TensorView<T> poisoned_destination(const Config& g, bool channels_last) {
  const TensorView<T> v = channels_last ? weft::empty_channels_last<T>(g.y_shape()) : weft::empty<T>(g.y_shape()).view();
  poison(v);
  return v;
}

/// Every epilogue on one configuration, both layouts of x and of the destination; the fusion
/// log of each statement says it ran as the convolution's epilogue.
template <class T>
void check_epilogues(Rng& rng, const Config& g) {
  const Tensor<T> x_nchw = random_contiguous<T>(rng, g.x_shape(), Domain{});
  const Tensor<T> w = random_contiguous<T>(rng, g.w_shape(), Domain{});
  const Operands<T> p = random_operands<T>(rng, g);
  const Direct d = direct(g, values_of(x_nchw), values_of(w));
  const nn::ConvOptions o = g.options();
  const std::size_t plane = std::size_t(g.oh() * g.ow()), image = plane * std::size_t(g.o);
  auto channel = [&](std::size_t i) { return i / plane % std::size_t(g.o); };
  auto relu = [](double v) { return v > 0 ? v : 0.0; };
  auto gelu = [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); };
  for (const bool x_last : {false, true})
    for (const bool dst_last : {false, true}) {
      const TensorView<const T> x = x_last ? TensorView<const T>(weft::channels_last(x_nchw)) : x_nchw.view();
      const std::string where = weft::detail::cat(" (x ", x_last ? "channels-last" : "NCHW", ", destination ",
                                    dst_last ? "channels-last" : "NCHW", ", groups ", g.groups, ", stride ", g.stride,
                                    ", pad ", g.pad, ", dilation ", g.dilation, ")");
      auto run = [&](const char* name, double slope, const std::function<void(TensorView<T>)>& assign,
                     const std::function<double(double, std::size_t)>& f) {
        const TensorView<T> y = poisoned_destination<T>(g, dst_last);
        const std::string log = fusion_log_of([&] { assign(y); });
        CHECK_MESSAGE(has(log, "nn::conv2d: convolution "), std::string(name), where, "\n", log);
        CHECK_MESSAGE(has(log, "epilogue on each output block"), std::string(name), where, "\n", log);
        check_against<T>(y, g, d, slope, 4, f, weft::detail::cat(name, where));
      };
      run("relu(conv2d(x, w) + b) + r", 1, [&](TensorView<T> y) {
        y = weft::relu(nn::conv2d(x, w, o) + p.bias_c11) + p.residual;
      }, [&](double v, std::size_t i) { return relu(v + p.b[channel(i)]) + p.r[i]; });
      run("relu(conv2d(x, w) + b + r)", 1, [&](TensorView<T> y) {
        y = weft::relu(nn::conv2d(x, w, o) + p.bias_c11 + p.residual);
      }, [&](double v, std::size_t i) { return relu(v + p.b[channel(i)] + p.r[i]); });
      run("relu(conv2d(x, w, b)) * 0.5", 0.5, [&](TensorView<T> y) {
        y = weft::relu(nn::conv2d(x, w, p.bias, o)) * T(0.5);
      }, [&](double v, std::size_t i) { return relu(v + p.b[channel(i)]) * 0.5; });
      run("gelu(conv2d(x, w))", 1.13, [&](TensorView<T> y) { y = weft::gelu(nn::conv2d(x, w, o)); },
          [&](double v, std::size_t) { return gelu(v); });
      run("conv2d(x, w) * s[N, 1, 1, 1] + r", 2, [&](TensorView<T> y) {
        y = nn::conv2d(x, w, o) * p.per_image + p.residual;
      }, [&](double v, std::size_t i) { return v * p.s[i / image] + p.r[i]; });
    }
}

}  // namespace conv_node_test

using namespace conv_node_test;

TEST_SUITE("cpu") {

TEST_CASE("conv2d epilogue: relu, bias, residual, scale, gelu, per-image operands fused, both layouts, float and double") {
  WEFT_TEST_RNG(rng);
  // Output positions across the GEMM's row blocks and images (3 x 9 x 9 = 243 rows, blocks of up
  // to 256 split at image edges), channels across column blocks and groups.
  const Config configs[] = {
      {3, 8, 9, 9, 12, 3, 1, 1, 1, 1},   // ResNet's 3x3, padded
      {2, 6, 11, 10, 8, 3, 2, 1, 1, 2},  // strided, two groups
      {2, 4, 7, 7, 4, 3, 1, 2, 2, 4},    // depthwise, dilated
      {1, 5, 4, 6, 300, 1, 1, 0, 1, 1},  // 1x1, many output channels (several column blocks)
      {20, 3, 5, 5, 7, 2, 1, 0, 1, 1},   // many small images: blocks span several images
      {4, 16, 12, 12, 32, 3, 1, 1, 1, 1},  // 2.7M multiply-adds: the GEMM's tasks on 2 threads
  };
  for (const Config& g : configs) {
    check_epilogues<float>(rng, g);
    check_epilogues<double>(rng, g);
  }
}

TEST_CASE("conv2d epilogue falls back where it cannot fuse: an operand whose H and W do not merge, bfloat16") {
  WEFT_TEST_RNG(rng);
  const Config g{2, 4, 6, 6, 5, 3, 1, 1, 1, 1};
  const Tensor<float> x = random_contiguous<float>(rng, g.x_shape(), Domain{});
  const Tensor<float> w = random_contiguous<float>(rng, g.w_shape(), Domain{});
  const Direct d = direct(g, values_of(x), values_of(w));
  // A residual sliced from a wider tensor: its H stride is not W' times its W stride.
  const Tensor<float> wide = random_contiguous<float>(rng, Shape{g.n, g.o, g.oh(), g.ow() + 3}, Domain{});
  const TensorView<const float> r = wide.view().narrow(3, 1, g.ow());
  const std::vector<double> rv = values_of(r);
  TensorView<float> y = poisoned_destination<float>(g, false);
  const std::string log = fusion_log_of([&] { y = weft::relu(nn::conv2d(x, w, g.options()) + r); });
  CHECK_MESSAGE(!has(log, "epilogue on each output block"), log);
  check_against<float>(y, g, d, 1, 4, [&](double v, std::size_t i) { return std::max(v + rv[i], 0.0); },
                       "relu(conv2d(x, w) + r) with r not mergeable");
  // Two convolutions in one statement: both evaluated first, then one pointwise pass.
  poison(y);
  const std::string two = fusion_log_of([&] { y = nn::conv2d(x, w, g.options()) - nn::conv2d(x * 0.5f, w, g.options()); });
  CHECK_MESSAGE(!has(two, "epilogue on each output block"), two);
  check_against<float>(y, g, d, 1.5, 4, [](double v, std::size_t) { return 0.5 * v; }, "conv2d(x, w) - conv2d(x / 2, w)");

  // bfloat16: computed in float, rounded once, then the expression (its own rounding).
  const Tensor<bfloat16> xb(weft::cast<bfloat16>(x)), wb(weft::cast<bfloat16>(w));
  const Tensor<bfloat16> rb = random_contiguous<bfloat16>(rng, g.y_shape(), Domain{});
  const Direct db = direct(g, values_of(xb), values_of(wb));
  const std::vector<double> rbv = values_of(rb);
  Tensor<bfloat16> yb = weft::empty<bfloat16>(g.y_shape());
  poison(yb);
  yb = weft::relu(nn::conv2d(xb, wb, g.options())) + rb;
  const double terms = double(g.c * g.k * g.k);
  std::vector<Expect> expect(std::size_t(yb.numel()));
  for (std::size_t i = 0; i < expect.size(); ++i) {
    expect[i].want = std::max(db.value[i], 0.0) + rbv[i];
    // the float sum, its rounding to bfloat16, the sum's rounding to bfloat16
    expect[i].tol = (terms + 2) * eps_of<float>() * db.magnitude[i] +
                    eps_of<bfloat16>() * (std::fabs(db.value[i]) + 2 * std::fabs(expect[i].want) + std::fabs(rbv[i]));
  }
  const Report rep = check_output(yb, expect);
  CHECK_MESSAGE(rep.ok(), rep.text);
}

TEST_CASE("conv2d epilogue: a bad operand throws in conv2d's words and writes nothing; assigned alone it is the convolution") {
  WEFT_TEST_RNG(rng);
  const Config g{2, 4, 5, 5, 6, 3, 1, 1, 1, 1};
  const Tensor<double> x = random_contiguous<double>(rng, g.x_shape(), Domain{});
  const Tensor<double> w = random_contiguous<double>(rng, g.w_shape(), Domain{});
  const Tensor<double> bad = random_contiguous<double>(rng, Shape{4}, Domain{});
  Tensor<double> y = weft::empty<double>(g.y_shape());
  poison(y);
  const std::vector<unsigned char> before = storage_snapshot(y);
  const std::string msg = error_of([&] { y = weft::relu(nn::conv2d(x, w, g.options()) + bad); });
  CHECK_MESSAGE(has(msg, "nn::conv2d epilogue: an operand of shape [4] cannot be broadcast with nn::conv2d's result "
                         "of shape [2, 6, 5, 5]"), msg);
  CHECK(storage_snapshot(y) == before);
  // The checks of the convolution itself still run when it is built.
  CHECK(has(error_of([&] { (void)nn::conv2d(x, w, {.groups = 3}); }), "nn::conv2d: input channels 4"));

  // Alone: into the destination (no epilogue), or a new tensor; an expression operand is read.
  const Direct d = direct(g, values_of(x), values_of(w));
  y = nn::conv2d(x, w, g.options());
  check_against<double>(y.view(), g, d, 1, 0, [](double v, std::size_t) { return v; }, "y = conv2d(x, w)");
  Tensor<double> fresh = nn::conv2d(x * 2.0, w, g.options());
  check_against<double>(fresh.view(), g, d, 2, 0, [](double v, std::size_t) { return 2 * v; },
                        "Tensor = conv2d(x * 2, w)");
  const auto node = nn::conv2d(x, w, g.options());
  CHECK(node.shape() == g.y_shape());
  // A channels-last destination alone is written by the convolution itself (no copy: the vision
  // log names the destination's layout).
  TensorView<double> y_last = poisoned_destination<double>(g, true);
  const std::string log = log_of("vision", [&] { y_last = nn::conv2d(x, w, g.options()); });
  CHECK_MESSAGE(has(log, "-> [2, 6, 5, 5] channels-last"), log);
  check_against<double>(y_last, g, d, 1, 0, [](double v, std::size_t) { return v; }, "channels-last y = conv2d(x, w)");
}

TEST_CASE("conv2d epilogue: the destination is the residual (a ResNet block's y = relu(conv2d(x, w) + b) + y)") {
  WEFT_TEST_RNG(rng);
  const Config g{2, 6, 8, 8, 6, 3, 1, 1, 1, 1};
  const Tensor<float> x = random_contiguous<float>(rng, g.x_shape(), Domain{});
  const Tensor<float> w = random_contiguous<float>(rng, g.w_shape(), Domain{});
  const Tensor<float> b = random_contiguous<float>(rng, Shape{g.o, 1, 1}, Domain{});
  const Direct d = direct(g, values_of(x), values_of(w));
  const std::vector<double> bv = values_of(b);
  for (const bool last : {false, true}) {
    TensorView<float> y = poisoned_destination<float>(g, last);
    write_values(y, values_of(random_contiguous<float>(rng, g.y_shape(), Domain{})));
    const std::vector<double> before = values_of(y);
    const std::string log = fusion_log_of([&] { y = weft::relu(nn::conv2d(x, w, g.options()) + b) + y; });
    CHECK_MESSAGE(has(log, "epilogue on each output block"), log);
    const std::size_t plane = std::size_t(g.oh() * g.ow());
    check_against<float>(y, g, d, 1, 4, [&](double v, std::size_t i) {
      return std::max(v + bv[i / plane % std::size_t(g.o)], 0.0) + before[i];
    }, last ? "in place, channels-last" : "in place, NCHW");
  }
}

}  // TEST_SUITE
