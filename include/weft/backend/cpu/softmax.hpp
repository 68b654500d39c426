// SPDX-License-Identifier: MIT
/// @file The CPU softmax / log_softmax executor: three SIMD passes per row (max, sum of exp, write), OpenMP over rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "weft/backend/cpu/reduce.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// softmax (or log_softmax with kLog) of a contiguous tensor viewed as
/// (outer, n, inner), over the middle dim:
///   m = max_i x_i;  s = sum_i exp(x_i - m);
///   softmax = exp(x_i - m) / s;  log_softmax = (x_i - m) - log s.
/// Subtracting the max keeps exp from overflowing; a row of only -inf has
/// m = -inf and -inf - -inf = NaN, so it gives NaN like PyTorch.
/// With inner == 1 each row is contiguous and packets run along it; with
/// inner > 1 a packet holds `W` neighbouring rows (columns) at once.
template <bool kLog, class T>
void run_softmax(const T* x, T* y, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = math_t<T>;
  constexpr int W = std::max<int>(1, simd::kBytes / int(sizeof(Acc)));
  using P = simd::Vec<Acc, W>;
  const Acc neg_inf = -std::numeric_limits<Acc>::infinity();
  auto vmax = [](auto a, auto b) {
    using math::max;
    return max(a, b);
  };
  auto add = [](auto a, auto b) { return a + b; };
  auto identity = [](auto v) { return v; };
  // The value written for input v given the row's m and s (packets or scalars).
  auto result = [](auto v, auto m, auto s) {
    using math::exp;
    using math::log;
    if constexpr (kLog) return decltype(v)((v - m) - log(s));  // not v - (m + log s): m + log s would round at |m|
    else return decltype(v)(exp(v - m) / s);
  };

  const int threads = threads_for(outer * n * inner);
  if (inner == 1) {
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
    for (std::int64_t r = 0; r < outer; ++r) {
      const T* xr = x + r * n;
      T* yr = y + r * n;
      const Acc m = fold_packets<Acc, W, true>(xr, n, 1, neg_inf, identity, vmax)[0];
      auto exp_shifted = [m](auto v) {
        using math::exp;
        return exp(v - splat<decltype(v)>(m));
      };
      const Acc s = fold_packets<Acc, W, true>(xr, n, 1, Acc(0), exp_shifted, add)[0];
      const P mp = P::broadcast(m), sp = P::broadcast(s);
      std::int64_t j = 0;
      for (; j + W <= n; j += W) store_packet<T, W>(yr + j, 1, result(load_packet<Acc, W>(xr + j, 1), mp, sp), false);
      for (; j < n; ++j) yr[j] = T(result(Acc(xr[j]), m, s));
    }
    return;
  }

  if (inner < W) {  // narrow rows: one column at a time
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
    for (std::int64_t u = 0; u < outer * inner; ++u) {
      const T* xc = x + (u / inner) * n * inner + u % inner;
      T* yc = y + (u / inner) * n * inner + u % inner;
      Acc m = neg_inf, part = 0;
      for (std::int64_t i = 0; i < n; ++i) m = vmax(m, Acc(xc[i * inner]));
      Cascade<Acc> blocks;  // pairwise over blocks of kReduceBlockSteps terms
      for (std::int64_t i = 0; i < n; ++i) {
        part += math::exp(Acc(xc[i * inner]) - m);
        if ((i + 1) % kReduceBlockSteps == 0) blocks.push(part, add), part = 0;
      }
      const Acc s = blocks.total(part, add);
      for (std::int64_t i = 0; i < n; ++i) yc[i * inner] = T(result(Acc(xc[i * inner]), m, s));
    }
    return;
  }

  // W columns per unit; the last block of a row slides left to stay inside
  // it and writes only its own columns.
  const std::int64_t blocks = (inner + W - 1) / W;
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t u = 0; u < outer * blocks; ++u) {
    const std::int64_t o = u / blocks, c0 = u % blocks * W, at = std::min(c0, inner - W);
    const T* xc = x + o * n * inner + at;
    T* yc = y + o * n * inner + at;
    const P m = fold_packets<Acc, W, false>(xc, n, inner, neg_inf, identity, vmax);
    auto exp_shifted = [m](auto v) {
      using math::exp;
      return exp(v - m);
    };
    const P s = fold_packets<Acc, W, false>(xc, n, inner, Acc(0), exp_shifted, add);
    for (std::int64_t i = 0; i < n; ++i) {
      P v = result(load_packet<Acc, W>(xc + i * inner, 1), m, s);
      if (at == c0) {
        store_packet<T, W>(yc + i * inner, 1, v, false);
      } else {
        for (std::int64_t l = c0 - at; l < W; ++l) yc[i * inner + l] = T(v[int(l)]);
      }
    }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
