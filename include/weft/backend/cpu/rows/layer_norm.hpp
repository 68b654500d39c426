// SPDX-License-Identifier: MIT
/// @file The CPU layer_norm backward executor: per row, SIMD passes for the mean and the (biased) variance, two row
/// sums and the gradient's write, with the weight and bias gradients summed per block of rows; OpenMP over rows. (The
/// forward is layer_norm's formula run as a row epilogue: ops/layer_norm.hpp.)
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/reduce/reduce.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// mean = sum x / n and rstd = 1 / sqrt(var + eps) of one contiguous row of n elements, var = sum
/// (x - mean)^2 / n (biased, like PyTorch). The mean in two passes (a rough sum, then the mean
/// deviation from it), the variance in a third rather than E[x^2] - mean^2, which cancels
/// catastrophically when |mean| >> std.
template <class T>
struct RowMoments {
  math_t<T> mean, rstd;
};
template <int W, class T>
RowMoments<T> row_mean_rstd(const T* x, std::int64_t n, double eps) {
  using Acc = math_t<T>;
  auto add = [](auto u, auto v) { return u + v; };
  auto identity = [](auto v) { return v; };
  // The sum's rounding errs by up to ~n u sum |x|, which, with |mean| >> std, moves every xhat by
  // that error times rstd (rows of 256 floats in [999, 1001]: 1975 of 2048 dx outside the double
  // reference's bound on an SSE2 build, whose 4 lanes sum longer runs). One more pass adds the
  // mean deviation from that rough mean: small terms, whose rounding is relative to the std.
  const Acc rough = fold_packets<Acc, W, true>(x, n, 1, Acc(0), identity, add)[0] / Acc(n);
  auto deviation = [rough](auto v) { return decltype(v)(v - splat<decltype(v)>(rough)); };
  const Acc mean = rough + fold_packets<Acc, W, true>(x, n, 1, Acc(0), deviation, add)[0] / Acc(n);
  auto squared_deviation = [mean](auto v) {
    auto d = v - splat<decltype(v)>(mean);
    return decltype(v)(d * d);
  };
  const Acc var = fold_packets<Acc, W, true>(x, n, 1, Acc(0), squared_deviation, add)[0] / Acc(n);
  return {mean, Acc(1) / std::sqrt(var + Acc(eps))};
}

/// Rows of layer_norm_backward's weight and bias gradient blocks: at least kLayerNormBlockRows,
/// at most kLayerNormMaxBlocks blocks. A function of the row count alone, so the sums (and their
/// rounding) do not depend on the thread count.
inline constexpr std::int64_t kLayerNormBlockRows = 8;
inline constexpr std::int64_t kLayerNormMaxBlocks = 64;

/// The gradients of y = (x - mean) * rstd * w + b over each contiguous row of n elements:
///   xhat = (x - mean) * rstd,  g = dy * w,
///   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
///   dw = sum over rows of dy * xhat,  db = sum over rows of dy.
/// mean and rstd are recomputed as the forward computes them (two passes). dw and db: each block of
/// rows (threads take whole blocks) adds its rows in order into partial sums, which are then added
/// block by block in order: the same result for any thread count.
template <class T>
void run_layer_norm_backward(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, std::int64_t rows,
                             std::int64_t n, double eps) {
  using Acc = math_t<T>;
  constexpr int W = std::max<int>(1, simd::kBytes / int(sizeof(Acc)));
  using P = simd::Vec<Acc, W>;
  auto load = [](const T* p) { return load_packet<Acc, W>(p, 1); };
  const std::int64_t block_rows =
      std::max(kLayerNormBlockRows, (rows + kLayerNormMaxBlocks - 1) / kLayerNormMaxBlocks);
  const std::int64_t blocks = (rows + block_rows - 1) / block_rows;
  std::vector<Acc> partial(std::size_t(blocks * 2 * n), Acc(0));  // per block: n dw sums, then n db sums
  const int threads = int(std::min<std::int64_t>(blocks, threads_for(rows * n)));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t k = 0; k < blocks; ++k) {
    Acc* pw = partial.data() + k * 2 * n;
    Acc* pb = pw + n;
    for (std::int64_t r = k * block_rows; r < std::min(rows, (k + 1) * block_rows); ++r) {
      const T* xr = x + r * n;
      const T* dyr = dy + r * n;
      T* dxr = dx + r * n;
      const auto [mean, rstd] = row_mean_rstd<W>(xr, n, eps);
      // sum g and sum g (x - mean), two accumulators each
      const P mp = P::broadcast(mean), rp = P::broadcast(rstd);
      P sg[2] = {P::broadcast(0), P::broadcast(0)}, sgd[2] = {P::broadcast(0), P::broadcast(0)};
      std::int64_t j = 0;
      for (; j + 2 * W <= n; j += 2 * W)
        for (int a = 0; a < 2; ++a) {
          const P g = load(dyr + j + a * W) * load(w + j + a * W);
          sg[a] = sg[a] + g;
          sgd[a] = sgd[a] + g * (load(xr + j + a * W) - mp);
        }
      for (; j + W <= n; j += W) {
        const P g = load(dyr + j) * load(w + j);
        sg[0] = sg[0] + g;
        sgd[0] = sgd[0] + g * (load(xr + j) - mp);
      }
      Acc sum_g = 0, sum_gd = 0;
      for (int l = 0; l < W; ++l) sum_g += sg[0][l] + sg[1][l], sum_gd += sgd[0][l] + sgd[1][l];
      for (; j < n; ++j) {
        const Acc g = Acc(dyr[j]) * Acc(w[j]);
        sum_g += g;
        sum_gd += g * (Acc(xr[j]) - mean);
      }
      const Acc mean_g = sum_g / Acc(n), mean_gxhat = sum_gd * rstd / Acc(n);
      const P mgp = P::broadcast(mean_g), mgxp = P::broadcast(mean_gxhat);
      for (j = 0; j + W <= n; j += W) {
        const P d = load(dyr + j), xhat = (load(xr + j) - mp) * rp;
        store_packet<T, W>(dxr + j, 1, rp * (d * load(w + j) - mgp - xhat * mgxp), false);
        (P::load(pw + j) + d * xhat).store(pw + j);
        (P::load(pb + j) + d).store(pb + j);
      }
      for (; j < n; ++j) {
        const Acc d = Acc(dyr[j]), xhat = (Acc(xr[j]) - mean) * rstd;
        dxr[j] = T(rstd * (d * Acc(w[j]) - mean_g - xhat * mean_gxhat));
        pw[j] += d * xhat;
        pb[j] += d;
      }
    }
  }
  const int column_threads = threads_for(blocks * n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(column_threads) schedule(static) if (column_threads > 1))
  for (std::int64_t j = 0; j < n; ++j) {
    Acc sw = 0, sb = 0;
    for (std::int64_t k = 0; k < blocks; ++k) sw += partial[std::size_t(k * 2 * n + j)], sb += partial[std::size_t(k * 2 * n + n + j)];
    dw[j] = T(sw);
    db[j] = T(sb);
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
