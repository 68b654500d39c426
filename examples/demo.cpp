// SPDX-License-Identifier: MIT
/// @file weft in one program: a tiny MLP classifier trained with fused kernels and a fused optimizer step.
//
// What it shows:
//   1. forward  logits = gelu(x @ W1 + b1) @ W2 + b2: bias + GELU is ONE
//      pass over the hidden activations, not two; the cross-entropy loss is
//      one reduction that reads onehot * log(softmax(logits)) without
//      storing the product;
//   2. backward: GELU's derivative times the incoming gradient is one kernel
//      (erf, exp and a few multiplies, no temporaries);
//   3. AdamW (weft::optim::AdamW, matching torch.optim.AdamW): ONE kernel
//      updates all four parameter tensors and their two moment buffers;
//   4. a timing table: that step against the same update written op by op,
//      one kernel per operation (what an eager framework runs).
// Every fused kernel prints one line the first time it runs (WEFT_LOGS=fusion,
// which scripts/demo sets; the demo turns it on itself when the variable is
// unset).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <vector>

#include <weft/weft.hpp>

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using weft::Tensor;

/// Prints a line to stdout right away, so it interleaves in order with the
/// fusion log on stderr.
__attribute__((format(printf, 1, 2))) void say(const char* format, ...) {
  std::va_list args;
  va_start(args, format);
  std::vprintf(format, args);
  va_end(args);
  std::fflush(stdout);
}

// ---------------------------------------------------------------------------
// The model: logits = gelu(x @ W1 + b1) @ W2 + b2
// ---------------------------------------------------------------------------
struct Mlp {
  Tensor<float> W1, b1, W2, b2;
};

struct Activations {
  Tensor<float> z1, h, logits, probs;
};

Activations forward(const Mlp& net, const Tensor<float>& x) {
  Activations a;
  a.z1 = weft::matmul(x, net.W1);                 // [B, H], a GEMM
  a.h = weft::eval(weft::gelu(a.z1 + net.b1));    // bias + GELU: one fused kernel, b1 broadcast over rows
  a.logits = weft::matmul(a.h, net.W2);           // [B, C]
  a.logits += net.b2;                             // in place
  a.probs = weft::softmax(a.logits, -1);
  return a;
}

/// Cross-entropy against one-hot labels, averaged over the batch: one
/// reduction reads onehot * log(probs) without storing it.
double cross_entropy(const Tensor<float>& probs, const Tensor<float>& onehot) {
  return -weft::sum(onehot * weft::log(probs)).item() / double(probs.size(0));
}

/// gelu'(z) = Phi(z) + z phi(z) = (1 + erf(z / sqrt 2)) / 2 + z exp(-z^2 / 2) / sqrt(2 pi)
template <class Z>
auto gelu_grad(const Z& z) {
  constexpr double inv_sqrt2 = 1 / std::numbers::sqrt2, inv_sqrt_2pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;
  return 0.5 * (1.0 + weft::erf(z * inv_sqrt2)) + z * weft::exp(-0.5 * z * z) * inv_sqrt_2pi;
}

/// Gradients of the mean cross-entropy with respect to every parameter.
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

/// Fraction of rows whose largest logit is the label's.
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

// ---------------------------------------------------------------------------
// Timing: fused update vs the same update op by op
// ---------------------------------------------------------------------------
using Clock = std::chrono::steady_clock;

int threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

template <class F>
double median_ms(int reps, F&& f) {
  f();  // warm-up (and first touch)
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void print_timing_row(const char* name, int kernels, double ms, double bytes) {
  say("  %-26s %7d %10.3f %10.1f\n", name, kernels, ms, bytes / (ms * 1e-3) / 1e9);
}

void timing_table() {
  const std::int64_t n = std::int64_t(16) << 20;  // 16M parameters: 64 MB per fp32 tensor, beyond the caches
  const int reps = 9;
  weft::optim::AdamWOptions o;
  Tensor<float> p = weft::rand<float>({n}, 11), g = weft::rand<float>({n}, 12);
  weft::optim::AdamW opt(weft::TensorList<float>{p}, o);
  weft::TensorList<float> grads{g};

  say("\n4. timing: one AdamW step over %lld fp32 parameters, one kernel vs op by op\n", (long long)n);
  double fused = median_ms(reps, [&] { opt.step(grads); });
  // What an eager framework runs (torch's foreach AdamW, on one tensor): one kernel per line.
  Tensor<float> m = weft::zeros<float>({n}), v = weft::zeros<float>({n}), denom = weft::zeros<float>({n});
  const double b1 = o.betas.first, b2 = o.betas.second, t = 10;
  double eager = median_ms(reps, [&] {
    p *= 1 - o.lr * o.weight_decay;                          // decoupled weight decay
    m += (1 - b1) * (g - m);                                 // m.lerp_(g, 1 - b1)
    v *= b2;                                                 // v.mul_(b2)
    v += (1 - b2) * g * g;                                   // v.addcmul_(g, g, 1 - b2)
    denom = weft::sqrt(v) / std::sqrt(1 - std::pow(b2, t));  // sqrt(v) / sqrt(bc2) (two kernels in torch)
    denom += o.eps;
    p -= o.lr / (1 - std::pow(b1, t)) * m / denom;           // p.addcdiv_(m, denom, -lr / bc1)
  });

  // Bytes the step must move: read p, g, m, v; write p, m, v.
  const double bytes = 28.0 * double(n);
  say("\n  median of %d runs, %d thread(s)\n", reps, threads());
  say("  %-26s %7s %10s %10s\n", "update", "kernels", "ms", "GB/s*");
  print_timing_row("optim::AdamW.step", 1, fused, bytes);
  print_timing_row("op by op", 8, eager, bytes);
  say("  speedup of fusion: %.2fx\n", eager / fused);
  say("  * both rows count the 28 bytes per parameter the step must move; op by op moves ~80:\n"
      "    every kernel rereads and rewrites its operands.\n");
}

}  // namespace

