// SPDX-License-Identifier: MIT
/// @file The demo's model (demo_mlp.hpp): forward pass, loss and gradients, each pointwise chain one fused kernel.

#include "demo_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace demo {

using weft::Tensor;

Dataset make_dataset(std::int64_t batch, std::int64_t in, std::int64_t classes) {
  Dataset d;
  Tensor<float> raw = weft::randn<float>({batch, in}, 1);
  d.x = weft::layer_norm(raw, weft::ones<float>({in}), weft::zeros<float>({in}));  // normalize features
  Tensor<float> scores = weft::matmul(d.x, weft::randn<float>({in, classes}, 2));
  d.labels.resize(static_cast<std::size_t>(batch));
  std::vector<float> onehot_values(static_cast<std::size_t>(batch * classes), 0.0f);
  std::vector<float> s = scores.to_vector();
  for (std::int64_t i = 0; i < batch; ++i) {
    const float* row = s.data() + i * classes;
    const auto label = std::size_t(std::max_element(row, row + classes) - row);
    d.labels[std::size_t(i)] = int(label);
    onehot_values[std::size_t(i * classes) + label] = 1.0f;
  }
  d.onehot = weft::from_vector(onehot_values, {batch, classes});
  return d;
}

Mlp init_mlp(std::int64_t in, std::int64_t hidden, std::int64_t classes) {
  Mlp net{weft::randn<float>({in, hidden}, 3), weft::zeros<float>({hidden}), weft::randn<float>({hidden, classes}, 4),
          weft::zeros<float>({classes})};
  net.W1 *= std::sqrt(2.0 / double(in));  // He initialization
  net.W2 *= std::sqrt(1.0 / double(hidden));
  return net;
}

Activations forward(const Mlp& net, const Tensor<float>& x) {
  Activations a;
  a.z1 = weft::matmul(x, net.W1);                 // [B, H], a GEMM
  a.h = weft::eval(weft::gelu(a.z1 + net.b1));    // bias + GELU: one fused kernel, b1 broadcast over rows
  a.logits = weft::matmul(a.h, net.W2);           // [B, C]
  a.logits += net.b2;                             // in place
  a.probs = weft::softmax(a.logits, -1);
  return a;
}

// One reduction reads onehot * log(probs) without storing it.
double cross_entropy(const Tensor<float>& probs, const Tensor<float>& onehot) {
  return -weft::sum(onehot * weft::log(probs)).item() / double(probs.size(0));
}

/// gelu'(z) = Phi(z) + z phi(z) = (1 + erf(z / sqrt 2)) / 2 + z exp(-z^2 / 2) / sqrt(2 pi)
template <class Z>
auto gelu_grad(const Z& z) {
  constexpr double inv_sqrt2 = 1 / std::numbers::sqrt2, inv_sqrt_2pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
  return 0.5 * (1.0 + weft::erf(z * inv_sqrt2)) + z * weft::exp(-0.5 * z * z) * inv_sqrt_2pi;
}

Mlp backward(const Mlp& net, const Tensor<float>& x, const Tensor<float>& onehot, const Activations& a) {
  const double inv_batch = 1.0 / double(x.size(0));
  Tensor<float> dlogits = weft::eval((a.probs - onehot) * inv_batch);  // [B, C]
  Mlp g;
  g.W2 = weft::matmul(a.h.transpose(0, 1), dlogits);
  g.b2 = weft::sum(dlogits, 0);
  Tensor<float> dz1 = weft::eval(weft::matmul(dlogits, net.W2.transpose(0, 1)) * gelu_grad(a.z1));  // one kernel
  g.W1 = weft::matmul(x.transpose(0, 1), dz1);
  g.b1 = weft::sum(dz1, 0);
  return g;
}

double accuracy(const Tensor<float>& logits, const std::vector<int>& labels) {
  std::vector<float> l = logits.to_vector();
  const std::int64_t classes = logits.size(1);
  int right = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const float* row = l.data() + i * std::size_t(classes);
    right += int(std::max_element(row, row + classes) - row) == labels[i];
  }
  return double(right) / double(labels.size());
}

}  // namespace demo
