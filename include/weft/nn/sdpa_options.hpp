// SPDX-License-Identifier: MIT
/// @file SdpaOptions: the arguments of scaled-dot-product attention besides q, k and v (PyTorch's names and defaults).
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <variant>

#include "weft/core/tensor.hpp"

namespace weft::nn {

/// Where the causal diagonal sits when L != S (docs/attention.md has the picture).
/// upper_left: query i sees keys j <= i (PyTorch's is_causal).
/// lower_right: query i sees keys j <= i + (S - L), so the last query sees every key
/// (FlashAttention's alignment, PyTorch's causal_lower_right).
enum class CausalVariant : unsigned char { upper_left, lower_right };

/// No mask, a bool mask (true = attend) or a floating mask added to the scaled scores; it
/// broadcasts to (N, ..., Hq, L, S). A floating mask of any floating dtype is read in the
/// compute type (float for 16-bit inputs). Type-erased, so SdpaOptions is not a template.
/// It holds a read-only view of the mask (no copy); assigning another mask replaces the view and
/// never writes into the mask held before.
class AttnMask {
 public:
  using Variant = std::variant<std::monostate, TensorView<const bool>, TensorView<const float>,
                               TensorView<const double>, TensorView<const half>, TensorView<const bfloat16>>;

  AttnMask() = default;
  template <class X>
    requires is_single_tensor_v<X>
  AttnMask(const X& mask)  // NOLINT: implicit by design
      : v_(std::in_place_type<TensorView<const typename X::value_type>>, mask) {
    using T = typename X::value_type;
    static_assert(std::is_same_v<T, bool> || is_floating_v<T>,
                  "weft::nn::SdpaOptions::attn_mask: a mask is Tensor<bool> (true = attend) or a floating tensor "
                  "(added to the scores); convert integer masks with weft::eval(x != 0)");
  }
  AttnMask(const AttnMask&) = default;
  AttnMask& operator=(const AttnMask& other) {
    // emplace, not the variant's assignment: assigning a view to a view writes values.
    std::visit([this](const auto& t) { v_.template emplace<std::decay_t<decltype(t)>>(t); }, other.v_);
    return *this;
  }
  ~AttnMask() = default;

  /// True when a (defined) mask is set.
  bool has_value() const {
    return std::visit(
        [](const auto& t) {
          if constexpr (std::is_same_v<std::decay_t<decltype(t)>, std::monostate>) return false;
          else return t.defined();
        },
        v_);
  }
  const Variant& variant() const { return v_; }

 private:
  Variant v_;
};

/// torch.nn.functional.scaled_dot_product_attention's arguments, plus the dropout seed and the
/// causal alignment.
struct SdpaOptions {
  AttnMask attn_mask;
  /// Probability of dropping an attention weight (the kept ones are scaled by 1 / (1 - p)); in [0, 1).
  double dropout_p = 0.0;
  /// Dropout's counter-based RNG key: the same seed drops the same weights in forward and backward.
  std::uint64_t seed = 0;
  bool is_causal = false;
  CausalVariant causal_variant = CausalVariant::upper_left;
  /// Multiplies q k^T; default 1 / sqrt(E).
  std::optional<double> scale;
  /// Query head i uses key/value head i / (Hq / H).
  bool enable_gqa = false;
};

}  // namespace weft::nn
