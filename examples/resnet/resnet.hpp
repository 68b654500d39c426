// SPDX-License-Identifier: MIT
/// @file ResNet of the CIFAR kind as weft modules: BasicBlock, the stages, and ResNetConfig (ResNet-18 by default, any widths and depths).
///
/// The architecture and the parameter names are those of kuangliu/pytorch-cifar's models/resnet.py
/// (the usual CIFAR-10 ResNet-18): a 3x3 stem convolution with no max pool, stages `layer1` ...
/// `layerK` of BasicBlocks, each block's projection shortcut a Sequential `shortcut` (`0` the 1x1
/// convolution, `1` its BatchNorm; empty, so without parameters, for an identity), then global
/// average pooling and `linear`. So the state_dict keys are that model's (`conv1.weight`,
/// `bn1.running_mean`, `layer1.0.conv1.weight`, `layer2.0.shortcut.0.weight`, `linear.bias`) and a
/// checkpoint saved from it (`io::save_safetensors` on the torch side) loads with load_state_dict.
/// Convolutions have no bias, as there: the BatchNorm after each one adds its own.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <weft/autograd.hpp>
#include <weft/weft.hpp>

namespace resnet {

namespace nn = weft::nn;
namespace ad = weft::ad;

/// The shape of a CIFAR ResNet: stage k has `blocks[k]` BasicBlocks of `widths[k]` channels, its
/// first block convolving with stride `strides[k]`; the stem maps `in_channels` to widths[0].
/// The defaults are ResNet-18 for CIFAR-10 (11.2 M parameters at 32x32 inputs).
struct ResNetConfig {
  std::int64_t in_channels = 3;
  std::vector<std::int64_t> widths = {64, 128, 256, 512};
  std::vector<std::int64_t> blocks = {2, 2, 2, 2};
  std::vector<std::int64_t> strides = {1, 2, 2, 2};
  std::int64_t num_classes = 10;
};

/// out = relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)): two 3x3 convolutions (the first
/// with stride `stride`), and a shortcut that is x itself when the shape is kept, else a 1x1
/// convolution with the same stride and a BatchNorm (kuangliu's option B).
template <class T = float>
class BasicBlock : public nn::Module<T> {
 public:
  BasicBlock(std::int64_t in_channels, std::int64_t channels, std::int64_t stride)
      : conv1(in_channels, channels, 3, {.stride = stride, .padding = 1}, /*bias=*/false),
        bn1(channels),
        conv2(channels, channels, 3, {.stride = 1, .padding = 1}, /*bias=*/false),
        bn2(channels) {
    if (stride != 1 || in_channels != channels) {
      shortcut.push_back(nn::Conv2d<T>(in_channels, channels, 1, {.stride = stride}, /*bias=*/false));
      shortcut.push_back(nn::BatchNorm2d<T>(channels));
    }
    this->register_module("conv1", &BasicBlock::conv1);
    this->register_module("bn1", &BasicBlock::bn1);
    this->register_module("conv2", &BasicBlock::conv2);
    this->register_module("bn2", &BasicBlock::bn2);
    this->register_module("shortcut", &BasicBlock::shortcut);
  }

  /// x [N, in_channels, H, W] -> [N, channels, H / stride, W / stride] (rounded up). Each relu
  /// (and the residual's add) runs inside its BatchNorm's pass (forward_relu).
  ad::Var<T> forward(const ad::Var<T>& x) override {
    const ad::Var<T> h = bn1.forward_relu(conv1(x));
    return bn2.forward_relu(conv2(h), shortcut(x));
  }
  using nn::Module<T>::operator();

  nn::Conv2d<T> conv1;
  nn::BatchNorm2d<T> bn1;
  nn::Conv2d<T> conv2;
  nn::BatchNorm2d<T> bn2;
  nn::Sequential<T> shortcut;
};

/// The whole network: logits [N, num_classes] of images [N, in_channels, H, W] (32x32 for CIFAR;
/// any size works, the pooling is global). Initialized as torch's modules are, from the global
/// generator: `weft::manual_seed(s)` first gives the same model on every run.
template <class T = float>
class ResNet : public nn::Module<T> {
 public:
  explicit ResNet(const ResNetConfig& config = {})
      : conv1(checked(config).in_channels, config.widths.front(), 3, {.stride = 1, .padding = 1}, /*bias=*/false),
        bn1(config.widths.front()),
        linear(config.widths.back(), config.num_classes),
        config_(config) {
    this->register_module("conv1", &ResNet::conv1);
    this->register_module("bn1", &ResNet::bn1);
    std::int64_t in = config.widths.front();
    for (std::size_t k = 0; k < config.widths.size(); ++k) {
      nn::Sequential<T>& stage = layers_.emplace_back();
      for (std::int64_t b = 0; b < config.blocks[k]; ++b) {
        stage.push_back(BasicBlock<T>(in, config.widths[k], b == 0 ? config.strides[k] : 1));
        in = config.widths[k];
      }
      // A stage is reached through its index, not its address: the module stays movable.
      this->register_module("layer" + std::to_string(k + 1),
                            [k](nn::Module<T>& self) -> nn::Module<T>& {
                              return static_cast<ResNet&>(self).layers_[k];
                            });
    }
    this->register_module("linear", &ResNet::linear);
  }

  /// Stem, stages, global average pooling (adaptive_avg_pool2d to 1x1), then the linear classifier.
  ad::Var<T> forward(const ad::Var<T>& x) override {
    ad::Var<T> h = bn1.forward_relu(conv1(x));
    for (nn::Sequential<T>& stage : layers_) h = stage(h);
    const ad::Var<T> pooled = nn::adaptive_avg_pool2d(h, 1);
    return linear(ad::reshape(pooled, {pooled.shape()[0], pooled.shape()[1]}));
  }
  using nn::Module<T>::operator();

  const ResNetConfig& config() const { return config_; }
  /// Stage k (0-based; torch's `layer{k+1}`).
  nn::Sequential<T>& stage(std::size_t k) { return layers_.at(k); }

  nn::Conv2d<T> conv1;
  nn::BatchNorm2d<T> bn1;
  nn::Linear<T> linear;

 private:
  /// The config, or a weft::Error before any member is built from it.
  static const ResNetConfig& checked(const ResNetConfig& c) {
    const std::size_t n = c.widths.size();
    if (n == 0 || c.blocks.size() != n || c.strides.size() != n)
      weft::detail::fail("resnet::ResNet", "widths, blocks and strides need one entry per stage, got ", n, ", ",
                         c.blocks.size(), " and ", c.strides.size());
    for (std::size_t k = 0; k < n; ++k)
      if (c.widths[k] < 1 || c.blocks[k] < 1 || c.strides[k] < 1)
        weft::detail::fail("resnet::ResNet", "stage ", k + 1, " has width ", c.widths[k], ", ", c.blocks[k],
                           " blocks and stride ", c.strides[k], "; each must be >= 1");
    if (c.in_channels < 1 || c.num_classes < 1)
      weft::detail::fail("resnet::ResNet", "in_channels ", c.in_channels, " and num_classes ", c.num_classes,
                         " must be >= 1");
    return c;
  }

  ResNetConfig config_;
  std::vector<nn::Sequential<T>> layers_;
};

/// The number of parameters (weights and biases; BatchNorm's running statistics are buffers, not counted).
template <class T>
std::int64_t parameter_count(const nn::Module<T>& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.value().numel();
  return n;
}

}  // namespace resnet
