// SPDX-License-Identifier: MIT
/// @file GPT-2 with a hand-written backward, as llm.c writes it: the forward pass keeps what the backward needs, and
/// the backward states every layer's derivative. The example trains on autograd (model.hpp); this model is the
/// oracle its gradients are checked against (`gpt2 check-backward`) and its step-time reference (bench/gpt2).
#pragma once

#include <cstdint>
#include <vector>

#include <weft/weft.hpp>

#include "model.hpp"

namespace gpt2 {

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
  Tensor<float> logits;    // [B T, V]
};

/// GPT-2's parameters, gradients and activations, with the hand-written backward. The same interface as Model.
class HandWrittenModel {
 public:
  /// `shards`: the flat buffers are padded with zeros to a multiple of it, so that they split into that many equal
  /// shards (ZeRO-1). The padding's gradient stays zero (backward never writes it).
  explicit HandWrittenModel(Checkpoint checkpoint, std::int64_t shards = 1);

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
