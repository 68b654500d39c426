// SPDX-License-Identifier: MIT
/// @file nn::GroupNorm: group normalization's per-channel affine parameters (weight ones, bias zeros, as torch's).
#pragma once

#include <cstdint>

#include "weft/nn/group_norm.hpp"
#include "weft/nn/modules/module.hpp"
#include "weft/ops/factories.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.GroupNorm(num_groups, num_channels, eps, affine): y = (x - mean) / sqrt(var + eps) *
/// weight + bias, mean and var over each sample's group of num_channels / num_groups channels
/// and the spatial dims of x [N, C, *]; `weight` [C] starts at ones, `bias` [C] at zeros.
template <class T = float>
class GroupNorm : public Module<T> {
 public:
  GroupNorm(std::int64_t num_groups, std::int64_t num_channels, double eps = 1e-5, bool affine = true)
      : num_groups_(num_groups), eps_(eps) {
    if (num_groups < 1 || num_channels < 1 || num_channels % num_groups != 0)
      weft::detail::fail("nn::GroupNorm", "num_channels ", num_channels, " must be a positive multiple of num_groups ",
                         num_groups, "; pick groups dividing the channels");
    if (!(eps >= 0)) weft::detail::fail("nn::GroupNorm", "eps must be >= 0, got ", eps);
    if (affine) {
      weight = ad::param(ones<T>({num_channels}));
      bias = ad::param(zeros<T>({num_channels}));
    }
    this->register_parameter("weight", &GroupNorm::weight);
    this->register_parameter("bias", &GroupNorm::bias);
  }

  ad::Var<T> forward(const ad::Var<T>& x) override { return nn::group_norm(x, num_groups_, weight, bias, eps_); }
  using Module<T>::operator();

  std::int64_t num_groups() const { return num_groups_; }
  double eps() const { return eps_; }

  ad::Var<T> weight;
  ad::Var<T> bias;

 private:
  std::int64_t num_groups_;
  double eps_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
