// SPDX-License-Identifier: MIT
/// @file nn::MaxPool2d, nn::AvgPool2d and nn::AdaptiveAvgPool2d: the pooling ops' arguments held by modules without parameters (torch.nn's).
#pragma once

#include <optional>

#include "weft/nn/modules/module.hpp"
#include "weft/nn/pooling.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.MaxPool2d(kernel_size, stride = kernel_size, padding = 0, dilation = 1, ceil_mode =
/// false): forward is nn::max_pool2d with these arguments.
template <class T = float>
class MaxPool2d : public Module<T> {
 public:
  explicit MaxPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                     Size2 dilation = 1, bool ceil_mode = false)
      : kernel_(kernel_size),
        stride_(stride.value_or(kernel_size)),
        padding_(padding),
        dilation_(dilation),
        ceil_mode_(ceil_mode) {}

  ad::Var<T> forward(const ad::Var<T>& x) override {
    return nn::max_pool2d(x, kernel_, stride_, padding_, dilation_, ceil_mode_);
  }
  using Module<T>::operator();

 private:
  Size2 kernel_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

/// torch.nn.AvgPool2d(kernel_size, stride = kernel_size, padding = 0, ceil_mode = false,
/// count_include_pad = true): forward is nn::avg_pool2d with these arguments.
template <class T = float>
class AvgPool2d : public Module<T> {
 public:
  explicit AvgPool2d(Size2 kernel_size, std::optional<Size2> stride = std::nullopt, Size2 padding = 0,
                     bool ceil_mode = false, bool count_include_pad = true)
      : kernel_(kernel_size),
        stride_(stride.value_or(kernel_size)),
        padding_(padding),
        ceil_mode_(ceil_mode),
        count_include_pad_(count_include_pad) {}

  ad::Var<T> forward(const ad::Var<T>& x) override {
    return nn::avg_pool2d(x, kernel_, stride_, padding_, ceil_mode_, count_include_pad_);
  }
  using Module<T>::operator();

 private:
  Size2 kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

/// torch.nn.AdaptiveAvgPool2d(output_size): forward is nn::adaptive_avg_pool2d; output_size 1
/// is the global average pooling of a classifier head.
template <class T = float>
class AdaptiveAvgPool2d : public Module<T> {
 public:
  explicit AdaptiveAvgPool2d(Size2 output_size) : output_size_(output_size) {}

  ad::Var<T> forward(const ad::Var<T>& x) override { return nn::adaptive_avg_pool2d(x, output_size_); }
  using Module<T>::operator();

 private:
  Size2 output_size_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
