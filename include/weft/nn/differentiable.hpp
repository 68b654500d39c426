// SPDX-License-Identifier: MIT
/// @file The nn ops over Vars and their backward through weft's own backward kernels: linear (GEMMs over transposed views), dropout (a where over a counter-based mask), layer_norm (nn::layer_norm_backward), cross_entropy (nn::cross_entropy_backward), scaled_dot_product_attention (the flash backward).
#pragma once

#include <algorithm>
#include <concepts>
#include <cstdint>

#include "weft/ad/operators.hpp"
#include "weft/ad/record.hpp"
#include "weft/ad/reduce.hpp"
#include "weft/backend/gemm.hpp"
#include "weft/core/generator.hpp"
#include "weft/nn/cross_entropy.hpp"
#include "weft/nn/dropout.hpp"
#include "weft/nn/layer_norm_backward.hpp"
#include "weft/nn/sdpa.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/layer_norm.hpp"
#include "weft/ops/matmul.hpp"

namespace weft::nn {

namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// x's rows xr [n, in] times weight^T (+ bias) on the weight's prepacked panels, where they serve
/// the product (weft::detail::matmul_prepacked_applies: then the bits are the unpacked call's);
/// an undefined tensor where they do not, and the unpacked product runs.
template <class T>
Tensor<T> linear_on_panels(const TensorView<const T>& xr, const weft::detail::PrepackedMatmul<T>& packed,
                           const Shape& ws, const TensorView<const T>* bias) {
  if (packed.k != ws[1] || packed.m != ws[0])
    weft::detail::fail("nn::linear", "the prepacked weight [", packed.m, ", ", packed.k, "] is not the weight ", ws,
                       ": prepack this weight (nn::prepack_linear) and pass its panels");
  if (!weft::detail::matmul_prepacked_applies(packed, xr.shape()[0], xr.device()) ||
      (bias && !bias->is_contiguous()))
    return {};
  Tensor<T> y = weft::empty<T>(Shape{xr.shape()[0], packed.m}, xr.device());
  weft::detail::matmul_prepacked<T>(xr, packed, bias ? bias->data() : nullptr, y.data());
  return y;
}

/// x w^T (+ b): the GEMM over x's rows with w read transposed, the bias in its epilogue; with
/// `prepacked` (w's panels), the GEMM reads those where they serve the product.
template <class T>
ad::Var<T> linear_recorded(const ad::detail::Input<T>& in, const ad::detail::Input<T>& weight,
                           const ad::detail::Input<T>* bias,
                           const weft::detail::PrepackedMatmul<T>* prepacked = nullptr) {
  const char* op = "nn::linear";
  const Shape xs = in.value.shape();
  const Shape ws = weight.value.shape();
  if (xs.rank() < 1 || ws.rank() != 2 || ws[1] != xs[xs.rank() - 1] ||
      (bias && (bias->value.dim() != 1 || bias->value.shape()[0] != ws[0])))
    weft::detail::fail(op, "x ", xs, ", weight ", ws, bias ? weft::detail::cat(" and bias ", bias->value.shape()) : "",
                       " do not fit: x [..., in], weight [out, in], bias [out]");
  const std::int64_t features = xs[xs.rank() - 1], outs = ws[0];
  const Shape rows{in.value.numel() / std::max<std::int64_t>(features, 1), features};
  Tensor<T> copied;  // x's rows as a matrix: a view when x is contiguous
  if (!in.value.is_contiguous()) copied = in.value.reshape(rows);
  const TensorView<const T> xr = in.value.is_contiguous() ? in.value.view(rows) : TensorView<const T>(copied.view());
  Tensor<T> y;
  if (prepacked) y = linear_on_panels<T>(xr, *prepacked, ws, bias ? &bias->value : nullptr);
  if (!y.defined() && bias) y = weft::matmul(xr, weight.value.transpose(0, 1)) + bias->value;
  else if (!y.defined()) y = weft::matmul(xr, weight.value.transpose(0, 1));
  Shape ys = xs;
  ys[ys.rank() - 1] = outs;
  Tensor<T> value = ad::detail::reshaped(std::move(y), ys);
  ad::detail::SavedTensors saved;
  saved.add(xr);
  saved.add(weight.value);
  return ad::detail::record_op<T>(
      op, std::move(value), std::array{in.node, weight.node, bias ? bias->node : nullptr}, std::move(saved),
      [xr, wv = weight.value, nx = in.node, nw = weight.node, nb = bias ? bias->node : nullptr, xs,
       outs](const Tensor<T>& g) {
        const TensorView<const T> g2 = g.view().view(Shape{g.numel() / outs, outs});
        if (nx && nx->requires_grad) ad::detail::accumulate<T>(nx, ad::detail::reshaped(weft::eval(weft::matmul(g2, wv)), xs));
        // dW = dy^T x: into a gradient that exists (a parameter's, or one another use wrote) as
        // `grad += product`, no [out, in] temporary kept; else evaluated into a new gradient.
        if (nw && nw->requires_grad) ad::detail::accumulate<T>(nw, weft::matmul(g2.transpose(0, 1), xr));
        if (nb && nb->requires_grad) ad::detail::accumulate<T>(nb, weft::eval(weft::sum(g2, 0)));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// linear(x, w, b) = x w^T + b over the last dim of x [..., in] with w [out, in], b [out]
/// (torch.nn.functional.linear): ONE GEMM with the bias added in its epilogue, w read as a
/// transposed view. Backward: dx = dy w, dw = dy^T x (rows of every batch dim together),
/// db = sum of dy over the rows.
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B>
auto linear(const X& x, const W& w, const B& b) {
  using T = ad::detail::input_dtype_t<X>;
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::linear_recorded<T>(ad::detail::input<T>(x), ad::detail::input<T>(w), &bias);
}
/// linear(x, w) = x w^T (no bias).
template <class X, class W>
  requires ad::detail::AdOperands<X, W>
auto linear(const X& x, const W& w) {
  using T = ad::detail::input_dtype_t<X>;
  return detail::linear_recorded<T>(ad::detail::input<T>(x), ad::detail::input<T>(w), nullptr);
}

/// A linear layer's weight [out, in] kept in the panels of the GEMM that nn::linear runs
/// (weft::detail::PrepackedMatmul; none for 16-bit floats computed in float, integers, CUDA
/// tensors): the calls given it read the panels instead of packing the weight, with bit-identical
/// results. A snapshot for inference (torch's weight prepacking): prepack again after the weight
/// changes.
template <class T>
using PrepackedLinear = weft::detail::PrepackedMatmul<T>;

/// The panels of `w` [out, in] (a Var or a tensor) for nn::linear(x, w, b, panels).
template <class W>
  requires ad::detail::AdOperand<W>
auto prepack_linear(const W& w) {
  using T = ad::detail::input_dtype_t<W>;
  const ad::detail::Input<T> weight = ad::detail::input<T>(w);
  if (weight.value.dim() != 2)
    weft::detail::fail("nn::prepack_linear", "the weight ", weight.value.shape(), " is not [out, in]");
  return weft::detail::prepack_matmul_b<T>(weight.value.view().transpose(0, 1));
}

/// linear(x, w, b) reading w's prepacked panels (nn::prepack_linear(w)) where the GEMM that the
/// call runs is theirs (float and double from 2^21 multiply-adds, bfloat16 on its native kernel):
/// the same bits, without packing w per call. Products the panels do not serve run unpacked.
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B>
auto linear(const X& x, const W& w, const B& b, const PrepackedLinear<ad::detail::input_dtype_t<X>>& panels) {
  using T = ad::detail::input_dtype_t<X>;
  const ad::detail::Input<T> bias = ad::detail::input<T>(b);
  return detail::linear_recorded<T>(ad::detail::input<T>(x), ad::detail::input<T>(w), &bias, &panels);
}
/// linear(x, w) reading w's prepacked panels.
template <class X, class W>
  requires ad::detail::AdOperands<X, W>
auto linear(const X& x, const W& w, const PrepackedLinear<ad::detail::input_dtype_t<X>>& panels) {
  using T = ad::detail::input_dtype_t<X>;
  return detail::linear_recorded<T>(ad::detail::input<T>(x), ad::detail::input<T>(w), nullptr, &panels);
}

}  // namespace WEFT_BACKEND_ABI

namespace detail {
inline namespace WEFT_BACKEND_ABI {
/// dropout's check of p, then (training) its where over a uniform mask u (nn/dropout.hpp's
/// dropout_uniforms, as the tensor form draws): u >= p keeps.
template <class T>
ad::Var<T> dropout_from(const ad::Var<T>& v, double p, bool training, const RandomSource& source) {
  weft::detail::check_dropout_probability(p);
  if (!training || p == 0) return v;
  if (p == 1) return ad::Var<T>(v * 0.0);
  const Tensor<float> u = weft::detail::dropout_uniforms(v.shape(), v.value().device(), source);
  return ad::Var<T>(weft::where(u >= float(p), v * (1.0 / (1.0 - p)), 0.0));
}
}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// dropout(x, p, seed): each element kept with probability 1 - p and scaled by 1 / (1 - p), else
/// 0 (torch.nn.functional.dropout in training). The mask is a counter-based draw (weft::rand with
/// `seed`, the same on every device); the gradient flows through the kept elements, derived from
/// the where.
template <class X>
  requires ad::detail::AdOperands<X>
auto dropout(const X& x, double p, std::uint64_t seed) {
  using T = ad::detail::input_dtype_t<X>;
  return detail::dropout_from<T>(ad::detail::input<T>(x).var, p, true, seed);
}

/// dropout(x, p = 0.5, training = true) (torch.nn.functional.dropout): the same where, its mask
/// drawn from the global generator (weft::manual_seed makes it reproducible); not training: x
/// itself. `training` is a bool only (a number there is the seed of the form above).
template <class X, class Training = bool>
  requires ad::detail::AdOperands<X> && std::same_as<Training, bool>
auto dropout(const X& x, double p = 0.5, Training training = true) {
  using T = ad::detail::input_dtype_t<X>;
  return detail::dropout_from<T>(ad::detail::input<T>(x).var, p, training, RandomSource());
}

/// layer_norm(x, weight, bias, eps) over the last weight.dim() dims of a Var; the backward is
/// nn::layer_norm_backward (dx, dweight, dbias in one pass pair).
template <class X, class W, class B>
  requires ad::detail::AdOperands<X, W, B>
auto layer_norm(const X& x, const W& w, const B& b, double eps = 1e-5) {
  using T = ad::detail::input_dtype_t<X>;
  const ad::detail::Input<T> in = ad::detail::input<T>(x), weight = ad::detail::input<T>(w),
                             bias = ad::detail::input<T>(b);
  ad::detail::SavedTensors saved;
  saved.add(in.value);
  saved.add(weight.value);
  return ad::detail::record_op<T>(
      "layer_norm", weft::layer_norm(in.value, weight.value, bias.value, eps),
      std::array{in.node, weight.node, bias.node}, std::move(saved),
      [xv = in.value, wv = weight.value, nx = in.node, nw = weight.node, nb = bias.node, eps](const Tensor<T>& g) {
        nn::LayerNormGradients<T> d = nn::layer_norm_backward(g, xv, wv, eps);
        ad::detail::accumulate<T>(nx, std::move(d.dx));
        ad::detail::accumulate<T>(nw, std::move(d.dweight));
        ad::detail::accumulate<T>(nb, std::move(d.dbias));
      });
}

/// cross_entropy(logits, targets, reduction) over a Var of logits [..., C]; the backward is
/// nn::cross_entropy_backward (softmax minus the one-hot target, times the loss's gradient).
/// Targets as for tensors: an integer tensor, or an integer expression (evaluated once).
template <class X, class Targets>
  requires ad::detail::AdOperands<X>
auto cross_entropy(const X& logits, const Targets& targets, Reduction reduction = Reduction::mean) {
  using T = ad::detail::input_dtype_t<X>;
  if constexpr (weft::detail::check_class_indices<Targets>()) {
    const ad::detail::Input<T> in = ad::detail::input<T>(logits);
    ad::detail::SavedTensors saved;
    saved.add(in.value);
    const auto t = weft::detail::class_indices(targets);
    saved.add(t);
    return ad::detail::record_op<T>(
        "cross_entropy", nn::cross_entropy(in.value, t, reduction), std::array{in.node}, std::move(saved),
        [xv = in.value, node = in.node, t, reduction](const Tensor<T>& g) {
          if (reduction == Reduction::none)
            ad::detail::accumulate<T>(node, nn::cross_entropy_backward(g, xv, t, reduction));
          else
            ad::detail::accumulate<T>(node, nn::cross_entropy_backward(T(g.item()), xv, t, reduction));
        });
  } else {
    return ad::Var<T>();
  }
}

/// scaled_dot_product_attention over Vars q, k, v (torch's semantics and options, dropout
/// included); the backward is nn::sdpa_backward (FlashAttention-2's), from the saved output and
/// log-sum-exp.
template <class Q, class K, class V>
  requires ad::detail::AdOperands<Q, K, V>
auto scaled_dot_product_attention(const Q& q, const K& k, const V& v, const SdpaOptions& o = {}) {
  using T = ad::detail::input_dtype_t<Q>;
  const ad::detail::Input<T> qi = ad::detail::input<T>(q), ki = ad::detail::input<T>(k), vi = ad::detail::input<T>(v);
  SdpaOutput<T> r = nn::sdpa_forward(qi.value, ki.value, vi.value, o);
  ad::detail::SavedTensors saved;
  for (const auto* t : {&qi.value, &ki.value, &vi.value}) saved.add(*t);
  const TensorView<const T> out = r.out.view();
  return ad::detail::record_op<T>(
      "scaled_dot_product_attention", std::move(r.out), std::array{qi.node, ki.node, vi.node}, std::move(saved),
      [qv = qi.value, kv = ki.value, vv = vi.value, out, lse = std::move(r.lse), nq = qi.node, nk = ki.node,
       nv = vi.node, o](const Tensor<T>& g) {
        SdpaGradients<T> d = nn::sdpa_backward(g, qv, kv, vv, out, lse, o);
        ad::detail::accumulate<T>(nq, std::move(d.dq));
        ad::detail::accumulate<T>(nk, std::move(d.dk));
        ad::detail::accumulate<T>(nv, std::move(d.dv));
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
