// SPDX-License-Identifier: MIT
/// @file The vision ops (convolution, pooling, interpolation, normalization) forward and backward against torch.nn.functional's goldens (tests/golden/make_vision_golden.py), in float64 and float32, through autograd and through the tensor functions on NCHW and channels-last inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <weft/autograd.hpp>
#include <weft/io.hpp>

#include "vision_golden.hpp"

namespace vision_golden_test {

namespace nn = weft::nn;
namespace ad = weft::ad;
using weft::Shape;
using weft::Tensor;
using weft::TensorView;

const weft::io::SafeTensors& golden() { return weft_test::vision_golden("ops"); }

/// The cases of precision T are the file's "f64.*" (double) and "f32.*" (float) ones.
template <class T>
std::string prefix() {
  return std::is_same_v<T, double> ? "f64." : "f32.";
}

/// The golden's tensor `key` as float64.
Tensor<double> golden_double(const std::string& key) { return weft_test::golden_double(golden(), key); }

/// How an op reads its inputs: NCHW (contiguous) or channels-last (a contiguous N, spatial..., C
/// copy permuted back to the [N, C, spatial...] shape: channels are the stride-1 dim).
enum class Layout { nchw, channels_last };

/// `t` in `layout`: a channels-last view of a rank >= 3 tensor (its memory held by `memory`), any
/// other tensor as it is.
template <class T>
TensorView<const T> in_layout(const Tensor<T>& t, Layout layout, Tensor<T>& memory) {
  if (layout == Layout::nchw || t.dim() < 3) return t.view();
  std::vector<std::int64_t> to_last{0}, back{0, t.dim() - 1};
  for (std::int64_t d = 2; d < t.dim(); ++d) to_last.push_back(d), back.push_back(d - 1);
  to_last.push_back(1);
  memory = Tensor<T>(t.permute(to_last));
  TensorView<const T> view = std::as_const(memory).permute(back);
  REQUIRE(view.strides()[1] == 1);
  return view;
}

/// Running statistics (batch_norm only; undefined elsewhere), updated in place by a training call.
template <class T>
struct Stats {
  Tensor<T> mean, var;
};

/// What one run of an op gives: its output, the gradient of each input (in order), max_pool2d's
/// indices, and the running statistics after it.
template <class T>
struct Results {
  Tensor<T> out;
  std::vector<Tensor<T>> grads;
  Tensor<std::int64_t> indices;
  Stats<T> stats;
};

/// Checks `got` against torch's `key` element by element. Both are computed from the same inputs
/// and differ by rounding in other orders only:
/// - float64: sums of at most a few hundred terms, each rounding within eps64 of the terms'
///   magnitude (<= the output's scale, max |torch| + 1): 1e-12 of the scale is ~50x that bound;
/// - float32: the reference is torch's float64 result, and torch's own float32 result strays from it
///   by e32 (the "_f32" entry, measured per tensor); weft's float32 run is another such run,
///   allowed 4 e32 plus 8 ulps of the scale (e32 is 0 where torch happens to be exact).
/// A wrong formula is off by the values' own size; a NaN or an unwritten element fails.
template <class T>
void check_close(const std::string& what, const Tensor<T>& got, const std::string& key) {
  INFO(what, " (", key, ")");
  const Tensor<double> want = golden_double(key);
  REQUIRE(got.defined());
  REQUIRE(got.shape() == want.shape());
  const Tensor<double> g = weft::cast<double>(got);
  double scale = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, std::abs(want.data()[i]));
  double tolerance = 1e-12 * (scale + 1);
  if constexpr (std::is_same_v<T, float>) {
    const Tensor<double> torch32 = golden_double(key + "_f32");
    double e32 = 0;
    for (std::int64_t i = 0; i < want.numel(); ++i) e32 = std::max(e32, std::abs(torch32.data()[i] - want.data()[i]));
    tolerance = 4 * e32 + 8 * double(std::numeric_limits<float>::epsilon()) * scale;
  }
  double worst = 0;
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < want.numel(); ++i) {
    const double diff = std::abs(g.data()[i] - want.data()[i]);
    if (!(diff <= tolerance)) ++bad;  // a NaN counts
    if (diff > worst) worst = diff;
  }
  INFO("max |weft - torch| = ", worst, ", tolerance ", tolerance, ", elements off: ", bad, " of ", want.numel());
  CHECK(bad == 0);
}

