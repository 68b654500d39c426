// SPDX-License-Identifier: MIT
/// @file The CPU stream compaction executors (nonzero, masked_select): each thread counts the kept elements of its chunk, a prefix over the chunks gives where each thread writes, then each writes its kept elements in order.
#pragma once

#include <cstdint>
#include <vector>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/backend/cpu/thread_chunk.hpp"
#include "weft/core/shape.hpp"
#include "weft/expr/reducers.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// emit(i, k) for every i in [0, n) where keep(i), k = how many kept positions precede i: the
/// kept positions in order, on threads_for(n) threads (chunks counted, then written).
template <class Keep, class Emit>
void compact(std::int64_t n, const Keep& keep, const Emit& emit) {
  const int threads = threads_for(n);
  std::vector<std::int64_t> first(std::size_t(threads) + 1, 0);  // first[t]: kept positions before chunk t
  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    const ThreadChunk chunk = this_thread_chunk(n);
    std::int64_t kept = 0;
    for (std::int64_t i = chunk.begin; i < chunk.end; ++i) kept += keep(i) ? 1 : 0;
    first[std::size_t(chunk.thread) + 1] = kept;
    WEFT_PRAGMA_OMP(omp barrier)
    WEFT_PRAGMA_OMP(omp single)
    for (int u = 0; u < chunk.threads; ++u) first[std::size_t(u) + 1] += first[std::size_t(u)];
    std::int64_t k = first[std::size_t(chunk.thread)];
    for (std::int64_t i = chunk.begin; i < chunk.end; ++i)
      if (keep(i)) emit(i, k++);
  }
}

/// x[i] != 0 (a NaN is nonzero; half and bfloat16 compared as float).
template <class T>
inline bool is_nonzero(T v) {
  return order_t<T>(v) != order_t<T>(0);
}

/// The number of nonzero elements of x[0..n).
template <class T>
std::int64_t count_nonzero(const T* x, std::int64_t n) {
  const int threads = threads_for(n);
  std::int64_t count = 0;
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) if (threads > 1) reduction(+ : count) schedule(static))
  for (std::int64_t i = 0; i < n; ++i) count += is_nonzero(x[i]) ? 1 : 0;
  return count;
}

/// out[k, :] = the coordinates in `shape` of the k-th nonzero element of contiguous x, in
/// row-major order (out: [nnz, rank]).
template <class T>
void run_nonzero(const T* x, const Shape& shape, std::int64_t* out) {
  const int rank = shape.rank();
  compact(
      shape.numel(), [&](std::int64_t i) { return is_nonzero(x[i]); },
      [&](std::int64_t i, std::int64_t k) { unravel(i, shape.begin(), rank, out + k * rank); });
}

/// out[k] = the k-th x[i] with mask[i] true (x and mask contiguous, of n elements each).
template <class T>
void run_masked_select(const T* x, const bool* mask, std::int64_t n, T* out) {
  compact(
      n, [&](std::int64_t i) { return mask[i]; }, [&](std::int64_t i, std::int64_t k) { out[k] = x[i]; });
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
