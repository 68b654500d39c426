// SPDX-License-Identifier: MIT
/// @file GPT-2 as llm.c defines it, on weft's autograd: the parameters and gradients as two flat buffers that an
/// optimizer updates, each parameter an ad::Var over its part of them, and the forward pass written once over Vars
/// (autograd runs the backward).
#pragma once

#include <cstdint>
#include <vector>

#include <weft/autograd.hpp>
#include <weft/weft.hpp>

#include "llmc_files.hpp"

namespace gpt2 {

/// GPT-2's LayerNorm epsilon (both models use it: one definition).
inline constexpr double kLayerNormEps = 1e-5;

using weft::Tensor;
using weft::TensorView;
using Var = weft::ad::Var<float>;

/// The 16 parameter tensors, views into one flat buffer in checkpoint order. The per-layer
/// tensors are stacked over layers (`qkvw.select(0, l)` is layer l's); linear weights are
/// [out, in], as torch.nn.Linear stores them, so a layer computes y = x W^T + b.
struct ParameterTensors {
  TensorView<float> wte;       // [Vp, C] token embeddings, also the LM head (tied)
  TensorView<float> wpe;       // [maxT, C] position embeddings
  TensorView<float> ln1w, ln1b;          // [L, C]
  TensorView<float> qkvw;                // [L, 3C, C]
  TensorView<float> qkvb;                // [L, 3C]
  TensorView<float> attprojw;            // [L, C, C]
  TensorView<float> attprojb;            // [L, C]
  TensorView<float> ln2w, ln2b;          // [L, C]
  TensorView<float> fcw;                 // [L, 4C, C]
  TensorView<float> fcb;                 // [L, 4C]
  TensorView<float> fcprojw;             // [L, C, 4C]
  TensorView<float> fcprojb;             // [L, C]
  TensorView<float> lnfw, lnfb;          // [C]
};

/// The number of floats in the 16 parameter tensors of a model of this configuration.
std::int64_t parameter_count(const Config& c);
/// Views of the 16 tensors in a flat buffer of parameter_count(c) floats.
ParameterTensors point_parameters(TensorView<float> flat, const Config& c);
/// The 16 views as a list, in checkpoint order: they lie back to back in their buffer.
weft::TensorList<float> tensor_list(const ParameterTensors& p);
/// The checkpoint's flat parameters followed by zeros up to a multiple of `shards` floats (ZeRO-1's equal shards).
Tensor<float> padded_parameters(Tensor<float> parameters, const Config& c, std::int64_t shards);

/// llm.c's AdamW: betas 0.9 / 0.999, eps 1e-8, weight decay 0.01 on every parameter.
weft::optim::AdamWOptions adamw_options(double lr);

/// A model at GPT-2's initialization: normal weights of std 0.02 (the residual projections'
/// scaled by 1 / sqrt(2 L)), LayerNorm weights 1 and biases 0, wte's padding rows 0.
Checkpoint initial_checkpoint(const Config& c, std::uint64_t seed);

/// One block's parameters as leaves of the tape (layer l's slice of the stacked tensors).
struct BlockWeights {
  Var ln1w, ln1b;          // [C]
  Var qkvw, qkvb;          // [3C, C], [3C]
  Var attprojw, attprojb;  // [C, C], [C]
  Var ln2w, ln2b;          // [C]
  Var fcw, fcb;            // [4C, C], [4C]
  Var fcprojw, fcprojb;    // [C, 4C], [C]
};

/// The model's parameters as leaves of the tape. wte is its first V rows: the padding rows are
/// neither read nor written (their gradient stays zero).
struct Weights {
  Var wte;  // [V, C] token embeddings and the LM head (tied)
  Var wpe;  // [maxT, C]
  std::vector<BlockWeights> blocks;
  Var lnfw, lnfb;  // [C]
};

/// The parameters of `params` (a flat buffer of parameter_count(c) floats or more) as Vars over
/// its elements, no copy: each Var's value is its part of `params` and its grad() the same part
/// of `grads`, so a backward adds into `grads` and an optimizer step on `params` is the Vars'.
Weights share_weights(const Tensor<float>& params, const Tensor<float>& grads, const Config& c);

/// The logits [B, T, V] of tokens [B, T] (ids < V): GPT-2's forward pass over Vars.
Var forward_logits(const Weights& w, const Config& c, const Tensor<std::int32_t>& tokens);

/// The model's parameters and gradients. The optimizer lives outside: it updates parameters() from gradients(), on
/// one process (weft::optim::AdamW) or sharded over data-parallel ranks (ShardedAdamW).
class Model {
 public:
  /// `shards`: the flat buffers are padded with zeros to a multiple of it, so that they split into that many equal
  /// shards (ZeRO-1). The padding's gradient stays zero (no Var covers it).
  explicit Model(Checkpoint checkpoint, std::int64_t shards = 1);

  const Config& config() const { return config_; }
  /// The parameters of the 16 tensors, without the padding.
  std::int64_t num_parameters() const { return parameter_count(config_); }
  /// The flat buffers: the 16 tensors in checkpoint order, then the padding. gradients() holds the last backward's.
  TensorView<float> parameters() { return parameters_.view(); }
  TensorView<float> gradients() { return gradients_.view(); }
  const ParameterTensors& parameter_tensors() const { return params_; }
  const ParameterTensors& gradient_tensors() const { return grads_; }
  const Weights& weights() const { return weights_; }

  /// Runs the model on inputs [B, T] (token ids < V) and returns the mean cross-entropy against
  /// targets [B, T], recording the tape for backward(). An undefined targets tensor skips the
  /// loss and records nothing (sampling, inference).
  float forward(const Tensor<std::int32_t>& inputs, const Tensor<std::int32_t>& targets);
  /// The last forward's logits, [B, T, V].
  const Tensor<float>& logits() const { return logits_.value(); }
  /// The gradients of the last forward's mean loss, written over gradients(): zeroed in one pass, then autograd's
  /// backward adds into them.
  void backward();

 private:
  Config config_;
  Tensor<float> parameters_, gradients_;
  ParameterTensors params_, grads_;
  Weights weights_;
  Var logits_, loss_;
};

}  // namespace gpt2
