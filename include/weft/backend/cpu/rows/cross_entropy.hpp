// SPDX-License-Identifier: MIT
/// @file The CPU cross_entropy executors: per row, SIMD passes for the max and the sum of exp (and, backward, the
/// gradient's write); OpenMP over rows. Rows are read in place through a row stride.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>

#include "weft/backend/cpu/reduce/reduce.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// The max m and the sum s = sum_j exp(x_j - m) of one contiguous row of n
/// elements (n >= 1): two reads of the row, the second from cache. Subtracting
/// m keeps exp from overflowing; NaN anywhere gives NaN.
template <class T>
struct RowExpSum {
  math_t<T> max, sum;
};
template <class T, int W>
RowExpSum<T> row_exp_sum(const T* x, std::int64_t n) {
  using Acc = math_t<T>;
  auto vmax = [](auto a, auto b) {
    using math::max;
    return max(a, b);
  };
  auto add = [](auto a, auto b) { return a + b; };
  auto identity = [](auto v) { return v; };
  const Acc m = fold_packets<Acc, W, true>(x, n, 1, -std::numeric_limits<Acc>::infinity(), identity, vmax)[0];
  auto exp_shifted = [m](auto v) {
    using math::exp;
    return exp(v - splat<decltype(v)>(m));
  };
  return {m, fold_packets<Acc, W, true>(x, n, 1, Acc(0), exp_shifted, add)[0]};
}

/// loss_r = logsumexp(x_r) - x_r[t_r] = log s - (x_t - m) over `rows` rows of
/// n elements, row r at x + r * x_stride, written as O (the output dtype, or the
/// accumulator for a later mean or sum). log s - (x_t - m), not (m + log s) - x_t:
/// m + log s would round at |m|. Targets are in [0, n) (checked by the caller).
template <class T, class I, class O>
void run_cross_entropy(const T* x, std::int64_t x_stride, const I* target, std::int64_t rows, std::int64_t n,
                       O* loss) {
  using Acc = math_t<T>;
  constexpr int W = std::max<int>(1, simd::kBytes / int(sizeof(Acc)));
  const int threads = threads_for(rows * n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * x_stride;
    const RowExpSum<T> e = row_exp_sum<T, W>(xr, n);
    loss[r] = O(math::log(e.sum) - (Acc(xr[target[r]]) - e.max));
  }
}

/// dx_rj = g_r * (softmax(x_r)_j - [j == t_r]) with g_r = scale * grad[r * grad_stride]
/// (scale alone when grad is null): per row the max and sum passes, then one
/// pass writing g / s * exp(x_j - m), and the target's element again with the
/// 1 taken off before rounding. dx may be x itself (same rows): each row is read
/// before it is written, and x_t is kept before the write pass.
template <class T, class I>
void run_cross_entropy_backward(const T* x, std::int64_t x_stride, const I* target, const T* grad,
                                std::int64_t grad_stride, double scale, std::int64_t rows, std::int64_t n, T* dx,
                                std::int64_t dx_stride) {
  using Acc = math_t<T>;
  constexpr int W = std::max<int>(1, simd::kBytes / int(sizeof(Acc)));
  using P = simd::Vec<Acc, W>;
  const int threads = threads_for(rows * n);
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * x_stride;
    T* dr = dx + r * dx_stride;
    const RowExpSum<T> e = row_exp_sum<T, W>(xr, n);
    const Acc g = Acc(scale) * (grad ? Acc(grad[r * grad_stride]) : Acc(1));
    const Acc c = g / e.sum;
    const std::int64_t t = std::int64_t(target[r]);
    const Acc xt = Acc(xr[t]);
    const P mp = P::broadcast(e.max), cp = P::broadcast(c);
    std::int64_t j = 0;
    for (; j + W <= n; j += W)
      store_packet<T, W>(dr + j, 1, simd::exp(load_packet<Acc, W>(xr + j, 1) - mp) * cp, false);
    for (; j < n; ++j) dr[j] = T(math::exp(Acc(xr[j]) - e.max) * c);
    dr[t] = T(g * (math::exp(xt - e.max) / e.sum - Acc(1)));
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
