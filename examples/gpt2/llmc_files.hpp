// SPDX-License-Identifier: MIT
/// @file llm.c's file formats: the float32 GPT-2 checkpoint, the debug state of its test, token files and the
/// tokenizer, read into weft tensors and plain vectors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <weft/core/tensor.hpp>

namespace gpt2 {

/// The model's hyperparameters, as the checkpoint header stores them.
struct Config {
  std::int64_t max_seq_len = 0;        // maxT: the number of position embeddings
  std::int64_t vocab_size = 0;         // V: the real vocabulary (50257 for GPT-2)
  std::int64_t padded_vocab_size = 0;  // Vp >= V: wte's rows, rounded up for aligned GEMMs (50304)
  std::int64_t num_layers = 0;         // L
  std::int64_t num_heads = 0;          // NH
  std::int64_t channels = 0;           // C
};

/// A checkpoint: 256 int32 header (magic 20240326, version 3, maxT, V, L, NH, C, Vp), then every
/// parameter in float32, in the order of ParameterTensors (model.hpp).
struct Checkpoint {
  Config config;
  weft::Tensor<float> parameters;  // flat
};
Checkpoint read_checkpoint(const std::string& path);
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);

/// The debug state llm.c's test reads: 256 int32 header (magic 20240327, version 2, B, T), the
/// inputs and targets (int32 [B, T]), the expected logits over the real vocabulary (float32
/// [B, T, V]), the expected mean loss and the expected gradients, flat in checkpoint order.
struct DebugState {
  std::int64_t batch = 0, seq_len = 0;
  weft::Tensor<std::int32_t> inputs, targets;  // [B, T]
  weft::Tensor<float> logits;                   // [B, T, V]
  float loss = 0;
  weft::Tensor<float> grads;  // flat, the checkpoint's parameter count
};
DebugState read_debug_state(const std::string& path, const Config& config, std::int64_t num_parameters);

/// A token file: 256 int32 header (magic 20240520, version 1, token count), then uint16 tokens.
std::vector<std::uint16_t> read_tokens(const std::string& path);
void write_tokens(const std::string& path, const std::vector<std::uint16_t>& tokens);

/// llm.c's tokenizer (magic 20240328, version 2, vocabulary size, end-of-text id; then each
/// token as a length byte and its bytes), for printing samples as text.
struct Tokenizer {
  std::vector<std::string> pieces;
  std::int32_t end_of_text = -1;
};
std::optional<Tokenizer> read_tokenizer(const std::string& path);

/// One number per line (the expected losses of a reference run; the losses of a training run).
std::vector<double> read_numbers(const std::string& path);
void write_numbers(const std::string& path, const std::vector<double>& values);

}  // namespace gpt2
