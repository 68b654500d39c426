// SPDX-License-Identifier: MIT
/// @file The CPU bfloat16 GEMM on AMX-BF16 tiles (TDPBF16PS), and which bfloat16 GEMM this process runs (bf16_gemm_path).
///
/// c = a b with a (n x k), b (k x m) and c in bfloat16. Each output is sum_k a(i, k) b(k, j) with
/// every product exact (8-bit x 8-bit significands), fp32 sums, rounded once to bfloat16: the math
/// of the portable path (cast to float, Eigen's SGEMM, round), with two differences that come from
/// the instruction (measured on the development CPU, a Sapphire Rapids):
/// - TDPBF16PS treats denormal inputs as zero (bf16 operands and the fp32 accumulator) and flushes
///   denormal results, whatever MXCSR says: a bf16 2^-127 times 2^100 gives 0 (exact: 2^-27), a
///   product of 2^-63 and 2^-64 gives 0, an accumulator of 2^-127 plus 0 gives 0. Bf16 denormals
///   are below 2^-126, so only inputs or sums that small change.
/// - the order of the fp32 additions: the two products of a k pair are added first (rounded to
///   fp32: -1 + (1 + 2^-30) gives 0), and neighbouring pairs before the accumulator
///   (2^24 + (1 + 0) + (1 + 0) gives 2^24 + 2, where pair-by-pair sums give 2^24). Every addition
///   rounds to fp32 (nearest even), so the bound of any order holds: |error| <= (k - 1) 2^-24
///   sum_k |a b| before the final rounding; the last bits differ from Eigen's blocked order.
///
/// Layout. A tile holds 16 rows of 64 bytes. A's tiles are 16 rows x 32 bf16 of a (k in steps of
/// 32); B's are 16 k pairs x 16 columns, each row [b(2p, j), b(2p+1, j)] for 16 j (the VNNI pair
/// layout); C's are 16 x 16 fp32. Both operands are packed once per product, k padded to a
/// multiple of 32 and rows / columns to 32 with zeros (which add 0 to real outputs, or land in
/// outputs that are never stored): a in panels of 32 rows, b in panels of 32 columns, each 32-k
/// step of a panel two tiles (2 KiB) back to back. The register block is 2 x 2 C tiles
/// (tmm0-3, a 32 x 32 output) fed by 2 A tiles (tmm4-5) and 2 B tiles (tmm6-7): 4 tile loads per
/// 4 TDPBF16PS. Output blocks of kBlockRows x kBlockCols go to OpenMP threads (each configures
/// its tiles and releases them at the end); within a block, k runs in kSliceSteps-step slices:
/// a slice of a b panel (32 KiB) stays in L1 while the block's 8 a panels stream from L2 (256
/// KiB), partial sums between slices in an fp32 scratch block (tile stores and loads).
///
/// Dispatch (weft::matmul, bfloat16 on the CPU): this GEMM where the build targets AMX-BF16
/// (`__AMX_TILE__`, `__AMX_BF16__`, e.g. -march=native on Sapphire Rapids; not under nvcc) and
/// Linux lets the process use tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA), asked once
/// per process); elsewhere, including a refused request, cast to float + Eigen's SGEMM + one
/// rounding. There is no AVX512-BF16 (vdpbf16ps) GEMM any more: on Sapphire Rapids vdpbf16ps zmm
/// issues once per 2 cycles (16 bf16 MACs a cycle, half the fp32 FMA rate; a microbenchmark),
/// and a packed vdpbf16ps GEMM (commit beb68db, removed) ran 2048^3 at 143 GFLOP/s against 156
/// for cast + SGEMM + round (0.92x) in a build without AMX; LLVM's Zen 4 model
/// (X86ScheduleZnver4.td, from AMD's optimization guide) gives DPBF16PS 6 cycles on one of two
/// pipes, below Zen 4's one 512-bit FMA a cycle. bf16_gemm_path() says which path runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "weft/backend/cpu/gemm.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"
#include "weft/dense/reduce_plan.hpp"

