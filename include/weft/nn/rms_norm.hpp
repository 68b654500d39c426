// SPDX-License-Identifier: MIT
/// @file nn::rms_norm over the trailing dims given by normalized_shape (torch.nn.functional.rms_norm), its backward on tensors, and its autograd form over Vars.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <type_traits>
#include <utility>

#include "weft/ad/record.hpp"
#include "weft/expr/operators.hpp"
#include "weft/nn/norm_record.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/reduce.hpp"

namespace weft::nn {

/// The gradients of rms_norm(x, normalized_shape, weight): dx has x's shape, dweight the
/// normalized shape (also without a weight: then that of a weight of ones).
template <class T>
struct RmsNormGradients {
  Tensor<T> dx, dweight;
};

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

/// eps, or torch's default: the machine epsilon of the type the op computes in (float for float
/// and 16-bit floats, double for double).
template <class T>
double rms_norm_eps(const char* op, std::optional<double> eps, const Shape& x_shape) {
  const double e = eps.value_or(double(std::numeric_limits<math_t<T>>::epsilon()));
  if (!(e >= 0)) fail(op, "eps must be >= 0, got ", e, " (input shape ", x_shape, ")");
  return e;
}

template <class T>
void check_rms_norm(const char* op, const TensorView<const T>& x, const Shape& normalized,
                    const TensorView<const T>& weight) {
  if (!x.defined()) fail(op, "the input is an empty (default-constructed) tensor");
  bool trailing = normalized.rank() >= 1 && normalized.rank() <= x.dim();
  for (int d = 0; trailing && d < normalized.rank(); ++d)
    trailing = x.shape()[x.dim() - normalized.rank() + d] == normalized[d];
  if (!trailing)
    fail(op, "input of shape ", x.shape(), " does not end with normalized_shape ", normalized,
         "; normalized_shape is 1 to ", x.dim(), " of the input's last dims");
  if (weight.defined() && !(weight.shape() == normalized))
    fail(op, "weight of shape ", weight.shape(), " differs from normalized_shape ", normalized, " (input shape ",
         x.shape(), "); weight has the normalized shape");
  if (!x.device().is_cpu() || (weight.defined() && !weight.device().is_cpu()))
    fail(op, "the input (shape ", x.shape(), ") is on ", x.device(), weight.defined() ? cat(" and weight on ", weight.device()) : std::string(),
         ", but this op runs on the CPU so far; move them with .to(weft::Device::cpu())");
}

template <class T>
Tensor<T> rms_norm_impl(const TensorView<const T>& x, const Shape& normalized, const TensorView<const T>& weight,
                        std::optional<double> eps) {
  const char* op = "nn::rms_norm";
  check_rms_norm<T>(op, x, normalized, weight);
  const double e = rms_norm_eps<T>(op, eps, x.shape());
  using A = math_t<T>;
  Tensor<T> y = empty<T>(x.shape());
  const std::int64_t n = normalized.numel();
  if (y.numel() == 0) return y;
  // Rows of n contiguous elements (a copy for other strides, as layer_norm), in math_t; the
  // statement runs as a row epilogue (backend/row_epilogue.hpp): per row the mean of squares,
  // then the write while the row is in cache, rsqrt once per row.
  const Shape rows{x.numel() / n, n};
  const TensorView<const T> xc = x.contiguous();
  const auto v = cast<A>(xc.view(rows));
  const auto normalized_rows = v * rsqrt(mean(v * v, 1, true) + A(e));
  if (weight.defined()) y.view(rows) = normalized_rows * cast<A>(weight.contiguous().view(Shape{n}));
  else y.view(rows) = normalized_rows;
  return y;
}

template <class T>
nn::RmsNormGradients<T> rms_norm_backward_impl(const TensorView<const T>& dy, const TensorView<const T>& x,
                                               const Shape& normalized, const TensorView<const T>& weight,
                                               std::optional<double> eps) {
  const char* op = "nn::rms_norm_backward";
  check_rms_norm<T>(op, x, normalized, weight);
  if (!dy.defined() || !(dy.shape() == x.shape()))
    fail(op, "dy of shape ", dy.defined() ? cat(dy.shape()) : std::string("(empty)"), " differs from x's shape ",
         x.shape(), "; dy is the gradient of rms_norm(x)");
  const double e = rms_norm_eps<T>(op, eps, x.shape());
  using A = math_t<T>;
  nn::RmsNormGradients<T> out{empty<T>(x.shape()), zeros<T>(normalized)};
  const std::int64_t n = normalized.numel();
  if (x.numel() == 0) return out;
  const Shape rows{x.numel() / n, n};
  const TensorView<const T> xc = x.contiguous(), dyc = dy.contiguous();
  const auto v = cast<A>(xc.view(rows));
  const auto d = cast<A>(dyc.view(rows));
  // y = x r w with r = 1 / sqrt(mean(x^2) + eps); dr/dx = -r^3 x / n, so with g = dy w:
  //   dx = r (g - x r^2 mean(g x)),  dweight = sum over rows of dy x r.
  const Tensor<A> r = weft::eval(rsqrt(mean(v * v, 1, true) + A(e)));
  if (weight.defined()) {
    const TensorView<const T> wc = weight.contiguous();
    const auto g = d * cast<A>(wc.view(Shape{n}));
    out.dx.view(rows) = r * (g - v * (r * r) * mean(g * v, 1, true));
  } else {
    out.dx.view(rows) = r * (d - v * (r * r) * mean(d * v, 1, true));
  }
  out.dweight.view(Shape{n}) = sum(d * v * r, 0);
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// rms_norm(x) = x / sqrt(mean(x^2) + eps) * weight, the mean over x's last dims given by
/// normalized_shape (torch.nn.functional.rms_norm); weight has the normalized shape, or is empty
/// (`{}`: none). eps defaults to torch's: the machine epsilon of the type the op computes in
/// (float's for float and bfloat16, double's for double). 16-bit floats compute in float and
/// round once. An expression input is evaluated first; other than contiguous inputs are copied.
template <Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<X>
Tensor<T> rms_norm(const X& x, const Shape& normalized_shape,
                   const TensorView<const std::type_identity_t<T>>& weight = {},
                   std::optional<double> eps = std::nullopt) {
  static_assert(is_floating_v<T>, "weft::nn::rms_norm needs a floating-point input");
  return weft::detail::rms_norm_impl<T>(weft::detail::materialize(x), normalized_shape, weight, eps);
}

/// The gradients of y = rms_norm(x, normalized_shape, weight, eps) given dy = dL/dy: with
/// r = 1 / sqrt(mean(x^2) + eps) per row and g = dy * weight,
///   dx = r * (g - x * r^2 * mean(g * x)),  dweight = sum over rows of dy * x * r.
template <Operand GradY, Operand X, class T = weft::detail::operand_dtype_t<X>>
  requires HasTensorOperand<GradY> && HasTensorOperand<X>
RmsNormGradients<T> rms_norm_backward(const GradY& dy, const X& x, const Shape& normalized_shape,
                                      const TensorView<const std::type_identity_t<T>>& weight = {},
                                      std::optional<double> eps = std::nullopt) {
  static_assert(is_floating_v<T>, "weft::nn::rms_norm_backward needs floating-point tensors");
  static_assert(std::is_same_v<weft::detail::operand_dtype_t<GradY>, T>,
                "weft::nn::rms_norm_backward: dy and x need one dtype; use weft::cast<T>()");
  return weft::detail::rms_norm_backward_impl<T>(weft::detail::materialize(dy), weft::detail::materialize(x),
                                           normalized_shape, weight, eps);
}

/// rms_norm over a Var x and a weight (a Var, a tensor, or an empty Var for none); the backward
/// is nn::rms_norm_backward.
template <class X, class W, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X, W> && (!std::is_arithmetic_v<W>)
ad::Var<T> rms_norm(const X& x, const Shape& normalized_shape, const W& w, std::optional<double> eps = std::nullopt) {
  const ad::detail::Input<T> in = ad::detail::input<T>(x), weight = weft::detail::optional_input<T>(w);
  Tensor<T> value = weft::detail::rms_norm_impl<T>(in.value, normalized_shape, weight.value, eps);
  return weft::detail::record_normalization<T>(
      "nn::rms_norm", std::move(value), in, weight, ad::detail::Input<T>{}, {},
      [xv = in.value, wv = weight.value, normalized_shape, eps](const Tensor<T>& g) {
        return weft::detail::rms_norm_backward_impl<T>(g.view(), xv, normalized_shape, wv, eps);
      });
}

/// rms_norm over a Var x without a weight.
template <class X, class T = ad::detail::input_dtype_t<X>>
  requires ad::detail::AdOperands<X>
ad::Var<T> rms_norm(const X& x, const Shape& normalized_shape, std::optional<double> eps = std::nullopt) {
  return nn::rms_norm(x, normalized_shape, ad::Var<T>(), eps);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
