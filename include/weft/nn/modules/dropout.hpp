// SPDX-License-Identifier: MIT
/// @file nn::Dropout: the drop probability of dropout, a module without parameters that drops only in training mode.
#pragma once

#include <cstdint>
#include <optional>

#include "weft/nn/differentiable.hpp"
#include "weft/nn/modules/init.hpp"
#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Dropout(p): p is the probability with which dropout zeroes each element in training
/// mode (the others scaled by 1 / (1 - p); eval mode passes x through). p in [0, 1], as torch
/// allows (p = 1 drops everything). Each training forward draws a fresh mask: from the next seed
/// of `seed`'s stream when a seed is given, else from the global generator (nn/modules/init.hpp),
/// so a program that calls weft::manual_seed drops the same elements on every run.
template <class T = float>
class Dropout : public Module<T> {
 public:
  explicit Dropout(double p = 0.5, std::optional<std::uint64_t> seed = std::nullopt) : p_(p), seeds_(seed) {
    if (!(p >= 0 && p <= 1)) weft::detail::fail("nn::Dropout", "dropout probability has to be between 0 and 1, but got ", p);
  }

  /// Training: nn::dropout(x, p) with the next seed of the stream, or from the global generator;
  /// eval: x itself.
  ad::Var<T> forward(const ad::Var<T>& x) override {
    if (!this->is_training()) return x;
    const std::optional<std::uint64_t> seed = seeds_.next();
    return seed ? nn::dropout(x, p_, *seed) : nn::dropout(x, p_);
  }
  using Module<T>::operator();

  double p() const { return p_; }

 private:
  double p_;
  detail::InitSeeds seeds_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
