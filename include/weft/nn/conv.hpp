// SPDX-License-Identifier: MIT
/// @file nn::conv1d, nn::conv2d, nn::conv_transpose2d on tensors and Vars (torch.nn.functional's), their backward, and conv2d_out into a destination of either layout.
///
/// conv2d: out[n, o, i, j] = b[o] + sum over c of o's group, kh, kw of
///   w[o, c, kh, kw] x[n, g C/groups + c, i stride - pad + kh dilation, j stride - pad + kw dilation]
/// with x zero outside its H x W (the padding), out [N, O, (H + 2 pad - dilation (k - 1) - 1) /
/// stride + 1, likewise W]. Backward (dy = dL/dout): dx = the transposed convolution of dy with w,
/// dw[o, c, kh, kw] = sum over n, i, j of dy[n, o, i, j] x[...same window...], db = sum of dy over
/// n, i, j. conv_transpose2d(x, w) is the input gradient of a convolution whose output is x and
/// whose weight is w [C_in, O/groups, kH, kW]; its backward is that convolution (dx) and its
/// weight gradient (dw). All three run as Winograd's F(2x2, 3x3) (float 3x3 of stride 1), direct
/// products (float, double) or implicit GEMMs (backend/cpu/conv.hpp); x is read in any layout (NCHW, channels-last: weft::channels_last),
/// through a padded channels-last copy from 16 channels a group on. bfloat16 runs on the build's
/// native bfloat16 GEMM (AVX512-BF16, AMX, BFMMLA) with fp32 sums rounded once; half, and
/// bfloat16 without one, compute in float and round once.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>

#include "weft/ad/record.hpp"
#include "weft/backend/conv.hpp"
#include "weft/log/log.hpp"
#include "weft/ops/layout.hpp"
#include "weft/nn/vision_options.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/reduce.hpp"
#include "weft/plan/kernel_operands.hpp"