int main() {
  if (!std::getenv("WEFT_LOGS")) weft::set_logs("fusion");

  // A classification task: the label of a point is the largest of its
  // scores under a fixed random "teacher" matrix.
  const std::int64_t batch = 512, in = 64, hidden = 256, classes = 8;
  say("weft demo: an MLP classifier (%lld -> %lld -> %lld classes), batch %lld, AdamW\n",
      (long long)in, (long long)hidden, (long long)classes, (long long)batch);
  if (weft::log_enabled(weft::LogComponent::fusion))
    say("each fused kernel is logged once, the first time it runs (WEFT_LOGS=fusion)\n\n");
  else
    say("(run with WEFT_LOGS=fusion to see each fused kernel)\n\n");
  say("0. data: random points, features normalized with layer_norm, labels from a random teacher\n");
  Tensor<float> raw = weft::randn<float>({batch, in}, 1);
  Tensor<float> x = weft::layer_norm(raw, weft::ones<float>({in}), weft::zeros<float>({in}));  // normalize features
  Tensor<float> scores = weft::matmul(x, weft::randn<float>({in, classes}, 2));
  std::vector<int> labels(static_cast<std::size_t>(batch));
  std::vector<float> onehot_values(static_cast<std::size_t>(batch * classes), 0.0f);
  std::vector<float> s = scores.to_vector();
  for (std::int64_t i = 0; i < batch; ++i) {
    const float* row = s.data() + i * classes;
    labels[std::size_t(i)] = int(std::max_element(row, row + classes) - row);
    onehot_values[std::size_t(i * classes + labels[std::size_t(i)])] = 1.0f;
  }
  Tensor<float> onehot = weft::from_vector(onehot_values, {batch, classes});

  Mlp net{weft::randn<float>({in, hidden}, 3), weft::zeros<float>({hidden}), weft::randn<float>({hidden, classes}, 4),
          weft::zeros<float>({classes})};
  net.W1 *= std::sqrt(2.0 / double(in));  // He initialization
  net.W2 *= std::sqrt(1.0 / double(hidden));
  // The optimizer holds the parameters as one list (sharing their storage) and its state.
  weft::optim::AdamW opt(weft::TensorList<float>{net.W1, net.b1, net.W2, net.b2}, {.lr = 1e-2, .weight_decay = 1e-4});

  const int steps = 60;
  double first_loss = 0, loss = 0;
  for (int step = 0; step < steps; ++step) {
    if (step == 0) say("1. forward: probs = softmax(gelu(x @ W1 + b1) @ W2 + b2); loss = cross-entropy\n");
    Activations a = forward(net, x);
    loss = cross_entropy(a.probs, onehot);
    if (step == 0) first_loss = loss;
    if (step == 0) say("2. backward: dz1 = (dlogits @ W2^T) * gelu'(z1)\n");
    Mlp g = backward(net, x, onehot, a);
    if (step == 0) {
      say("3. update: AdamW over the 4 parameters and their moments, ONE kernel (WEFT_LOGS=optim shows it)\n");
      weft::set_logs(std::getenv("WEFT_LOGS") ? std::getenv("WEFT_LOGS") : "fusion,optim");
    }
    opt.step(weft::TensorList<float>{g.W1, g.b1, g.W2, g.b2});
    if (step == 0 && !std::getenv("WEFT_LOGS")) weft::set_logs("fusion");
    if (step == 0 || (step + 1) % 15 == 0)
      say("   step %3d  loss %.4f  accuracy %5.1f%%\n", step + 1, loss, 100 * accuracy(a.logits, labels));
  }
  if (!(loss < first_loss)) {
    std::fprintf(stderr, "demo: the loss did not decrease (%g -> %g)\n", first_loss, loss);
    return 1;
  }

  timing_table();
  return 0;
}