/// One case's stored inputs at precision T: in0, in1, ... (each gets a gradient), dy, and the
/// running statistics where the case has them.
template <class T>
struct Inputs {
  std::vector<Tensor<T>> xs;
  Tensor<T> dy;
  Stats<T> stats;
};

template <class T>
Inputs<T> load_inputs(const std::string& key) {
  Inputs<T> in;
  for (int k = 0; golden().contains(key + ".in" + std::to_string(k)); ++k)
    in.xs.emplace_back(golden().get<T>(key + ".in" + std::to_string(k)));
  REQUIRE(!in.xs.empty());
  in.dy = Tensor<T>(golden().get<T>(key + ".dy"));
  if (golden().contains(key + ".running_mean")) {
    in.stats.mean = Tensor<T>(golden().get<T>(key + ".running_mean"));
    in.stats.var = Tensor<T>(golden().get<T>(key + ".running_var"));
  }
  return in;
}

/// Checks a run's results against the case's goldens.
template <class T>
void check_results(const std::string& how, const Results<T>& r, const std::string& key, std::size_t inputs) {
  check_close(how + ": output", r.out, key + ".out");
  REQUIRE(r.grads.size() == inputs);
  for (std::size_t k = 0; k < inputs; ++k)
    check_close(how + ": gradient of input " + std::to_string(k), r.grads[k], key + ".grad" + std::to_string(k));
  if (r.indices.defined()) {  // the tensor form's max_pool2d_with_indices
    INFO(how, ": indices");
    const Tensor<std::int64_t> want(golden().get<std::int64_t>(key + ".indices"));
    REQUIRE(r.indices.shape() == want.shape());
    CHECK(r.indices.to_vector() == want.to_vector());
  }
  if (golden().contains(key + ".running_mean_out")) {
    check_close(how + ": running_mean after", r.stats.mean, key + ".running_mean_out");
    check_close(how + ": running_var after", r.stats.var, key + ".running_var_out");
  }
}

/// Runs the case `name` at precision T and checks it three ways:
/// - autograd: `var_op(xs, stats)` on ad::param leaves of the NCHW inputs, y.backward(dy);
/// - tensors, NCHW and channels-last: `tensor_op(xs, dy, stats)` (the tensor forward and the op's
///   backward function on views in that layout) returns the output and the gradients.
/// Each run gets fresh copies of the running statistics.
template <class T, class VarOp, class TensorOp>
void check_case(const std::string& name, VarOp&& var_op, TensorOp&& tensor_op) {
  const std::string key = prefix<T>() + name;
  INFO("case ", key);
  const Inputs<T> in = load_inputs<T>(key);
  auto fresh_stats = [&] {
    Stats<T> s;
    if (in.stats.mean.defined()) s.mean = weft::eval(in.stats.mean), s.var = weft::eval(in.stats.var);
    return s;
  };
  {
    std::vector<ad::Var<T>> xs;
    for (const Tensor<T>& x : in.xs) xs.push_back(ad::param(weft::eval(x)));
    Results<T> r;
    r.stats = fresh_stats();
    ad::Var<T> y = var_op(xs, r.stats);
    r.out = y.value();
    y.backward(in.dy);
    for (const ad::Var<T>& x : xs) r.grads.push_back(x.grad());
    check_results("autograd", r, key, in.xs.size());
  }
  for (const Layout layout : {Layout::nchw, Layout::channels_last}) {
    const std::string how = layout == Layout::nchw ? "tensors, NCHW" : "tensors, channels-last";
    std::vector<Tensor<T>> memory(in.xs.size() + 1);
    std::vector<TensorView<const T>> xs;
    for (std::size_t k = 0; k < in.xs.size(); ++k) xs.push_back(in_layout(in.xs[k], layout, memory[k]));
    const TensorView<const T> dy = in_layout(in.dy, layout, memory.back());
    Stats<T> stats = fresh_stats();
    Results<T> r = tensor_op(xs, dy, stats);
    r.stats = std::move(stats);
    REQUIRE(r.indices.defined() == golden().contains(key + ".indices"));
    check_results(how, r, key, in.xs.size());
  }
}

