// SPDX-License-Identifier: MIT
/// @file The math attention backend: matmul + softmax + matmul in a chosen precision, materializing the L x S weights (the reference).
///
/// Built from the executor behind weft::matmul (Eigen's GEMM), called directly on dense buffers,
/// and plain loops for the scale, the mask, the softmax (its sum in double) and the dropout: the
/// arithmetic of composing the public ops, without a kernel per step (each costs every
/// translation unit that calls attention seconds of compile time: weft::softmax's row epilogue
/// took an attention call's file from 11 to 31 s at -O2). Precision U: every
/// step's result is rounded to U, as the composed ops would store it; 16-bit U multiplies and
/// normalizes in float and rounds once per step (like weft::matmul and weft::softmax).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "weft/backend/attention.hpp"
#include "weft/backend/gemm.hpp"
#include "weft/nn/sdpa_problem.hpp"

namespace weft::nn::detail {
inline namespace WEFT_BACKEND_ABI {

/// x rounded to U, held in U's compute type.
template <class U>
math_t<U> round_to(double x) {
  return math_t<U>(U(x));
}

/// c[b] = round_U(a[b] b[b]) for b < batch: a (n x k), b (k x m), c (n x m), all dense.
template <class U>
void math_gemm(const std::vector<math_t<U>>& a, const std::vector<math_t<U>>& b, std::vector<math_t<U>>& c,
               std::int64_t batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  c.assign(std::size_t(batch * n * m), math_t<U>(0));
  if (batch * n * m == 0 || k == 0) return;
  weft::detail::gemm_host_dense(a.data(), b.data(), c.data(), batch, n, k, m);
  if constexpr (is_16bit_float_v<U>)
    for (auto& x : c) x = round_to<U>(x);
}

/// The (batch, cols, rows) transpose of a dense (batch, rows, cols) buffer.
template <class A>
std::vector<A> transposed(const std::vector<A>& x, std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  std::vector<A> t(x.size());
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) t[std::size_t((b * cols + c) * rows + r)] = x[std::size_t((b * rows + r) * cols + c)];
  return t;
}

/// Rows of `src` as a dense (batch Hq, rows, cols) buffer rounded to U; key/value heads repeated
/// for their `group` query heads when `per_query_head`.
template <class U, class T>
std::vector<math_t<U>> math_operand(const SdpaRows<T>& src, const SdpaShape& s, std::int64_t rows,
                                    std::int64_t cols, bool per_query_head) {
  const std::int64_t heads = s.batches * s.Hq;
  std::vector<math_t<U>> out(std::size_t(heads * rows * cols));
  for (std::int64_t bh = 0; bh < heads; ++bh) {
    const std::int64_t from = per_query_head ? bh / s.Hq * s.H + bh % s.Hq / s.group : bh;
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c)
        out[std::size_t((bh * rows + r) * cols + c)] = round_to<U>(double(math_t<T>(src.row(from, r)[c * src.col_stride])));
  }
  return out;
}

/// What the math forward pass keeps for its backward pass: dense (batch Hq, ...) buffers in U's
/// compute type, holding values rounded to U.
template <class U>
struct SdpaMathState {
  using A = math_t<U>;
  std::vector<A> q, k, v;  // (batch Hq, L, E), (batch Hq, S, E), (batch Hq, S, Ev): heads repeated
  std::vector<A> p;        // softmax weights (batch Hq, L, S); 0 on rows that see no key
  std::vector<A> keep;     // dropout factors (0 or 1 / (1 - p)); empty without dropout
  std::vector<A> weights;  // p keep
  std::vector<A> out;      // (batch Hq, L, Ev)
  std::vector<A> lse;      // (batch Hq, L); +inf on rows that see no key
};

/// scores = q k^T scale + bias;  p = softmax(scores);  out = (p keep) v.
template <class U, class T>
SdpaMathState<U> sdpa_math_forward(const SdpaRows<T>& q, const SdpaRows<T>& k, const SdpaRows<T>& v,
                                   const SdpaRows<math_t<U>>& bias, const SdpaShape& s) {
  using A = math_t<U>;
  const A inf = std::numeric_limits<A>::infinity();
  const std::int64_t heads = s.batches * s.Hq, L = s.L, S = s.S;
  SdpaMathState<U> st;
  st.q = math_operand<U>(q, s, L, s.E, false);
  st.k = math_operand<U>(k, s, S, s.E, true);
  st.v = math_operand<U>(v, s, S, s.Ev, true);
  std::vector<A> scores;
  math_gemm<U>(st.q, transposed(st.k, heads, S, s.E), scores, heads, L, s.E, S);
  for (std::int64_t bh = 0; bh < heads; ++bh)
    for (std::int64_t i = 0; i < L; ++i)
      for (std::int64_t j = 0; j < S; ++j) {
        A& x = scores[std::size_t((bh * L + i) * S + j)];
        x = round_to<U>(double(x) * s.scale);
        if (s.causal && j > i + s.causal_offset) x = -inf;
        else if (bias.data) x = round_to<U>(double(x) + double(bias.row(bh, i)[j * bias.col_stride]));
      }
  st.p.resize(scores.size());
  st.lse.resize(std::size_t(heads * L));
  // softmax per row: p = exp(s - m) / sum exp(s - m), the sum in double, p rounded to U; a NaN
  // score gives a NaN row.
  for (std::int64_t row = 0; row < heads * L; ++row) {
    const A* sr = scores.data() + row * S;
    A* pr = st.p.data() + row * S;
    const A m = S ? *std::max_element(sr, sr + S) : -inf;
    if (m == -inf) {  // a row that sees no key: no weights (softmax would give NaN)
      std::fill(pr, pr + S, A(0));
      st.lse[std::size_t(row)] = inf;
      continue;
    }
    double sum = 0;
    for (std::int64_t j = 0; j < S; ++j) pr[j] = std::exp(sr[j] - m), sum += double(pr[j]);
    for (std::int64_t j = 0; j < S; ++j) pr[j] = round_to<U>(pr[j] / A(sum));
    st.lse[std::size_t(row)] = round_to<U>(double(m) + std::log(sum));
  }
  st.weights = st.p;
  const SdpaDropout dropout(s.dropout_p, s.seed);
  if (dropout.active()) {
    st.keep.resize(st.p.size());
    dropout.factors(0, std::int64_t(st.keep.size()), st.keep.data());
    for (std::size_t f = 0; f < st.p.size(); ++f) st.weights[f] = round_to<U>(st.p[f] * st.keep[f]);
  }
  math_gemm<U>(st.weights, st.v, st.out, heads, L, S, s.Ev);
  return st;
}

