// SPDX-License-Identifier: MIT
/// @file gpt2::Decoder (decode.hpp): one step of GPT-2 for one new token per sequence, the attention over the KV
/// cache, written with the same ops as the training forward (model.cpp) under ad::NoGrad.

#include "decode.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpt2 {

namespace ad = weft::ad;
namespace nn = weft::nn;

namespace {

/// x W^T + b, on W's prepacked panels when given.
Var linear(const Var& x, const Var& w, const Var& b, const nn::PrepackedLinear<float>* panels) {
  return panels ? nn::linear(x, w, b, *panels) : nn::linear(x, w, b);
}

}  // namespace

Decoder::Decoder(const Weights& weights, const Config& config, std::int64_t batch, std::int64_t max_len, bool prepack)
    : weights_(weights), config_(config), batch_(batch), max_len_(max_len) {
  if (batch < 1 || max_len < 1 || max_len > config.max_seq_len)
    throw std::invalid_argument("Decoder: batch " + std::to_string(batch) + " and max_len " + std::to_string(max_len) +
                                " must be >= 1, max_len at most the model's " + std::to_string(config.max_seq_len) +
                                " positions");
  const std::int64_t NH = config.num_heads, hs = config.channels / NH;
  for (std::int64_t l = 0; l < config.num_layers; ++l) {
    keys_.push_back(weft::empty<float>({batch, NH, max_len, hs}));
    values_.push_back(weft::empty<float>({batch, NH, max_len, hs}));
  }
  reset();
  if (!prepack) return;
  for (const BlockWeights& b : weights.blocks)
    panels_.push_back({nn::prepack_linear(b.qkvw), nn::prepack_linear(b.attprojw), nn::prepack_linear(b.fcw),
                       nn::prepack_linear(b.fcprojw)});
  head_panels_ = nn::prepack_linear(weights.wte);
}

void Decoder::reset() {
  position_ = 0;
  // NaN where no key or value was written yet: an attention that read past the filled positions would show.
  for (Tensor<float>& t : keys_) t = std::numeric_limits<float>::quiet_NaN();
  for (Tensor<float>& t : values_) t = std::numeric_limits<float>::quiet_NaN();
}

Tensor<float> Decoder::step(const Tensor<std::int32_t>& tokens) {
  const std::int64_t B = batch_, C = config_.channels, NH = config_.num_heads, hs = C / NH, t = position_;
  if (tokens.dim() != 1 || tokens.size(0) != B)
    throw std::invalid_argument("Decoder::step: tokens " + weft::detail::cat(tokens.shape()) +
                                " must be [B] = [" + std::to_string(B) + "], one token per sequence");
  if (t >= max_len_)
    throw std::invalid_argument("Decoder::step: the cache holds " + std::to_string(max_len_) +
                                " positions, all filled; reset() to start new sequences");
  const ad::NoGrad inference;
  const bool packed = !panels_.empty();
  Var x = weft::embedding(weights_.wte, tokens.reshape({B, 1})) + ad::narrow(weights_.wpe, 0, t, 1);  // [B, 1, C]
  for (std::size_t l = 0; l < weights_.blocks.size(); ++l) {
    const BlockWeights& w = weights_.blocks[l];
    const BlockPanels* p = packed ? &panels_[l] : nullptr;
    // attention: this position's q, k, v; k and v join the cache, q attends to positions 0..t (all earlier: no mask)
    const Var qkv = linear(nn::layer_norm(x, w.ln1w, w.ln1b, kLayerNormEps), w.qkvw, w.qkvb, p ? &p->qkv : nullptr);
    const Var heads = ad::permute(ad::reshape(qkv, {B, 1, 3, NH, hs}), {2, 0, 3, 1, 4});  // [3, B, NH, 1, hs]
    keys_[l].narrow(2, t, 1) = ad::select(heads, 0, 1).value();
    values_[l].narrow(2, t, 1) = ad::select(heads, 0, 2).value();
    const Var y = nn::scaled_dot_product_attention(ad::select(heads, 0, 0), keys_[l].narrow(2, 0, t + 1),
                                                   values_[l].narrow(2, 0, t + 1));  // [B, NH, 1, hs]
    const Var merged = ad::reshape(ad::permute(y, {0, 2, 1, 3}), {B, 1, C});
    x = x + linear(merged, w.attprojw, w.attprojb, p ? &p->attproj : nullptr);
    // the MLP: gelu_tanh(x Wfc^T + bfc) Wfcproj^T + bfcproj
    const Var h = weft::gelu_tanh(linear(nn::layer_norm(x, w.ln2w, w.ln2b, kLayerNormEps), w.fcw, w.fcb,
                                         p ? &p->fc : nullptr));
    x = x + linear(h, w.fcprojw, w.fcprojb, p ? &p->fcproj : nullptr);
  }
  // the tied LM head over the real vocabulary
  const Var last = nn::layer_norm(x, weights_.lnfw, weights_.lnfb, kLayerNormEps);
  const Var logits = head_panels_ ? nn::linear(last, weights_.wte, *head_panels_) : nn::linear(last, weights_.wte);
  ++position_;
  return Tensor<float>(logits.value().reshape({B, config_.vocab_size}));
}

}  // namespace gpt2
