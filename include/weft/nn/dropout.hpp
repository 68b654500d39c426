// SPDX-License-Identifier: MIT
/// @file nn::dropout on tensors and expressions (torch.nn.functional.dropout), and the mask its autograd form shares.
#pragma once

#include <concepts>
#include <cstdint>

#include "weft/core/generator.hpp"
#include "weft/ops/factories.hpp"
#include "weft/ops/fuse.hpp"

namespace weft {

// In weft::detail, not weft::nn::detail: the nn headers included after this one name
// weft::detail's helpers as detail::.
namespace detail {
inline namespace WEFT_BACKEND_ABI {

/// dropout's check of p (torch's words), before anything is drawn.
inline void check_dropout_probability(double p) {
  if (!(p >= 0 && p <= 1))
    fail("nn::dropout", "dropout probability has to be between 0 and 1, but got ", p,
                       "; p is the probability of an element being zeroed");
}

/// The uniform draws u in [0, 1) of dropout's mask, one per element of `shape`: u >= p keeps an
/// element. float on every dtype, so that a seed drops the same elements whatever T is.
inline Tensor<float> dropout_uniforms(const Shape& shape, Device device, const RandomSource& source) {
  return weft::rand<float>(shape, source, device);
}

/// y = where(u >= p, x / (1 - p), 0) into a new tensor (0 < p < 1): one kernel.
template <class X>
auto dropout_tensor(const X& x, double p, bool training, const RandomSource& source) {
  check_dropout_probability(p);
  using T = typename expr_t<X>::value_type;
  static_assert(is_floating_v<T>, "nn::dropout needs a floating-point tensor (torch refuses integers too)");
  Tensor<T> in = weft::eval(x);
  if (!training || p == 0) return in;
  if (p == 1) return Tensor<T>(weft::eval(in * 0.0));  // 0 x keeps NaN and inf as torch's mask product does
  const Tensor<float> u = dropout_uniforms(in.shape(), in.device(), source);
  return Tensor<T>(weft::eval(weft::where(u >= float(p), in * (1.0 / (1.0 - p)), 0.0)));
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace detail

namespace nn {
inline namespace WEFT_BACKEND_ABI {

/// dropout(x, p, seed) of a tensor or expression: each element kept with probability 1 - p and
/// scaled by 1 / (1 - p), else 0; the mask is weft::rand<float>(x's shape, seed) >= p, the same
/// on every device. Returns a new tensor (one kernel). Vars take the overload in
/// nn/differentiable.hpp, which records the same where.
template <class X>
  requires(Expression<X> || SingleTensor<X>)
Tensor<typename weft::detail::expr_t<X>::value_type> dropout(const X& x, double p, std::uint64_t seed) {
  return weft::detail::dropout_tensor(x, p, true, seed);
}

/// dropout(x, p = 0.5, training = true) (torch.nn.functional.dropout): the mask drawn from the
/// global generator (weft::manual_seed makes it reproducible); not training: x itself, nothing
/// drawn. `training` is a bool only (a number there is the seed of the form above).
template <class X, class Training = bool>
  requires(Expression<X> || SingleTensor<X>) && std::same_as<Training, bool>
Tensor<typename weft::detail::expr_t<X>::value_type> dropout(const X& x, double p = 0.5, Training training = true) {
  return weft::detail::dropout_tensor(x, p, training, RandomSource());
}

}  // namespace WEFT_BACKEND_ABI
}  // namespace nn

}  // namespace weft
