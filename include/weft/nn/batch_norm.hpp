// SPDX-License-Identifier: MIT
/// @file nn::batch_norm over [N, C, *] (torch.nn.functional.batch_norm: batch statistics and running-stat updates in training, running statistics in eval), its backward on tensors, and its autograd form over Vars.
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

/// The gradients of batch_norm(x, ..., weight, bias): dx has x's shape, dweight and dbias [C]
/// (computed also where weight or bias was not given: they are then the gradients of a weight
/// of ones and a bias of zeros).
template <class T>
struct BatchNormGradients {
  Tensor<T> dx, dweight, dbias;
};

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// x's per-channel statistics in A = math_t<T>, shape [1, C, 1] (broadcasting over x's [N, C, S]
/// view): in training the batch mean and the biased variance over N and S, else the running ones.
template <class A>
struct ChannelMoments {
  Tensor<A> mean, var;
};

/// A [C] tensor as [1, C, 1] (any stride), to broadcast over an [N, C, S] view.
template <class T>
TensorView<const T> channel_column(const TensorView<const T>& t) {
  return t.unsqueeze(0).unsqueeze(2);
}

template <class T>
void check_batch_norm(const char* op, const TensorView<const T>& x, const TensorView<const T>& running_mean,
                      const TensorView<const T>& running_var, const TensorView<const T>& weight,
                      const TensorView<const T>& bias, bool training, double eps) {
  check_channel_input(op, x);
  const Shape& s = x.shape();
  const std::int64_t channels = s[1];
  check_per_channel(op, "running_mean", running_mean, s, channels);
  check_per_channel(op, "running_var", running_var, s, channels);
  check_per_channel(op, "weight", weight, s, channels);
  check_per_channel(op, "bias", bias, s, channels);
  if (running_mean.defined() != running_var.defined())
    fail(op, running_mean.defined() ? "running_var" : "running_mean", " is empty but ",
         running_mean.defined() ? "running_mean" : "running_var", " is not (input shape ", s,
         "); give both running statistics or neither");
  if (!training && !running_mean.defined())
    fail(op, "running_mean and running_var are needed in evaluation mode (training = false; input shape ", s,
         "); give them, or normalize with the batch's statistics (training = true)");
  if (training && s[0] * spatial_size(s) <= 1)
    fail(op, "Expected more than 1 value per channel when training, got input size ", s,
         "; use a batch of more than one value per channel, or evaluation mode");
  if (!(eps >= 0)) fail(op, "eps must be >= 0, got ", eps, " (input shape ", s, ")");
}

/// The statistics batch_norm normalizes x3 [N, C, S] with. The batch's by var_mean: two passes of
/// the reduction executor (the mean, then the squared deviations from it), parallel over
/// channels or over rows and vectorized along the contiguous dim (S for NCHW, C for channels-last),
/// rather than sum and sum of squares in one pass, which cancel catastrophically where |mean| >>
/// std (images of a constant offset). In math_t: double for double, float otherwise.
template <class T>
ChannelMoments<math_t<T>> batch_norm_moments(const TensorView<const T>& x3, const TensorView<const T>& running_mean,
                                             const TensorView<const T>& running_var, bool training) {
  using A = math_t<T>;
  if (training) {
    auto [v, m] = weft::var_mean(cast<A>(x3), {0, 2}, 0.0, true);
    return {std::move(m), std::move(v)};
  }
  return {weft::eval(cast<A>(channel_column(running_mean))), weft::eval(cast<A>(channel_column(running_var)))};
}

