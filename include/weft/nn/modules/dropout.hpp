// SPDX-License-Identifier: MIT
/// @file nn::Dropout: the drop probability of dropout, a module without parameters that drops only in training mode.
#pragma once

#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Dropout(p): p is the probability with which dropout zeroes each element in training
/// mode (the others scaled by 1 / (1 - p); eval mode passes x through). p in [0, 1], as torch
/// allows (p = 1 drops everything).
template <class T = float>
class Dropout : public Module<T> {
 public:
  explicit Dropout(double p = 0.5) : p_(p) {
    if (!(p >= 0 && p <= 1)) weft::detail::fail("nn::Dropout", "dropout probability has to be between 0 and 1, but got ", p);
  }

  double p() const { return p_; }

 private:
  double p_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
