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
// unset). The model (1, 2) is in demo_mlp.cpp; this file trains it (3, 4).

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <weft/weft.hpp>

#include "demo_mlp.hpp"

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
  const demo::Dataset data = demo::make_dataset(batch, in, classes);
  demo::Mlp net = demo::init_mlp(in, hidden, classes);
  // The optimizer holds the parameters as one list (sharing their storage) and its state.
  weft::optim::AdamW opt(weft::TensorList<float>{net.W1, net.b1, net.W2, net.b2}, {.lr = 1e-2, .weight_decay = 1e-4});

  const int steps = 60;
  double first_loss = 0, loss = 0;
  for (int step = 0; step < steps; ++step) {
    if (step == 0) say("1. forward: probs = softmax(gelu(x @ W1 + b1) @ W2 + b2); loss = cross-entropy\n");
    demo::Activations a = demo::forward(net, data.x);
    loss = demo::cross_entropy(a.probs, data.onehot);
    if (step == 0) first_loss = loss;
    if (step == 0) say("2. backward: dz1 = (dlogits @ W2^T) * gelu'(z1)\n");
    demo::Mlp g = demo::backward(net, data.x, data.onehot, a);
    if (step == 0) {
      say("3. update: AdamW over the 4 parameters and their moments, ONE kernel (WEFT_LOGS=optim shows it)\n");
      weft::set_logs(std::getenv("WEFT_LOGS") ? std::getenv("WEFT_LOGS") : "fusion,optim");
    }
    opt.step(weft::TensorList<float>{g.W1, g.b1, g.W2, g.b2});
    if (step == 0 && !std::getenv("WEFT_LOGS")) weft::set_logs("fusion");
    if (step == 0 || (step + 1) % 15 == 0)
      say("   step %3d  loss %.4f  accuracy %5.1f%%\n", step + 1, loss, 100 * demo::accuracy(a.logits, data.labels));
  }
  if (!(loss < first_loss)) {
    std::fprintf(stderr, "demo: the loss did not decrease (%g -> %g)\n", first_loss, loss);
    return 1;
  }

  timing_table();
  return 0;
}
