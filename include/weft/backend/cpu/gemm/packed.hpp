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
#include <cstring>
#include <memory>
#include <new>
#include <sys/mman.h>

#include "weft/backend/cpu/gemm/batch.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/dtype.hpp"
#include "weft/core/host_memory.hpp"
#include "weft/core/shape.hpp"
#include "weft/plan/statements.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Aligned scratch.
struct PackedGemmFree {
  void operator()(void* p) const { std::free(p); }
};

/// Scratch of at most this size is kept by each thread between products: a fresh allocation is
/// mapped and page-faulted anew every call (glibc maps blocks above 128 KiB), measured at about a
/// third of a 256^3 float product's time, and 0.7x the rate of kept buffers at 2048^3 (16 MiB per
/// packed operand). Larger requests (float operands above 2048 x 2048, GPT-2's 768 x 50304 tied
/// head) come from the host allocator, whose cache of freed large buffers (core/host_cache.hpp)
/// serves the next product of that size without faults. The packed operands' slots live on the
/// calling thread, the partial sums' and block buffers' (a few hundred KiB) on each worker.
inline constexpr std::size_t kKeptScratchBytes = std::size_t(32) << 20;

/// A kept buffer of `bytes`, 64-byte aligned; from 2 MiB on 2 MiB-aligned and advised to be
/// backed by transparent huge pages (Linux), so that the packed panels a block reads, spread over
/// megabytes, do not miss the TLB page by page. Only kept buffers: a huge page fault on a fresh
/// allocation may compact memory first (measured: 1536^3 at 0.4x the rate with per-call buffers).
inline void* packed_gemm_kept_alloc(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t(2) << 20;
  if (bytes < kHugePage) return std::aligned_alloc(64, bytes);
  bytes = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
#if defined(MADV_HUGEPAGE)
  if (p) madvise(p, bytes, MADV_HUGEPAGE);
#endif
  return p;
}

/// One scratch buffer of `count` T, 64-byte aligned: the calling thread's kept buffer `slot` (one
/// per use within a product: packed a, packed b, partial sums, the epilogue's block, and a b
/// panel's staging while it is packed), grown as needed, or a host buffer (allocate_host_buffer)
/// when larger than kKeptScratchBytes.
template <class T>
class PackedGemmScratch {
 public:
  PackedGemmScratch(int slot, std::int64_t count) {
    const std::size_t bytes = (std::size_t(std::max<std::int64_t>(count, 1)) * sizeof(T) + 63) / 64 * 64;
    if (bytes > kKeptScratchBytes) {
      data_ = static_cast<T*>(allocate_host_buffer(bytes));
      if (!data_) throw std::bad_alloc();
      owned_bytes_ = bytes;
      return;
    }
    struct Kept {
      std::unique_ptr<void, PackedGemmFree> data;
      std::size_t bytes = 0;
    };
    thread_local Kept kept[kSlots];
    Kept& k = kept[slot];
    if (k.bytes < bytes) k.data.reset(packed_gemm_kept_alloc(bytes)), k.bytes = bytes;
    data_ = static_cast<T*>(k.data.get());
  }
  ~PackedGemmScratch() {
    if (owned_bytes_) release_host_buffer(data_, owned_bytes_);
  }
  PackedGemmScratch(const PackedGemmScratch&) = delete;
  PackedGemmScratch& operator=(const PackedGemmScratch&) = delete;
  T* get() const { return data_; }

  static constexpr int kSlots = 5;

