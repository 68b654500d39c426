// SPDX-License-Identifier: MIT
/// @file GPT-2 as llm.c defines it, on weft: the parameters and gradients as views into two flat buffers that an
/// optimizer updates, the forward pass that keeps what the backward needs, and the hand-written backward.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/weft.hpp>

#include "llmc_files.hpp"

namespace gpt2 {

using weft::Tensor;
using weft::TensorView;

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

/// llm.c's AdamW: betas 0.9 / 0.999, eps 1e-8, weight decay 0.01 on every parameter.
weft::optim::AdamWOptions adamw_options(double lr);

/// A model at GPT-2's initialization: normal weights of std 0.02 (the residual projections'
/// scaled by 1 / sqrt(2 L)), LayerNorm weights 1 and biases 0, wte's padding rows 0.
Checkpoint initial_checkpoint(const Config& c, std::uint64_t seed);

/// What the forward pass keeps for one block. Every activation is [B T, X] rows (one GEMM per
/// linear layer); attention's are [B, NH, T, hs].
struct BlockActivations {
  Tensor<float> input;       // [B T, C] the residual stream entering the block
  Tensor<float> ln1;         // [B T, C]
  Tensor<float> qkv;         // [B T, 3C]
  Tensor<float> attention;   // [B, NH, T, hs] softmax(q k^T / sqrt(hs), causal) v
  Tensor<double> lse;        // [B, NH, T] its log-sum-exp per query row, for the backward
  Tensor<float> atty;        // [B T, C] the heads side by side
  Tensor<float> residual2;   // [B T, C] input + attention projection
  Tensor<float> ln2;         // [B T, C]
  Tensor<float> fch;         // [B T, 4C] before GELU
  Tensor<float> fch_gelu;    // [B T, 4C]
};

struct Activations {
  std::int64_t batch = 0, seq_len = 0;
  Tensor<std::int32_t> inputs, targets;  // [B, T]
  std::vector<BlockActivations> blocks;
  Tensor<float> residual;  // [B T, C] the last block's output
  Tensor<float> lnf;       // [B T, C]
  Tensor<float> logits;    // [B T, Vp]; the columns from V on are the padding's (zero weights)
};

/// The model's parameters, gradients and activations. The optimizer lives outside: it updates parameters() from
/// gradients(), on one process (weft::optim::AdamW) or sharded over data-parallel ranks (ShardedAdamW).
class Model {
 public:
  /// `shards`: the flat buffers are padded with zeros to a multiple of it, so that they split into that many equal
  /// shards (ZeRO-1). The padding's gradient stays zero (backward never writes it).
  explicit Model(Checkpoint checkpoint, std::int64_t shards = 1);

  const Config& config() const { return config_; }
  /// The parameters of the 16 tensors, without the padding.
  std::int64_t num_parameters() const { return parameter_count(config_); }
  /// The flat buffers: the 16 tensors in checkpoint order, then the padding. gradients() holds the last backward's.
  TensorView<float> parameters() { return parameters_.view(); }
  TensorView<float> gradients() { return gradients_.view(); }
  const ParameterTensors& parameter_tensors() const { return params_; }
  const ParameterTensors& gradient_tensors() const { return grads_; }
  const Activations& activations() const { return acts_; }

  /// Runs the model on inputs [B, T] (token ids < V) and returns the mean cross-entropy against
  /// targets [B, T] (an undefined targets tensor skips the loss: sampling).
  float forward(const Tensor<std::int32_t>& inputs, const Tensor<std::int32_t>& targets);
  /// The gradients of the last forward's mean loss, written over gradients().
  void backward();

 private:
  Config config_;
  Tensor<float> parameters_, gradients_;
  ParameterTensors params_, grads_;
  Activations acts_;
};

}  // namespace gpt2
