// SPDX-License-Identifier: MIT
/// @file nn::Conv1d and nn::Conv2d: the parameters of a convolution (weight [out, in / groups, kernel...], bias [out]) with torch's initialization.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>

#include "weft/nn/conv.hpp"
#include "weft/nn/modules/init.hpp"
#include "weft/nn/modules/module.hpp"

namespace weft::nn {

namespace detail {
/// Checks a convolution module's channels and groups (torch's rules), before any parameter exists.
inline void check_conv_module(const char* op, std::int64_t in, std::int64_t out, const ConvOptions& o) {
  if (in <= 0 || out <= 0) weft::detail::fail(op, "in_channels and out_channels must be > 0, got ", in, " and ", out);
  if (o.groups < 1) weft::detail::fail(op, "groups must be >= 1, got ", o.groups);
  if (in % o.groups != 0 || out % o.groups != 0)
    weft::detail::fail(op, "in_channels ", in, " and out_channels ", out, " must both be divisible by groups ",
                       o.groups);
}
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
/// bias): `weight` [out, in / groups, kH, kW] and `bias` [out] (empty when `bias` is false), both
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = in / groups kH kW (torch's
/// kaiming_uniform_(a = sqrt(5)) and its bias rule). Zero padding only.
template <class T = float>
class Conv2d : public Module<T> {
 public:
  Conv2d(std::int64_t in_channels, std::int64_t out_channels, Size2 kernel_size, ConvOptions options = {},
         bool bias = true, std::optional<std::uint64_t> seed = std::nullopt)
      : options_(options) {
    detail::check_conv_module("nn::Conv2d", in_channels, out_channels, options);
    const std::int64_t fan_in = in_channels / options.groups * kernel_size.h * kernel_size.w;
    const double bound = 1.0 / std::sqrt(double(fan_in));
    detail::InitSeeds seeds(seed);
    weight = ad::param(
        detail::uniform_init<T>({out_channels, in_channels / options.groups, kernel_size.h, kernel_size.w}, bound,
                                seeds.next()));
    if (bias) this->bias = ad::param(detail::uniform_init<T>({out_channels}, bound, seeds.next()));
    this->register_parameter("weight", &Conv2d::weight);
    this->register_parameter("bias", &Conv2d::bias);
  }
  /// conv2d(x, weight, bias, options) over x [N, in, H, W] (either layout); with prepacked
  /// panels for x's layout, the GEMM reads those instead of packing the weight.
  ad::Var<T> forward(const ad::Var<T>& x) override {
    const ad::detail::Input<T> in = ad::detail::input<T>(x), w = ad::detail::input<T>(weight);
    if (!bias.defined()) return detail::conv_recorded<T>("nn::conv2d", false, in, w, nullptr, options_, packed_.get());
    const ad::detail::Input<T> b = ad::detail::input<T>(bias);
    return detail::conv_recorded<T>("nn::conv2d", false, in, w, &b, options_, packed_.get());
  }
  using Module<T>::operator();
  const ConvOptions& options() const { return options_; }

  /// Keeps the weight in the convolution GEMM's packed panels: each forward then skips packing
  /// it. The panels are a snapshot for inference (torch's weight prepacking): after the weight
  /// changes, call prepack() again, or unpack(). Results are bit-identical to the unpacked call
  /// (the same GEMM on the same panels). The panels serve inputs of one layout: NCHW (a
  /// module's input is a Var, whose value is contiguous) or, with `channels_last`, the
  /// channels-last views forward_into reads; an input of the other layout packs as before.
  void prepack(bool channels_last = false) {
    packed_ = std::make_shared<const detail::PrepackedConv<T>>(
        detail::prepack_conv<T>(weight.value().view(), options_, channels_last));
  }
  void unpack() { packed_.reset(); }
  bool prepacked() const { return bool(packed_); }

  /// Inference into a destination: out = conv(x) + bias, then the relu and residual of
  /// nn::conv2d_out, in one pass (the prepacked panels when they fit x's layout). No tape.
  void forward_into(const TensorView<T>& out, const TensorView<const T>& x,
                    const TensorView<const T>& residual = TensorView<const T>(), ConvRelu relu = ConvRelu::none) const {
    const TensorView<const T> b = bias.defined() ? TensorView<const T>(bias.value().view()) : TensorView<const T>();
    detail::conv_out<T>(out, x, weight.value().view(), b, options_, residual, relu, packed_.get());
  }

  ad::Var<T> weight;
  ad::Var<T> bias;

 private:
  ConvOptions options_;
  std::shared_ptr<const detail::PrepackedConv<T>> packed_;
};

/// torch.nn.Conv1d: as Conv2d over x [N, in, L], weight [out, in / groups, K]; the options'
/// width fields apply.
template <class T = float>
class Conv1d : public Module<T> {
 public:
  Conv1d(std::int64_t in_channels, std::int64_t out_channels, std::int64_t kernel_size, ConvOptions options = {},
         bool bias = true, std::optional<std::uint64_t> seed = std::nullopt)
      : options_(options) {
    detail::check_conv_module("nn::Conv1d", in_channels, out_channels, options);
    const double bound = 1.0 / std::sqrt(double(in_channels / options.groups * kernel_size));
    detail::InitSeeds seeds(seed);
    weight = ad::param(
        detail::uniform_init<T>({out_channels, in_channels / options.groups, kernel_size}, bound, seeds.next()));
    if (bias) this->bias = ad::param(detail::uniform_init<T>({out_channels}, bound, seeds.next()));
    this->register_parameter("weight", &Conv1d::weight);
    this->register_parameter("bias", &Conv1d::bias);
  }
  /// conv1d(x, weight, bias, options) over x [N, in, L].
  ad::Var<T> forward(const ad::Var<T>& x) override {
    return bias.defined() ? nn::conv1d(x, weight, bias, options_) : nn::conv1d(x, weight, options_);
  }
  using Module<T>::operator();
  const ConvOptions& options() const { return options_; }
  ad::Var<T> weight;
  ad::Var<T> bias;

 private:
  ConvOptions options_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
