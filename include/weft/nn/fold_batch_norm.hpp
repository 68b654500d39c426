// SPDX-License-Identifier: MIT
/// @file nn::fold_batch_norm: the convolution that equals an eval-mode batch_norm applied to a convolution's output (one pass instead of two at inference).
///
/// batch_norm(conv2d(x, w, b)) in eval is, per output channel o, an affine map of the
/// convolution's output: (y - mean[o]) s[o] + beta[o] with s[o] = gamma[o] / sqrt(var[o] + eps).
/// So it equals conv2d(x, w', b') with
///   w'[o, ...] = w[o, ...] s[o],   b'[o] = (b[o] - mean[o]) s[o] + beta[o]
/// (b = 0 without a bias, gamma = 1 and beta = 0 without affine parameters). Folded once, the
/// network runs one convolution where it ran a convolution and a normalization pass.
#pragma once

#include "weft/core/tensor.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// The folded convolution's parameters: weight like w, bias [O].
template <class T>
struct FoldedConv {
  Tensor<T> weight, bias;
};

/// w [O, ...] and b [O] (or undefined: no bias) folded with the running statistics mean, var [O]
/// and the affine gamma, beta [O] (each may be undefined: 1 and 0), eps as batch_norm's.
template <class T>
FoldedConv<T> fold_batch_norm(const TensorView<const T>& w, const TensorView<const T>& b,
                              const TensorView<const T>& running_mean, const TensorView<const T>& running_var,
                              const TensorView<const T>& gamma, const TensorView<const T>& beta, double eps = 1e-5) {
  const char* op = "nn::fold_batch_norm";
  if (w.dim() < 1) weft::detail::fail(op, "needs a weight [O, ...], got shape ", w.shape());
  const std::int64_t o = w.shape()[0];
  auto check = [&](const TensorView<const T>& v, const char* name, bool optional) {
    if (optional && !v.defined()) return;
    if (!v.defined() || v.dim() != 1 || v.shape()[0] != o)
      weft::detail::fail(op, name, " must be [", o, "] (one per output channel of the weight ", w.shape(), "), got ",
                   v.defined() ? weft::detail::cat(v.shape()) : std::string("none"));
  };
  check(b, "bias", true);
  check(running_mean, "running_mean", false);
  check(running_var, "running_var", false);
  check(gamma, "weight (gamma)", true);
  check(beta, "bias (beta)", true);
  // s = gamma / sqrt(var + eps), in double: it multiplies every weight once
  const Tensor<double> var = weft::cast<double>(running_var);
  Tensor<double> s = 1.0 / weft::sqrt(var + eps);
  if (gamma.defined()) s = s * weft::cast<double>(gamma);
  Shape per_channel{o};
  while (per_channel.rank() < w.dim()) per_channel.push_back(1);
  FoldedConv<T> f;
  f.weight = weft::cast<T>(weft::cast<double>(w) * s.view().view(per_channel));
  Tensor<double> bias = -weft::cast<double>(running_mean);
  if (b.defined()) bias = bias + weft::cast<double>(b);
  bias = bias * s;
  if (beta.defined()) bias = bias + weft::cast<double>(beta);
  f.bias = weft::cast<T>(bias);
  return f;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