/// Gradients in U's compute type: dq (batch Hq, L, E), dk (batch H, S, E), dv (batch H, S, Ev)
/// (dk and dv summed over each group of query heads).
template <class U>
struct SdpaMathGradients {
  std::vector<math_t<U>> dq, dk, dv;
};

/// dV = (p keep)^T dO;  dP = (dO V^T) keep;  dS = p (dP - rowsum(dP p));  dQ = dS K scale;  dK = dS^T Q scale.
template <class U, class T>
SdpaMathGradients<U> sdpa_math_backward(const SdpaRows<T>& dout, const SdpaMathState<U>& st, const SdpaShape& s) {
  using A = math_t<U>;
  const std::int64_t heads = s.batches * s.Hq, L = s.L, S = s.S, E = s.E, Ev = s.Ev;
  const std::vector<A> dO = math_operand<U>(dout, s, L, Ev, false);
  SdpaMathGradients<U> g;
  std::vector<A> dv_all, dp, dk_all;
  math_gemm<U>(transposed(st.weights, heads, L, S), dO, dv_all, heads, S, L, Ev);
  math_gemm<U>(dO, transposed(st.v, heads, S, Ev), dp, heads, L, Ev, S);
  for (std::int64_t row = 0; row < heads * L; ++row) {
    A* d = dp.data() + row * S;
    const A* p = st.p.data() + row * S;
    if (!st.keep.empty())
      for (std::int64_t j = 0; j < S; ++j) d[j] = round_to<U>(d[j] * st.keep[std::size_t(row * S + j)]);
    A D = 0;
    for (std::int64_t j = 0; j < S; ++j) D += d[j] * p[j];
    D = round_to<U>(D);
    for (std::int64_t j = 0; j < S; ++j) d[j] = round_to<U>(p[j] * round_to<U>(d[j] - D));
  }
  math_gemm<U>(dp, st.k, g.dq, heads, L, S, E);
  math_gemm<U>(transposed(dp, heads, L, S), st.q, dk_all, heads, S, L, E);
  for (A& x : g.dq) x = round_to<U>(double(x) * s.scale);
  for (A& x : dk_all) x = round_to<U>(double(x) * s.scale);
  // Sum each group of query heads into its key/value head.
  auto sum_groups = [&](const std::vector<A>& all, std::int64_t cols) {
    std::vector<A> out(std::size_t(s.batches * s.H * S * cols), A(0));
    for (std::int64_t bh = 0; bh < heads; ++bh) {
      const std::int64_t kvh = bh / s.Hq * s.H + bh % s.Hq / s.group;
      for (std::int64_t x = 0; x < S * cols; ++x) out[std::size_t(kvh * S * cols + x)] += all[std::size_t(bh * S * cols + x)];
    }
    if (s.group > 1)
      for (A& x : out) x = round_to<U>(x);
    return out;
  };
  g.dk = sum_groups(dk_all, E);
  g.dv = sum_groups(dv_all, Ev);
  return g;
}

#if WEFT_LINKED_KERNELS  // core/config.hpp
// Compiled once in the weft_kernels library (src/kernels.cpp) for float and double, as the CPU
// flash attention beside them: the files of a program that links it call these (.cu files
// instantiate their own: their host code lives in another ABI namespace, core/config.hpp).
extern template SdpaMathState<float> sdpa_math_forward<float>(const SdpaRows<float>&, const SdpaRows<float>&,
                                                              const SdpaRows<float>&, const SdpaRows<float>&,
                                                              const SdpaShape&);
extern template SdpaMathState<double> sdpa_math_forward<double>(const SdpaRows<double>&, const SdpaRows<double>&,
                                                                const SdpaRows<double>&, const SdpaRows<double>&,
                                                                const SdpaShape&);
extern template SdpaMathGradients<float> sdpa_math_backward<float>(const SdpaRows<float>&, const SdpaMathState<float>&,
                                                                   const SdpaShape&);
extern template SdpaMathGradients<double> sdpa_math_backward<double>(const SdpaRows<double>&,
                                                                     const SdpaMathState<double>&, const SdpaShape&);
#endif

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::nn::detail
