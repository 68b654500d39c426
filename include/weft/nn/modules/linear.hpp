// SPDX-License-Identifier: MIT
/// @file nn::Linear: the parameters of y = x W^T + b (weight [out, in], bias [out]) with torch's initialization.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>

#include "weft/nn/differentiable.hpp"
#include "weft/nn/modules/init.hpp"
#include "weft/nn/modules/module.hpp"

namespace weft::nn {
inline namespace WEFT_BACKEND_ABI {

/// torch.nn.Linear: `weight` [out_features, in_features] and `bias` [out_features] (an empty Var
/// when `bias` is false: named_parameters and state_dict skip it, as torch's None). Both start as
/// U(-1/sqrt(in), 1/sqrt(in)), which is torch's kaiming_uniform_(a = sqrt(5)) for the weight
/// (gain sqrt(2 / (1 + 5)) times sqrt(3 / in)) and its bias rule. `seed`: nn/modules/init.hpp.
template <class T = float>
class Linear : public Module<T> {
 public:
  Linear(std::int64_t in_features, std::int64_t out_features, bool bias = true,
         std::optional<std::uint64_t> seed = std::nullopt)
      : in_features_(in_features), out_features_(out_features) {
    if (in_features < 0 || out_features < 0)
      weft::detail::fail("nn::Linear", "in_features and out_features must be >= 0, got ", in_features, " and ",
                         out_features);
    // torch leaves a layer without inputs at bound 0 (fan_in = 0 would divide by zero).
    const double bound = in_features > 0 ? 1.0 / std::sqrt(double(in_features)) : 0.0;
    detail::InitSeeds seeds(seed);
    weight = ad::param(detail::uniform_init<T>({out_features, in_features}, bound, seeds.next()));
    if (bias) this->bias = ad::param(detail::uniform_init<T>({out_features}, bound, seeds.next()));
    this->register_parameter("weight", &Linear::weight);
    this->register_parameter("bias", &Linear::bias);
  }

  /// y = x W^T + b over the last dim of x [..., in_features]: one GEMM, the bias in its epilogue;
  /// with prepacked panels, the GEMM reads those where they serve the product.
  ad::Var<T> forward(const ad::Var<T>& x) override {
    const ad::detail::Input<T> in = ad::detail::input<T>(x), w = ad::detail::input<T>(weight);
    if (!bias.defined()) return detail::linear_recorded<T>(in, w, nullptr, packed_.get());
    const ad::detail::Input<T> b = ad::detail::input<T>(bias);
    return detail::linear_recorded<T>(in, w, &b, packed_.get());
  }
  using Module<T>::operator();

  /// Keeps the weight in the GEMM's packed panels (nn::prepack_linear): each forward then skips
  /// packing it where the product runs on those panels (float and double from 2^21 multiply-adds,
  /// bfloat16 on its native kernel; smaller products run on Eigen's GEMM, which packs its own).
  /// A snapshot for inference (torch's weight prepacking): after the weight changes, call
  /// prepack() again, or unpack(). Results are bit-identical to the unpacked call (the same GEMM
  /// on the same panels). Nothing is kept where the GEMM has no panels (16-bit floats computed in
  /// float, CUDA tensors): prepacked() then stays false.
  void prepack() {
    PrepackedLinear<T> panels = nn::prepack_linear(weight);
    if (panels.panels) packed_ = std::make_shared<const PrepackedLinear<T>>(std::move(panels));
    else packed_.reset();
  }
  void unpack() { packed_.reset(); }
  bool prepacked() const { return bool(packed_); }

  std::int64_t in_features() const { return in_features_; }
  std::int64_t out_features() const { return out_features_; }

  ad::Var<T> weight;
  ad::Var<T> bias;

 private:
  std::int64_t in_features_, out_features_;
  std::shared_ptr<const PrepackedLinear<T>> packed_;
};

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn
