// SPDX-License-Identifier: MIT
/// @file SdpaOptions: the arguments of scaled-dot-product attention besides q, k and v (PyTorch's names and defaults).
#pragma once

#include <cstdint>
#include <optional>
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
using AttnMask = std::variant<std::monostate, Tensor<bool>, Tensor<float>, Tensor<double>, Tensor<half>, Tensor<bfloat16>>;

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
