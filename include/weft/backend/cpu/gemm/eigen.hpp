// SPDX-License-Identifier: MIT
/// @file The CPU GEMM executor: batched row-major matrix products through Eigen's GEMM (integers: a plain loop), OpenMP over the batch.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"
#include "weft/plan/reduction.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp), and leaving Eigen's
// headers out of it saves each CUDA translation unit their parse, twice per architecture.
#if !defined(__CUDA_ARCH__)

// GCC 12 warns that the AVX-512 intrinsics Eigen's packing of a transposed operand inlines read an
// uninitialized register (their _mm512_undefined_ps() pass-through, GCC bug 105593, fixed in 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <Eigen/Core>

namespace weft::detail::cpu {

/// Sets the threads of every CPU kernel and of Eigen's GEMM (Eigen reads a process-wide count of
/// its own).
inline void set_thread_limit(int n) {
  thread_limit.store(n, std::memory_order_relaxed);
  Eigen::setNbThreads(n);
}

/// Below this many multiply-adds per product, a batch runs one product per
/// thread; above it (or with a single product) Eigen threads each product.
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

/// c[b] = a[b] * b[b] for every batch index b of `batch`: a[b] is n x k at a + sum_d coord_d *
/// a_batch[d], row-major with rows lda apart (a_col_major: column-major with columns lda apart, as
/// a transposed view of a row-major tensor is); likewise b[b] (k x m, ldb, b_col_major); c is
/// contiguous (batch..., n, m). The leading dimension is at least the row (column) length (the
/// caller copies other layouts). Floating types go through Eigen's GEMM, which packs either order
/// of either operand into its own blocks: a transposed operand costs no copy. Integer products
/// (rare, and exact in any order) use a plain row-times-matrix loop, which the compiler vectorizes
/// along the contiguous rows of b and c, and which saves each integer type the compile time of
/// Eigen's GEMM kernels.
template <class S>
void gemm_batched(const S* a, std::int64_t lda, const Strides& a_batch, const S* b, std::int64_t ldb,
                  const Strides& b_batch, S* c, const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m,
                  bool a_col_major = false, bool b_col_major = false) {
  const std::int64_t count = batch.numel();
  auto operands = [&](std::int64_t bi, const S*& pa, const S*& pb) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    pa = a + oa;
    pb = b + ob;
  };
  if constexpr (std::is_integral_v<S>) {
    // c[bi, i, :] = sum_kk a[bi, i, kk] * b[bi, kk, :], one (batch, row) per iteration.
    const std::int64_t a_row = a_col_major ? 1 : lda, a_col = a_col_major ? lda : 1;
    const std::int64_t b_row = b_col_major ? 1 : ldb, b_col = b_col_major ? ldb : 1;
    const int threads = threads_for(count * n * k * m);
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
    for (std::int64_t row = 0; row < count * n; ++row) {
      const std::int64_t bi = row / n, i = row % n;
      const S *pa, *pb;
      operands(bi, pa, pb);
      S* ci = c + row * m;
      for (std::int64_t j = 0; j < m; ++j) ci[j] = 0;
      for (std::int64_t kk = 0; kk < k; ++kk) {
        const S x = pa[i * a_row + kk * a_col];
        const S* bk = pb + kk * b_row;
        for (std::int64_t j = 0; j < m; ++j) ci[j] += x * bk[j * b_col];
      }
    }
  } else {
    using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    using In = Eigen::Map<const Matrix, Eigen::Unaligned, Eigen::OuterStride<>>;
    using Out = Eigen::Map<Matrix, Eigen::Unaligned>;
    auto product = [&](std::int64_t bi) {
      const S *pa, *pb;
      operands(bi, pa, pb);
      // A column-major operand is the transpose of a row-major one: Eigen reads it in place.
      In A(pa, a_col_major ? k : n, a_col_major ? n : k, Eigen::OuterStride<>(lda));
      In B(pb, b_col_major ? m : k, b_col_major ? k : m, Eigen::OuterStride<>(ldb));
      Out C(c + bi * n * m, n, m);
      if (!a_col_major && !b_col_major) C.noalias() = A * B;
      else if (a_col_major && !b_col_major) C.noalias() = A.transpose() * B;
      else if (!a_col_major) C.noalias() = A * B.transpose();
      else C.noalias() = A.transpose() * B.transpose();
    };
    if (gemm_over_batch(count, n, k, m)) {
      const int threads = int(std::min<std::int64_t>(count, max_threads()));
      WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
      for (std::int64_t bi = 0; bi < count; ++bi) product(bi);
    } else {
      for (std::int64_t bi = 0; bi < count; ++bi) product(bi);
    }
  }
}

}  // namespace weft::detail::cpu

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // !defined(__CUDA_ARCH__)