template <class T>
void check_convolution() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  // conv1d and conv2d: inputs x, w and (with a bias) b; the tensor form's backward is conv2d_backward.
  for (const auto& named : std::vector<std::pair<std::string, nn::ConvOptions>>{
           {"conv2d_bias", {}},
           {"conv2d_stride_pad", {.stride = {2, 1}, .padding = {1, 2}}},
           {"conv2d_same_dilation", {.padding = "same", .dilation = {1, 2}}},
           {"conv2d_valid_stride", {.stride = 2, .padding = "valid"}},
           {"conv2d_dilation_pad", {.padding = 2, .dilation = 2}},
           {"conv2d_groups", {.stride = 2, .padding = 1, .groups = 2}},
           {"conv2d_depthwise", {.padding = 1, .groups = 4}},
           {"conv1d_stride_pad", {.stride = 2, .padding = 1}},
           {"conv1d_same_groups", {.padding = "same", .dilation = 2, .groups = 3}}}) {
    // (no structured binding: clang cannot capture one in a lambda under OpenMP)
    const std::string& name = named.first;
    const auto& o = named.second;
    const bool one_d = name.starts_with("conv1d");
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          if (x.size() == 3) return one_d ? nn::conv1d(x[0], x[1], x[2], o) : nn::conv2d(x[0], x[1], x[2], o);
          return one_d ? nn::conv1d(x[0], x[1], o) : nn::conv2d(x[0], x[1], o);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          const bool bias = x.size() == 3;
          Tensor<T> y = bias ? (one_d ? nn::conv1d(x[0], x[1], x[2], o) : nn::conv2d(x[0], x[1], x[2], o))
                             : (one_d ? nn::conv1d(x[0], x[1], o) : nn::conv2d(x[0], x[1], o));
          nn::ConvGradients<T> d = nn::conv2d_backward(dy, x[0], x[1], o, {.bias = bias});
          Results<T> r{std::move(y), {std::move(d.dx), std::move(d.dweight)}, {}, {}};
          if (bias) r.grads.push_back(std::move(d.dbias));
          return r;
        });
  }
  // conv_transpose2d: inputs x, w [C, O / groups, kH, kW] and (with a bias) b.
  for (const auto& named : std::vector<std::pair<std::string, nn::ConvTransposeOptions>>{
           {"conv_transpose2d_plain", {}},
           {"conv_transpose2d_stride_outpad", {.stride = 2, .padding = 1, .output_padding = 1}},
           {"conv_transpose2d_groups_dilation",
            {.stride = {2, 3}, .padding = {0, 1}, .output_padding = {1, 2}, .groups = 2, .dilation = 2}}}) {
    const std::string& name = named.first;
    const auto& o = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          return x.size() == 3 ? nn::conv_transpose2d(x[0], x[1], x[2], o) : nn::conv_transpose2d(x[0], x[1], o);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          const bool bias = x.size() == 3;
          Tensor<T> y = bias ? nn::conv_transpose2d(x[0], x[1], x[2], o) : nn::conv_transpose2d(x[0], x[1], o);
          nn::ConvGradients<T> d = nn::conv_transpose2d_backward(dy, x[0], x[1], o, {.bias = bias});
          Results<T> r{std::move(y), {std::move(d.dx), std::move(d.dweight)}, {}, {}};
          if (bias) r.grads.push_back(std::move(d.dbias));
          return r;
        });
  }
}

