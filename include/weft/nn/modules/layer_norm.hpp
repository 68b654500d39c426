// SPDX-License-Identifier: MIT
/// @file nn::LayerNorm: the affine parameters of layer normalization over the last dim (weight ones, bias zeros, as torch's).
#pragma once

#include <cstdint>

#include "weft/nn/differentiable.hpp"
#include "weft/nn/modules/module.hpp"
#include "weft/ops/factories.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.LayerNorm(dim, eps): y = (x - mean) / sqrt(var + eps) * weight + bias over the last
/// dim of size `dim`; `weight` [dim] starts at ones and `bias` [dim] at zeros.
template <class T = float>
class LayerNorm : public Module<T> {
 public:
  explicit LayerNorm(std::int64_t dim, double eps = 1e-5) : dim_(dim), eps_(eps) {
    if (dim < 0) weft::detail::fail("nn::LayerNorm", "dim must be >= 0, got ", dim);
    if (!(eps >= 0)) weft::detail::fail("nn::LayerNorm", "eps must be >= 0, got ", eps);
    weight = ad::param(ones<T>({dim}));
    bias = ad::param(zeros<T>({dim}));
    this->register_parameter("weight", &LayerNorm::weight);
    this->register_parameter("bias", &LayerNorm::bias);
  }

  /// (x - mean) / sqrt(var + eps) * weight + bias over the last dim of x.
  ad::Var<T> forward(const ad::Var<T>& x) override { return nn::layer_norm(x, weight, bias, eps_); }
  using Module<T>::operator();

  /// The shape normalized over ({dim}), torch's `normalized_shape`.
  Shape normalized_shape() const { return {dim_}; }
  double eps() const { return eps_; }

  ad::Var<T> weight;
  ad::Var<T> bias;

 private:
  std::int64_t dim_;
  double eps_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