 private:
  T* data_ = nullptr;
  std::size_t owned_bytes_ = 0;  // a host buffer of this size, not a kept slot
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

/// Where gemm_packed puts its results when c is large (kStreamingBytes or more): each output
/// block, once complete, into the thread's buffer, then row by row into c (row stride ldc) with
/// non-temporal stores where a row's 64-byte lines are whole. Stored straight from the register
/// blocks, each line of c would be read before being overwritten (a register block writes half a
/// line per row of a tile), and c's lines would evict the packed panels: a bfloat16 4096 x 1024 x
/// 4096 product on AMX took 24.3 ms so and 19.6 ms through the buffer (bench/dense_fusion).
template <class Out>
struct GemmStreamStore {
  static constexpr bool kBuffered = true;
  Out* c;
  std::int64_t ldc;
  void finish(std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const Out* block,
              std::int64_t ld) const {
    using Line = simd::Vec<std::int32_t, 16>;  // 64 bytes: one line, whatever the ISA's width
    const std::size_t row_bytes = std::size_t(j1 - j0) * sizeof(Out);
    for (std::int64_t i = i0; i < i1; ++i) {
      auto* dst = reinterpret_cast<unsigned char*>(c + i * ldc + j0);
      const auto* src = reinterpret_cast<const unsigned char*>(block + (i - i0) * ld);
      // head up to dst's first line boundary, whole lines streamed, the tail
      const std::size_t head = std::min(row_bytes, std::size_t(-reinterpret_cast<std::uintptr_t>(dst) & 63));
      const std::size_t lines = (row_bytes - head) / 64;
      std::memcpy(dst, src, head);
      for (std::size_t l = 0; l < lines; ++l) {
        Line v;
        std::memcpy(&v.raw, src + head + 64 * l, 64);
        v.stream(reinterpret_cast<std::int32_t*>(dst + head + 64 * l));
      }
      std::memcpy(dst + head + 64 * lines, src + head + 64 * lines, row_bytes - head - 64 * lines);
    }
    simd::stream_fence();
  }
};

/// An operand already packed in kernel K's layout, every panel of the whole product (b: column
/// panel u at panels + u steps K::kStepElemsB; a: row panel t at panels + t steps
/// K::kStepElemsA): passed as gemm_packed's pack_b or pack_a, nothing is packed per product
/// (prepacked weights: a convolution's weight, packed once, serves every chunk of its rows; a
/// convolution's patches gathered once serve every chunk of its columns).
template <class Packed>
struct PrepackedPanels {
  const Packed* panels;
};

/// Every column panel of a k x m operand, packed with pack_b(j0, steps, dst) in K's layout into
/// `panels` ((m + kCols - 1) / kCols panels of steps K::kStepElemsB elements): what
/// PrepackedPanels points at. Panels go to the threads the operand's size pays for (a ResNet
/// layer's weight packed on one thread while the other waited was a quarter of a batch-1
/// inference pass).
template <class K, class PackB>
void pack_all_panels(const PackB& pack_b, std::int64_t k, std::int64_t m, typename K::Packed* panels) {
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep, count = (m + K::kCols - 1) / K::kCols;
  const int threads = int(std::min<std::int64_t>(count, threads_for(k * m)));
  WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static) if (threads > 1))
  for (std::int64_t u = 0; u < count; ++u) pack_b(u * K::kCols, steps, panels + u * steps * K::kStepElemsB);
}

/// The elements pack_all_panels writes for a k x m operand.
template <class K>
std::int64_t packed_panels_size(std::int64_t k, std::int64_t m) {
  return (m + K::kCols - 1) / K::kCols * ((k + K::kStep - 1) / K::kStep) * K::kStepElemsB;
}

template <class PackB>
inline constexpr bool is_prepacked_v = false;
template <class Packed>
inline constexpr bool is_prepacked_v<PrepackedPanels<Packed>> = true;