template <class T>
void check_interpolate() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  using Mode = nn::InterpolateMode;
  // to a size, or (size empty) by the scale factors
  struct Call {
    std::optional<nn::Size2> size;
    double scale_h = 0, scale_w = 0;
    Mode mode = Mode::nearest;
    bool align_corners = false;
  };
  for (const auto& named : std::vector<std::pair<std::string, Call>>{
           {"nearest_size", {nn::Size2{7, 5}}},
           {"nearest_scale", {std::nullopt, 2, 2}},
           {"nearest_scale_fraction", {std::nullopt, 1.5, 0.75}},
           {"bilinear_size", {nn::Size2{7, 9}, 0, 0, Mode::bilinear, false}},
           {"bilinear_size_align", {nn::Size2{7, 9}, 0, 0, Mode::bilinear, true}},
           {"bilinear_scale", {std::nullopt, 2, 2, Mode::bilinear, false}},
           {"bilinear_down_align", {nn::Size2{3, 2}, 0, 0, Mode::bilinear, true}}}) {
    const std::string& name = named.first;
    const auto& c = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          return c.size ? nn::interpolate(x[0], *c.size, c.mode, c.align_corners)
                        : nn::interpolate(x[0], c.scale_h, c.scale_w, c.mode, c.align_corners);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          Tensor<T> y = c.size ? nn::interpolate(x[0], *c.size, c.mode, c.align_corners)
                               : nn::interpolate(x[0], c.scale_h, c.scale_w, c.mode, c.align_corners);
          Tensor<T> dx = c.size ? nn::interpolate_backward(dy, x[0].shape(), c.mode, c.align_corners)
                                : nn::interpolate_backward(dy, x[0].shape(), c.scale_h, c.scale_w, c.mode,
                                                           c.align_corners);
          return Results<T>{std::move(y), {std::move(dx)}, {}, {}};
        });
  }
}

template <class T>
void check_pooling() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  struct MaxPool {
    nn::Size2 kernel;
    std::optional<nn::Size2> stride;
    nn::Size2 padding = 0, dilation = 1;
    bool ceil_mode = false;
  };
  for (const auto& named : std::vector<std::pair<std::string, MaxPool>>{
           {"max_pool2d_k2", {2, std::nullopt}},
           {"max_pool2d_pad_dilation", {3, 2, 1, 2}},
           {"max_pool2d_ceil", {{3, 2}, 2, {1, 0}, 1, true}}}) {
    const std::string& name = named.first;
    const auto& p = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          return nn::max_pool2d(x[0], p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          nn::MaxPool2dResult<T> y =
              nn::max_pool2d_with_indices(x[0], p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode);
          CHECK(nn::max_pool2d(x[0], p.kernel, p.stride, p.padding, p.dilation, p.ceil_mode).to_vector() ==
                y.values.to_vector());
          Tensor<T> dx = nn::max_pool2d_backward(dy, y.indices.view(), x[0].shape());
          return Results<T>{std::move(y.values), {std::move(dx)}, std::move(y.indices), {}};
        });
  }
  struct AvgPool {
    nn::Size2 kernel;
    std::optional<nn::Size2> stride;
    nn::Size2 padding = 0;
    bool ceil_mode = false, count_include_pad = true;
  };
  for (const auto& named : std::vector<std::pair<std::string, AvgPool>>{
           {"avg_pool2d_k2", {2, std::nullopt}},
           {"avg_pool2d_ceil_pad", {3, 2, 1, true, true}},
           {"avg_pool2d_exclude_pad", {3, 2, 1, false, false}},
           {"avg_pool2d_ceil_exclude", {{3, 2}, nn::Size2{2, 3}, 1, true, false}}}) {
    const std::string& name = named.first;
    const auto& p = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          return nn::avg_pool2d(x[0], p.kernel, p.stride, p.padding, p.ceil_mode, p.count_include_pad);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          Tensor<T> y = nn::avg_pool2d(x[0], p.kernel, p.stride, p.padding, p.ceil_mode, p.count_include_pad);
          Tensor<T> dx = nn::avg_pool2d_backward(dy, x[0].shape(), p.kernel, p.stride, p.padding, p.ceil_mode,
                                                 p.count_include_pad);
          return Results<T>{std::move(y), {std::move(dx)}, {}, {}};
        });
  }
  for (const auto& named : std::vector<std::pair<std::string, nn::Size2>>{
           {"adaptive_avg_pool2d_global", 1},
           {"adaptive_avg_pool2d_uneven", {3, 4}},
           {"adaptive_avg_pool2d_up", {5, 4}}}) {
    const std::string& name = named.first;
    const auto& size = named.second;
    check_case<T>(
        name, [&](const Vars& x, Stats<T>&) { return nn::adaptive_avg_pool2d(x[0], size); },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          Tensor<T> y = nn::adaptive_avg_pool2d(x[0], size);
          Tensor<T> dx = nn::adaptive_avg_pool2d_backward(dy, x[0].shape());
          return Results<T>{std::move(y), {std::move(dx)}, {}, {}};
        });
  }
}

