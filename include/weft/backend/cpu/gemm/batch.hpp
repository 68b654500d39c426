// SPDX-License-Identifier: MIT
/// @file How the CPU GEMMs spread a batch of products over threads: one product per thread for many small ones, else each product on the threads its size pays for; and where each product's operands start.
#pragma once

#include <algorithm>
#include <cstdint>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Below this many multiply-adds per product, a batch runs one product per
/// thread; above it (or with a single product) each product runs on several threads.
inline constexpr std::int64_t kSmallGemm = std::int64_t(1) << 21;

/// The offsets of batch index bi's operands: sum_d coord_d * a_batch[d] (and b_batch).
inline void batch_offsets(std::int64_t bi, const Shape& batch, const Strides& a_batch, const Strides& b_batch,
                          std::int64_t& oa, std::int64_t& ob) {
  std::int64_t coords[kMaxRank] = {};
  unravel(bi, batch.begin(), batch.rank(), coords);
  oa = 0, ob = 0;
  for (int d = 0; d < batch.rank(); ++d) oa += coords[d] * a_batch[d], ob += coords[d] * b_batch[d];
}

/// Whether a batch of `count` n x k x m products runs one product per thread (small products,
/// or at least as many as threads) rather than threading each product.
inline bool gemm_over_batch(std::int64_t count, std::int64_t n, std::int64_t k, std::int64_t m) {
  return count > 1 && (count >= max_threads() || n * k * m < kSmallGemm);
}

/// product(bi, threads) for the `count` n x k x m products of a batch: one product per thread
/// for a batch of small ones (gemm_over_batch), else each product on the threads its size pays
/// for: one per kMinElementsPerThread x `macs_per_element` multiply-adds (the packed GEMMs: 64).
template <class Product>
void for_each_packed_product(std::int64_t count, std::int64_t n, std::int64_t k, std::int64_t m,
                             const Product& product, std::int64_t macs_per_element = 64) {
  if (gemm_over_batch(count, n, k, m)) {
    const int threads = int(std::min<std::int64_t>(count, max_threads()));
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, 1);
  } else {
    const int threads = threads_for(n * k * m / macs_per_element);
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, threads);
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
