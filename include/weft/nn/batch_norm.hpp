// SPDX-License-Identifier: MIT
/// @file nn::batch_norm over [N, C, *] (torch.nn.functional.batch_norm: batch statistics and running-stat updates in training, running statistics in eval), its backward on tensors, its autograd form over Vars, and batch_norm_relu (relu(batch_norm(x) + residual) as one op over Vars).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "weft/ad/record.hpp"
#include "weft/expr/operators.hpp"
#include "weft/nn/batch_norm_planes.hpp"
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

/// The statistics batch_norm normalizes x3 [N, C, S] with. The batch's from the mean and the
/// squared deviations from it, rather than sum and sum of squares in one pass, which cancel
/// catastrophically where |mean| >> std (images of a constant offset): with contiguous planes
/// (NCHW) by plane_moments, one read of x; otherwise (channels-last) by var_mean, two passes of the
/// reduction executor vectorized along the contiguous dim C. In math_t: double for double, float
/// otherwise.
template <class T>
ChannelMoments<math_t<T>> batch_norm_moments(const TensorView<const T>& x3, const TensorView<const T>& running_mean,
                                             const TensorView<const T>& running_var, bool training) {
  using A = math_t<T>;
  if (training) {
    if (has_contiguous_planes(x3)) return plane_moments(x3);
    auto [v, m] = weft::var_mean(cast<A>(x3), {0, 2}, 0.0, true);
    return {std::move(m), std::move(v)};
  }
  return {weft::eval(cast<A>(channel_column(running_mean))), weft::eval(cast<A>(channel_column(running_var)))};
}

/// A training or evaluation batch_norm's output and the statistics it normalized with (the
/// backward reuses them instead of reading x again).
template <class T>
struct BatchNormForward {
  Tensor<T> y;
  ChannelMoments<math_t<T>> stats;
};

/// y = batch_norm(x) (+ residual) (then relu): the op's checks, the statistics, one pass that
/// writes y, and the running statistics' update. residual (x's shape, any layout) may be empty.
template <class T>
BatchNormForward<T> batch_norm_forward(const char* op, const TensorView<const T>& x, const TensorView<T>& running_mean,
                                       const TensorView<T>& running_var, const TensorView<const T>& weight,
                                       const TensorView<const T>& bias, bool training, double momentum, double eps,
                                       const TensorView<const T>& residual, bool relu) {
  check_batch_norm<T>(op, x, running_mean, running_var, weight, bias, training, eps);
  if (residual.defined() && !(residual.shape() == x.shape() && residual.device().is_cpu()))
    fail(op, "the residual of shape ", residual.shape(), " on ", residual.device(), " does not fit the input of shape ",
         x.shape(), "; it needs the input's shape, on the CPU");
  using A = math_t<T>;
  const Shape& s = x.shape();
  const std::int64_t channels = s[1], per_channel = s[0] * spatial_size(s);
  BatchNormForward<T> out{empty<T>(s), {}};
  if (out.y.numel() == 0) return out;
  const TensorView<const T> x3 = channel_view(x);
  out.stats = batch_norm_moments<T>(x3, running_mean, running_var, training);
  const ChannelMoments<A>& stats = out.stats;
  // y = (x - mean) * scale + shift with scale = weight / sqrt(var + eps), shift = bias (0 without)
  // per channel: one pass over x. x - mean first (not x * scale + (shift - mean * scale)), so
  // that a large mean does not cancel.
  const Tensor<A> scale = weight.defined() ? weft::eval(rsqrt(stats.var + A(eps)) * cast<A>(channel_column(weight)))
                                           : weft::eval(rsqrt(stats.var + A(eps)));
  const Tensor<A> shift = bias.defined() ? weft::eval(cast<A>(channel_column(bias))) : zeros<A>({1, channels, 1});
  TensorView<T> y3 = out.y.view(Shape{s[0], channels, spatial_size(s)});
  const auto normalized = (cast<A>(x3) - stats.mean) * scale + shift;
  if (residual.defined()) {
    const auto sum = normalized + cast<A>(channel_view(residual));
    if (relu) y3 = weft::relu(sum);
    else y3 = sum;
  } else if (relu) {
    y3 = weft::relu(normalized);
  } else {
    y3 = normalized;
  }
  if (training && running_mean.defined()) {
    // torch's rule: running = (1 - momentum) running + momentum * batch statistic, the variance
    // unbiased (n / (n - 1), n values per channel) although the normalization used the biased one.
    const A keep = A(1 - momentum), unbiased = A(double(per_channel) / double(per_channel - 1));
    TensorView<T> rm = running_mean, rv = running_var;  // views: `=` writes their elements
    rm = cast<A>(rm) * keep + stats.mean.view(Shape{channels}) * A(momentum);
    rv = cast<A>(rv) * keep + stats.var.view(Shape{channels}) * A(momentum * unbiased);
  }
  return out;
}

