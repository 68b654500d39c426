// SPDX-License-Identifier: MIT
/// @file The CPU argmax / argmin executor: one scan per row of a contiguous (outer, n, inner) tensor, neighbouring columns scanned together, long rows split across threads.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/expr/reducers.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Columns (neighbouring rows of an inner > 1 layout) one task walks together: each step along
/// the dim reads kColumnBlock neighbouring elements instead of one per cache line.
inline constexpr std::int64_t kColumnBlock = 64;

/// out[o * inner + c] = the index i in [0, n) of the first element x[(o * n + i) * inner + c] under
/// argmax's (kMax) or argmin's order (ArgExtremumReducer: a NaN wins, ties keep the first index).
/// n >= 1. Few outputs over long rows (a full argmax): each row is cut into chunks across the
/// threads, and the chunks' winners are combined in order.
template <bool kMax, class T>
void run_arg_reduce(const T* x, std::int64_t* out, std::int64_t outer, std::int64_t n, std::int64_t inner) {
  using Acc = order_t<T>;
  using Candidate = IndexedValue<Acc>;
  const ArgExtremumReducer<Acc, kMax> red;
  const std::int64_t width = std::min(inner, kColumnBlock);
  const std::int64_t blocks = (inner + width - 1) / width;
  const std::int64_t units = outer * blocks;
  const int threads = threads_for(outer * n * inner);
  std::int64_t chunks = 1;
  if (threads > 1 && units < 4 * std::int64_t(threads))  // at most n chunks: none is empty
    chunks = std::clamp<std::int64_t>((4 * threads + units - 1) / units, 1,
                                      std::max<std::int64_t>(1, n * width / kMinElementsPerThread));
  const std::int64_t tasks = units * chunks;
  std::vector<Candidate> partial(chunks > 1 ? std::size_t(tasks * width) : 0);

  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t u = t / chunks, ch = t % chunks;
    const std::int64_t o = u / blocks, c0 = u % blocks * width, w = std::min(width, inner - c0);
    const std::int64_t i0 = n * ch / chunks, i1 = n * (ch + 1) / chunks;
    const T* base = x + o * n * inner + c0;
    Candidate best[kColumnBlock];
    for (std::int64_t c = 0; c < w; ++c) best[c] = {Acc(base[i0 * inner + c]), i0};
    for (std::int64_t i = i0 + 1; i < i1; ++i)
      for (std::int64_t c = 0; c < w; ++c) best[c] = red.combine(best[c], {Acc(base[i * inner + c]), i});
    for (std::int64_t c = 0; c < w; ++c) {
      if (chunks > 1) partial[std::size_t(t * width + c)] = best[c];
      else out[o * inner + c0 + c] = best[c].index;
    }
  }
  if (chunks == 1) return;
  for (std::int64_t u = 0; u < units; ++u) {
    const std::int64_t o = u / blocks, c0 = u % blocks * width, w = std::min(width, inner - c0);
    for (std::int64_t c = 0; c < w; ++c) {
      Candidate best = partial[std::size_t(u * chunks * width + c)];
      for (std::int64_t ch = 1; ch < chunks; ++ch) best = red.combine(best, partial[std::size_t((u * chunks + ch) * width + c)]);
      out[o * inner + c0 + c] = best.index;
    }
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