namespace weft::nn {

inline namespace WEFT_BACKEND_ABI {

/// Which gradients conv2d_backward computes.
struct ConvGradientMask {
  bool input = true, weight = true, bias = true;
};

/// The gradients of a convolution: dx like x, dweight like the weight, dbias [O] (each empty
/// where not asked for).
template <class T>
struct ConvGradients {
  Tensor<T> dx, dweight, dbias;
};

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {

using weft::detail::ConvGeometry;
using weft::detail::fail;

/// The checked geometry of a convolution of x4 [N, C, H, W] with w4 [O, C/groups, kH, kW]
/// (conv1d's with H = kH = 1); `xs`, `ws` are the shapes the caller gave (for messages).
inline ConvGeometry conv_geometry(const char* op, const Shape& xs, const Shape& ws, const Shape& x4, const Shape& w4,
                                  const ConvOptions& o) {
  ConvGeometry g;
  g.batch = x4[0], g.in_channels = x4[1], g.in_h = x4[2], g.in_w = x4[3];
  g.out_channels = w4[0], g.kernel_h = w4[2], g.kernel_w = w4[3];
  g.stride_h = o.stride.h, g.stride_w = o.stride.w, g.dilation_h = o.dilation.h, g.dilation_w = o.dilation.w;
  g.groups = o.groups;
  if (o.groups < 1) fail(op, "groups must be >= 1, got ", o.groups);
  if (g.stride_h < 1 || g.stride_w < 1) fail(op, "stride must be >= 1, got ", g.stride_h, "x", g.stride_w);
  if (g.dilation_h < 1 || g.dilation_w < 1) fail(op, "dilation must be >= 1, got ", g.dilation_h, "x", g.dilation_w);
  if (g.in_channels % g.groups != 0)
    fail(op, "input channels ", g.in_channels, " (x ", xs, ") are not divisible by groups ", g.groups,
         "; use a group count that divides them");
  if (g.out_channels % g.groups != 0)
    fail(op, "output channels ", g.out_channels, " (weight ", ws, ") are not divisible by groups ", g.groups);
  if (w4[1] * g.groups != g.in_channels)
    fail(op, "weight ", ws, " with groups ", g.groups, " expects ", w4[1] * g.groups, " input channels, but x ", xs,
         " has ", g.in_channels, "; the weight is [out, in / groups, kernel...]");
  const std::int64_t span_h = g.dilation_h * (g.kernel_h - 1) + 1, span_w = g.dilation_w * (g.kernel_w - 1) + 1;
  if (o.padding.same) {
    if (g.stride_h != 1 || g.stride_w != 1)
      fail(op, "padding \"same\" needs stride 1, got ", g.stride_h, "x", g.stride_w, " (as torch); pad with numbers");
    // torch puts the odd zero of an odd total padding at the end: the output keeps H x W
    g.pad_h = (span_h - 1) / 2, g.pad_w = (span_w - 1) / 2;
    g.out_h = g.in_h, g.out_w = g.in_w;
    return g;
  }
  g.pad_h = o.padding.size.h, g.pad_w = o.padding.size.w;
  if (g.pad_h < 0 || g.pad_w < 0) fail(op, "padding must be >= 0, got ", g.pad_h, "x", g.pad_w);
  const std::int64_t padded_h = g.in_h + 2 * g.pad_h, padded_w = g.in_w + 2 * g.pad_w;
  if (padded_h < span_h || padded_w < span_w)
    fail(op, "the kernel (", span_h, "x", span_w, " with dilation) is larger than the padded input (", padded_h, "x",
         padded_w, ") of x ", xs, "; pad more or use a smaller kernel");
  g.out_h = (padded_h - span_h) / g.stride_h + 1;
  g.out_w = (padded_w - span_w) / g.stride_w + 1;
  return g;
}

/// x [N, C, L] and w [O, C/g, K] as 4-D views (H = kH = 1), 2-D ones as they are.
template <class T>
TensorView<const T> as_4d(const TensorView<const T>& v, bool one_d) {
  return one_d ? v.unsqueeze(2) : v;
}

/// The convolution options of conv1d in 2-D terms: height 1, the width fields.
inline ConvOptions conv1d_options(const ConvOptions& o) {
  ConvOptions o2 = o;
  o2.stride = Size2(1, o.stride.w);
  o2.dilation = Size2(1, o.dilation.w);
  if (!o.padding.same) o2.padding = ConvPadding(0, o.padding.size.w);
  return o2;
}

/// The operands of one convolution call, checked: x and w as 4-D views, the geometry, and the
/// output's shape as the caller sees it.
template <class T>
struct ConvCall {
  const char* op;
  TensorView<const T> x4, w4;
  ConvGeometry geo;
  Shape out_shape;
};

template <class T>
ConvCall<T> conv_call(const char* op, bool one_d, const TensorView<const T>& x, const TensorView<const T>& w,
                      const TensorView<const T>* bias, const ConvOptions& o) {
  const int rank = one_d ? 3 : 4;
  if (x.dim() != rank || w.dim() != rank)
    fail(op, "needs x ", one_d ? "[N, C, L]" : "[N, C, H, W]", " and weight ",
         one_d ? "[O, C/groups, K]" : "[O, C/groups, kH, kW]", ", got x ", x.shape(), " and weight ", w.shape());
  if (x.device() != w.device() || (bias && bias->device() != x.device()))
    fail(op, "x, weight and bias must be on one device, got x on ", x.device(), " and weight on ", w.device());
  weft::detail::require_cpu_conv(op, x.device());
  ConvCall<T> c{op, as_4d(x, one_d), as_4d(w, one_d), {}, {}};
  c.geo = conv_geometry(op, x.shape(), w.shape(), c.x4.shape(), c.w4.shape(), one_d ? conv1d_options(o) : o);
  if (bias && (bias->dim() != 1 || bias->shape()[0] != c.geo.out_channels))
    fail(op, "bias ", bias->shape(), " does not fit weight ", w.shape(), ": the bias is [out channels] = [",
         c.geo.out_channels, "]");
  c.out_shape = one_d ? Shape{c.geo.batch, c.geo.out_channels, c.geo.out_w}
                      : Shape{c.geo.batch, c.geo.out_channels, c.geo.out_h, c.geo.out_w};
  return c;
}

/// The type the kernels compute in where T has no native kernel (weft::detail::conv_native):
/// float for 16-bit floats (rounded once at the end), else T.
template <class T>
using conv_compute_t = std::conditional_t<weft::is_16bit_float_v<T>, float, T>;

/// Calls run.template operator()<C>() with C the type a convolution in T computes in: T where it
/// runs natively (float, double; bfloat16 on a native bfloat16 GEMM), else conv_compute_t<T>.
template <class T, class Run>
decltype(auto) with_conv_compute_type(const Run& run) {
  if constexpr (weft::detail::conv_native_built_v<T> && !std::is_same_v<T, conv_compute_t<T>>)
    if (weft::detail::conv_native<T>()) return run.template operator()<T>();
  return run.template operator()<conv_compute_t<T>>();
}

/// A convolution weight of type T kept in the GEMM's packed panels of the type it computes in,
/// for inputs whose channels are adjacent (channels-last) or not: the panels' column order
/// follows the input.
template <class T>
struct PrepackedConv {
  std::vector<weft::detail::conv_packed_t<T>> panels;                    // computing in T
  std::vector<weft::detail::conv_packed_t<conv_compute_t<T>>> compute_panels;  // in float (16-bit T)
  bool channels_inner = false;
  /// The panels for a call computing in C with geometry g and input x4, when they were packed for
  /// it and x4's layout; null otherwise (the call packs its own).
  template <class C, class X>
  const weft::detail::conv_packed_t<C>* for_input(const ConvGeometry& g, const TensorView<const X>& x4) const {
    const bool inner = weft::detail::cpu::patches_channel_runs<C>(x4.strides()[1], g.in_per_group(), g.taps());
    if (inner != channels_inner) return nullptr;
    if constexpr (std::is_same_v<C, T>) return panels.empty() ? nullptr : panels.data();
    else return compute_panels.empty() ? nullptr : compute_panels.data();
  }
};

/// v in the compute type C: v itself, or a float copy of a 16-bit view (same layout kept: the
/// copy is contiguous, which the kernels read as well).
template <class C, class T>
TensorView<const C> in_compute(const TensorView<const T>& v, Tensor<C>& holder) {
  if constexpr (std::is_same_v<C, T>) {
    return v;
  } else {
    holder = weft::cast<C>(v);
    return holder.view();
  }
}

/// A result computed in C as a T tensor: itself, or rounded once to the 16-bit T.
template <class T, class C>
Tensor<T> from_compute(Tensor<C>&& t) {
  if constexpr (std::is_same_v<C, T>) return std::move(t);
  else return Tensor<T>(weft::cast<T>(t));
}

/// v contiguous (the weight operand of the kernels): v, or a copy in `holder`.
template <class C>
TensorView<const C> contiguous_in(const TensorView<const C>& v, Tensor<C>& holder) {
  if (v.is_contiguous()) return v;
  holder = Tensor<C>(v);
  return holder.view();
}

/// How a convolution in T computing in C rounds, for the log: nothing to say for float and
/// double, the bfloat16 GEMM and its one rounding, or the float detour.
template <class T, class C>
std::string conv_precision() {
  if constexpr (!weft::is_16bit_float_v<T>) return "";
  else if constexpr (std::is_same_v<C, T>)
    return weft::detail::cat(", bfloat16 products on ", weft::detail::conv_bf16_path(), ", fp32 sums rounded once");
  else return ", in float, rounded once";
}

/// The convolution of a checked call written into `out` (a 4-D view of the output, any layout):
/// out = epilogue(conv(x, w)) (bias, relu, residual as cpu::ConvEpilogue says; the residual a
/// view of out's shape), computed in T or conv_compute_t<T> (with_conv_compute_type).
template <class T>
void conv_forward_into(const ConvCall<T>& c, const TensorView<const T>* bias, const PrepackedConv<T>* prepacked,
                       const TensorView<const T>* residual, bool relu_before_residual, bool relu_after_residual,
                       const TensorView<T>& out) {
  with_conv_compute_type<T>([&]<class C>() {
    Tensor<C> hx, hw, hw2, hb, hr;
    const TensorView<const C> x = in_compute<C>(c.x4, hx);
    const TensorView<const C> w = contiguous_in<C>(in_compute<C>(c.w4, hw), hw2);
    weft::detail::cpu::ConvEpilogue<C> epilogue;
    if (bias) epilogue.bias = contiguous_in<C>(in_compute<C>(*bias, hb), hb).data();
    std::optional<TensorView<const C>> r;
    if (residual) r.emplace(in_compute<C>(*residual, hr)), epilogue.residual = weft::detail::strided4<const C>(*r);
    epilogue.relu_before_residual = relu_before_residual;
    epilogue.relu_after_residual = relu_after_residual;
    if (weft::log_enabled(LogComponent::vision, LogLevel::info)) {
      const ConvGeometry& g = c.geo;
      const bool x_last = c.x4.strides()[1] == 1 && g.in_channels > 1;
      // the strides the product writes: out's, or (computed in C, not T) a contiguous NCHW result's
      const std::int64_t out_sc = std::is_same_v<C, T> ? out.strides()[1] : g.out_h * g.out_w;
      const std::int64_t out_sw = std::is_same_v<C, T> ? out.strides()[3] : 1;
      weft::log_message(LogComponent::vision, LogLevel::info, c.op, " x ", c.x4.shape(),
                        x_last ? " channels-last" : " NCHW",
                        " * w ", c.w4.shape(), " -> ", out.shape(),
                        weft::is_channels_last(out) ? " channels-last" : " NCHW",
                        ": ", g.groups > 1 ? weft::detail::cat(g.groups, " groups x ") : std::string(),
                        g.out_positions(), " x ", g.reduction(), " x ", g.out_per_group(), " ",
                        weft::detail::cpu::conv_forward_text<C>(g, c.x4.strides()[1], x.strides()[2], x.strides()[3],
                                                                out_sc, out_sw),
                        bias ? ", epilogue + bias" : "", relu_before_residual ? ", relu" : "",
                        residual ? ", + residual" : "", relu_after_residual ? ", relu" : "", conv_precision<T, C>());
    }
    const auto* panels = prepacked ? prepacked->template for_input<C>(c.geo, x) : nullptr;
    if constexpr (std::is_same_v<C, T>) {
      weft::detail::conv2d_forward<C>(c.geo, x, w, panels, epilogue, out);
    } else {
      Tensor<C> result = weft::empty<C>(out.shape(), out.device());
      weft::detail::conv2d_forward<C>(c.geo, x, w, panels, epilogue, result.view());
      TensorView<T> dst = out;
      dst = weft::cast<T>(result);
    }
  });
}

/// A new contiguous output of conv(x, w) + bias.
template <class T>
Tensor<T> conv_forward(const ConvCall<T>& c, const TensorView<const T>* bias,
                       const PrepackedConv<T>* prepacked = nullptr) {
  Tensor<T> out = weft::empty<T>(c.out_shape, c.x4.device());
  const Shape out4{c.geo.batch, c.geo.out_channels, c.geo.out_h, c.geo.out_w};
  conv_forward_into<T>(c, bias, prepacked, nullptr, false, false, out.view().view(out4));
  return out;
}

/// The weight w [O, C/groups, kH, kW] of a convolution with options o packed for inputs of the
/// given layout (channels-last or not): what a later call reads instead of packing w anew.
template <class T>
PrepackedConv<T> prepack_conv(const TensorView<const T>& w, const ConvOptions& o, bool channels_last) {
  return with_conv_compute_type<T>([&]<class C>() {
    const Shape& ws = w.shape();
    ConvGeometry g;
    g.in_channels = ws[1] * o.groups, g.out_channels = ws[0], g.kernel_h = ws[2], g.kernel_w = ws[3];
    g.dilation_h = o.dilation.h, g.dilation_w = o.dilation.w, g.groups = o.groups;
    g.stride_h = o.stride.h, g.stride_w = o.stride.w;  // which engine runs (cpu::conv_winograd)
    // Only the column order matters: tap-major where the patches gather channel runs (from a
    // channels-last input, or the channels-last copy of an NCHW one: cpu::PatchSource), else
    // channel-major; a probe with adjacent channels or not gives it.
    PrepackedConv<T> p;
    p.channels_inner = weft::detail::cpu::patches_channel_runs<C>(channels_last ? 1 : 2, g.in_per_group(), g.taps());
    const Tensor<C> probe = weft::empty<C>(Shape{1, g.in_channels, 1, 1});
    const weft::detail::cpu::Strided4<const C> x{probe.data(), g.in_channels, p.channels_inner ? 1 : 2, 1, 1};
    Tensor<C> hw, hw2;
    const TensorView<const C> wc = contiguous_in<C>(in_compute<C>(w, hw), hw2);
    if constexpr (std::is_same_v<C, T>) p.panels = weft::detail::conv2d_prepack<C>(g, x, wc);
    else p.compute_panels = weft::detail::conv2d_prepack<C>(g, x, wc);
    return p;
  });
}

/// The gradients of the checked call c for dy (shape c.out_shape, any layout): dx (c.x4's shape,
/// or the caller's), dw, db, computed in T or conv_compute_t<T> (with_conv_compute_type).
template <class T>
ConvGradients<T> conv_backward(const ConvCall<T>& c, const TensorView<const T>& dy, const Shape& x_shape,
                               const Shape& w_shape, ConvGradientMask mask) {
  if (dy.shape() != c.out_shape)
    fail(c.op, "the output gradient ", dy.shape(), " does not match the output ", c.out_shape);
  return with_conv_compute_type<T>([&]<class C>() {
    Tensor<C> hdy, hx, hw, hw2;
    const TensorView<const C> g = in_compute<C>(dy.dim() == 3 ? dy.unsqueeze(2) : dy, hdy);
    ConvGradients<T> r;
    if (mask.input) {
      const TensorView<const C> w = contiguous_in<C>(in_compute<C>(c.w4, hw), hw2);
      Tensor<C> dx = weft::empty<C>(c.x4.shape(), dy.device());
      weft::detail::conv2d_backward_input<C>(c.geo, g, w, dx.view());
      r.dx = ad::detail::reshaped(from_compute<T>(std::move(dx)), x_shape);
    }
    if (mask.weight) {
      Tensor<C> dw = weft::empty<C>(c.w4.shape(), dy.device());
      weft::detail::conv2d_backward_weight<C>(c.geo, in_compute<C>(c.x4, hx), g, dw.view());
      r.dweight = ad::detail::reshaped(from_compute<T>(std::move(dw)), w_shape);
    }
    if (mask.bias) r.dbias = Tensor<T>(weft::cast<T>(weft::sum(g, {0, 2, 3})));
    return r;
  });
}

/// conv1d / conv2d over any operands (Vars, tensors, expressions): the value, and where an
/// operand is tracked, the backward recorded.
template <class T>
ad::Var<T> conv_recorded(const char* op, bool one_d, const ad::detail::Input<T>& x, const ad::detail::Input<T>& w,
                         const ad::detail::Input<T>* b, const ConvOptions& o,
                         const PrepackedConv<T>* prepacked = nullptr) {
  const ConvCall<T> c = conv_call<T>(op, one_d, x.value, w.value, b ? &b->value : nullptr, o);
  Tensor<T> value = conv_forward<T>(c, b ? &b->value : nullptr, prepacked);
  ad::detail::SavedTensors saved;
  saved.add(x.value);
  saved.add(w.value);
  return ad::detail::record_op<T>(
      op, std::move(value), std::array{x.node, w.node, b ? b->node : nullptr}, std::move(saved),
      [c, nx = x.node, nw = w.node, nb = b ? b->node : nullptr, xs = x.value.shape(),
       ws = w.value.shape()](const Tensor<T>& g) {
        auto needs = [](const auto& n) { return n && n->requires_grad; };
        ConvGradients<T> d = conv_backward<T>(c, g.view(), xs, ws, {needs(nx), needs(nw), needs(nb)});
        if (needs(nx)) ad::detail::accumulate<T>(nx, std::move(d.dx));
        if (needs(nw)) ad::detail::accumulate<T>(nw, std::move(d.dweight));
        if (needs(nb)) ad::detail::accumulate<T>(nb, std::move(d.dbias));
      });
}

/// The dtype of a convolution's operands, checked: floating point.
template <class X>
using conv_dtype_t = ad::detail::input_dtype_t<X>;

template <class T>
constexpr void check_conv_dtype() {
  static_assert(weft::is_floating_v<T>, "nn convolutions need floating-point tensors (float, double, bfloat16, half)");
}

/// Tensor operands: not tracked by autograd.
template <class... Xs>
concept PlainConvOperands = (weft::Operand<Xs> && ...) && !(ad::detail::Tracked<Xs> || ...);

/// conv1d / conv2d over plain operands: the value only.
template <class T, class X, class W>
Tensor<T> conv_plain(const char* op, bool one_d, const X& x, const W& w, const ad::detail::Input<T>* b,
                     const ConvOptions& o) {
  const ad::detail::Input<T> xi = ad::detail::input<T>(x), wi = ad::detail::input<T>(w);
  const ConvCall<T> c = conv_call<T>(op, one_d, xi.value, wi.value, b ? &b->value : nullptr, o);
  return conv_forward<T>(c, b ? &b->value : nullptr);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// conv2d(x, w, b, options): torch.nn.functional.conv2d (see the file's formula). x [N, C, H, W]
/// in any layout, w [O, C/groups, kH, kW], b [O]; Vars record the backward.
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B>
ad::Var<detail::conv_dtype_t<X>> conv2d(const X& x, const W& w, const B& b, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::conv_recorded<T>("nn::conv2d", false, ad::detail::input<T>(x), ad::detail::input<T>(w), &bias, o);
}
/// conv2d(x, w, options): no bias.
template <class X, class W>
  requires ad::detail::AdOperands<X, W>
ad::Var<detail::conv_dtype_t<X>> conv2d(const X& x, const W& w, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  return detail::conv_recorded<T>("nn::conv2d", false, ad::detail::input<T>(x), ad::detail::input<T>(w), nullptr, o);
}
// conv2d on tensors, views or expressions: nn/conv_node.hpp (an expression node).

/// conv1d(x, w, b, options): torch.nn.functional.conv1d, x [N, C, L], w [O, C/groups, K], b [O];
/// the options' width fields (stride.w, padding.size.w, dilation.w) apply.
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B>
ad::Var<detail::conv_dtype_t<X>> conv1d(const X& x, const W& w, const B& b, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::conv_recorded<T>("nn::conv1d", true, ad::detail::input<T>(x), ad::detail::input<T>(w), &bias, o);
}
template <class X, class W>
  requires ad::detail::AdOperands<X, W>
ad::Var<detail::conv_dtype_t<X>> conv1d(const X& x, const W& w, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  return detail::conv_recorded<T>("nn::conv1d", true, ad::detail::input<T>(x), ad::detail::input<T>(w), nullptr, o);
}
template <class X, class W, class B>
  requires detail::PlainConvOperands<X, W, B>
Tensor<detail::conv_dtype_t<X>> conv1d(const X& x, const W& w, const B& b, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::conv_plain<T>("nn::conv1d", true, x, w, &bias, o);
}
template <class X, class W>
  requires detail::PlainConvOperands<X, W>
Tensor<detail::conv_dtype_t<X>> conv1d(const X& x, const W& w, const ConvOptions& o = {}) {
  using T = detail::conv_dtype_t<X>;
  detail::check_conv_dtype<T>();
  return detail::conv_plain<T>("nn::conv1d", true, x, w, nullptr, o);
}

/// The shape of conv2d(x, w, options) for x [N, C, H, W] and w [O, C/groups, kH, kW] (conv1d's
/// for 3-D shapes), checked as the convolution checks them: where a destination for conv2d_out
/// or Conv2d::forward_into comes from.
inline Shape conv2d_output_shape(const Shape& x, const Shape& w, const ConvOptions& o = {}) {
  const bool one_d = x.rank() == 3;
  const char* op = one_d ? "nn::conv1d" : "nn::conv2d";
  if (x.rank() != w.rank() || (x.rank() != 3 && x.rank() != 4))
    weft::detail::fail(op, "needs x [N, C, (H,) W] and a weight of the same rank, got x ", x, " and weight ", w);
  auto four = [&](const Shape& s) { return one_d ? Shape{s[0], s[1], 1, s[2]} : s; };
  const weft::detail::ConvGeometry g =
      detail::conv_geometry(op, x, w, four(x), four(w), one_d ? detail::conv1d_options(o) : o);
  return one_d ? Shape{g.batch, g.out_channels, g.out_w} : Shape{g.batch, g.out_channels, g.out_h, g.out_w};
}

/// The gradients of conv2d (conv1d: 3-D x and w) for the output gradient dy: dx, dweight, dbias
/// as `mask` asks.
template <class T>
ConvGradients<T> conv2d_backward(const TensorView<const T>& dy, const TensorView<const T>& x,
                                 const TensorView<const T>& w, const ConvOptions& o = {}, ConvGradientMask mask = {}) {
  detail::check_conv_dtype<T>();
  const bool one_d = x.dim() == 3;
  const detail::ConvCall<T> c = detail::conv_call<T>(one_d ? "nn::conv1d" : "nn::conv2d", one_d, x, w, nullptr, o);
  return detail::conv_backward<T>(c, dy, x.shape(), w.shape(), mask);
}

/// What conv2d_out applies after the sum: no relu, relu(conv + b) + residual, or
/// relu(conv + b + residual).
enum class ConvRelu { none, before_residual, after_residual };

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {
/// conv2d_out with the weight's prepacked panels when they fit x's layout (Conv2d::forward_into).
template <class T>
void conv_out(const TensorView<T>& out, const TensorView<const T>& x, const TensorView<const T>& w,
              const TensorView<const T>& b, const ConvOptions& o, const TensorView<const T>& residual, ConvRelu relu,
              const PrepackedConv<T>* prepacked) {
  check_conv_dtype<T>();
  const bool has_bias = b.defined(), has_residual = residual.defined();
  const ConvCall<T> c = conv_call<T>("nn::conv2d", false, x, w, has_bias ? &b : nullptr, o);
  if (out.shape() != c.out_shape)
    fail("nn::conv2d", "the destination ", out.shape(), " does not match the output ", c.out_shape);
  if (has_residual && residual.shape() != c.out_shape)
    fail("nn::conv2d", "the residual ", residual.shape(), " does not match the output ", c.out_shape);
  using weft::detail::byte_range, weft::detail::tensor_ref;
  if (weft::detail::overlaps(byte_range(tensor_ref(out)), byte_range(tensor_ref(x))))
    fail("nn::conv2d", "the destination ", out.shape(), " overlaps x ", x.shape(),
         ": the convolution reads x while it writes; write into another tensor");
  conv_forward_into<T>(c, has_bias ? &b : nullptr, prepacked, has_residual ? &residual : nullptr,
                       relu == ConvRelu::before_residual, relu == ConvRelu::after_residual, out);
}
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// out = relu(conv2d(x, w) + b) + residual or relu(conv2d(x, w) + b + residual), as `relu`
/// says, written into `out` (any layout: channels-last included) by ONE convolution whose
/// epilogue applies bias, relu and residual while the output block is in cache. b and residual
/// may be empty (no bias, no residual); the residual may be `out` itself, x may not overlap it.
/// Tensors only (inference: no tape).
template <class T>
void conv2d_out(const TensorView<T>& out, const TensorView<const T>& x, const TensorView<const T>& w,
                const TensorView<const T>& b, const ConvOptions& o = {},
                const TensorView<const T>& residual = TensorView<const T>(), ConvRelu relu = ConvRelu::none) {
  detail::conv_out<T>(out, x, w, b, o, residual, relu, nullptr);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
