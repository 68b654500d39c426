// SPDX-License-Identifier: MIT
/// @file A trained ResNet prepared for inference: every convolution with its eval-mode BatchNorm folded in, prepacked, and the blocks' ReLUs and residual sums applied in the convolutions' epilogues.
///
/// A BasicBlock in eval is relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)). With each
/// BatchNorm folded into the convolution before it (nn::fold_batch_norm), it is two convolutions:
///   h = relu(conv1'(x)),   y = relu(conv2'(h) + shortcut'(x))
/// each ONE pass (Conv2d::forward_into: bias, relu and the residual in the GEMM's epilogue), the
/// weights kept in the GEMM's packed panels (Conv2d::prepack). The model's own forward runs a
/// convolution, a BatchNorm pass, a ReLU pass and an add pass for the same result.
///
/// Layout: the activations of the chain are channels-last (NHWC memory) unless asked otherwise.
/// weft's convolutions gather a channels-last input's patches as runs of adjacent channels and
/// store a channels-last output's rows whole, where NCHW needs both transposed (docs/vision.md,
/// Layout, has the per-layer table); the input is converted once at the start, and the pooled
/// features at the end are layout-free. WEFT_LOGS=vision says which layout ran and why.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "resnet.hpp"

namespace resnet {

template <class T = float>
class FoldedResNet {
 public:
  /// Folds `model`'s running statistics (its BatchNorms' eval behaviour) into its convolutions;
  /// `channels_last` chooses the activations' layout.
  explicit FoldedResNet(ResNet<T>& model, bool channels_last = true)
      : channels_last_(channels_last),
        stem_(folded(model.conv1, model.bn1, channels_last)),
        head_weight_(model.linear.weight.value()),
        head_bias_(model.linear.bias.value()) {
    for (std::size_t k = 0; k < model.config().widths.size(); ++k) {
      weft::nn::Sequential<T>& stage = model.stage(k);
      for (std::size_t b = 0; b < stage.size(); ++b) {
        BasicBlock<T>& block = stage.template at<BasicBlock<T>>(b);
        Block f{folded(block.conv1, block.bn1, channels_last), folded(block.conv2, block.bn2, channels_last),
                std::nullopt};
        if (block.shortcut.size() == 2)
          f.shortcut.emplace(folded(block.shortcut.template at<weft::nn::Conv2d<T>>(0),
                                    block.shortcut.template at<weft::nn::BatchNorm2d<T>>(1), channels_last));
        blocks_.push_back(std::move(f));
      }
    }
  }

  /// The logits [N, classes] of images x [N, C, H, W] in either layout (no tape).
  weft::Tensor<T> operator()(const weft::TensorView<const T>& x) const {
    using weft::nn::ConvRelu;
    weft::log_message(weft::LogComponent::vision, weft::LogLevel::info, "resnet: the chain runs ",
                      channels_last_ ? "channels-last (patches gathered as channel runs, output rows stored whole; "
                                       "the input converted once)"
                                     : "NCHW (as asked)");
    const weft::TensorView<const T> none;
    const weft::TensorView<const T> input =
        channels_last_ && !weft::is_channels_last(x) ? weft::TensorView<const T>(weft::channels_last(x)) : x;
    // a view's `=` writes elements: the activation is rebound through the optional
    std::optional<weft::TensorView<const T>> h;
    h.emplace(run(stem_, input, none, ConvRelu::before_residual));
    for (const Block& b : blocks_) {
      const weft::TensorView<const T> inner = run(b.conv1, *h, none, ConvRelu::before_residual);
      const weft::TensorView<const T> shortcut = b.shortcut ? run(*b.shortcut, *h, none, ConvRelu::none) : *h;
      h.emplace(run(b.conv2, inner, shortcut, ConvRelu::after_residual));
    }
    const weft::Tensor<T> pooled = weft::nn::adaptive_avg_pool2d(*h, 1);
    const weft::TensorView<const T> features = pooled.view().view(weft::Shape{pooled.shape()[0], pooled.shape()[1]});
    return weft::matmul(features, head_weight_.view().transpose(0, 1)) + head_bias_;
  }

 private:
  struct Block {
    weft::nn::Conv2d<T> conv1, conv2;
    std::optional<weft::nn::Conv2d<T>> shortcut;
  };

  static weft::nn::Conv2d<T> folded(const weft::nn::Conv2d<T>& conv, const weft::nn::BatchNorm<T>& bn,
                                    bool channels_last) {
    weft::nn::Conv2d<T> f = weft::nn::fold_batch_norm(conv, bn);
    f.prepack(channels_last);
    return f;
  }

  /// conv(x) with its epilogue into a new tensor of the chain's layout.
  weft::TensorView<const T> run(const weft::nn::Conv2d<T>& conv, const weft::TensorView<const T>& x,
                                const weft::TensorView<const T>& residual, weft::nn::ConvRelu relu) const {
    const weft::Shape shape = weft::nn::conv2d_output_shape(x.shape(), conv.weight.shape(), conv.options());
    const weft::TensorView<T> out =
        channels_last_ ? weft::empty_channels_last<T>(shape) : weft::TensorView<T>(weft::empty<T>(shape).view());
    conv.forward_into(out, x, residual, relu);
    return out;
  }

  bool channels_last_;
  weft::nn::Conv2d<T> stem_;
  std::vector<Block> blocks_;
  weft::Tensor<T> head_weight_, head_bias_;
};

}  // namespace resnet