template <class T>
Tensor<T> batch_norm_impl(const TensorView<const T>& x, const TensorView<T>& running_mean,
                          const TensorView<T>& running_var, const TensorView<const T>& weight,
                          const TensorView<const T>& bias, bool training, double momentum, double eps) {
  const char* op = "nn::batch_norm";
  check_batch_norm<T>(op, x, running_mean, running_var, weight, bias, training, eps);
  using A = math_t<T>;
  const Shape& s = x.shape();
  const std::int64_t channels = s[1], per_channel = s[0] * spatial_size(s);
  Tensor<T> y = empty<T>(s);
  if (y.numel() == 0) return y;
  const TensorView<const T> x3 = channel_view(x);
  const ChannelMoments<A> stats = batch_norm_moments<T>(x3, running_mean, running_var, training);
  // y = (x - mean) * scale + bias with scale = weight / sqrt(var + eps) per channel: one pass over x.
  // x - mean first (not x * scale + (bias - mean * scale)), so that a large mean does not cancel.
  Tensor<A> scale = weight.defined() ? weft::eval(rsqrt(stats.var + A(eps)) * cast<A>(channel_column(weight)))
                                     : weft::eval(rsqrt(stats.var + A(eps)));
  TensorView<T> y3 = y.view(Shape{s[0], channels, spatial_size(s)});
  if (bias.defined()) y3 = (cast<A>(x3) - stats.mean) * scale + cast<A>(channel_column(bias));
  else y3 = (cast<A>(x3) - stats.mean) * scale;
  if (training && running_mean.defined()) {
    // torch's rule: running = (1 - momentum) running + momentum * batch statistic, the variance
    // unbiased (n / (n - 1), n values per channel) although the normalization used the biased one.
    const A keep = A(1 - momentum), unbiased = A(double(per_channel) / double(per_channel - 1));
    TensorView<T> rm = running_mean, rv = running_var;  // views: `=` writes their elements
    rm = cast<A>(rm) * keep + stats.mean.view(Shape{channels}) * A(momentum);
    rv = cast<A>(rv) * keep + stats.var.view(Shape{channels}) * A(momentum * unbiased);
  }
  return y;
}