/// Input k of a case, or an empty one (torch's None) where the case has fewer: the
/// normalizations' optional weight and bias.
template <class V>
V optional_input(const std::vector<V>& inputs, std::size_t k) {
  return k < inputs.size() ? inputs[k] : V();
}

/// The gradients a backward function returned, kept for the inputs the case has.
template <class T>
std::vector<Tensor<T>> gradients_of_inputs(std::vector<Tensor<T>> all, std::size_t inputs) {
  all.resize(inputs);
  return all;
}

template <class T>
void check_batch_norm() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  struct Options {
    bool training;
    double momentum, eps;
  };
  for (const auto& named : std::vector<std::pair<std::string, Options>>{
           {"batch_norm_train", {true, 0.1, 1e-5}},
           {"batch_norm_train_momentum", {true, 0.3, 1e-3}},
           {"batch_norm_train_no_affine", {true, 0.1, 1e-5}},
           {"batch_norm_eval", {false, 0.1, 1e-5}}}) {
    const std::string& name = named.first;
    const auto& o = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>& s) {
          return nn::batch_norm(x[0], s.mean.view(), s.var.view(), optional_input(x, 1), optional_input(x, 2),
                                o.training, o.momentum, o.eps);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>& s) {
          // the backward reads the statistics the forward used: eval's running ones, unchanged
          const Stats<T> before{weft::eval(s.mean), weft::eval(s.var)};
          Tensor<T> y = nn::batch_norm(x[0], s.mean.view(), s.var.view(), optional_input(x, 1), optional_input(x, 2),
                                       o.training, o.momentum, o.eps);
          nn::BatchNormGradients<T> d = nn::batch_norm_backward(dy, x[0], before.mean.view(), before.var.view(),
                                                                optional_input(x, 1), o.training, o.eps);
          std::vector<Tensor<T>> grads =
              gradients_of_inputs<T>({std::move(d.dx), std::move(d.dweight), std::move(d.dbias)}, x.size());
          return Results<T>{std::move(y), std::move(grads), {}, {}};
        });
  }
}

template <class T>
void check_group_norm() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  struct Options {
    std::int64_t groups;
    double eps;
  };
  for (const auto& named : std::vector<std::pair<std::string, Options>>{
           {"group_norm", {3, 1e-5}},
           {"group_norm_one_group", {1, 1e-5}},
           {"group_norm_instance", {4, 1e-3}},
           {"group_norm_no_affine", {2, 1e-5}}}) {
    const std::string& name = named.first;
    const auto& o = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) {
          return nn::group_norm(x[0], o.groups, optional_input(x, 1), optional_input(x, 2), o.eps);
        },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          Tensor<T> y = nn::group_norm(x[0], o.groups, optional_input(x, 1), optional_input(x, 2), o.eps);
          nn::GroupNormGradients<T> d = nn::group_norm_backward(dy, x[0], o.groups, optional_input(x, 1), o.eps);
          std::vector<Tensor<T>> grads =
              gradients_of_inputs<T>({std::move(d.dx), std::move(d.dweight), std::move(d.dbias)}, x.size());
          return Results<T>{std::move(y), std::move(grads), {}, {}};
        });
  }
}

template <class T>
void check_rms_norm() {
  using Views = std::vector<TensorView<const T>>;
  using Vars = std::vector<ad::Var<T>>;
  struct Options {
    Shape normalized_shape;
    double eps;
  };
  for (const auto& named : std::vector<std::pair<std::string, Options>>{
           {"rms_norm_last", {Shape{5}, 1e-6}},
           {"rms_norm_last_two", {Shape{4, 5}, 1e-5}},
           {"rms_norm_no_weight", {Shape{6}, 1e-6}}}) {
    const std::string& name = named.first;
    const auto& o = named.second;
    check_case<T>(
        name,
        [&](const Vars& x, Stats<T>&) { return nn::rms_norm(x[0], o.normalized_shape, optional_input(x, 1), o.eps); },
        [&](const Views& x, const TensorView<const T>& dy, Stats<T>&) {
          Tensor<T> y = nn::rms_norm(x[0], o.normalized_shape, optional_input(x, 1), o.eps);
          nn::RmsNormGradients<T> d =
              nn::rms_norm_backward(dy, x[0], o.normalized_shape, optional_input(x, 1), o.eps);
          return Results<T>{std::move(y), gradients_of_inputs<T>({std::move(d.dx), std::move(d.dweight)}, x.size()), {},
                            {}};
        });
  }
}

