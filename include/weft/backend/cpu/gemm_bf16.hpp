// SPDX-License-Identifier: MIT
/// @file The CPU bfloat16 GEMM on AVX512-BF16's pair dot product (vdpbf16ps): packed bf16 pairs, fp32 accumulators, one rounding to bfloat16.
///
/// c = a b with a (n x k), b (k x m) and c in bfloat16. Each output is sum_k a(i, k) b(k, j) with
/// every product exact in fp32 (8-bit x 8-bit significands) and fp32 sums, rounded once to
/// bfloat16: the math of the portable path (cast to float, Eigen's SGEMM, round), with two
/// differences that come from the instruction:
/// - vdpbf16ps treats denormal inputs as zero (bf16 operands and the fp32 accumulator) and
///   flushes denormal results to zero, whatever MXCSR says (checked on the development CPU, a
///   Sapphire Rapids: a bf16 2^-127 times 2^100 gives 0, a product of 2^-63 and 2^-64 gives 0,
///   an accumulator of 2^-127 plus 0 gives 0). Bf16 denormals are below 2^-126, so only
///   inputs or sums that small change.
/// - the order of the fp32 additions: per 32-bit lane, acc + a(i, 2p+1) b(2p+1, j), then
///   + a(i, 2p) b(2p, j), one rounding each (round to nearest even), pair after pair along k in
///   blocks. Any order obeys the same bound, |error| <= (k - 1) 2^-24 sum_k |a b| before the final
///   rounding; the last bits differ from Eigen's blocked order.
///
/// Layout (the VNNI pair layout the instruction reads): b is packed as k/2 rows of m column pairs
/// [b(2p, j), b(2p+1, j)] (k padded to even, m to the tile width, with zeros), in column tiles of
/// kCols; a as row tiles of kRows, each (a(i, 2p), a(i, 2p+1)) one 32-bit word, broadcast by
/// the instruction. A kRows x kCols tile of c lives in kRows x kVecs fp32 registers; per k pair:
/// kVecs loads of b, kRows broadcasts of a, kRows kVecs dot products. The output is cut into
/// kBlockRows x kBlockCols blocks (OpenMP over them); within a block, k runs in kBlockPairs
/// slices (a kBlockPairs x kCols slice of packed b is 32 KiB: it stays in L1 across the row
/// tiles, the block's slice of b in L2), partial sums in an fp32 scratch block.
///
/// Everything here exists only where the compiler targets AVX512-BF16 (`__AVX512BF16__`, e.g.
/// -march=native on Sapphire Rapids or Zen 4) and the translation unit is not compiled by nvcc;
/// kGemmBf16Dot says which, and weft::matmul keeps the portable path elsewhere.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "weft/backend/cpu/gemm.hpp"
#include "weft/backend/cpu/pointwise.hpp"
#include "weft/core/shape.hpp"
#include "weft/dense/reduce_plan.hpp"

// 1 where this translation unit runs bfloat16 GEMMs on vdpbf16ps: compiled for AVX512-BF16 by a
// host compiler (nvcc's passes keep the portable path; its host and device code see 0).
#if defined(__AVX512BF16__) && !defined(__CUDACC__)
#define WEFT_GEMM_BF16_DOT 1
#else
#define WEFT_GEMM_BF16_DOT 0
#endif

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

#if WEFT_GEMM_BF16_DOT
#include <immintrin.h>
#endif

namespace weft::detail::cpu {

/// Whether bfloat16 matmul runs on vdpbf16ps in this translation unit (else: float + Eigen).
inline constexpr bool kGemmBf16Dot = WEFT_GEMM_BF16_DOT;

/// The algorithm bfloat16 matmul runs here, in words (logs, benchmarks, tests).
inline constexpr const char* kGemmBf16Name =
    kGemmBf16Dot ? "avx512-bf16 vdpbf16ps, fp32 accumulation" : "cast to float, Eigen SGEMM, round once";

#if WEFT_GEMM_BF16_DOT

/// Tile and block sizes. vdpbf16ps zmm issues once per 2 cycles here (Sapphire Rapids: it takes
/// both FMA ports, ~8 cycles latency), so any tile with >= 4 independent accumulators keeps it
/// busy and loads are far from the limit; 6 x 4 leaves registers for the 4 b packets.
struct GemmBf16Tile {
  static constexpr int kRows = 6;
  static constexpr int kVecs = 4;
  static constexpr int kCols = kVecs * 16;
  static constexpr std::int64_t kBlockRows = 16 * kRows;  // 96
  static constexpr std::int64_t kBlockCols = 4 * kCols;   // 256
  static constexpr std::int64_t kBlockPairs = 128;        // 256 k per slice
};

/// acc[r][v] += sum over `pairs` k pairs of a pair (r) . b pair (16 v + lane): a is packed
/// [pair][kRows] words, b [pair][kCols] words.
template <int R, int NV>
inline __attribute__((always_inline)) void gemm_bf16_tile(const std::uint32_t* a, const std::uint32_t* b,
                                                          std::int64_t pairs, __m512 (&acc)[R][NV]) {
  for (std::int64_t p = 0; p < pairs; ++p, a += R, b += NV * 16) {
    __m512bh bv[NV];
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + v * 16);
WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(int(a[r]));  // folds into the {1to16} operand
WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, bv[v]);
    }
  }
}

