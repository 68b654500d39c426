// SPDX-License-Identifier: MIT
/// @file nn::group_norm over [N, C, *] (torch.nn.functional.group_norm: statistics per sample and group of C / groups channels), its backward on tensors, and its autograd form over Vars.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "weft/ad/record.hpp"
#include "weft/expr/operators.hpp"
#include "weft/nn/channel_view.hpp"
#include "weft/nn/norm_record.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduce.hpp"
#include "weft/ops/statistics.hpp"

namespace weft::nn {

/// The gradients of group_norm(x, groups, weight, bias): dx has x's shape, dweight and dbias [C]
/// (also where weight or bias was not given: then those of a weight of ones, a bias of zeros).
template <class T>
struct GroupNormGradients {
  Tensor<T> dx, dweight, dbias;
};

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// x's [N, C, S] view split into [N, G, C / G, S] (in place: C's stride steps within a group).
template <class T>
TensorView<const T> group_view(const TensorView<const T>& x3, std::int64_t groups) {
  const Shape& s = x3.shape();
  const Strides& st = x3.strides();
  return TensorView<const T>(x3.storage(), Shape{s[0], groups, s[1] / groups, s[2]},
                             Strides{st[0], st[1] * (s[1] / groups), st[1], st[2]}, x3.offset());
}

/// A [C] tensor as [1, G, C / G, 1] (any stride), to broadcast over the grouped view.
template <class T>
TensorView<const T> group_column(const TensorView<const T>& t, std::int64_t groups) {
  const std::int64_t c = t.shape()[0], step = t.strides()[0];
  return TensorView<const T>(t.storage(), Shape{1, groups, c / groups, 1}, Strides{0, step * (c / groups), step, 0},
                             t.offset());
}

template <class T>
void check_group_norm(const char* op, const TensorView<const T>& x, std::int64_t groups,
                      const TensorView<const T>& weight, const TensorView<const T>& bias, double eps) {
  check_channel_input(op, x);
  const Shape& s = x.shape();
  if (groups < 1) fail(op, "groups must be >= 1, got ", groups, " (input shape ", s, ")");
  if (s[1] % groups != 0)
    fail(op, "Expected number of channels in input to be divisible by num_groups, but got input of shape ", s,
         " and num_groups=", groups, "; channels ", s[1], " not divisible by groups ", groups,
         ": pick groups dividing the channels");
  check_per_channel(op, "weight", weight, s, s[1]);
  check_per_channel(op, "bias", bias, s, s[1]);
  if (!(eps >= 0)) fail(op, "eps must be >= 0, got ", eps, " (input shape ", s, ")");
}

/// mean and var (biased) per sample and group, [N, G, 1, 1] in math_t, from each channel's over
/// S: var_mean over S alone, the reduction executor's fast case in either layout (contiguous rows
/// for NCHW; for channels-last, columns vectorized along C), two passes (the mean, then squared
/// deviations: no cancellation where |mean| >> std). The channels of a group hold equal counts,
/// so mean = mean_c m_c and var = mean_c (v_c + (m_c - mean)^2) (the law of total variance: sums
/// of non-negative terms). Reducing S and C / G at once is slow for channels-last strides.
template <class T>
std::pair<Tensor<math_t<T>>, Tensor<math_t<T>>> group_moments(const TensorView<const T>& x4) {
  using A = math_t<T>;
  const auto [channel_var, channel_mean] = weft::var_mean(cast<A>(x4), 3, 0.0, true);  // [N, G, C / G, 1]
  Tensor<A> mean = weft::eval(weft::mean(channel_mean, 2, true));
  Tensor<A> var = weft::eval(weft::mean(channel_var + (channel_mean - mean) * (channel_mean - mean), 2, true));
  return {std::move(mean), std::move(var)};
}

template <class T>
Tensor<T> group_norm_impl(const TensorView<const T>& x, std::int64_t groups, const TensorView<const T>& weight,
                          const TensorView<const T>& bias, double eps) {
  check_group_norm<T>("nn::group_norm", x, groups, weight, bias, eps);
  using A = math_t<T>;
  const Shape& s = x.shape();
  Tensor<T> y = empty<T>(s);
  if (y.numel() == 0) return y;
  const TensorView<const T> x4 = group_view(channel_view(x), groups);
  const auto [mean, var] = group_moments<T>(x4);
  const Tensor<A> rstd = weft::eval(rsqrt(var + A(eps)));
  TensorView<T> y4 = y.view(x4.shape());
  const auto normalized = (cast<A>(x4) - mean) * rstd;
  if (weight.defined() && bias.defined())
    y4 = normalized * cast<A>(group_column(weight, groups)) + cast<A>(group_column(bias, groups));
  else if (weight.defined()) y4 = normalized * cast<A>(group_column(weight, groups));
  else if (bias.defined()) y4 = normalized + cast<A>(group_column(bias, groups));
  else y4 = normalized;
  return y;
}

template <class T>
nn::GroupNormGradients<T> group_norm_backward_impl(const TensorView<const T>& dy, const TensorView<const T>& x,
                                                   std::int64_t groups, const TensorView<const T>& weight, double eps) {
  const char* op = "nn::group_norm_backward";
  check_group_norm<T>(op, x, groups, weight, TensorView<const T>(), eps);
  if (!dy.defined() || !(dy.shape() == x.shape()))
    fail(op, "dy of shape ", dy.defined() ? cat(dy.shape()) : std::string("(empty)"), " differs from x's shape ",
         x.shape(), "; dy is the gradient of group_norm(x)");
  if (!dy.device().is_cpu()) fail(op, "dy (shape ", dy.shape(), ") is on ", dy.device(), ", but this op runs on the CPU so far");
  using A = math_t<T>;
  const Shape& s = x.shape();
  const std::int64_t channels = s[1];
  nn::GroupNormGradients<T> out{empty<T>(s), zeros<T>({channels}), zeros<T>({channels})};
  if (out.dx.numel() == 0) return out;
  const auto [x3, dy3] = channel_views_alike(x, dy);
  const TensorView<const T> x4 = group_view(x3, groups), dy4 = group_view(dy3, groups);
  const auto [mean, var] = group_moments<T>(x4);
  const Tensor<A> rstd = weft::eval(rsqrt(var + A(eps)));
  const auto centered = cast<A>(x4) - mean;
  // With xhat = (x - mean) rstd, g = dy weight and M = (C / G) S values a group:
  //   dx = rstd (g - mean(g) - xhat mean(g xhat)),  means over each sample's group;
  // xhat mean(g xhat) = (x - mean) rstd^2 sum(g (x - mean)) / M. The sums over a group are taken
  // per channel over S first (one reduced dim, fast in either layout): sum g = sum_c w_c sum dy,
  // sum g (x - mean) = sum_c w_c sum dy (x - mean).
  const Tensor<A> sum_dy = weft::eval(sum(cast<A>(dy4), 3, true));  // [N, G, C / G, 1]
  const Tensor<A> sum_dy_centered = weft::eval(sum(cast<A>(dy4) * centered, 3, true));
  const Tensor<A> w = weight.defined() ? weft::eval(cast<A>(group_column(weight, groups)))
                                       : ones<A>({1, groups, channels / groups, 1});
  const double per_group = double(x4.shape()[2] * x4.shape()[3]);
  const Tensor<A> mean_g = weft::eval(sum(sum_dy * w, 2, true) * A(1 / per_group));
  const Tensor<A> centered_coefficient =
      weft::eval(rstd * rstd * sum(sum_dy_centered * w, 2, true) * A(1 / per_group));
  out.dx.view(x4.shape()) = rstd * (cast<A>(dy4) * w - mean_g - centered * centered_coefficient);
  // dweight = sum dy xhat, dbias = sum dy, over the samples and the spatial dims: [G, C / G, 1] = [C].
  const Shape per_channel{groups, channels / groups, 1};
  out.dweight.view(per_channel) = sum(sum_dy_centered * rstd, 0);
  out.dbias.view(per_channel) = sum(sum_dy, 0);
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// group_norm(x) = (x - mean) / sqrt(var + eps) * weight + bias, mean and var (biased) over each
/// sample's group of C / groups channels and the spatial dims of x [N, C, *]
/// (torch.nn.functional.group_norm); weight and bias [C] per channel, or empty (`{}`: none).
/// NCHW and channels-last inputs are read in place; the result is a new contiguous tensor.
/// Statistics in double for double, float otherwise (bfloat16 rounds once at the end). An
/// expression input is evaluated first.
template <Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<X>
Tensor<T> group_norm(const X& x, std::int64_t groups, const TensorView<const std::type_identity_t<T>>& weight,
                     const TensorView<const std::type_identity_t<T>>& bias, double eps = 1e-5) {
  static_assert(is_floating_v<T>, "weft::nn::group_norm needs a floating-point input");
  return weft::detail::group_norm_impl<T>(weft::detail::materialize(x), groups, weight, bias, eps);
}

/// The gradients of y = group_norm(x, groups, weight, bias, eps) given dy = dL/dy; the statistics
/// are recomputed from x. With xhat = (x - mean) / sqrt(var + eps) and g = dy * weight:
///   dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps), means over each sample's group,
///   dweight = sum dy * xhat, dbias = sum dy, over the samples and spatial dims of each channel.
template <Operand GradY, Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<GradY> && HasTensorOperand<X>
GroupNormGradients<T> group_norm_backward(const GradY& dy, const X& x, std::int64_t groups,
                                          const TensorView<const std::type_identity_t<T>>& weight, double eps = 1e-5) {
  static_assert(is_floating_v<T>, "weft::nn::group_norm_backward needs floating-point tensors");
  static_assert(std::is_same_v<weft::detail::operand_dtype_t<GradY>, T>,
                "weft::nn::group_norm_backward: dy and x need one dtype; use weft::cast<T>()");
  return weft::detail::group_norm_backward_impl<T>(weft::detail::materialize(dy), weft::detail::materialize(x), groups,
                                             weight, eps);
}

/// group_norm over Vars x, weight and bias (each a Var, a tensor, or an empty Var for none); the
/// backward is nn::group_norm_backward.
template <class X, class W, class B, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X, W, B>
ad::Var<T> group_norm(const X& x, std::int64_t groups, const W& w, const B& b, double eps = 1e-5) {
  const ad::detail::Input<T> in = ad::detail::input<T>(x), weight = weft::detail::optional_input<T>(w),
                             bias = weft::detail::optional_input<T>(b);
  Tensor<T> value = weft::detail::group_norm_impl<T>(in.value, groups, weight.value, bias.value, eps);
  return weft::detail::record_normalization<T>(
      "nn::group_norm", std::move(value), in, weight, bias, {},
      [xv = in.value, wv = weight.value, groups, eps](const Tensor<T>& g) {
        return weft::detail::group_norm_backward_impl<T>(g.view(), xv, groups, wv, eps);
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
