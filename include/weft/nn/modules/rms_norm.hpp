// SPDX-License-Identifier: MIT
/// @file nn::RMSNorm: root-mean-square normalization's weight over the trailing dims (ones, as torch's).
#pragma once

#include <optional>

#include "weft/nn/modules/module.hpp"
#include "weft/nn/rms_norm.hpp"
#include "weft/ops/factories.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.RMSNorm(normalized_shape, eps, elementwise_affine): y = x / sqrt(mean(x^2) + eps) *
/// weight over x's last dims of normalized_shape; `weight` (that shape) starts at ones. eps
/// nullopt: torch's default, the machine epsilon of the type the op computes in.
template <class T = float>
class RMSNorm : public Module<T> {
 public:
  explicit RMSNorm(Shape normalized_shape, std::optional<double> eps = std::nullopt, bool elementwise_affine = true)
      : normalized_shape_(std::move(normalized_shape)), eps_(eps) {
    if (normalized_shape_.rank() == 0) weft::detail::fail("nn::RMSNorm", "normalized_shape needs at least one dim");
    if (eps && !(*eps >= 0)) weft::detail::fail("nn::RMSNorm", "eps must be >= 0, got ", *eps);
    if (elementwise_affine) weight = ad::param(ones<T>(normalized_shape_));
    this->register_parameter("weight", &RMSNorm::weight);
  }

  ad::Var<T> forward(const ad::Var<T>& x) override { return nn::rms_norm(x, normalized_shape_, weight, eps_); }
  using Module<T>::operator();

  const Shape& normalized_shape() const { return normalized_shape_; }
  std::optional<double> eps() const { return eps_; }

  ad::Var<T> weight;

 private:
  Shape normalized_shape_;
  std::optional<double> eps_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