/// The word holding the pair (lo, hi): lo in the low half, as vdpbf16ps reads element 2p.
inline std::uint32_t bf16_pair(const weft::bfloat16* lo, const weft::bfloat16* hi) {
  return std::uint32_t(lo ? lo->bits : 0) | std::uint32_t(hi ? hi->bits : 0) << 16;
}

/// c (n x m, row stride ldc) = a (n x k, row stride lda) b (k x m, row stride ldb), all bfloat16,
/// on `threads` threads (1: the calling thread only).
inline void gemm_bf16(const weft::bfloat16* a, std::int64_t lda, const weft::bfloat16* b, std::int64_t ldb,
                      weft::bfloat16* c, std::int64_t ldc, std::int64_t n, std::int64_t k, std::int64_t m,
                      int threads) {
  using Tile = GemmBf16Tile;
  constexpr int R = Tile::kRows, NV = Tile::kVecs, NC = Tile::kCols;
  const std::int64_t pairs = (k + 1) / 2;
  const std::int64_t row_tiles = (n + R - 1) / R, col_tiles = (m + NC - 1) / NC;
  const std::int64_t block_rows = (n + Tile::kBlockRows - 1) / Tile::kBlockRows;
  const std::int64_t block_cols = (m + Tile::kBlockCols - 1) / Tile::kBlockCols;
  const std::int64_t blocks = block_rows * block_cols;
  const bool sliced = pairs > Tile::kBlockPairs;
  std::unique_ptr<std::uint32_t[]> packed_a(new std::uint32_t[std::size_t(row_tiles * pairs * R)]);
  std::unique_ptr<std::uint32_t[]> packed_b(new std::uint32_t[std::size_t(col_tiles * pairs * NC)]);
  std::uint32_t* pa = packed_a.get();
  std::uint32_t* pb = packed_b.get();
  threads = int(std::max<std::int64_t>(1, std::min<std::int64_t>(threads, blocks)));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1))
  {
    // Packing: a row tile or a column tile per iteration; rows and columns beyond the matrix
    // and the odd k's partner are zeros (they add 0 * x = 0 to lanes that are never stored, or
    // 0 * 0 to real ones).
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t t = 0; t < row_tiles + col_tiles; ++t) {
      if (t < row_tiles) {
        std::uint32_t* dst = pa + t * pairs * R;
        for (int r = 0; r < R; ++r) {
          const std::int64_t i = t * R + r;
          if (i >= n) {
            for (std::int64_t p = 0; p < pairs; ++p) dst[p * R + r] = 0;
            continue;
          }
          const weft::bfloat16* row = a + i * lda;
          for (std::int64_t p = 0; p < pairs; ++p)
            dst[p * R + r] = bf16_pair(row + 2 * p, 2 * p + 1 < k ? row + 2 * p + 1 : nullptr);
        }
      } else {
        const std::int64_t u = t - row_tiles, j0 = u * NC, cols = std::min<std::int64_t>(NC, m - j0);
        std::uint32_t* dst = pb + u * pairs * NC;
        for (std::int64_t p = 0; p < pairs; ++p) {
          const weft::bfloat16* lo = b + 2 * p * ldb + j0;
          const weft::bfloat16* hi = 2 * p + 1 < k ? lo + ldb : nullptr;
          std::uint32_t* d = dst + p * NC;
          for (std::int64_t j = 0; j < cols; ++j) d[j] = std::uint32_t(lo[j].bits) | (hi ? std::uint32_t(hi[j].bits) << 16 : 0u);
          for (std::int64_t j = cols; j < NC; ++j) d[j] = 0;
        }
      }
    }

    // Partial sums of a block between k slices (fp32, kBlockRows x kBlockCols).
    std::unique_ptr<float[]> scratch(sliced ? new float[std::size_t(Tile::kBlockRows * Tile::kBlockCols)] : nullptr);
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t blk = 0; blk < blocks; ++blk) {
      const std::int64_t t0 = blk / block_cols * (Tile::kBlockRows / R), u0 = blk % block_cols * (Tile::kBlockCols / NC);
      const std::int64_t t1 = std::min(row_tiles, t0 + Tile::kBlockRows / R), u1 = std::min(col_tiles, u0 + Tile::kBlockCols / NC);
      for (std::int64_t p0 = 0; p0 < pairs; p0 += Tile::kBlockPairs) {
        const std::int64_t np = std::min(Tile::kBlockPairs, pairs - p0);
        const bool first = p0 == 0, last = p0 + np == pairs;
        for (std::int64_t u = u0; u < u1; ++u) {
          const std::uint32_t* bt = pb + u * pairs * NC + p0 * NC;
          for (std::int64_t t = t0; t < t1; ++t) {
            float* s = sliced ? scratch.get() + (t - t0) * R * Tile::kBlockCols + (u - u0) * NC : nullptr;
            __m512 acc[R][NV];
            for (int r = 0; r < R; ++r)
              for (int v = 0; v < NV; ++v)
                acc[r][v] = first ? _mm512_setzero_ps() : _mm512_loadu_ps(s + r * Tile::kBlockCols + v * 16);
            gemm_bf16_tile<R, NV>(pa + t * pairs * R + p0 * R, bt, np, acc);
            if (!last) {
              for (int r = 0; r < R; ++r)
                for (int v = 0; v < NV; ++v) _mm512_storeu_ps(s + r * Tile::kBlockCols + v * 16, acc[r][v]);
              continue;
            }
            // The one rounding to bfloat16 (round to nearest even, as weft::bfloat16(float)).
            const std::int64_t rows = std::min<std::int64_t>(R, n - t * R);
            for (int r = 0; r < rows; ++r) {
              weft::bfloat16* cr = c + (t * R + r) * ldc + u * NC;
              for (int v = 0; v < NV; ++v) {
                const std::int64_t lanes = std::min<std::int64_t>(16, m - u * NC - v * 16);
                if (lanes == 16) {
                  simd::store_float<16>(cr + v * 16, simd::Vec<float, 16>{(simd::Vec<float, 16>::Raw)acc[r][v]});
                } else if (lanes > 0) {
                  alignas(64) float tail[16];
                  _mm512_store_ps(tail, acc[r][v]);
                  for (std::int64_t l = 0; l < lanes; ++l) cr[v * 16 + l] = weft::bfloat16(tail[l]);
                }
              }
            }
          }
        }
      }
    }
  }
}

