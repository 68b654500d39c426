// SPDX-License-Identifier: MIT
/// @file libgpt2_infer.so: GPT-2's forward pass (examples/gpt2's model) exported through weft's C ABI as
/// `logits(tokens int32 [B, T]) -> float32 [B, T, V]`.
///
/// The checkpoint (llm.c's float32 format) is the file the environment variable WEFT_GPT2_CHECKPOINT names; it is
/// read once, at the first call (a failed read is reported by that call and retried by the next). An environment
/// variable, rather than an exported load function, keeps the library's whole interface the ABI's weft_call.

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>

#include <weft/export.hpp>
#include <weft/weft.hpp>

#include "../gpt2/model.hpp"

namespace {

using weft::Tensor;
using weft::TensorView;
using weft::detail::cat;

/// One model per library; the mutex serializes calls, because a forward pass keeps its activations in the model.
std::mutex model_mutex;
std::unique_ptr<gpt2::Model> loaded_model;

gpt2::Model& model() {
  if (!loaded_model) {
    const char* path = std::getenv("WEFT_GPT2_CHECKPOINT");
    if (!path || !*path)
      throw weft::Error("logits: set WEFT_GPT2_CHECKPOINT to the path of an llm.c GPT-2 checkpoint (float32, "
                        "magic 20240326) before the first call");
    loaded_model = std::make_unique<gpt2::Model>(gpt2::read_checkpoint(path));
  }
  return *loaded_model;
}

/// logits[b, t, :] = the model's next-token scores after tokens[b, 0..t], over the real vocabulary V (wte's padding
/// rows are not read).
Tensor<float> logits(TensorView<const std::int32_t> tokens) {
  if (tokens.dim() != 2 || tokens.numel() == 0)
    throw weft::Error(cat("logits: tokens must be int32 [B, T] with B, T >= 1, got shape ", tokens.shape()));
  const std::lock_guard<std::mutex> lock(model_mutex);
  gpt2::Model& m = model();
  const std::int64_t T = tokens.size(1), V = m.config().vocab_size;
  if (T > m.config().max_seq_len)
    throw weft::Error(cat("logits: tokens has shape ", tokens.shape(), "; the model takes at most ",
                          m.config().max_seq_len, " positions (T)"));
  const Tensor<std::int32_t> inputs(tokens);
  for (std::int64_t i = 0; i < inputs.numel(); ++i)
    if (inputs.data()[i] < 0 || inputs.data()[i] >= V)
      throw weft::Error(cat("logits: token ", inputs.data()[i], " at flat index ", i, " is outside the vocabulary [0, ",
                            V, ")"));
  m.forward(inputs, Tensor<std::int32_t>());
  return m.logits();  // a copy: the model keeps its own
}

}  // namespace

WEFT_EXPORT(logits, logits);
