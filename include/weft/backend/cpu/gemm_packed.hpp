// SPDX-License-Identifier: MIT
/// @file The driver of weft's packed bfloat16 GEMMs (AMX tiles, Arm BFMMLA): packing, output blocks over OpenMP, k slices with fp32 partial sums, one rounding; a kernel type supplies the instruction-specific parts.
///
/// c = a b, all bfloat16, a (n x k) and b (k x m) row-major with row strides lda / ldb. Both
/// operands are packed once per product into panels of K::kRows rows (a) and K::kCols columns
/// (b), k in steps of K::kStep and padded with zeros to whole steps (zeros add nothing to real
/// outputs; padded rows and columns land in outputs that are never stored). Output blocks of
/// K::kBlockRows x K::kBlockCols go to OpenMP threads (dynamic: a slow core takes fewer); within
/// a block, k runs in K::kSliceSteps-step slices, the column panel outermost so that a slice of
/// one b panel stays in L1 while the block's a panels stream from L2. Between slices each
/// register block's fp32 sums wait in a per-thread scratch block; after the last slice K rounds
/// them to bfloat16 once.
///
/// A kernel type K provides:
///   kRows, kCols, kStep            register block (kRows x kCols outputs) and k per step
///   kStepElems                     bf16 elements of one step of an a panel, and of a b panel
///   kAccFloats                     floats of a register block's partial sums in scratch
///   kBlockRows, kBlockCols, kSliceSteps
///   pack_a(a, lda, n, k, i0, steps, dst), pack_b(b, ldb, k, m, j0, steps, dst)
///   block(a_panel, b_panel, steps, acc, first): acc = (first ? 0 : acc) + the steps' products
///   store(acc, c, ldc, i0, j0, n, m): rounds the register block at (i0, j0) into c, inside n x m
///   Thread: constructed by each thread before its blocks, destroyed after (AMX: tile config).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "weft/backend/cpu/gemm.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/shape.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Aligned fp32 scratch.
struct PackedGemmFree {
  void operator()(float* p) const { std::free(p); }
};

/// c (n x m, row stride ldc) = a (n x k, row stride lda) b (k x m, row stride ldb), all bfloat16,
/// on `threads` threads (1: the calling thread only), with kernel K. k may be 0 (zeros).
template <class K>
void gemm_packed(const weft::bfloat16* a, std::int64_t lda, const weft::bfloat16* b, std::int64_t ldb,
                 weft::bfloat16* c, std::int64_t ldc, std::int64_t n, std::int64_t k, std::int64_t m, int threads) {
  constexpr std::int64_t TS = K::kStepElems;
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep;
  const std::int64_t row_panels = (n + K::kRows - 1) / K::kRows, col_panels = (m + K::kCols - 1) / K::kCols;
  const std::int64_t block_rows = (n + K::kBlockRows - 1) / K::kBlockRows;
  const std::int64_t block_cols = (m + K::kBlockCols - 1) / K::kBlockCols;
  const std::int64_t blocks = block_rows * block_cols;
  const std::int64_t slices = std::max<std::int64_t>(1, (steps + K::kSliceSteps - 1) / K::kSliceSteps);
  constexpr std::int64_t kPanelsPerBlockRow = K::kBlockRows / K::kRows;
  constexpr std::int64_t kPanelsPerBlockCol = K::kBlockCols / K::kCols;
  // Partial sums of a block between slices; one register block's worth when k is one slice.
  const std::int64_t scratch_floats =
      (slices > 1 ? std::min(row_panels, kPanelsPerBlockRow) * std::min(col_panels, kPanelsPerBlockCol) : 1) *
      K::kAccFloats;
  std::unique_ptr<std::uint16_t[]> packed_a(new std::uint16_t[std::size_t(std::max<std::int64_t>(1, row_panels * steps * TS))]);
  std::unique_ptr<std::uint16_t[]> packed_b(new std::uint16_t[std::size_t(std::max<std::int64_t>(1, col_panels * steps * TS))]);
  std::uint16_t* pa = packed_a.get();
  std::uint16_t* pb = packed_b.get();
  threads = int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks)));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t t = 0; t < row_panels + col_panels; ++t) {
      if (t < row_panels) K::pack_a(a, lda, n, k, t * K::kRows, steps, pa + t * steps * TS);
      else K::pack_b(b, ldb, k, m, (t - row_panels) * K::kCols, steps, pb + (t - row_panels) * steps * TS);
    }

    [[maybe_unused]] const typename K::Thread thread_state;  // per-thread setup, e.g. AMX tiles
    std::unique_ptr<float, PackedGemmFree> scratch(
        static_cast<float*>(std::aligned_alloc(64, std::size_t(scratch_floats) * sizeof(float))));
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t t0 = blk / block_cols * kPanelsPerBlockRow, u0 = blk % block_cols * kPanelsPerBlockCol;
      const std::int64_t t1 = std::min(row_panels, t0 + kPanelsPerBlockRow);
      const std::int64_t u1 = std::min(col_panels, u0 + kPanelsPerBlockCol);
      for (std::int64_t sl = 0; sl < slices; ++sl) {
        const std::int64_t s0 = sl * K::kSliceSteps, ns = std::min(K::kSliceSteps, steps - s0);
        for (std::int64_t u = u0; u < u1; ++u)
          for (std::int64_t t = t0; t < t1; ++t) {
            float* acc = scratch.get() + (slices > 1 ? ((t - t0) * (u1 - u0) + (u - u0)) * K::kAccFloats : 0);
            K::block(pa + (t * steps + s0) * TS, pb + (u * steps + s0) * TS, ns, acc, sl == 0);
            if (sl + 1 == slices) K::store(acc, c, ldc, t * K::kRows, u * K::kCols, n, m);
          }
      }
    }
  }
}

/// c[b] = a[b] b[b] for every batch index of `batch`, with gemm_batched's conventions (a[b] is
/// n x k with row stride lda at a + sum_d coord_d a_batch[d]; likewise b; c contiguous), with
/// kernel K: one product per thread for batches of small products, else threads inside each.
template <class K>
void gemm_packed_batched(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch, const weft::bfloat16* b,
                         std::int64_t ldb, const Strides& b_batch, weft::bfloat16* c, const Shape& batch,
                         std::int64_t n, std::int64_t k, std::int64_t m) {
  const std::int64_t count = batch.numel();
  auto product = [&](std::int64_t bi, int threads) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    gemm_packed<K>(a + oa, lda, b + ob, ldb, c + bi * n * m, m, n, k, m, threads);
  };
  if (gemm_over_batch(count, n, k, m)) {
    const int threads = int(std::min<std::int64_t>(count, max_threads()));
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, 1);
  } else {
    const int threads = threads_for(n * k * m / 64);
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, threads);
  }
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
