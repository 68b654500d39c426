// SPDX-License-Identifier: MIT
/// @file A trained ResNet prepared for inference: every convolution with its eval-mode BatchNorm folded in, prepacked, and the blocks' ReLUs and residual sums applied in the convolutions' epilogues.
///
/// A BasicBlock in eval is relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)). With each
/// BatchNorm folded into the convolution before it (nn::fold_batch_norm), it is two convolutions:
///   h = relu(conv1'(x)),   y = relu(conv2'(h) + shortcut'(x))
/// each ONE pass (Conv2d::forward_into: bias, relu and the residual in the GEMM's epilogue), the
/// weights kept in the GEMM's packed panels (Conv2d::prepack). The model's own forward runs a
/// convolution, a BatchNorm pass, a ReLU pass and an add pass for the same result.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "examples/resnet/resnet.hpp"

namespace resnet {

template <class T = float>
class FoldedResNet {
 public:
  /// Folds `model`'s running statistics (its BatchNorms' eval behaviour) into its convolutions.
  explicit FoldedResNet(ResNet<T>& model)
      : stem_(folded(model.conv1, model.bn1)),
        head_weight_(model.linear.weight.value()),
        head_bias_(model.linear.bias.value()) {
    for (std::size_t k = 0; k < model.config().widths.size(); ++k) {
      weft::nn::Sequential<T>& stage = model.stage(k);
      for (std::size_t b = 0; b < stage.size(); ++b) {
        BasicBlock<T>& block = stage.template at<BasicBlock<T>>(b);
        Block f{folded(block.conv1, block.bn1), folded(block.conv2, block.bn2), std::nullopt};
        if (block.shortcut.size() == 2)
          f.shortcut.emplace(folded(block.shortcut.template at<weft::nn::Conv2d<T>>(0),
                                    block.shortcut.template at<weft::nn::BatchNorm2d<T>>(1)));
        blocks_.push_back(std::move(f));
      }
    }
  }

  /// The logits [N, classes] of images x [N, C, H, W] (no tape).
  weft::Tensor<T> operator()(const weft::Tensor<T>& x) const {
    using weft::nn::ConvRelu;
    weft::Tensor<T> h = run(stem_, x, weft::TensorView<const T>(), ConvRelu::before_residual);
    for (const Block& b : blocks_) {
      const weft::Tensor<T> inner = run(b.conv1, h, weft::TensorView<const T>(), ConvRelu::before_residual);
      const weft::Tensor<T> shortcut = b.shortcut ? run(*b.shortcut, h, weft::TensorView<const T>(), ConvRelu::none) : h;
      h = run(b.conv2, inner, shortcut.view(), ConvRelu::after_residual);
    }
    const weft::Tensor<T> pooled = weft::nn::adaptive_avg_pool2d(h, 1);
    const weft::TensorView<const T> features = pooled.view().view(weft::Shape{pooled.shape()[0], pooled.shape()[1]});
    return weft::matmul(features, head_weight_.view().transpose(0, 1)) + head_bias_;
  }

 private:
  struct Block {
    weft::nn::Conv2d<T> conv1, conv2;
    std::optional<weft::nn::Conv2d<T>> shortcut;
  };

  static weft::nn::Conv2d<T> folded(const weft::nn::Conv2d<T>& conv, const weft::nn::BatchNorm<T>& bn) {
    weft::nn::Conv2d<T> f = weft::nn::fold_batch_norm(conv, bn);
    f.prepack();
    return f;
  }

  /// conv(x) with its epilogue into a new contiguous tensor.
  static weft::Tensor<T> run(const weft::nn::Conv2d<T>& conv, const weft::Tensor<T>& x,
                             const weft::TensorView<const T>& residual, weft::nn::ConvRelu relu) {
    weft::Tensor<T> out = weft::empty<T>(weft::nn::conv2d_output_shape(x.shape(), conv.weight.shape(), conv.options()));
    conv.forward_into(out.view(), x, residual, relu);
    return out;
  }

  weft::nn::Conv2d<T> stem_;
  std::vector<Block> blocks_;
  weft::Tensor<T> head_weight_, head_bias_;
};

}  // namespace resnet
