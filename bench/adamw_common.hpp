// SPDX-License-Identifier: MIT
/// @file AdamW pieces shared by bench/foreach and bench/optim: hyperparameters, the transformer-like
/// parameter list, and torch's _multi_tensor_adamw written as single-op foreach passes (the
/// unfused baseline).
#pragma once

#include "bench_common.hpp"

namespace weft_bench {

using weft::TensorList;

/// AdamW's hyperparameters at one step; torch passes the bias corrections to
/// its foreach ops as Python numbers, so they are numbers here too.
struct AdamWHyper {
  double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 1e-2;
  int step = 10;
  double step_size() const { return lr / (1 - std::pow(b1, step)); }     // lr / bc1
  double bc2_sqrt() const { return std::sqrt(1 - std::pow(b2, step)); }  // sqrt(bc2)
  double decay() const { return 1 - lr * wd; }                           // decoupled weight decay
};

/// One variant's optimizer state: parameters and both moments.
struct AdamState {
  TensorList<float> p, m, v;
};

/// Temporaries of the op-by-op chains, allocated once (torch allocates them
/// every step; preallocating only favours the chains).
struct ChainTemps {
  TensorList<float> root, denom;
};

/// A list with one tensor per shape, values in [lo, hi) hashed from `seed`
/// and the tensor's index (first-touched by the threads that use them).
inline TensorList<float> make_list(const std::vector<weft::Shape>& shapes, std::uint64_t seed, float lo, float hi) {
  TensorList<float> list;
  for (std::size_t k = 0; k < shapes.size(); ++k)
    list.push_back(make_tensor<float>(shapes[k], seed * 1000003 + k, lo, hi));
  return list;
}

/// The same state for every variant: |m| <= 0.1 <= sqrt(v), so the step
/// stays small and the variants' rounding differences stay comparable.
inline AdamState make_state(const std::vector<weft::Shape>& shapes) {
  return {make_list(shapes, 1, -1.0f, 1.0f), make_list(shapes, 2, -0.1f, 0.1f), make_list(shapes, 3, 0.01f, 0.02f)};
}

/// The fused update: all three statements in ONE kernel, m1 and v1 computed
/// once per element. X is TensorList<float> (one foreach kernel over every
/// tensor) or Tensor<float> (one kernel for one tensor).
template <class X>
void adamw_fused(X& p, X& m, X& v, const X& g, const AdamWHyper& h) {
  auto m1 = h.b1 * m + (1 - h.b1) * g;
  auto v1 = h.b2 * v + (1 - h.b2) * g * g;
  weft::fuse(weft::assign(m, m1), weft::assign(v, v1),
             weft::assign(p, p * h.decay() - h.step_size() * (m1 / (weft::sqrt(v1) / h.bc2_sqrt() + h.eps))));
}

/// torch's _multi_tensor_adamw, one weft list statement per torch op.
/// `lerp`: torch >= 2.0 (m by _foreach_lerp_, the denominator in place, 8
/// passes); otherwise torch 1.13 (m by mul + add, denom a new list, 9 passes).
inline void adamw_chain(AdamState& s, const TensorList<float>& g, ChainTemps& t, const AdamWHyper& h, bool lerp) {
  s.p *= h.decay();                           // _foreach_mul_(params, 1 - lr * wd)
  if (lerp) {
    s.m += (1 - h.b1) * (g - s.m);            // _foreach_lerp_(exp_avgs, grads, 1 - b1)
  } else {
    s.m *= h.b1;                              // _foreach_mul_(exp_avgs, b1)
    s.m += (1 - h.b1) * g;                    // _foreach_add_(exp_avgs, grads, alpha=1 - b1)
  }
  s.v *= h.b2;                                // _foreach_mul_(exp_avg_sqs, b2)
  s.v += (1 - h.b2) * g * g;                  // _foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - b2)
  t.root = weft::sqrt(s.v);                   // _foreach_sqrt(exp_avg_sqs)
  t.root /= h.bc2_sqrt();                     // _foreach_div_(sqrt, bias_correction2_sqrt)
  TensorList<float>& denom = lerp ? t.root : t.denom;
  denom = t.root + h.eps;                     // 2.x: _foreach_add_(sqrt, eps); 1.13: denom = _foreach_add(sqrt, eps)
  s.p += -h.step_size() * (s.m / denom);      // _foreach_addcdiv_(params, exp_avgs, denom, -step_size)
}

/// Largest |x - y| over every element of two lists of equal shapes.
inline double max_abs_diff(const TensorList<float>& x, const TensorList<float>& y) {
  double d = 0;
  for (std::size_t k = 0; k < x.size(); ++k) {
    const std::vector<float> a = x[k].to_vector(), b = y[k].to_vector();  // host copies: any device
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(double(a[i]) - double(b[i])));
  }
  return d;
}
inline double max_abs_diff(const AdamState& a, const AdamState& b) {
  return std::max({max_abs_diff(a.p, b.p), max_abs_diff(a.m, b.m), max_abs_diff(a.v, b.v)});
}

/// The transformer-like list: `layers` blocks of 4 attention projections
/// (d x d), the MLP (d x 4d, 4d x d) and 6 vectors of d (layer norms,
/// output biases), then the final layer norm (2 x d).
inline std::vector<weft::Shape> transformer_shapes(int layers, std::int64_t d) {
  std::vector<weft::Shape> shapes;
  for (int l = 0; l < layers; ++l) {
    for (int i = 0; i < 4; ++i) shapes.push_back({d, d});
    shapes.push_back({d, 4 * d});
    shapes.push_back({4 * d, d});
    for (int i = 0; i < 6; ++i) shapes.push_back({d});
  }
  shapes.push_back({d});
  shapes.push_back({d});
  return shapes;
}

inline std::string million(std::int64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fM", double(n) / 1e6);
  return buf;
}

}  // namespace weft_bench