/// The gradients of batch_norm(x) given dy. forward_stats: the statistics the forward normalized
/// with (its BatchNormForward's), or null to compute them again from x (and the running ones).
template <class T>
nn::BatchNormGradients<T> batch_norm_backward_impl(const TensorView<const T>& dy, const TensorView<const T>& x,
                                                   const TensorView<const T>& running_mean,
                                                   const TensorView<const T>& running_var,
                                                   const TensorView<const T>& weight, bool training, double eps,
                                                   const ChannelMoments<math_t<T>>* forward_stats = nullptr) {
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
  std::optional<ChannelMoments<A>> computed;
  if (!forward_stats) computed = batch_norm_moments<T>(x3, running_mean, running_var, training);
  const ChannelMoments<A>& stats = forward_stats ? *forward_stats : *computed;
  const Tensor<A> rstd = weft::eval(rsqrt(stats.var + A(eps)));
  // sum dy and sum dy (x - mean) per channel: one read of x and dy with contiguous planes, else
  // two passes of the reduction executor.
  const ChannelGradientSums<A> sums =
      has_contiguous_planes(x3)
          ? plane_gradient_sums<T>(x3, dy3, stats.mean)
          : ChannelGradientSums<A>{weft::eval(sum(cast<A>(dy3), {0, 2}, true)),
                                   weft::eval(sum(cast<A>(dy3) * (cast<A>(x3) - stats.mean), {0, 2}, true))};
  const Tensor<A>& sum_dy = sums.dy;
  const Tensor<A>& sum_dy_centered = sums.dy_centered;
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

/// What batch_norm_relu's backward gives: batch_norm's gradients and the residual's.
template <class T>
struct BatchNormReluGradients {
  Tensor<T> dx, dweight, dbias, dresidual;
};

/// batch_norm (+ residual, then relu where `relu`) over Vars, recorded with a backward that reuses
/// the forward's statistics; residual and relu are batch_norm_relu's.
template <class T>
ad::Var<T> batch_norm_recorded(const char* op, const ad::detail::Input<T>& in, const TensorView<T>& running_mean,
                               const TensorView<T>& running_var, const ad::detail::Input<T>& weight,
                               const ad::detail::Input<T>& bias, bool training, double momentum, double eps,
                               const ad::detail::Input<T>& residual, bool relu) {
  BatchNormForward<T> f = batch_norm_forward<T>(op, in.value, running_mean, running_var, weight.value, bias.value,
                                                training, momentum, eps, residual.value, relu);
  ad::detail::SavedTensors saved;
  const TensorView<const T> rm(running_mean), rv(running_var), y(f.y.view());
  if (!training) saved.add(rm), saved.add(rv);
  if (relu) saved.add(y);
  return record_normalization<T>(
      op, std::move(f.y), in, weight, bias, std::move(saved),
      [xv = in.value, wv = weight.value, rm, rv, y, stats = std::move(f.stats), training, eps, relu,
       residual_grad = residual.needs_grad()](const Tensor<T>& dy) {
        // dz = dL/d(batch_norm(x) + residual): dy where relu passed it (y > 0), else 0.
        Tensor<T> dz = relu ? weft::eval(weft::where(y > 0, dy, 0.0)) : Tensor<T>();
        nn::BatchNormGradients<T> g =
            batch_norm_backward_impl<T>(relu ? dz.view() : dy.view(), xv, rm, rv, wv, training, eps, &stats);
        if (!relu && residual_grad) dz = dy;
        return BatchNormReluGradients<T>{std::move(g.dx), std::move(g.dweight), std::move(g.dbias), std::move(dz)};
      },
      residual);
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
  return weft::detail::batch_norm_forward<T>("nn::batch_norm", weft::detail::materialize(x), running_mean, running_var,
                                             weight, bias, training, momentum, eps, TensorView<const T>(), false)
      .y;
}

/// The gradients of y = batch_norm(x, running_mean, running_var, weight, bias, training, momentum,
/// eps) given dy = dL/dy. In training the batch statistics are recomputed from x (as the forward
/// computes them) and, with xhat = (x - mean) / sqrt(var + eps), M = N * prod(spatial dims):
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
/// nn::batch_norm_backward with the statistics the forward normalized with (x is not read for
/// them again); in evaluation those are the running statistics, which the tape saves (changing
/// them before the backward is an error, as for any saved tensor).
template <class X, class W, class B, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X, W, B>
ad::Var<T> batch_norm(const X& x, const TensorView<std::type_identity_t<T>>& running_mean,
                      const TensorView<std::type_identity_t<T>>& running_var, const W& w, const B& b, bool training,
                      double momentum = 0.1, double eps = 1e-5) {
  return weft::detail::batch_norm_recorded<T>("nn::batch_norm", ad::detail::input<T>(x), running_mean, running_var,
                                              weft::detail::optional_input<T>(w), weft::detail::optional_input<T>(b),
                                              training, momentum, eps, ad::detail::Input<T>{}, false);
}

/// relu(batch_norm(x, ...) + residual) over Vars, as one op: the same values and gradients as
/// the three ops (nn::batch_norm's arguments and running-statistic update; residual a Var or
/// tensor of x's shape, or an empty Var for none: relu(batch_norm(x, ...))), with one pass that
/// writes the result instead of three and no intermediate kept for the backward. With y the
/// result, dy's masked form dz = dy [y > 0] is the residual's gradient and batch_norm's dy
/// (relu' is 1 exactly where y > 0). A ResNet block's `relu(bn(conv(x)))` and
/// `relu(bn(conv(h)) + shortcut)` (BatchNorm::forward_relu).
template <class X, class W, class B, class R, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X, W, B, R>
ad::Var<T> batch_norm_relu(const X& x, const TensorView<std::type_identity_t<T>>& running_mean,
                           const TensorView<std::type_identity_t<T>>& running_var, const W& w, const B& b,
                           const R& residual, bool training, double momentum = 0.1, double eps = 1e-5) {
  return weft::detail::batch_norm_recorded<T>("nn::batch_norm_relu", ad::detail::input<T>(x), running_mean, running_var,
                                              weft::detail::optional_input<T>(w), weft::detail::optional_input<T>(b),
                                              training, momentum, eps, weft::detail::optional_input<T>(residual), true);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
