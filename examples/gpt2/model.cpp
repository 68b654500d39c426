// SPDX-License-Identifier: MIT
/// @file GPT-2's forward pass over ad::Vars (model.hpp): one function per block, as the model reads. Autograd runs the
/// backward; each parameter Var is a part of the flat buffers, so the gradients land in the optimizer's buffer.

#include "model.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace gpt2 {

namespace ad = weft::ad;
namespace nn = weft::nn;

std::int64_t parameter_count(const Config& c) {
  const std::int64_t C = c.channels, L = c.num_layers;
  return c.padded_vocab_size * C + c.max_seq_len * C + L * (12 * C * C + 13 * C) + 2 * C;
}

ParameterTensors point_parameters(TensorView<float> flat, const Config& c) {
  const std::int64_t C = c.channels, L = c.num_layers;
  std::int64_t offset = 0;
  auto next = [&](weft::Shape shape) {
    const std::int64_t n = shape.numel();
    TensorView<float> v = flat.narrow(0, offset, n).view(shape);
    offset += n;
    return v;
  };
  // Views are handles: assigning one writes its elements, so the struct is built from them in one go
  // (a braced list runs left to right, in checkpoint order).
  ParameterTensors p{next({c.padded_vocab_size, C}), next({c.max_seq_len, C}), next({L, C}), next({L, C}),
                     next({L, 3 * C, C}),  next({L, 3 * C}),       next({L, C, C}), next({L, C}),
                     next({L, C}),         next({L, C}),           next({L, 4 * C, C}), next({L, 4 * C}),
                     next({L, C, 4 * C}),  next({L, C}),           next({C}),       next({C})};
  if (offset != flat.numel())
    throw std::invalid_argument("the parameter buffer holds " + std::to_string(flat.numel()) +
                                " floats; a model of this configuration needs " + std::to_string(offset));
  return p;
}

weft::TensorList<float> tensor_list(const ParameterTensors& p) {
  return {p.wte,  p.wpe,      p.ln1w,     p.ln1b, p.qkvw, p.qkvb,    p.attprojw, p.attprojb,
          p.ln2w, p.ln2b,     p.fcw,      p.fcb,  p.fcprojw, p.fcprojb, p.lnfw,  p.lnfb};
}

weft::optim::AdamWOptions adamw_options(double lr) {
  weft::optim::AdamWOptions o;
  o.lr = lr;
  o.betas = {0.9, 0.999};
  o.eps = 1e-8;
  o.weight_decay = 0.01;
  return o;
}

Checkpoint initial_checkpoint(const Config& c, std::uint64_t seed) {
  Checkpoint k{c, weft::zeros<float>({parameter_count(c)})};
  const ParameterTensors p = point_parameters(k.parameters.view(), c);
  const double residual_std = 0.02 / std::sqrt(2.0 * double(c.num_layers));
  auto normal = [&](TensorView<float> w, double std) { w = weft::randn<float>(w.shape(), seed++) * std; };
  normal(p.wte.narrow(0, 0, c.vocab_size), 0.02);
  normal(p.wpe, 0.02);
  for (const TensorView<float>& w : {p.qkvw, p.fcw}) normal(w, 0.02);
  for (const TensorView<float>& w : {p.attprojw, p.fcprojw}) normal(w, residual_std);
  for (TensorView<float> w : {p.ln1w, p.ln2w, p.lnfw}) w = 1.0f;
  return k;
}

/// The checkpoint's parameters followed by zeros up to a multiple of `shards` floats.
Tensor<float> padded_parameters(Tensor<float> parameters, const Config& c, std::int64_t shards) {
  const std::int64_t n = parameters.numel();
  if (n != parameter_count(c))
    throw std::invalid_argument("the checkpoint holds " + std::to_string(n) + " parameters; a model of its "
                                "configuration has " + std::to_string(parameter_count(c)));
  if (shards < 1)
    throw std::invalid_argument("the parameters split into " + std::to_string(shards) + " shards; pass 1 or more");
  const std::int64_t padded_n = (n + shards - 1) / shards * shards;
  if (padded_n == n) return parameters;
  Tensor<float> flat = weft::zeros<float>({padded_n});
  flat.narrow(0, 0, n) = parameters;
  return flat;
}

