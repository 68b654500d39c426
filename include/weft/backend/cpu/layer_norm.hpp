// SPDX-License-Identifier: MIT
/// @file The CPU layer_norm executor: per row, SIMD passes for the mean, the (biased) variance and the affine write; OpenMP over rows.
#pragma once

#include <cmath>
#include <cstdint>

#include "weft/backend/cpu/reduce.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// y = (x - mean) / sqrt(var + eps) * w + b over each contiguous row of n
/// elements: mean = sum x / n, var = sum (x - mean)^2 / n (biased, like
/// PyTorch). Two passes for the variance rather than E[x^2] - mean^2, which
/// cancels catastrophically when |mean| >> std. `b` may be null (no bias).
template <class T>
void run_layer_norm(const T* x, const T* w, const T* b, T* y, std::int64_t rows, std::int64_t n, double eps) {
  using Acc = math_t<T>;
  constexpr int W = std::max<int>(1, simd::kBytes / int(sizeof(Acc)));
  using P = simd::Vec<Acc, W>;
  auto add = [](auto u, auto v) { return u + v; };
  auto identity = [](auto v) { return v; };
  const int threads = threads_for(rows * n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * n;
    T* yr = y + r * n;
    const Acc mean = fold_packets<Acc, W, true>(xr, n, 1, Acc(0), identity, add)[0] / Acc(n);
    auto squared_deviation = [mean](auto v) {
      auto d = v - splat<decltype(v)>(mean);
      return decltype(v)(d * d);
    };
    const Acc var = fold_packets<Acc, W, true>(xr, n, 1, Acc(0), squared_deviation, add)[0] / Acc(n);
    const Acc rstd = Acc(1) / std::sqrt(var + Acc(eps));
    const P mp = P::broadcast(mean), rp = P::broadcast(rstd);
    std::int64_t j = 0;
    for (; j + W <= n; j += W) {
      P v = (load_packet<Acc, W>(xr + j, 1) - mp) * rp * load_packet<Acc, W>(w + j, 1);
      if (b) v = v + load_packet<Acc, W>(b + j, 1);
      store_packet<T, W>(yr + j, 1, v, false);
    }
    for (; j < n; ++j) yr[j] = T((Acc(xr[j]) - mean) * rstd * Acc(w[j]) + (b ? Acc(b[j]) : Acc(0)));
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