// 1 where this translation unit can run bfloat16 GEMMs on AMX tiles: compiled for AMX-BF16 (with
// the AVX-512 the packing and rounding use) by a host compiler for Linux (the permission request
// is a Linux system call; nvcc's passes keep the portable path).
#if defined(__AMX_TILE__) && defined(__AMX_BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    defined(__linux__) && !defined(__CUDACC__)
#define WEFT_GEMM_AMX 1
#else
#define WEFT_GEMM_AMX 0
#endif

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

#if WEFT_GEMM_AMX
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace weft::detail::cpu {

/// Whether this translation unit is built with the AMX GEMM (it runs only if amx_permitted()).
inline constexpr bool kGemmAmx = WEFT_GEMM_AMX;

/// Whether this process may run AMX tile instructions: Linux (5.16+) grants tile data per process
/// on request; the first call asks (thread-safe: a function-local static), later calls return the
/// answer. False in builds without the AMX GEMM, and where the kernel or the CPU refuses.
inline bool amx_permitted() {
#if WEFT_GEMM_AMX
  static const bool permitted = [] {
    constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return permitted;
#else
  return false;
#endif
}

/// The GEMM bfloat16 matmul runs on the CPU in this translation unit and process:
/// "amx-bf16" (gemm_amx) or "float" (cast to float, Eigen's SGEMM, round once).
inline const char* bf16_gemm_path() { return amx_permitted() ? "amx-bf16" : "float"; }

#if WEFT_GEMM_AMX

/// Block sizes: a 32 x 32 register block (2 x 2 tiles), 256 x 256 output blocks per thread,
/// k in slices of 16 steps of 32 (a 512 x 32 b panel slice is 32 KiB, within L1's 48 KiB).
struct GemmAmxTile {
  static constexpr std::int64_t kRows = 32, kCols = 32, kStep = 32;
  static constexpr std::int64_t kTileElems = 16 * 32;  // bf16 in one A or B tile (1 KiB)
  static constexpr std::int64_t kBlockRows = 256, kBlockCols = 256, kSliceSteps = 16;
};

/// The tile configuration (palette 1): tmm0-7 all 16 rows of 64 bytes.
struct alignas(64) AmxTileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

/// c (4 fp32 tiles, 1 KiB each: rows 0-15 / 16-31 x columns 0-15 / 16-31) = (zero if `first`,
/// else c) + the `steps` 32-k steps of a packed a panel (2 tiles a step) times a packed b panel.
inline void gemm_amx_block(const std::uint16_t* a, const std::uint16_t* b, std::int64_t steps, float* c, bool first) {
  constexpr std::int64_t T = GemmAmxTile::kTileElems;
  if (first) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
  } else {
    _tile_loadd(0, c, 64);
    _tile_loadd(1, c + 256, 64);
    _tile_loadd(2, c + 512, 64);
    _tile_loadd(3, c + 768, 64);
  }
  for (std::int64_t s = 0; s < steps; ++s, a += 2 * T, b += 2 * T) {
    _tile_loadd(4, a, 64);
    _tile_loadd(6, b, 64);
    _tile_loadd(7, b + T, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_loadd(5, a + T, 64);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, c, 64);
  _tile_stored(1, c + 256, 64);
  _tile_stored(2, c + 512, 64);
  _tile_stored(3, c + 768, 64);
}

/// Mask of the first `count` (clamped to 0..32) lanes.
inline __mmask32 amx_lanes(std::int64_t count) {
  return count >= 32 ? ~__mmask32(0) : count <= 0 ? __mmask32(0) : __mmask32((1u << count) - 1);
}

/// Packs a row panel: rows i0.. i0 + 31 of a as `steps` pairs of A tiles (row r of the step at
/// dst + step * 1024 + r * 32), zeros past n rows and k columns.
inline void gemm_amx_pack_a(const weft::bfloat16* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t i0,
                            std::int64_t steps, std::uint16_t* dst) {
  for (std::int64_t s = 0; s < steps; ++s)
    for (std::int64_t r = 0; r < GemmAmxTile::kRows; ++r) {
      const std::int64_t i = i0 + r, k0 = s * 32;
      const __m512i v = i < n ? _mm512_maskz_loadu_epi16(amx_lanes(k - k0), a + i * lda + k0) : _mm512_setzero_si512();
      _mm512_storeu_si512(dst + s * 2 * GemmAmxTile::kTileElems + r * 32, v);
    }
}

/// Packs a column panel: columns j0.. j0 + 31 of b as `steps` pairs of B tiles (columns 0-15,
/// then 16-31; row p of a tile holds the pairs [b(2p, j), b(2p + 1, j)]), zeros past k rows
/// and m columns.
inline void gemm_amx_pack_b(const weft::bfloat16* b, std::int64_t ldb, std::int64_t k, std::int64_t m, std::int64_t j0,
                            std::int64_t steps, std::uint16_t* dst) {
  // Interleave of x (row 2p) and y (row 2p + 1), 32 columns each: lanes 2c, 2c + 1 = x[c], y[c].
  alignas(64) std::uint16_t lo_idx[32], hi_idx[32];
  for (int c = 0; c < 16; ++c) {
    lo_idx[2 * c] = std::uint16_t(c), lo_idx[2 * c + 1] = std::uint16_t(32 + c);
    hi_idx[2 * c] = std::uint16_t(16 + c), hi_idx[2 * c + 1] = std::uint16_t(48 + c);
  }
  const __m512i lo = _mm512_load_si512(lo_idx), hi = _mm512_load_si512(hi_idx);
  const __mmask32 cols = amx_lanes(m - j0);
  for (std::int64_t s = 0; s < steps; ++s)
    for (std::int64_t p = 0; p < 16; ++p) {
      const std::int64_t k0 = s * 32 + 2 * p;
      const __m512i x = k0 < k ? _mm512_maskz_loadu_epi16(cols, b + k0 * ldb + j0) : _mm512_setzero_si512();
      const __m512i y = k0 + 1 < k ? _mm512_maskz_loadu_epi16(cols, b + (k0 + 1) * ldb + j0) : _mm512_setzero_si512();
      std::uint16_t* d = dst + s * 2 * GemmAmxTile::kTileElems + p * 32;
      _mm512_storeu_si512(d, _mm512_permutex2var_epi16(x, lo, y));
      _mm512_storeu_si512(d + GemmAmxTile::kTileElems, _mm512_permutex2var_epi16(x, hi, y));
    }
}

/// Aligned fp32 scratch.
struct AmxFree {
  void operator()(float* p) const { std::free(p); }
};

/// c (n x m, row stride ldc) = a (n x k, row stride lda) b (k x m, row stride ldb), all bfloat16,
/// on `threads` threads (1: the calling thread only). Needs amx_permitted(); k may be 0 (zeros).
inline void gemm_amx(const weft::bfloat16* a, std::int64_t lda, const weft::bfloat16* b, std::int64_t ldb,
                     weft::bfloat16* c, std::int64_t ldc, std::int64_t n, std::int64_t k, std::int64_t m, int threads) {
  using Tile = GemmAmxTile;
  constexpr std::int64_t TS = 2 * Tile::kTileElems;  // one 32-k step of a panel
  const std::int64_t steps = (k + Tile::kStep - 1) / Tile::kStep;
  const std::int64_t row_panels = (n + Tile::kRows - 1) / Tile::kRows, col_panels = (m + Tile::kCols - 1) / Tile::kCols;
  const std::int64_t block_rows = (n + Tile::kBlockRows - 1) / Tile::kBlockRows;
  const std::int64_t block_cols = (m + Tile::kBlockCols - 1) / Tile::kBlockCols;
  const std::int64_t blocks = block_rows * block_cols;
  const std::int64_t slices = std::max<std::int64_t>(1, (steps + Tile::kSliceSteps - 1) / Tile::kSliceSteps);
  constexpr std::int64_t kPanelsPerBlockRow = Tile::kBlockRows / Tile::kRows;
  constexpr std::int64_t kPanelsPerBlockCol = Tile::kBlockCols / Tile::kCols;
  // Partial sums of a block between slices; one register block's worth when k is one slice.
  const std::int64_t scratch_floats =
      (slices > 1 ? std::min(row_panels, kPanelsPerBlockRow) * std::min(col_panels, kPanelsPerBlockCol) : 1) * 1024;
  std::unique_ptr<std::uint16_t[]> packed_a(new std::uint16_t[std::size_t(std::max<std::int64_t>(1, row_panels * steps * TS))]);
  std::unique_ptr<std::uint16_t[]> packed_b(new std::uint16_t[std::size_t(std::max<std::int64_t>(1, col_panels * steps * TS))]);
  std::uint16_t* pa = packed_a.get();
  std::uint16_t* pb = packed_b.get();
  threads = int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks)));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t t = 0; t < row_panels + col_panels; ++t) {
      if (t < row_panels) gemm_amx_pack_a(a, lda, n, k, t * Tile::kRows, steps, pa + t * steps * TS);
      else gemm_amx_pack_b(b, ldb, k, m, (t - row_panels) * Tile::kCols, steps, pb + (t - row_panels) * steps * TS);
    }

    const AmxTileConfig config;
    _tile_loadconfig(&config);
    std::unique_ptr<float, AmxFree> scratch(
        static_cast<float*>(std::aligned_alloc(64, std::size_t(scratch_floats) * sizeof(float))));
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t t0 = blk / block_cols * kPanelsPerBlockRow, u0 = blk % block_cols * kPanelsPerBlockCol;
      const std::int64_t t1 = std::min(row_panels, t0 + kPanelsPerBlockRow);
      const std::int64_t u1 = std::min(col_panels, u0 + kPanelsPerBlockCol);
      for (std::int64_t sl = 0; sl < slices; ++sl) {
        const std::int64_t s0 = sl * Tile::kSliceSteps, ns = std::min(Tile::kSliceSteps, steps - s0);
        const bool last = sl + 1 == slices;
        for (std::int64_t u = u0; u < u1; ++u)
          for (std::int64_t t = t0; t < t1; ++t) {
            float* acc = scratch.get() + (slices > 1 ? ((t - t0) * (u1 - u0) + (u - u0)) * 1024 : 0);
            gemm_amx_block(pa + (t * steps + s0) * TS, pb + (u * steps + s0) * TS, ns, acc, sl == 0);
            if (!last) continue;
            // The one rounding to bfloat16 (round to nearest even, as weft::bfloat16(float)).
            for (int q = 0; q < 4; ++q)
              for (std::int64_t r = 0; r < 16; ++r) {
                const std::int64_t i = t * Tile::kRows + q / 2 * 16 + r, j = u * Tile::kCols + q % 2 * 16;
                const std::int64_t lanes = std::min<std::int64_t>(16, m - j);
                if (i >= n || lanes <= 0) continue;
                const float* src = acc + q * 256 + r * 16;
                weft::bfloat16* dst = c + i * ldc + j;
                if (lanes == 16) {
                  simd::store_float<16>(dst, simd::Vec<float, 16>{(simd::Vec<float, 16>::Raw)_mm512_loadu_ps(src)});
                } else {
                  for (std::int64_t l = 0; l < lanes; ++l) dst[l] = weft::bfloat16(src[l]);
                }
              }
          }
      }
    }
    _tile_release();
  }
}

/// c[b] = a[b] b[b] for every batch index of `batch`, with gemm_batched's conventions (a[b] is
/// n x k with row stride lda at a + sum_d coord_d a_batch[d]; likewise b; c contiguous).
/// Needs amx_permitted().
inline void gemm_amx_batched(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch,
                             const weft::bfloat16* b, std::int64_t ldb, const Strides& b_batch, weft::bfloat16* c,
                             const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  const std::int64_t count = batch.numel();
  auto product = [&](std::int64_t bi, int threads) {
    std::int64_t oa, ob;
    batch_offsets(bi, batch, a_batch, b_batch, oa, ob);
    gemm_amx(a + oa, lda, b + ob, ldb, c + bi * n * m, m, n, k, m, threads);
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

#endif  // WEFT_GEMM_AMX

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