/// The calls torch refuses (make_vision_golden.py's REFUSED, which checks that torch still does):
/// weft refuses them with a weft::Error naming the op and what is wrong.
void check_refused_calls() {
  auto input = [](const weft::Shape& s) { return weft::rand<double>(s); };
  const Tensor<double> x = input({1, 3, 5, 5}), small = input({1, 3, 2, 2});
  CHECK_THROWS_WITH_AS(nn::conv2d(x, input({4, 2, 3, 3})),
                       doctest::Contains("nn::conv2d: weight [4, 2, 3, 3] with groups 1 expects 2 input channels"),
                       weft::Error);
  CHECK_THROWS_WITH_AS(nn::conv2d(x, input({4, 1, 3, 3}), {.groups = 2}),
                       doctest::Contains("not divisible by groups 2"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::conv2d(small, input({4, 3, 3, 3})),
                       doctest::Contains("larger than the padded input (2x2)"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::conv2d(x, input({4, 3, 3, 3}), {.stride = 2, .padding = "same"}),
                       doctest::Contains("padding \"same\" needs stride 1"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::conv_transpose2d(x, input({3, 2, 3, 3}), {.stride = 2, .output_padding = 2}),
                       doctest::Contains("nn::conv_transpose2d: output_padding 2x2 must be smaller"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::max_pool2d(x, 2, std::nullopt, 2),
                       doctest::Contains("nn::max_pool2d: padding 2x2 must be in [0, kernel / 2]"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::avg_pool2d(small, 3), doctest::Contains("nn::avg_pool2d: kernel 3x3"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::interpolate(small, nn::Size2{4, 4}, nn::InterpolateMode::nearest, true),
                       doctest::Contains("nn::interpolate: align_corners = true needs mode bilinear"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::group_norm(input({2, 6, 3, 3}), 4, {}, {}),
                       doctest::Contains("channels 6 not divisible by groups 4"), weft::Error);
  CHECK_THROWS_WITH_AS(nn::rms_norm(input({2, 3, 4, 5}), Shape{4}, input({4}).view()),
                       doctest::Contains("nn::rms_norm: input of shape [2, 3, 4, 5] does not end with"), weft::Error);
  // a refused training call leaves the running statistics as they were
  Tensor<double> mean = input({3}), var = input({3});
  const std::vector<double> mean_before = mean.to_vector(), var_before = var.to_vector();
  CHECK_THROWS_WITH_AS(nn::batch_norm(input({1, 3, 1, 1}), mean.view(), var.view(), {}, {}, true),
                       doctest::Contains("nn::batch_norm: Expected more than 1 value per channel"), weft::Error);
  CHECK(mean.to_vector() == mean_before);
  CHECK(var.to_vector() == var_before);
}

}  // namespace vision_golden_test

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("nn vision goldens: conv1d, conv2d, conv_transpose2d (stride, padding, output_padding, dilation, "
                   "groups, bias)", T, double, float) {
  vision_golden_test::check_convolution<T>();
}

TEST_CASE_TEMPLATE("nn vision goldens: interpolate (nearest, bilinear, align_corners, size, scale factors)", T,
                   double, float) {
  vision_golden_test::check_interpolate<T>();
}

TEST_CASE_TEMPLATE("nn vision goldens: max_pool2d, avg_pool2d, adaptive_avg_pool2d", T, double, float) {
  vision_golden_test::check_pooling<T>();
}

TEST_CASE_TEMPLATE("nn vision goldens: batch_norm (training: output, gradients, running stats; no affine; eval)", T,
                   double, float) {
  vision_golden_test::check_batch_norm<T>();
}

TEST_CASE_TEMPLATE("nn vision goldens: group_norm (groups of several channels, one group, one channel a group, "
                   "no affine)", T, double, float) {
  vision_golden_test::check_group_norm<T>();
}

TEST_CASE_TEMPLATE("nn vision goldens: rms_norm (over the last dim, the last two; with and without weight)", T, double,
                   float) {
  vision_golden_test::check_rms_norm<T>();
}


TEST_CASE("nn vision goldens: the calls torch refuses, weft refuses too") {
  vision_golden_test::check_refused_calls();
}

}  // TEST_SUITE
