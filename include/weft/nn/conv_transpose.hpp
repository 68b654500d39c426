// SPDX-License-Identifier: MIT
/// @file nn::conv_transpose2d on tensors and Vars (torch.nn.functional.conv_transpose2d) and its backward: the input gradient of a convolution, run forward.
///
/// conv_transpose2d(x, w, b)[n, o, h, v] = b[o] + sum over c of o's group, i, j, kh, kw with
///   h = i stride - pad + kh dilation, v = j stride - pad + kw dilation
/// of x[n, c, i, j] w[c, o mod (O / groups), kh, kw], for x [N, C, H, W], w [C, O / groups, kH, kW]
/// and an output of (H - 1) stride - 2 pad + dilation (kH - 1) + output_padding + 1 rows (columns
/// likewise). That is the input gradient of conv2d(y, w) (a convolution from O to C channels whose
/// output is x's size), so it runs as that backward (backend/cpu/conv.hpp: stride phases, no
/// multiplies by inserted zeros); its own backward is that convolution's forward (dx = conv2d(dy,
/// w)) and weight gradient (dw), and db sums dy over n, h, v.
#pragma once

#include <array>
#include <cstdint>

#include "weft/nn/conv.hpp"

namespace weft::nn {

namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// A checked transposed convolution: x, w, and the geometry of the convolution it transposes
/// (input = this op's output, output = this op's input).
template <class T>
struct ConvTransposeCall {
  TensorView<const T> x, w;
  ConvGeometry geo;
  Shape out_shape;
};

template <class T>
ConvTransposeCall<T> conv_transpose_call(const TensorView<const T>& x, const TensorView<const T>& w,
                                         const TensorView<const T>* bias, const ConvTransposeOptions& o) {
  const char* op = "nn::conv_transpose2d";
  if (x.dim() != 4 || w.dim() != 4)
    fail(op, "needs x [N, C, H, W] and weight [C, O/groups, kH, kW], got x ", x.shape(), " and weight ", w.shape());
  if (x.device() != w.device() || (bias && bias->device() != x.device()))
    fail(op, "x, weight and bias must be on one device, got x on ", x.device(), " and weight on ", w.device());
  weft::detail::require_cpu_conv(op, x.device());
  if (o.groups < 1) fail(op, "groups must be >= 1, got ", o.groups);
  if (o.stride.h < 1 || o.stride.w < 1 || o.dilation.h < 1 || o.dilation.w < 1)
    fail(op, "stride and dilation must be >= 1, got stride ", o.stride.h, "x", o.stride.w, " and dilation ",
         o.dilation.h, "x", o.dilation.w);
  if (o.padding.h < 0 || o.padding.w < 0 || o.output_padding.h < 0 || o.output_padding.w < 0)
    fail(op, "padding and output_padding must be >= 0");
  if ((o.output_padding.h >= o.stride.h && o.output_padding.h >= o.dilation.h) ||
      (o.output_padding.w >= o.stride.w && o.output_padding.w >= o.dilation.w))
    fail(op, "output_padding ", o.output_padding.h, "x", o.output_padding.w,
         " must be smaller than either the stride or the dilation (as torch)");
  const Shape& xs = x.shape();
  const Shape& ws = w.shape();
  if (xs[1] != ws[0])
    fail(op, "x ", xs, " has ", xs[1], " channels but weight ", ws, " expects ", ws[0],
         "; the weight is [in, out / groups, kH, kW]");
  if (xs[1] % o.groups != 0)
    fail(op, "input channels ", xs[1], " are not divisible by groups ", o.groups);
  ConvGeometry g;
  g.batch = xs[0], g.out_channels = xs[1], g.out_h = xs[2], g.out_w = xs[3];
  g.in_channels = ws[1] * o.groups, g.kernel_h = ws[2], g.kernel_w = ws[3];
  g.stride_h = o.stride.h, g.stride_w = o.stride.w, g.pad_h = o.padding.h, g.pad_w = o.padding.w;
  g.dilation_h = o.dilation.h, g.dilation_w = o.dilation.w, g.groups = o.groups;
  g.in_h = (g.out_h - 1) * g.stride_h - 2 * g.pad_h + g.dilation_h * (g.kernel_h - 1) + o.output_padding.h + 1;
  g.in_w = (g.out_w - 1) * g.stride_w - 2 * g.pad_w + g.dilation_w * (g.kernel_w - 1) + o.output_padding.w + 1;
  if (g.in_h <= 0 || g.in_w <= 0)
    fail(op, "x ", xs, " with weight ", ws, " and padding ", g.pad_h, "x", g.pad_w, " gives an output of ", g.in_h, "x",
         g.in_w, "; use less padding");
  if (bias && (bias->dim() != 1 || bias->shape()[0] != g.in_channels))
    fail(op, "bias ", bias->shape(), " does not fit: the bias is [out channels] = [", g.in_channels, "]");
  return ConvTransposeCall<T>{x, w, g, Shape{g.batch, g.in_channels, g.in_h, g.in_w}};
}

/// y = conv_transpose2d(x, w) + b, a new contiguous tensor, computed in conv_compute_t<T>.
template <class T>
Tensor<T> conv_transpose_forward(const ConvTransposeCall<T>& c, const TensorView<const T>* bias) {
  using C = conv_compute_t<T>;
  Tensor<C> hx, hw, hw2;
  const TensorView<const C> x = in_compute<C>(c.x, hx);
  const TensorView<const C> w = contiguous_in<C>(in_compute<C>(c.w, hw), hw2);
  Tensor<C> y = weft::empty<C>(c.out_shape, c.x.device());
  weft::detail::conv2d_backward_input<C>(c.geo, x, w, y.view());
  if (bias) y += weft::cast<C>(bias->view(Shape{c.geo.in_channels, 1, 1}));
  if constexpr (std::is_same_v<C, T>) return y;
  else return Tensor<T>(weft::cast<T>(y));
}

/// The gradients of conv_transpose2d for dy (any layout).
template <class T>
ConvGradients<T> conv_transpose_backward(const ConvTransposeCall<T>& c, const TensorView<const T>& dy,
                                         ConvGradientMask mask) {
  using C = conv_compute_t<T>;
  if (dy.shape() != c.out_shape)
    fail("nn::conv_transpose2d", "the output gradient ", dy.shape(), " does not match the output ", c.out_shape);
  Tensor<C> hdy, hx, hw, hw2;
  const TensorView<const C> g = in_compute<C>(dy, hdy);
  ConvGradients<T> r;
  if (mask.input) {
    const TensorView<const C> w = contiguous_in<C>(in_compute<C>(c.w, hw), hw2);
    Tensor<C> dx = weft::empty<C>(c.x.shape(), dy.device());
    weft::detail::conv2d_forward<C>(c.geo, g, w, nullptr, {}, dx.view());
    r.dx = from_compute<T>(std::move(dx));
  }
  if (mask.weight) {
    Tensor<C> dw = weft::empty<C>(c.w.shape(), dy.device());
    weft::detail::conv2d_backward_weight<C>(c.geo, g, in_compute<C>(c.x, hx), dw.view());
    r.dweight = from_compute<T>(std::move(dw));
  }
  if (mask.bias) r.dbias = Tensor<T>(weft::cast<T>(weft::sum(g, {0, 2, 3})));
  return r;
}

template <class T>
ad::Var<T> conv_transpose_recorded(const ad::detail::Input<T>& x, const ad::detail::Input<T>& w,
                                   const ad::detail::Input<T>* b, const ConvTransposeOptions& o) {
  const ConvTransposeCall<T> c = conv_transpose_call<T>(x.value, w.value, b ? &b->value : nullptr, o);
  ad::detail::SavedTensors saved;
  saved.add(x.value);
  saved.add(w.value);
  return ad::detail::record_op<T>(
      "nn::conv_transpose2d", conv_transpose_forward<T>(c, b ? &b->value : nullptr),
      std::array{x.node, w.node, b ? b->node : nullptr}, std::move(saved),
      [c, nx = x.node, nw = w.node, nb = b ? b->node : nullptr](const Tensor<T>& g) {
        auto needs = [](const auto& n) { return n && n->requires_grad; };
        ConvGradients<T> d = conv_transpose_backward<T>(c, g.view(), {needs(nx), needs(nw), needs(nb)});
        if (needs(nx)) ad::detail::accumulate<T>(nx, std::move(d.dx));
        if (needs(nw)) ad::detail::accumulate<T>(nw, std::move(d.dweight));
        if (needs(nb)) ad::detail::accumulate<T>(nb, std::move(d.dbias));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// conv_transpose2d(x, w, b, options) (see the file's formula): x [N, C, H, W] in any layout,
/// w [C, O/groups, kH, kW], b [O]; Vars record the backward, tensors give a new tensor.
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B> || detail::PlainConvOperands<X, W, B>
auto conv_transpose2d(const X& x, const W& w, const B& b, const ConvTransposeOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  const ad::detail::Input<T> xi = ad::detail::input<T>(x), wi = ad::detail::input<T>(w), bi = ad::detail::input<T>(b);
  if constexpr (ad::detail::AdOperands<X, W, B>) return detail::conv_transpose_recorded<T>(xi, wi, &bi, o);
  else return detail::conv_transpose_forward<T>(detail::conv_transpose_call<T>(xi.value, wi.value, &bi.value, o), &bi.value);
}
/// conv_transpose2d(x, w, options): no bias.
template <class X, class W>
  requires ad::detail::AdOperands<X, W> || detail::PlainConvOperands<X, W>
auto conv_transpose2d(const X& x, const W& w, const ConvTransposeOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  const ad::detail::Input<T> xi = ad::detail::input<T>(x), wi = ad::detail::input<T>(w);
  if constexpr (ad::detail::AdOperands<X, W>) return detail::conv_transpose_recorded<T>(xi, wi, nullptr, o);
  else return detail::conv_transpose_forward<T>(detail::conv_transpose_call<T>(xi.value, wi.value, nullptr, o), nullptr);
}

/// The gradients of conv_transpose2d (dx, dweight, dbias as `mask` asks) for the output gradient dy.
template <class T>
ConvGradients<T> conv_transpose2d_backward(const TensorView<const T>& dy, const TensorView<const T>& x,
                                           const TensorView<const T>& w, const ConvTransposeOptions& o = {},
                                           ConvGradientMask mask = {}) {
  detail::check_conv_dtype<T>();
  return detail::conv_transpose_backward<T>(detail::conv_transpose_call<T>(x, w, nullptr, o), dy, mask);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
