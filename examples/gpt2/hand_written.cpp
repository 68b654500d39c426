// SPDX-License-Identifier: MIT
/// @file GPT-2's forward and hand-written backward passes (hand_written.hpp). Every linear layer is one GEMM that
/// reads the weight transposed in place (y = x W^T + b, the bias in its epilogue); the forward runs the same statements
/// as autograd's model (model.cpp), so that `gpt2 check-backward` compares the two backwards on the same activations.

#include "hand_written.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace gpt2 {

using weft::matmul;

namespace {

/// W^T of a [out, in] weight: a transposed view that matmul reads in place (no copy).
TensorView<const float> transposed(const TensorView<float>& w) { return w.transpose(0, 1); }

/// Head `i` of q, k, v (i = 0, 1, 2) in qkv [B T, 3C], as a [B, NH, T, hs] view: the layout attention reads.
TensorView<const float> head_major(const Tensor<float>& qkv, std::int64_t B, std::int64_t T, std::int64_t NH, int i) {
  const std::int64_t hs = qkv.size(1) / (3 * NH);
  return qkv.view({B, T, 3, NH, hs}).select(2, i).permute({0, 2, 1, 3});
}

/// The backward of a linear layer y = x W^T + b: writes dW = dy^T x and db = the sum of dy's rows
/// into the gradient views and returns dx = dy W. Three GEMM-shaped passes, the transposes read in
/// place.
Tensor<float> linear_backward(const TensorView<const float>& dy, const TensorView<const float>& x,
                              const TensorView<const float>& w, TensorView<float> dw, TensorView<float> db) {
  dw = matmul(dy.transpose(0, 1), x);
  db = weft::sum(dy, 0);
  return matmul(dy, w);
}

}  // namespace

HandWrittenModel::HandWrittenModel(Checkpoint checkpoint, std::int64_t shards)
    : config_(checkpoint.config),
      parameters_(padded_parameters(std::move(checkpoint.parameters), config_, shards)),
      gradients_(weft::zeros<float>({parameters_.numel()})),
      params_(point_parameters(parameters_.narrow(0, 0, parameter_count(config_)), config_)),
      grads_(point_parameters(gradients_.narrow(0, 0, parameter_count(config_)), config_)) {}

float HandWrittenModel::forward(const Tensor<std::int32_t>& inputs, const Tensor<std::int32_t>& targets) {
  const Config& c = config_;
  const std::int64_t B = inputs.size(0), T = inputs.size(1), C = c.channels, NH = c.num_heads, hs = C / NH;
  if (T > c.max_seq_len)
    throw std::invalid_argument("forward: sequences of " + std::to_string(T) + " tokens exceed the model's " +
                                std::to_string(c.max_seq_len) + " positions");
  Activations& a = acts_;
  a.batch = B;
  a.seq_len = T;
  a.inputs = inputs.clone();
  a.targets = targets.defined() ? targets.clone() : Tensor<std::int32_t>();
  a.blocks.resize(std::size_t(c.num_layers));

  // x = wte[inputs] + wpe[0..T), as [B T, C] rows (every activation is rows: one GEMM per linear layer).
  Tensor<float> x = weft::embedding(params_.wte.narrow(0, 0, c.vocab_size), a.inputs.view({B * T}));
  x.view({B, T, C}) += params_.wpe.narrow(0, 0, T);

  weft::nn::SdpaOptions causal;
  causal.is_causal = true;
  for (std::int64_t l = 0; l < c.num_layers; ++l) {
    BlockActivations& k = a.blocks[std::size_t(l)];
    k.input = std::move(x);
    k.ln1 = weft::layer_norm(k.input, params_.ln1w.select(0, l), params_.ln1b.select(0, l), kLayerNormEps);
    k.qkv = matmul(k.ln1, transposed(params_.qkvw.select(0, l))) + params_.qkvb.select(0, l);  // bias in the epilogue

    // q, k, v: [B, NH, T, hs] views of qkv's thirds; attention reads them in place.
    auto attn = weft::nn::sdpa_forward(head_major(k.qkv, B, T, NH, 0), head_major(k.qkv, B, T, NH, 1),
                                       head_major(k.qkv, B, T, NH, 2), causal);
    k.attention = std::move(attn.out);
    k.lse = std::move(attn.lse);
    k.atty = weft::empty<float>({B * T, C});
    k.atty.view({B, T, NH, hs}) = k.attention.permute({0, 2, 1, 3});

    // residual2 = input + (atty W_proj^T + b_proj): the GEMM with the bias, then the residual's pass.
    k.residual2 = weft::eval(k.input + Tensor<float>(matmul(k.atty, transposed(params_.attprojw.select(0, l))) +
                                                     params_.attprojb.select(0, l)));
    k.ln2 = weft::layer_norm(k.residual2, params_.ln2w.select(0, l), params_.ln2b.select(0, l), kLayerNormEps);
    k.fch = matmul(k.ln2, transposed(params_.fcw.select(0, l))) + params_.fcb.select(0, l);
    k.fch_gelu = weft::eval(weft::gelu_tanh(k.fch));
    x = weft::eval(k.residual2 + Tensor<float>(matmul(k.fch_gelu, transposed(params_.fcprojw.select(0, l))) +
                                               params_.fcprojb.select(0, l)));
  }
  a.residual = std::move(x);
  a.lnf = weft::layer_norm(a.residual, params_.lnfw, params_.lnfb, kLayerNormEps);
  // logits = lnf wte^T over the real vocabulary (wte's first V rows).
  a.logits = matmul(a.lnf, transposed(params_.wte.narrow(0, 0, c.vocab_size)));
  if (!a.targets.defined()) return 0;
  return weft::nn::cross_entropy(a.logits.narrow(1, 0, c.vocab_size), a.targets.view({B * T})).item();
}

