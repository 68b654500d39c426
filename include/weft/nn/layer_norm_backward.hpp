// SPDX-License-Identifier: MIT
/// @file nn::layer_norm_backward: the gradients of weft::layer_norm with respect to its input, weight and bias.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/backend/rows.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/materialize.hpp"

namespace weft::nn {

/// The gradients of layer_norm(x, weight, bias): dx has x's shape, dweight and dbias weight's.
template <class T>
struct LayerNormGradients {
  Tensor<T> dx, dweight, dbias;
};

}  // namespace weft::nn

namespace weft::detail {
inline namespace WEFT_BACKEND_ABI {

template <class T>
nn::LayerNormGradients<T> layer_norm_backward_impl(const TensorView<const T>& dy, const TensorView<const T>& x,
                                                   const TensorView<const T>& weight, double eps) {
  const char* op = "nn::layer_norm_backward";
  if (!dy.defined() || !x.defined() || !weight.defined())
    fail(op, !dy.defined() ? "dy" : !x.defined() ? "x" : "weight", " is an empty (default-constructed) tensor");
  const Shape& ws = weight.shape();
  bool trailing = ws.rank() >= 1 && ws.rank() <= x.dim();
  for (int d = 0; trailing && d < ws.rank(); ++d) trailing = x.shape()[x.dim() - ws.rank() + d] == ws[d];
  if (!trailing)
    fail(op, "x of shape ", x.shape(), " does not end with weight's shape ", ws,
         "; weight's shape is the normalized shape: 1 to ", x.dim(), " of x's last dims, as in weft::layer_norm");
  if (!(dy.shape() == x.shape()))
    fail(op, "dy of shape ", dy.shape(), " differs from x's shape ", x.shape(), "; dy is the gradient of layer_norm(x)");
  if (dy.device() != x.device() || weight.device() != x.device())
    fail(op, "dy (shape ", dy.shape(), ") is on ", dy.device(), ", x (shape ", x.shape(), ") on ", x.device(),
         " and weight (shape ", ws, ") on ", weight.device(), "; move them to one device with .to(device)");
  if (!(eps >= 0)) fail(op, "eps must be >= 0, got ", eps, " (x of shape ", x.shape(), ")");
  check_device_compiled(op, x.device());
  const TensorView<const T> dyc = dy.contiguous(), xc = x.contiguous(), wc = weight.contiguous();
  nn::LayerNormGradients<T> out{empty<T>(x.shape(), x.device()), empty<T>(ws, x.device()), empty<T>(ws, x.device())};
  const std::int64_t n = ws.numel();
  if (n == 0) return out;
  run_layer_norm_backward_rows(dyc.data(), xc.data(), wc.data(), out.dx.data(), out.dweight.data(), out.dbias.data(),
                               x.numel() / n, n, eps, x.device());
  return out;
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// The gradients of y = layer_norm(x, weight, bias, eps) given dy = dL/dy, over x's last
/// weight.dim() dims (weft::layer_norm's normalized shape). mean and rstd = 1 / sqrt(var + eps)
/// are recomputed from x per row (two passes, as the forward); with xhat = (x - mean) * rstd and
/// g = dy * weight:
///   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
///   dweight = sum over rows of dy * xhat,  dbias = sum over rows of dy.
/// 16-bit floats accumulate in float. dweight and dbias are summed in parallel over fixed blocks
/// of rows (their number depends only on the row count), so the result is the same for any
/// thread count. Expression inputs are evaluated first; all need weight's dtype.
template <Operand GradY, Operand X, SingleTensor W>
  requires HasTensorOperand<GradY> && HasTensorOperand<X>
LayerNormGradients<typename W::value_type> layer_norm_backward(const GradY& dy, const X& x, const W& weight,
                                                               double eps = 1e-5) {
  using T = typename W::value_type;
  static_assert(is_floating_v<T>, "weft::nn::layer_norm_backward needs floating-point tensors");
  static_assert(std::is_same_v<weft::detail::operand_dtype_t<X>, T> && std::is_same_v<weft::detail::operand_dtype_t<GradY>, T>,
                "weft::nn::layer_norm_backward: dy, x and weight need one dtype; use weft::cast<T>()");
  return weft::detail::layer_norm_backward_impl<T>(weft::detail::materialize(dy), weft::detail::materialize(x), weight.view(), eps);
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
