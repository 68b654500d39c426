// SPDX-License-Identifier: MIT
/// @file The math attention backend: matmul + softmax + matmul in a chosen precision, materializing the L x S weights (the reference).
#pragma once

#include <limits>

#include "weft/dense/matmul.hpp"
#include "weft/dense/reduce.hpp"
#include "weft/dense/softmax.hpp"
#include "weft/nn/sdpa_dropout.hpp"
#include "weft/nn/sdpa_problem.hpp"

namespace weft::nn::detail {

/// k or v with each of its H heads repeated `group` times: (batch..., H, S, X) -> (batch..., Hq, S, X).
template <class U>
Tensor<U> repeat_heads(const Tensor<U>& t, const SdpaShape& s) {
  if (s.group == 1) return t;
  const int r = t.dim();
  Shape grouped = t.shape();
  grouped.insert(r - 2, s.group);  // (batch..., H, group, S, X)
  return t.unsqueeze(r - 2).expand(grouped).reshape(s.with_heads(s.Hq, t.shape()[r - 2], t.shape()[r - 1]));
}

/// The sum over each group of query heads: (batch..., Hq, S, X) -> (batch..., H, S, X).
template <class U>
Tensor<U> sum_head_groups(const Tensor<U>& t, const SdpaShape& s) {
  if (s.group == 1) return t;
  const int r = t.dim();
  Shape grouped = s.with_heads(s.H, t.shape()[r - 2], t.shape()[r - 1]);
  grouped.insert(r - 2, s.group);
  return weft::sum(t.view(grouped), r - 2);
}

/// What the math forward pass keeps for its backward pass, all in precision U.
template <class U>
struct SdpaMathState {
  Tensor<U> q, k, v;   // k and v with repeated heads (GQA)
  Tensor<U> p;         // softmax weights (batch..., Hq, L, S); 0 on fully masked rows
  Tensor<U> keep;      // dropout factors (0 or 1 / (1 - p)); undefined without dropout
  Tensor<U> out, lse;  // lse = +inf on fully masked rows
};

/// scores = q k^T scale + bias; p = softmax(scores); out = (p * keep) v, every step rounded to U.
template <class U, class T>
SdpaMathState<U> sdpa_math_forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const SdpaShape& s,
                                   const AttnMask& mask) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  SdpaMathState<U> st;
  st.q = eval(cast<U>(q));
  st.k = repeat_heads(eval(cast<U>(k)), s);
  st.v = repeat_heads(eval(cast<U>(v)), s);
  Tensor<U> scores = matmul(st.q, st.k.transpose(-2, -1));
  scores = scores * s.scale;
  if (s.causal) {
    scores = scores + weft::detail::generate<U>(Shape{s.L, s.S}, Device::cpu(), [&s](std::int64_t f) {
               return f % s.S <= f / s.S + s.causal_offset ? U(0) : U(-inf);
             });
  } else if (mask_rank(mask) >= 0) {
    scores = scores + sdpa_bias<U>(mask, s).keep;
  }
  const Tensor<U> m = amax(scores, -1, true);
  // A fully masked row has max -inf and no weights: 0 rather than softmax's NaN.
  st.p = eval(where(m == -inf, 0.0, softmax(scores, -1)));
  st.lse = eval(where(m == -inf, inf, m + log(weft::sum(exp(scores - m), -1, true)))).squeeze(-1);
  const SdpaDropout dropout(s.dropout_p, s.seed);
  Tensor<U> weights = st.p;
  if (dropout.active()) {
    st.keep = weft::detail::generate<U>(s.scores_shape(), Device::cpu(), [&dropout](std::int64_t f) {
      U x;
      dropout.factors(std::uint64_t(f), 1, &x);
      return x;
    });
    weights = eval(st.p * st.keep);
  }
  st.out = matmul(weights, st.v);
  return st;
}

/// Gradients in precision U (dk, dv summed over each group of query heads).
template <class U>
struct SdpaMathGradients {
  Tensor<U> dq, dk, dv;
};

/// dV = (p keep)^T dO;  dP = (dO V^T) keep;  dS = p (dP - rowsum(dP p));  dQ = dS K scale;  dK = dS^T Q scale.
template <class U, class T>
SdpaMathGradients<U> sdpa_math_backward(const Tensor<T>& dout, const SdpaMathState<U>& st, const SdpaShape& s) {
  const Tensor<U> dO = eval(cast<U>(dout));
  const Tensor<U> weights = st.keep.defined() ? eval(st.p * st.keep) : st.p;
  SdpaMathGradients<U> g;
  g.dv = sum_head_groups(matmul(weights.transpose(-2, -1), dO), s);
  Tensor<U> dp = matmul(dO, st.v.transpose(-2, -1));
  if (st.keep.defined()) dp = dp * st.keep;
  const Tensor<U> ds = eval(st.p * (dp - weft::sum(dp * st.p, -1, true)));
  g.dq = eval(matmul(ds, st.k) * s.scale);
  g.dk = sum_head_groups(eval(matmul(ds.transpose(-2, -1), st.q) * s.scale), s);
  return g;
}

}  // namespace weft::nn::detail