/// c[b] = a[b] b[b] for every batch index of `batch`, with gemm_batched's conventions (a[b] is
/// n x k with row stride lda at a + sum_d coord_d a_batch[d]; likewise b; c contiguous).
inline void gemm_bf16_batched(const weft::bfloat16* a, std::int64_t lda, const Strides& a_batch,
                              const weft::bfloat16* b, std::int64_t ldb, const Strides& b_batch, weft::bfloat16* c,
                              const Shape& batch, std::int64_t n, std::int64_t k, std::int64_t m) {
  const std::int64_t count = batch.numel();
  auto product = [&](std::int64_t bi, int threads) {
    std::int64_t coords[kMaxRank] = {};
    unravel(bi, batch.begin(), batch.rank(), coords);
    std::int64_t oa = 0, ob = 0;
    for (int d = 0; d < batch.rank(); ++d) oa += coords[d] * a_batch[d], ob += coords[d] * b_batch[d];
    gemm_bf16(a + oa, lda, b + ob, ldb, c + bi * n * m, m, n, k, m, threads);
  };
  // As gemm_batched: small products one per thread, large ones threaded inside.
  const bool over_batch = count > 1 && (count >= max_threads() || n * k * m < kSmallGemm);
  if (over_batch) {
    const int threads = int(std::min<std::int64_t>(count, max_threads()));
    WEFT_PRAGMA_OMP(omp parallel for num_threads(threads) schedule(static))
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, 1);
  } else {
    const int threads = threads_for(n * k * m / 64);
    for (std::int64_t bi = 0; bi < count; ++bi) product(bi, threads);
  }
}

#endif  // WEFT_GEMM_BF16_DOT

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