Weights share_weights(const Tensor<float>& params, const Tensor<float>& grads, const Config& c) {
  const std::int64_t C = c.channels;
  std::int64_t offset = 0;
  // The floats of `shape` at `offset` of a flat buffer, as a Tensor that shares them (a Storage that borrows those
  // bytes and keeps the buffer alive).
  auto part = [&](const Tensor<float>& flat, const weft::Shape& shape) {
    const TensorView<const float> floats = flat.view().narrow(0, offset, shape.numel()).view(shape);
    return weft::ad::detail::share_elements(floats);
  };
  // A leaf over the next `shape` floats; its gradient is the same floats of `grads`.
  auto next = [&](const weft::Shape& shape, std::int64_t stride) {
    Var v = ad::param(part(params, shape));
    v.node()->grad = part(grads, shape);
    offset += stride;
    return v;
  };
  Weights w;
  w.wte = next({c.vocab_size, C}, c.padded_vocab_size * C);
  w.wpe = next({c.max_seq_len, C}, c.max_seq_len * C);
  const std::int64_t L = c.num_layers;
  w.blocks.resize(std::size_t(L));
  // Checkpoint order: each stacked [L, ...] tensor, layer by layer.
  auto stacked = [&](Var BlockWeights::*member, const weft::Shape& shape) {
    for (BlockWeights& b : w.blocks) b.*member = next(shape, shape.numel());
  };
  stacked(&BlockWeights::ln1w, {C});
  stacked(&BlockWeights::ln1b, {C});
  stacked(&BlockWeights::qkvw, {3 * C, C});
  stacked(&BlockWeights::qkvb, {3 * C});
  stacked(&BlockWeights::attprojw, {C, C});
  stacked(&BlockWeights::attprojb, {C});
  stacked(&BlockWeights::ln2w, {C});
  stacked(&BlockWeights::ln2b, {C});
  stacked(&BlockWeights::fcw, {4 * C, C});
  stacked(&BlockWeights::fcb, {4 * C});
  stacked(&BlockWeights::fcprojw, {C, 4 * C});
  stacked(&BlockWeights::fcprojb, {C});
  w.lnfw = next({C}, C);
  w.lnfb = next({C}, C);
  if (offset != parameter_count(c) || params.numel() < offset || grads.numel() < offset)
    throw std::invalid_argument("share_weights: the buffers hold " + std::to_string(params.numel()) + " and " +
                                std::to_string(grads.numel()) + " floats; the model needs " + std::to_string(offset));
  return w;
}

namespace {

/// Causal self-attention over x [B, T, C]: q, k, v = x Wqkv^T + bqkv, softmax(q k^T / sqrt(hs), causal) v per head,
/// the heads side by side, then the output projection.
Var attention(const Var& x, const BlockWeights& w, std::int64_t NH) {
  const std::int64_t B = x.shape()[0], T = x.shape()[1], C = x.shape()[2], hs = C / NH;
  const Var qkv = nn::linear(x, w.qkvw, w.qkvb);  // [B, T, 3C]
  // [(q|k|v), B, NH, T, hs]: one copy; q, k and v are its three slices (shared, not copied).
  const Var heads = ad::permute(ad::reshape(qkv, {B, T, 3, NH, hs}), {2, 0, 3, 1, 4});
  nn::SdpaOptions causal;
  causal.is_causal = true;
  const Var y = nn::scaled_dot_product_attention(ad::select(heads, 0, 0), ad::select(heads, 0, 1),
                                                 ad::select(heads, 0, 2), causal);  // [B, NH, T, hs]
  const Var merged = ad::reshape(ad::permute(y, {0, 2, 1, 3}), {B, T, C});
  return nn::linear(merged, w.attprojw, w.attprojb);
}

/// The MLP over x [B, T, C]: gelu_tanh(x Wfc^T + bfc) Wfcproj^T + bfcproj (GPT-2's tanh GELU).
Var mlp(const Var& x, const BlockWeights& w) {
  return nn::linear(weft::gelu_tanh(nn::linear(x, w.fcw, w.fcb)), w.fcprojw, w.fcprojb);
}

/// One transformer block (pre-LayerNorm, residual connections): [B, T, C] -> [B, T, C].
Var block(const Var& x, const BlockWeights& w, std::int64_t NH) {
  const Var r = x + attention(nn::layer_norm(x, w.ln1w, w.ln1b, kLayerNormEps), w, NH);
  return r + mlp(nn::layer_norm(r, w.ln2w, w.ln2b, kLayerNormEps), w);
}

}  // namespace

Var forward_logits(const Weights& w, const Config& c, const Tensor<std::int32_t>& tokens) {
  const std::int64_t T = tokens.size(1);
  if (T > c.max_seq_len)
    throw std::invalid_argument("forward: sequences of " + std::to_string(T) + " tokens exceed the model's " +
                                std::to_string(c.max_seq_len) + " positions");
  Var x = weft::embedding(w.wte, tokens) + ad::narrow(w.wpe, 0, 0, T);  // [B, T, C]
  for (const BlockWeights& b : w.blocks) x = block(x, b, c.num_heads);
  // The LM head is wte, tied: logits = lnf(x) wte^T over the real vocabulary.
  return nn::linear(nn::layer_norm(x, w.lnfw, w.lnfb, kLayerNormEps), w.wte);
}

Model::Model(Checkpoint checkpoint, std::int64_t shards)
    : config_(checkpoint.config),
      parameters_(padded_parameters(std::move(checkpoint.parameters), config_, shards)),
      gradients_(weft::zeros<float>({parameters_.numel()})),
      params_(point_parameters(parameters_.narrow(0, 0, parameter_count(config_)), config_)),
      grads_(point_parameters(gradients_.narrow(0, 0, parameter_count(config_)), config_)),
      weights_(share_weights(parameters_, gradients_, config_)) {}

float Model::forward(const Tensor<std::int32_t>& inputs, const Tensor<std::int32_t>& targets) {
  logits_ = Var();  // the last step's logits go before this step's are made
  loss_ = Var();
  if (!targets.defined()) {
    const ad::NoGrad inference;
    logits_ = forward_logits(weights_, config_, inputs);
    return 0;
  }
  logits_ = forward_logits(weights_, config_, inputs);
  loss_ = nn::cross_entropy(logits_, targets);  // the mean over the B T rows
  return loss_.value().item();
}

void Model::backward() {
  if (!loss_.defined()) throw std::logic_error("backward: the last forward had no targets");
  gradients_ = 0.0f;  // one pass: the backward adds into each parameter's part of the buffer
  loss_.backward();
  loss_ = Var();
}

}  // namespace gpt2
