// SPDX-License-Identifier: MIT
/// @file The demo's model: a one-hidden-layer MLP classifier, its data, forward pass, loss and gradients.
//
// The model's kernels (GEMMs, fused pointwise chains, reductions, softmax, layer_norm) compile in
// demo_mlp.cpp and the optimizer's in demo.cpp: two translation units, each well under the
// compile time one file of either would take.
#pragma once

#include <cstdint>
#include <vector>

#include <weft/weft.hpp>

namespace demo {

/// logits = gelu(x @ W1 + b1) @ W2 + b2
struct Mlp {
  weft::Tensor<float> W1, b1, W2, b2;
};

struct Activations {
  weft::Tensor<float> z1, h, logits, probs;
};

/// Random points, features normalized with layer_norm, and their labels under a random "teacher"
/// matrix (the largest of a point's scores), also as one-hot rows.
struct Dataset {
  weft::Tensor<float> x, onehot;
  std::vector<int> labels;
};

Dataset make_dataset(std::int64_t batch, std::int64_t in, std::int64_t classes);
/// He-initialized weights, zero biases.
Mlp init_mlp(std::int64_t in, std::int64_t hidden, std::int64_t classes);
Activations forward(const Mlp& net, const weft::Tensor<float>& x);
/// Cross-entropy against one-hot labels, averaged over the batch.
double cross_entropy(const weft::Tensor<float>& probs, const weft::Tensor<float>& onehot);
/// Gradients of the mean cross-entropy with respect to every parameter.
Mlp backward(const Mlp& net, const weft::Tensor<float>& x, const weft::Tensor<float>& onehot, const Activations& a);
/// Fraction of rows whose largest logit is the label's.
double accuracy(const weft::Tensor<float>& logits, const std::vector<int>& labels);

}  // namespace demo