void HandWrittenModel::backward() {
  const Config& c = config_;
  Activations& a = acts_;
  if (!a.targets.defined()) throw std::logic_error("backward: the last forward had no targets");
  const std::int64_t B = a.batch, T = a.seq_len, C = c.channels, NH = c.num_heads, hs = C / NH, V = c.vocab_size;
  // Every gradient below is written whole, except wte's (the LM head's product, then the embedding's
  // index_add) and wpe's first T rows: zero only what nobody writes.
  grads_.wte.narrow(0, V, c.padded_vocab_size - V) = 0.0f;
  grads_.wpe.narrow(0, T, c.max_seq_len - T) = 0.0f;

  // The loss's gradient over the real vocabulary: (softmax(logits) - onehot(target)) / (B T).
  const Tensor<float> dlogits =
      weft::nn::cross_entropy_backward(weft::ones<float>({}), a.logits.narrow(1, 0, V), a.targets.view({B * T}));
  // logits = lnf wte^T: d lnf = dlogits wte, d wte += dlogits^T lnf (rows from V on stay zero).
  Tensor<float> dx = matmul(dlogits, params_.wte.narrow(0, 0, V));
  grads_.wte.narrow(0, 0, V) = matmul(dlogits.transpose(0, 1), a.lnf);

  auto lnf = weft::nn::layer_norm_backward(dx, a.residual, params_.lnfw, kLayerNormEps);
  grads_.lnfw = lnf.dweight;
  grads_.lnfb = lnf.dbias;
  dx = std::move(lnf.dx);  // d residual stream, [B T, C]

  weft::nn::SdpaOptions causal;
  causal.is_causal = true;
  for (std::int64_t l = c.num_layers - 1; l >= 0; --l) {
    const BlockActivations& k = a.blocks[std::size_t(l)];
    auto layer = [l](const TensorView<float>& stacked) { return stacked.select(0, l); };
    // x_out = residual2 + fch_gelu W_fcproj^T + b; d fch = (dx W_fcproj) * gelu'(fch), one fused pass.
    const Tensor<float> dfch_gelu = linear_backward(dx, k.fch_gelu, layer(params_.fcprojw), layer(grads_.fcprojw),
                                                    layer(grads_.fcprojb));
    const Tensor<float> dfch = weft::eval(weft::nn::gelu_tanh_backward(dfch_gelu, k.fch));
    const Tensor<float> dln2 = linear_backward(dfch, k.ln2, layer(params_.fcw), layer(grads_.fcw), layer(grads_.fcb));
    auto ln2 = weft::nn::layer_norm_backward(dln2, k.residual2, layer(params_.ln2w), kLayerNormEps);
    layer(grads_.ln2w) = ln2.dweight;
    layer(grads_.ln2b) = ln2.dbias;
    const Tensor<float> dresidual2 = weft::eval(dx + ln2.dx);

    // residual2 = input + atty W_attproj^T + b
    const Tensor<float> datty = linear_backward(dresidual2, k.atty, layer(params_.attprojw), layer(grads_.attprojw),
                                                layer(grads_.attprojb));  // [B T, C]
    auto g = weft::nn::sdpa_backward(datty.view({B, T, NH, hs}).permute({0, 2, 1, 3}), head_major(k.qkv, B, T, NH, 0),
                                     head_major(k.qkv, B, T, NH, 1), head_major(k.qkv, B, T, NH, 2), k.attention,
                                     k.lse, causal);
    // d qkv [B T, 3C]: the three gradients back in qkv's layout [B, T, (q|k|v), NH, hs], one pass.
    const TensorView<const float> dqkv =
        weft::stack({g.dq.permute({0, 2, 1, 3}), g.dk.permute({0, 2, 1, 3}), g.dv.permute({0, 2, 1, 3})}, 2)
            .view({B * T, 3 * C});

    // qkv = ln1 W_qkv^T + b
    const Tensor<float> dln1 = linear_backward(dqkv, k.ln1, layer(params_.qkvw), layer(grads_.qkvw), layer(grads_.qkvb));
    auto ln1 = weft::nn::layer_norm_backward(dln1, k.input, layer(params_.ln1w), kLayerNormEps);
    layer(grads_.ln1w) = ln1.dweight;
    layer(grads_.ln1b) = ln1.dbias;
    dx = weft::eval(dresidual2 + ln1.dx);
  }

  // x = wte[inputs] + wpe[0..T): the position rows sum over the batch, the token rows scatter-add.
  grads_.wpe.narrow(0, 0, T) = weft::sum(dx.view({B, T, C}), 0);
  weft::index_add(grads_.wte, 0, a.inputs.view({B * T}), dx);
}

}  // namespace gpt2
