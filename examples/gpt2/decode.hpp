// SPDX-License-Identifier: MIT
/// @file GPT-2 decoding token by token with a KV cache: each step runs one new token per sequence through the model,
/// its attention reading the keys and values of the earlier positions from the cache, with the Linear products
/// optionally on prepacked panels (nn::prepack_linear).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model.hpp"

namespace gpt2 {

/// Decodes `batch` sequences of up to `max_len` positions (1 <= max_len <= maxT) with a model's weights, one token
/// per sequence per step(), no tape. The cache holds each layer's keys and values [B, NH, max_len, hs] of the
/// positions so far; a step computes only its new position's (the full forward recomputes every position each
/// time: O(T^2) work for T tokens instead of O(T)).
class Decoder {
 public:
  /// `prepack`: the four Linear weights of every block and the tied LM head kept in the GEMM's packed panels (a
  /// snapshot of `weights`: a decoder made after the weights change sees the new ones), with logits bit-identical to
  /// the unpacked decoder's.
  Decoder(const Weights& weights, const Config& config, std::int64_t batch, std::int64_t max_len, bool prepack);

  /// The logits [B, V] of the next token after `tokens` [B] (ids < V), one per sequence, at position position();
  /// their keys and values join the cache.
  Tensor<float> step(const Tensor<std::int32_t>& tokens);

  /// The position the next step fills (the tokens decoded so far).
  std::int64_t position() const { return position_; }
  /// Starts new sequences: the cache is emptied (its positions filled with NaN again).
  void reset();

 private:
  /// The prepacked panels of one block's four Linear weights.
  struct BlockPanels {
    weft::nn::PrepackedLinear<float> qkv, attproj, fc, fcproj;
  };

  Weights weights_;
  Config config_;
  std::int64_t batch_, max_len_, position_ = 0;
  std::vector<Tensor<float>> keys_, values_;  // per layer, [B, NH, max_len, hs]
  std::vector<BlockPanels> panels_;            // per layer; empty unless prepacked
  std::optional<weft::nn::PrepackedLinear<float>> head_panels_;
};

}  // namespace gpt2
