// SPDX-License-Identifier: MIT
/// @file Preparing a trained module for inference: nn::prepack (every convolution's and linear layer's weight kept in the GEMM's packed panels) and nn::fold_batch_norm (a convolution and the eval-mode batch norm after it as one convolution).
#pragma once

#include "weft/nn/fold_batch_norm.hpp"
#include "weft/nn/modules/batch_norm.hpp"
#include "weft/nn/modules/conv.hpp"
#include "weft/nn/modules/linear.hpp"
#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// Prepacks every Conv2d and Linear in `model` and below it (Conv2d::prepack, Linear::prepack):
/// each later forward skips packing those weights, with bit-identical results. A snapshot for inference: prepack again
/// after the weights change (nn::unpack drops the panels).
template <class T>
void prepack(Module<T>& model) {
  model.apply([](Module<T>& m) {
    if (auto* conv = dynamic_cast<Conv2d<T>*>(&m)) conv->prepack();
    if (auto* linear = dynamic_cast<Linear<T>*>(&m)) linear->prepack();
  });
}
/// Drops what nn::prepack kept.
template <class T>
void unpack(Module<T>& model) {
  model.apply([](Module<T>& m) {
    if (auto* conv = dynamic_cast<Conv2d<T>*>(&m)) conv->unpack();
    if (auto* linear = dynamic_cast<Linear<T>*>(&m)) linear->unpack();
  });
}

/// The Conv2d equal to bn(conv(x)) with bn in eval mode (its running statistics; torch's
/// fuse_conv_bn_eval): a new module with the folded weight and a bias (nn::fold_batch_norm's
/// formula), on the conv's options.
template <class T>
Conv2d<T> fold_batch_norm(const Conv2d<T>& conv, const BatchNorm<T>& bn) {
  if (!bn.running_mean.defined())
    weft::detail::fail("nn::fold_batch_norm", "the batch norm has no running statistics (track_running_stats = false): "
                       "it normalizes with each batch's statistics and folds into nothing");
  const Shape& ws = conv.weight.shape();
  auto view_of = [](const ad::Var<T>& v) { return v.defined() ? TensorView<const T>(v.value().view()) : TensorView<const T>(); };
  const FoldedConv<T> f = fold_batch_norm<T>(conv.weight.value().view(), view_of(conv.bias), bn.running_mean.view(),
                                             bn.running_var.view(), view_of(bn.weight), view_of(bn.bias), bn.eps());
  Conv2d<T> folded(ws[1] * conv.options().groups, ws[0], Size2(ws[2], ws[3]), conv.options(), true, 0);
  folded.weight = ad::param(f.weight);
  folded.bias = ad::param(f.bias);
  return folded;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