/// Rows [r0, r0 + n) x columns [c0, c0 + m) of the product of gemm_packed (r0 a multiple of
/// K::kRows, c0 of K::kCols; out in the whole product's coordinates), packing only the panels of
/// those rows and columns.
template <class K, class PackA, class PackB, class Out>
void gemm_packed_part(const PackA& pack_a, const PackB& pack_b, std::int64_t r0, std::int64_t n, std::int64_t k,
                      std::int64_t c0, std::int64_t m, int threads, const Out& out) {
  using Packed = typename K::Packed;
  using Acc = typename K::Acc;
  constexpr std::int64_t TA = K::kStepElemsA, TB = K::kStepElemsB;
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep;
  const std::int64_t row_panels = (n + K::kRows - 1) / K::kRows, col_panels = (m + K::kCols - 1) / K::kCols;
  // Blocks of K::kBlockRows rows, or of a half, a quarter... (down to 4 register blocks' worth)
  // where that shortens the busiest thread's share, ceil(blocks / threads) blocks of rows: a 256
  // x 256 product as one block keeps one thread busy, and 256 x 768 as 3 blocks keeps one thread
  // busy for two (0.77 of the 2-thread rate measured; 6 blocks split evenly). Ties keep the larger.
  constexpr std::int64_t kPanelsPerBlockCol = K::kBlockCols / K::kCols;
  const std::int64_t block_cols = (m + K::kBlockCols - 1) / K::kBlockCols;
  auto block_rows_of = [&](std::int64_t panels) { return (row_panels + panels - 1) / panels; };
  auto busiest_share = [&](std::int64_t panels) {
    return (block_rows_of(panels) * block_cols + threads - 1) / threads * std::min(panels, row_panels);
  };
  std::int64_t panels_per_block_row = K::kBlockRows / K::kRows;
  for (std::int64_t p = panels_per_block_row / 2; p >= 4; p /= 2)
    if (busiest_share(p) < busiest_share(panels_per_block_row)) panels_per_block_row = p;
  const std::int64_t block_rows = block_rows_of(panels_per_block_row);
  const std::int64_t blocks = block_rows * block_cols;
  const std::int64_t slices = std::max<std::int64_t>(1, (steps + K::kSliceSteps - 1) / K::kSliceSteps);
  // Partial sums of a block between slices; one register block's worth when k is one slice.
  const std::int64_t scratch_elems =
      (slices > 1 ? std::min(row_panels, panels_per_block_row) * std::min(col_panels, kPanelsPerBlockCol) : 1) *
      K::kAccFloats;
  constexpr bool kPrepackedA = is_prepacked_v<PackA>, kPrepackedB = is_prepacked_v<PackB>;
  const PackedGemmScratch<Packed> packed_a(0, kPrepackedA ? 0 : row_panels * steps * TA),
      packed_b(1, kPrepackedB ? 0 : col_panels * steps * TB);
  const Packed* pa = packed_a.get();
  const Packed* pb = packed_b.get();
  if constexpr (kPrepackedA) pa = pack_a.panels + r0 / K::kRows * steps * TA;
  if constexpr (kPrepackedB) pb = pack_b.panels + c0 / K::kCols * steps * TB;
  const std::int64_t panels_to_pack = (kPrepackedA ? 0 : row_panels) + (kPrepackedB ? 0 : col_panels);
  threads = int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks)));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    // b panels first, handed out one at a time: one holds kCols / kRows times an a panel's
    // elements (6 x 64 for vdpbf16ps), and a static split gave one thread all of them (512^3
    // bfloat16: the other waited ~7% of the product at the barrier).
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t t = 0; t < panels_to_pack; ++t) {
      const std::int64_t a_panel = t - (kPrepackedB ? 0 : col_panels);
      if constexpr (!kPrepackedB) {
        if (a_panel < 0) {
          pack_b(c0 + t * K::kCols, steps, packed_b.get() + t * steps * TB);
          continue;
        }
      }
      if constexpr (!kPrepackedA) pack_a(r0 + a_panel * K::kRows, steps, packed_a.get() + a_panel * steps * TA);
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
            else K::store(acc, out.c + r0 * out.ldc + c0, out.ldc, t * K::kRows, u * K::kCols, n, m);
          }
      }
      if constexpr (Out::kBuffered)
        out.finish(r0 + i0, r0 + std::min(n, t1 * K::kRows), c0 + j0, c0 + std::min(m, u1 * K::kCols),
                   static_cast<const typename K::Elem*>(buffer.get()), K::kBlockCols);
    }
  }
}