template <class T>
nn::BatchNormGradients<T> batch_norm_backward_impl(const TensorView<const T>& dy, const TensorView<const T>& x,
                                                   const TensorView<const T>& running_mean,
                                                   const TensorView<const T>& running_var,
                                                   const TensorView<const T>& weight, bool training, double eps) {
  const char* op = "nn::batch_norm_backward";
  check_batch_norm<T>(op, x, running_mean, running_var, weight, TensorView<const T>(), training, eps);
  if (!dy.defined() || !(dy.shape() == x.shape()))
    fail(op, "dy of shape ", dy.defined() ? cat(dy.shape()) : std::string("(empty)"), " differs from x's shape ",
         x.shape(), "; dy is the gradient of batch_norm(x)");
  if (!dy.device().is_cpu()) fail(op, "dy (shape ", dy.shape(), ") is on ", dy.device(), ", but this op runs on the CPU so far");
  using A = math_t<T>;
  const Shape& s = x.shape();
  const std::int64_t channels = s[1], spatial = spatial_size(s);
  nn::BatchNormGradients<T> out{empty<T>(s), empty<T>({channels}), empty<T>({channels})};
  if (out.dx.numel() == 0) {
    out.dweight = zeros<T>({channels}), out.dbias = zeros<T>({channels});
    return out;
  }
  const auto [x3, dy3] = channel_views_alike(x, dy);
  const ChannelMoments<A> stats = batch_norm_moments<T>(x3, running_mean, running_var, training);
  const Tensor<A> rstd = weft::eval(rsqrt(stats.var + A(eps)));
  const Tensor<A> sum_dy = weft::eval(sum(cast<A>(dy3), {0, 2}, true));
  const Tensor<A> sum_dy_centered = weft::eval(sum(cast<A>(dy3) * (cast<A>(x3) - stats.mean), {0, 2}, true));
  const Tensor<A> weight_rstd = weight.defined() ? weft::eval(rstd * cast<A>(channel_column(weight))) : rstd;
  TensorView<T> dx3 = out.dx.view(Shape{s[0], channels, spatial});
  if (training) {
    // The batch statistics depend on x: with xhat = (x - mean) rstd and M = N S values a channel,
    //   dx = weight rstd (dy - mean(dy) - xhat mean(dy xhat)),
    // mean(dy xhat) xhat = (x - mean) rstd^2 sum(dy (x - mean)) / M.
    const double per_channel = double(s[0] * spatial);
    const Tensor<A> mean_dy = weft::eval(sum_dy * A(1 / per_channel));
    const Tensor<A> centered_coefficient = weft::eval(rstd * rstd * sum_dy_centered * A(1 / per_channel));
    dx3 = weight_rstd * (cast<A>(dy3) - mean_dy - (cast<A>(x3) - stats.mean) * centered_coefficient);
  } else {
    // The running statistics are constants: y is affine in x, dx = dy weight rstd.
    dx3 = cast<A>(dy3) * weight_rstd;
  }
  // dweight = sum dy xhat, dbias = sum dy (over N and S).
  out.dweight = sum_dy_centered.view(Shape{channels}) * rstd.view(Shape{channels});
  out.dbias = sum_dy.view(Shape{channels});
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// batch_norm(x) = (x - mean) / sqrt(var + eps) * weight + bias per channel (dim 1) of x [N, C, *]
/// (torch.nn.functional.batch_norm). In training, mean and var are the batch's (over N and the
/// spatial dims; var biased), and the running statistics, when given, are updated in place:
/// running = (1 - momentum) running + momentum * statistic, running_var with the unbiased
/// variance. In evaluation (training = false) the running statistics normalize. weight, bias and
/// the running statistics are [C] or empty (`{}`: not used, as torch's None). NCHW and
/// channels-last inputs are read in place; the result is a new contiguous [N, C, *] tensor.
/// Statistics in double for double, in float otherwise (bfloat16 rounds once at the end). An
/// expression input is evaluated first.
template <Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<X>
Tensor<T> batch_norm(const X& x, const TensorView<std::type_identity_t<T>>& running_mean,
                     const TensorView<std::type_identity_t<T>>& running_var,
                     const TensorView<const std::type_identity_t<T>>& weight,
                     const TensorView<const std::type_identity_t<T>>& bias, bool training, double momentum = 0.1,
                     double eps = 1e-5) {
  static_assert(is_floating_v<T>, "weft::nn::batch_norm needs a floating-point input");
  return weft::detail::batch_norm_impl<T>(weft::detail::materialize(x), running_mean, running_var, weight, bias, training,
                                    momentum, eps);
}

/// The gradients of y = batch_norm(x, running_mean, running_var, weight, bias, training, momentum,
/// eps) given dy = dL/dy. In training the batch statistics are recomputed from x (two passes, as
/// the forward) and, with xhat = (x - mean) / sqrt(var + eps), M = N * prod(spatial dims):
///   dx = weight / sqrt(var + eps) * (dy - mean(dy) - xhat * mean(dy * xhat)),
/// means over N and the spatial dims of each channel. In evaluation the running statistics are
/// constants: dx = dy * weight / sqrt(running_var + eps). Both: dweight = sum dy * xhat, dbias =
/// sum dy per channel. running_mean and running_var are read in evaluation only (pass the values
/// the forward used: a training forward changes them).
template <Operand GradY, Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<GradY> && HasTensorOperand<X>
BatchNormGradients<T> batch_norm_backward(const GradY& dy, const X& x,
                                          const TensorView<const std::type_identity_t<T>>& running_mean,
                                          const TensorView<const std::type_identity_t<T>>& running_var,
                                          const TensorView<const std::type_identity_t<T>>& weight, bool training,
                                          double eps = 1e-5) {
  static_assert(is_floating_v<T>, "weft::nn::batch_norm_backward needs floating-point tensors");
  static_assert(std::is_same_v<weft::detail::operand_dtype_t<GradY>, T>,
                "weft::nn::batch_norm_backward: dy and x need one dtype; use weft::cast<T>()");
  return weft::detail::batch_norm_backward_impl<T>(weft::detail::materialize(dy), weft::detail::materialize(x), running_mean,
                                             running_var, weight, training, eps);
}

/// batch_norm over Vars x, weight and bias (each a Var, a tensor, or an empty Var for none); the
/// running statistics are plain tensors, updated in place by a training forward. The backward is
/// nn::batch_norm_backward; in evaluation it reads the running statistics the forward used, which
/// the tape saves (changing them before the backward is an error, as for any saved tensor).
template <class X, class W, class B, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X, W, B>
ad::Var<T> batch_norm(const X& x, const TensorView<std::type_identity_t<T>>& running_mean,
                      const TensorView<std::type_identity_t<T>>& running_var, const W& w, const B& b, bool training,
                      double momentum = 0.1, double eps = 1e-5) {
  const ad::detail::Input<T> in = ad::detail::input<T>(x), weight = weft::detail::optional_input<T>(w),
                             bias = weft::detail::optional_input<T>(b);
  Tensor<T> value =
      weft::detail::batch_norm_impl<T>(in.value, running_mean, running_var, weight.value, bias.value, training, momentum, eps);
  ad::detail::SavedTensors saved;
  const TensorView<const T> rm(running_mean), rv(running_var);
  if (!training) saved.add(rm), saved.add(rv);
  return weft::detail::record_normalization<T>(
      "nn::batch_norm", std::move(value), in, weight, bias, std::move(saved),
      [xv = in.value, wv = weight.value, rm, rv, training, eps](const Tensor<T>& g) {
        return weft::detail::batch_norm_backward_impl<T>(g.view(), xv, rm, rv, wv, training, eps);
      });
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
