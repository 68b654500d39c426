// SPDX-License-Identifier: MIT
/// @file layer_norm over the trailing dims given by the weight's shape (PyTorch's normalized_shape).
#pragma once

#include <cstdint>

#include "weft/backend/rows.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"
#include "weft/ops/materialize.hpp"
#include "weft/ops/statistics.hpp"
#include "weft/expr/operators.hpp"

namespace weft {
namespace detail {
inline namespace WEFT_BACKEND_ABI {

template <class T>
Tensor<T> layer_norm_impl(const TensorView<const T>& x, const TensorView<const T>& weight, const TensorView<const T>& bias,
                          double eps) {
  const char* op = "layer_norm";
  if (!x.defined()) fail(op, "the input is an empty (default-constructed) tensor");
  if (!weight.defined())
    fail(op, "weight is an empty tensor; its shape is the normalized shape (pass weft::ones<T>(x's last dims) for "
             "no scaling)");
  const Shape& ws = weight.shape();
  if (ws.rank() == 0 || ws.rank() > x.dim())
    fail(op, "weight of shape ", ws, " cannot give the normalized (trailing) dims of an input of shape ", x.shape(),
         "; weight needs 1 to ", x.dim(), " dims, equal to the input's last dims");
  for (int d = 0; d < ws.rank(); ++d)
    if (x.shape()[x.dim() - ws.rank() + d] != ws[d])
      fail(op, "input of shape ", x.shape(), " does not end with the normalized shape ", ws,
           " given by weight's shape; weight (and bias) must have the shape of the input's last dims");
  if (bias.defined() && !(bias.shape() == ws))
    fail(op, "bias of shape ", bias.shape(), " differs from weight's shape ", ws, " (input shape ", x.shape(),
         "); both have the normalized shape");
  if (weight.device() != x.device() || (bias.defined() && bias.device() != x.device()))
    fail(op, "input (shape ", x.shape(), ") is on ", x.device(), " but weight (shape ", ws, ") is on ",
         weight.device(), bias.defined() ? cat(" and bias on ", bias.device()) : std::string(),
         "; move them to one device with .to(device)");
  if (!(eps >= 0)) fail(op, "eps must be >= 0, got ", eps, " (input shape ", x.shape(), ")");
  check_device_compiled(op, x.device());
  const TensorView<const T> xc = x.contiguous(), wc = weight.contiguous();
  const TensorView<const T> bc = bias.defined() ? bias.contiguous() : TensorView<const T>();
  Tensor<T> y = empty<T>(x.shape(), x.device());
  const std::int64_t n = ws.numel();
  if (y.numel() == 0) return y;
  const std::int64_t rows = x.numel() / n;
  if (!x.device().is_cpu()) {
    run_layer_norm_rows(xc.data(), wc.data(), bc.defined() ? bc.data() : nullptr, y.data(), rows, n, eps, x.device());
    return y;
  }
  // The CPU: the formula over rows of n, in math_t (16-bit floats in float, rounded once), run as
  // a row epilogue (backend/row_epilogue.hpp: per row the mean, the sum of squared deviations
  // from it, then the write; rsqrt(var + eps) once per row). var is the biased variance, in two
  // passes: no cancellation when |mean| >> std.
  using A = math_t<T>;
  const auto v = cast<A>(xc.view(Shape{rows, n}));
  const auto w = cast<A>(wc.view(Shape{n}));
  const auto normalized = (v - mean(v, 1, true)) * rsqrt(var(v, 1, 0.0, true) + eps) * w;
  TensorView<T> out = y.view(Shape{rows, n});
  if (bc.defined()) out = normalized + cast<A>(bc.view(Shape{n}));
  else out = normalized;
  return y;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

inline namespace WEFT_BACKEND_ABI {

/// layer_norm(x) = (x - mean) / sqrt(var + eps) * weight + bias, with mean and
/// the biased variance over x's last weight.dim() dims (PyTorch's
/// normalized_shape is weight.shape()). `bias` may be an empty Tensor<T>()
/// for none. 16-bit floats accumulate in float. An expression input is
/// evaluated first; it must have weight's dtype.
template <Operand X, SingleTensor W, SingleTensor B>
  requires HasTensorOperand<X>
Tensor<typename W::value_type> layer_norm(const X& x, const W& weight, const B& bias, double eps = 1e-5) {
  using T = typename W::value_type;
  static_assert(std::is_same_v<typename B::value_type, T>, "weft::layer_norm: weight and bias need one dtype");
  static_assert(is_floating_v<T>, "weft::layer_norm needs floating-point tensors");
  static_assert(std::is_same_v<detail::operand_dtype_t<X>, T>,
                "weft::layer_norm: the input's dtype must equal weight's and bias's; use weft::cast<T>(x)");
  return detail::layer_norm_impl<T>(detail::materialize(x), weight, bias, eps);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft
