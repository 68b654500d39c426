// SPDX-License-Identifier: MIT
/// @file The driver of weft's packed GEMMs (bfloat16 on AMX tiles or Arm BFMMLA, float and double on FMA packets): packing, output blocks over OpenMP, k slices with partial sums in scratch, one store per output (or a fused epilogue per output block); a kernel type supplies the instruction-specific parts.
///
/// c = a b, a (n x k) and b (k x m). Both
/// operands are packed once per product into panels of K::kRows rows (a) and K::kCols columns
/// (b), k in steps of K::kStep and padded with zeros to whole steps (zeros add nothing to real
/// outputs; padded rows and columns land in outputs that are never stored). Output blocks of
/// K::kBlockRows x K::kBlockCols go to OpenMP threads (dynamic: a slow core takes fewer); within
/// a block, k runs in K::kSliceSteps-step slices, the column panel outermost so that a slice of
/// one b panel stays in L1 while the block's a panels stream from L2. Between slices each
/// register block's fp32 sums wait in a per-thread scratch block; after the last slice K rounds
/// them (bfloat16: rounds them once) into the output, or into a block buffer that a fused
/// epilogue then reads (GemmBlockEpilogue).
///
/// A kernel type K provides:
///   Elem, Packed, Acc              element type of c, of the packed panels, of the partial sums
///   kRows, kCols, kStep            register block (kRows x kCols outputs) and k per step
///   kStepElemsA, kStepElemsB       packed elements of one step of an a panel, of a b panel
///   kAccFloats                     Acc elements of a register block's partial sums in scratch
///   kBlockRows, kBlockCols, kSliceSteps
///   pack_a(a, ..., n, k, i0, steps, dst), pack_b(b, ..., k, m, j0, steps, dst) (bound by the caller)
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

/// Aligned scratch.
struct PackedGemmFree {
  void operator()(void* p) const { std::free(p); }
};

/// Scratch of at most this size is kept by each thread between products: a fresh allocation of a
/// few hundred KiB is mapped and page-faulted anew every call (glibc maps blocks above 128 KiB),
/// measured at about a third of a 256^3 float product's time. Larger requests are allocated per
/// call, where the product's own time dwarfs the faults.
inline constexpr std::size_t kKeptScratchBytes = std::size_t(4) << 20;

/// One scratch buffer of `count` T, 64-byte aligned: the calling thread's kept buffer `slot` (one
/// per use within a product: packed a, packed b, partial sums, the epilogue's block), grown as
/// needed, or a buffer of its own when larger than kKeptScratchBytes.
template <class T>
class PackedGemmScratch {
 public:
  PackedGemmScratch(int slot, std::int64_t count) {
    const std::size_t bytes = (std::size_t(std::max<std::int64_t>(count, 1)) * sizeof(T) + 63) / 64 * 64;
    if (bytes > kKeptScratchBytes) {
      owned_.reset(std::aligned_alloc(64, bytes));
      data_ = static_cast<T*>(owned_.get());
      return;
    }
    struct Kept {
      std::unique_ptr<void, PackedGemmFree> data;
      std::size_t bytes = 0;
    };
    thread_local Kept kept[kSlots];
    Kept& k = kept[slot];
    if (k.bytes < bytes) k.data.reset(std::aligned_alloc(64, bytes)), k.bytes = bytes;
    data_ = static_cast<T*>(k.data.get());
  }
  T* get() const { return data_; }

  static constexpr int kSlots = 4;

 private:
  std::unique_ptr<void, PackedGemmFree> owned_;
  T* data_ = nullptr;
};

/// Where gemm_packed puts its results: straight into c (row stride ldc).
template <class Out>
struct GemmStore {
  static constexpr bool kBuffered = false;
  Out* c;
  std::int64_t ldc;
};

/// Where gemm_packed puts its results: each output block, once complete, into a buffer of the
/// thread (kBlockRows x kBlockCols, row stride kBlockCols), then finish(i0, i1, j0, j1, buffer,
/// ld) writes rows [i0, i1) x columns [j0, j1) of the product wherever it goes (an epilogue: the
/// block is in cache, and the output is written once).
template <class Finish>
struct GemmBlockEpilogue {
  static constexpr bool kBuffered = true;
  Finish finish;
};

/// The product of an n x k and a k x m operand, whose panels pack_a(i0, steps, dst) and
/// pack_b(j0, steps, dst) write in K's layout (the kernel's pack_a / pack_b, bound to the
/// operands by the caller), on `threads` threads (1: the calling thread only), with kernel K,
/// into `out` (GemmStore or GemmBlockEpilogue). k may be 0 (zeros).
template <class K, class PackA, class PackB, class Out>
void gemm_packed(const PackA& pack_a, const PackB& pack_b, std::int64_t n, std::int64_t k, std::int64_t m, int threads,
                 const Out& out) {
  using Packed = typename K::Packed;
  using Acc = typename K::Acc;
  constexpr std::int64_t TA = K::kStepElemsA, TB = K::kStepElemsB;
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep;
  const std::int64_t row_panels = (n + K::kRows - 1) / K::kRows, col_panels = (m + K::kCols - 1) / K::kCols;
  // Blocks of K::kBlockRows rows, fewer rows while there would be fewer blocks than threads (a
  // 256 x 256 product is one block: one busy thread), down to 4 register blocks' worth.
  std::int64_t panels_per_block_row = K::kBlockRows / K::kRows;
  constexpr std::int64_t kPanelsPerBlockCol = K::kBlockCols / K::kCols;
  const std::int64_t block_cols = (m + K::kBlockCols - 1) / K::kBlockCols;
  auto block_rows_of = [&](std::int64_t panels) { return (row_panels + panels - 1) / panels; };
  while (panels_per_block_row > 4 && block_rows_of(panels_per_block_row) * block_cols < threads)
    panels_per_block_row /= 2;
  const std::int64_t block_rows = block_rows_of(panels_per_block_row);
  const std::int64_t blocks = block_rows * block_cols;
  const std::int64_t slices = std::max<std::int64_t>(1, (steps + K::kSliceSteps - 1) / K::kSliceSteps);
  // Partial sums of a block between slices; one register block's worth when k is one slice.
  const std::int64_t scratch_elems =
      (slices > 1 ? std::min(row_panels, panels_per_block_row) * std::min(col_panels, kPanelsPerBlockCol) : 1) *
      K::kAccFloats;
  const PackedGemmScratch<Packed> packed_a(0, row_panels * steps * TA), packed_b(1, col_panels * steps * TB);
  Packed* pa = packed_a.get();
  Packed* pb = packed_b.get();
  threads = int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks)));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t t = 0; t < row_panels + col_panels; ++t) {
      if (t < row_panels) pack_a(t * K::kRows, steps, pa + t * steps * TA);
      else pack_b((t - row_panels) * K::kCols, steps, pb + (t - row_panels) * steps * TB);
    }

    [[maybe_unused]] const typename K::Thread thread_state;  // per-thread setup, e.g. AMX tiles
    const PackedGemmScratch<Acc> scratch(2, scratch_elems);
    const PackedGemmScratch<typename K::Elem> buffer(3, Out::kBuffered ? K::kBlockRows * K::kBlockCols : 0);
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t t0 = blk / block_cols * panels_per_block_row, u0 = blk % block_cols * kPanelsPerBlockCol;
      const std::int64_t t1 = std::min(row_panels, t0 + panels_per_block_row);
      const std::int64_t u1 = std::min(col_panels, u0 + kPanelsPerBlockCol);
      const std::int64_t i0 = t0 * K::kRows, j0 = u0 * K::kCols;
      for (std::int64_t sl = 0; sl < slices; ++sl) {
        const std::int64_t s0 = sl * K::kSliceSteps, ns = std::min(K::kSliceSteps, steps - s0);
        for (std::int64_t u = u0; u < u1; ++u)
          for (std::int64_t t = t0; t < t1; ++t) {
            Acc* acc = scratch.get() + (slices > 1 ? ((t - t0) * (u1 - u0) + (u - u0)) * K::kAccFloats : 0);
            K::block(pa + (t * steps + s0) * TA, pb + (u * steps + s0) * TB, ns, acc, sl == 0);
            if (sl + 1 < slices) continue;
            if constexpr (Out::kBuffered)
              K::store(acc, buffer.get(), K::kBlockCols, t * K::kRows - i0, u * K::kCols - j0, n - i0, m - j0);
            else K::store(acc, out.c, out.ldc, t * K::kRows, u * K::kCols, n, m);
          }
      }
      if constexpr (Out::kBuffered)
        out.finish(i0, std::min(n, t1 * K::kRows), j0, std::min(m, u1 * K::kCols),
                   static_cast<const typename K::Elem*>(buffer.get()), K::kBlockCols);
    }
  }
}

/// product(bi, threads) for the `count` n x k x m products of a batch: one product per thread
/// for a batch of small ones (gemm_over_batch), else each product on all the threads it can use.
template <class Product>
void for_each_packed_product(std::int64_t count, std::int64_t n, std::int64_t k, std::int64_t m,
                             const Product& product) {
  if (gemm_over_batch(count, n, k, m)) {
    const int threads = int(std::min<std::int64_t>(count, max_threads()));
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, 1);
  } else {
    const int threads = threads_for(n * k * m / 64);
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, threads);
  }
}

/// c[b] = a[b] b[b] for every batch index of `batch`, with gemm_batched's conventions (a[b] is
/// n x k with row stride lda at a + sum_d coord_d a_batch[d]; likewise b; c contiguous), with
/// kernel K: one product per thread for batches of small products, else threads inside each.
template <class K>
void gemm_packed_batched(const typename K::Elem* a, std::int64_t lda, const Strides& a_batch,
                         const typename K::Elem* b, std::int64_t ldb, const Strides& b_batch, typename K::Elem* c,
                         const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  const std::int64_t count = batch.numel();
  auto product = [&](std::int64_t bi, int threads) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    const auto* pa = a + oa;
    const auto* pb = b + ob;
    gemm_packed<K>([&](std::int64_t i0, std::int64_t steps, auto* dst) { K::pack_a(pa, lda, n, k, i0, steps, dst); },
                   [&](std::int64_t j0, std::int64_t steps, auto* dst) { K::pack_b(pb, ldb, k, m, j0, steps, dst); },
                   n, k, m, threads, GemmStore<typename K::Elem>{c + bi * n * m, m});
  };
  for_each_packed_product(count, n, k, m, product);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