/// The product of an n x k and a k x m operand, whose panels pack_a(i0, steps, dst) and
/// pack_b(j0, steps, dst) write in K's layout (the kernel's pack_a / pack_b, bound to the
/// operands by the caller), on `threads` threads (1: the calling thread only), with kernel K,
/// into `out` (GemmStore, GemmStreamStore or GemmBlockEpilogue). k may be 0 (zeros).
///
/// Where one operand's packed panels would pass kKeptScratchBytes and the other's fit, the large
/// one is packed a range at a time: the product runs in parts, ranges of columns whose b panels
/// fit (or of rows whose a panels fit), each part packing its range and the small operand again.
/// The scratch then stays in the kept buffers: GPT-2's tied head (256 x 768 x 50304, b 154 MB
/// packed; its weight gradient 50304 x 256 x 768, a 51 MB) allocated and faulted its panels anew
/// every call, and cached, they raised the training step's peak memory by 0.2 GiB. Where both
/// are large (4096^3 float; 256 x 50304 x 768, whose k is deep), parts would repack a large
/// operand many times (the latter ran at 0.46x), and the panels come from the host allocator.
template <class K, class PackA, class PackB, class Out>
void gemm_packed(const PackA& pack_a, const PackB& pack_b, std::int64_t n, std::int64_t k, std::int64_t m, int threads,
                 const Out& out) {
  using Packed = typename K::Packed;
  const std::int64_t steps = (k + K::kStep - 1) / K::kStep;
  auto panels_that_fit = [&](std::int64_t step_elems) {
    const std::int64_t panel_bytes = std::max<std::int64_t>(1, steps * step_elems * std::int64_t(sizeof(Packed)));
    return std::max<std::int64_t>(1, std::int64_t(kKeptScratchBytes) / panel_bytes);
  };
  // prepacked operands need no scratch, so they always fit
  const std::int64_t rows_that_fit = is_prepacked_v<PackA> ? n : panels_that_fit(K::kStepElemsA) * K::kRows;
  const std::int64_t cols_that_fit = is_prepacked_v<PackB> ? m : panels_that_fit(K::kStepElemsB) * K::kCols;
  const bool a_fits = rows_that_fit >= n, b_fits = cols_that_fit >= m;
  const std::int64_t part_rows = b_fits ? rows_that_fit : n, part_cols = a_fits ? cols_that_fit : m;
  for (std::int64_t c0 = 0; c0 < m; c0 += part_cols)
    for (std::int64_t r0 = 0; r0 < n; r0 += part_rows)
      gemm_packed_part<K>(pack_a, pack_b, r0, std::min(part_rows, n - r0), k, c0, std::min(part_cols, m - c0), threads,
                          out);
}

/// The pack_b of batch index bi for gemm_packed: pack_b(bi, j0, steps, dst) bound to bi, or
/// prepacked panels themselves, which serve every index (a weight broadcast over the batch).
template <class PackB>
auto packer_b_at(const PackB& pack_b, std::int64_t bi) {
  if constexpr (is_prepacked_v<PackB>) return pack_b;
  else return [&pack_b, bi](std::int64_t j0, std::int64_t steps, auto* dst) { pack_b(bi, j0, steps, dst); };
}

/// For every batch index bi of `batch`, the n x k x m product whose panels pack_a(bi, i0, steps,
/// dst) and pack_b(bi, j0, steps, dst) write (kernel K's layout; or PrepackedPanels), in blocks:
/// finish(bi, i0, i1, j0, j1, block, ld) gets rows [i0, i1) x columns [j0, j1) of it (block(i - i0, j - j0) at
/// block[(i - i0) ld + j - j0], K::Elem) once they are complete, on the thread that computed them,
/// while they are in cache: the driver of every GEMM epilogue.
template <class K, class PackA, class PackB, class Finish>
void gemm_packed_blocks(const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m, const PackA& pack_a,
                        const PackB& pack_b, const Finish& finish) {
  for_each_packed_product(batch.numel(), n, k, m, [&](std::int64_t bi, int threads) {
    auto done = [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1, const typename K::Elem* block,
                    std::int64_t ld) { finish(bi, i0, i1, j0, j1, block, ld); };
    gemm_packed<K>([&](std::int64_t i0, std::int64_t steps, auto* dst) { pack_a(bi, i0, steps, dst); },
                   packer_b_at(pack_b, bi), n, k, m, threads, GemmBlockEpilogue<decltype(done)>{done});
  });
}

/// c[bi] = the n x k x m product whose panels pack_a(bi, i0, steps, dst) and pack_b(bi, j0, steps,
/// dst) write (kernel K's layout; or PrepackedPanels), for every batch index bi of `batch`; c
/// contiguous (batch..., n, m). Large outputs stream out through the thread's block buffer (GemmStreamStore).
template <class K, class PackA, class PackB>
void gemm_packed_batched(const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m, const PackA& pack_a,
                         const PackB& pack_b, typename K::Elem* c) {
  const bool stream = n * m * std::int64_t(sizeof(typename K::Elem)) >= kStreamingBytes;
  for_each_packed_product(batch.numel(), n, k, m, [&](std::int64_t bi, int threads) {
    auto run = [&](const auto& out) {
      gemm_packed<K>([&](std::int64_t i0, std::int64_t steps, auto* dst) { pack_a(bi, i0, steps, dst); },
                     packer_b_at(pack_b, bi), n, k, m, threads, out);
    };
    if (stream) run(GemmStreamStore<typename K::Elem>{c + bi * n * m, m});
    else run(GemmStore<typename K::Elem>{c + bi * n * m, m});
  });
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
