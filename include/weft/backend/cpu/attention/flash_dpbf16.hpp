// SPDX-License-Identifier: MIT
/// @file bfloat16 flash attention on AVX512-BF16 (vdpbf16ps): the CPU flash kernels with their block products (q k^T, p v and the backward's five) as bfloat16 pair dot products in zmm registers.
///
/// The algorithm and its loops are backend/cpu/attention/flash.hpp's (FlashAttention-2 forward and backward,
/// scores in log2 units, lse in double, dominant_ds, dropout): flash_forward_cpu and
/// flash_backward_cpu run here with the block products below in place of block_gemm_panels.
/// Operands are bfloat16; vdpbf16ps multiplies exactly and sums in fp32, rounding each addition to
/// nearest even (backend/cpu/gemm/dpbf16.hpp: its order, its bound, and its reading of denormals as zero).
/// Each product sums from zero and is added to its fp32 output once (block_gemm_tile says why).
/// The weights p (after dropout) and dS, computed in fp32, are rounded once to bfloat16 (nearest
/// even) to enter the p v, p^T dO, dS^T q and dS k products, as FlashAttention-2 does on tensor
/// cores and backend/cpu/attention/flash_amx.hpp on AMX tiles; rowmax, rowsum, lse, D and every accumulator
/// (o, dq, dk, dv) stay fp32. The backward pass recomputes the forward's scores bit for bit (the
/// same words through the same tile: dpbf16_tile's order depends only on the operands), which the
/// weights' exactness needs (flash_backward_cpu says why).
///
/// Operands. Every product is C (+)= A B with k in pairs (backend/cpu/gemm/dpbf16.hpp): B as rows of words
/// [b(2p, j), b(2p + 1, j)], 64 columns (4 zmm) a tile; A read one word (a(i, 2p), a(i, 2p + 1))
/// at a time, through a row stride and a pair stride. So A is either rows of words (pairs along a
/// row: Q and dO by rows, p and dS rounded row by row) or rows interleaved in pairs (p^T and dS^T:
/// rows 2p and 2p + 1 of p give the words of pair p of every column), and no block is transposed
/// element by element. B operands: K^T and V^T as word columns (the words of key j's row form
/// column j), V, Q, dO and K as interleaved row pairs. K^T and V of every key block are packed
/// once per forward call; per query head Q and dO (rows and pairs) once per backward call; K^T,
/// V^T and K per key block by its thread.
///
/// Register tile: 4 rows x 4 zmm (64 columns), 16 accumulators, 4 loads and 4 broadcasts per 16
/// instructions: flash's blocks (128 rows, head dims padded to 64) are whole tiles, and each block
/// product is small enough (a 128 x 64-pair operand is 32 KiB) to stay in L1 and L2.
///
/// Dispatch (weft::nn::sdpa_forward / sdpa_backward, bfloat16 on the CPU): here in builds for
/// AVX512-BF16 without AMX (WEFT_GEMM_DPBF16, e.g. -march=native on Zen 4 or Cooper Lake; an AMX
/// build runs tiles, and its fp32 kernels where tiles do not run: backend/cpu/gemm/dpbf16.hpp says why).
/// Dropout included: it scales the fp32 weights before they are rounded.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "weft/backend/cpu/attention/flash.hpp"
#include "weft/backend/cpu/gemm/dpbf16.hpp"
#include "weft/backend/cpu/line_aligned.hpp"

#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu::flash {
inline namespace WEFT_BACKEND_ABI {

/// Whether bfloat16 flash attention may run its block products on vdpbf16ps in this translation
/// unit.
inline constexpr bool flash_dpbf16_available() { return weft::detail::cpu::kGemmDpbf16; }

#if WEFT_GEMM_DPBF16

namespace dpbf16 {

using weft::bfloat16;
inline constexpr std::int64_t kB = FlashProblem<bfloat16>::kB;
inline constexpr int kTileRows = 4, kTileVecs = 4;
inline constexpr std::int64_t kTileCols = 16 * kTileVecs;
static_assert(kB % kTileRows == 0 && kB % kTileCols == 0 && FlashTiles<float>::Tile::kCols % kTileCols == 0,
              "flash blocks and padded head dims must be whole vdpbf16ps tiles");

/// Words (pairs of bfloat16) for n elements.
constexpr std::int64_t pairs_for(std::int64_t n) { return (n + 1) / 2; }

/// The word [x(r, 2p), x(r, 2p + 1)] of row r0 + r of src (head bh), zero halves past `cols`.
inline std::uint32_t row_word(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r, std::int64_t p,
                              std::int64_t cols) {
  const bfloat16* row = src.row(bh, r);
  const std::int64_t c = 2 * p;
  return cpu::bf16_pair(row[c * src.col_stride].bits,
                                      c + 1 < cols ? row[(c + 1) * src.col_stride].bits : std::uint16_t(0));
}

/// A operand by rows: dst[r ld + p] = word p of row r0 + r, for r < rows (zeros up to rows_pad
/// rows and ld words).
inline void pack_row_words(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                           std::int64_t cols, std::uint32_t* dst, std::int64_t ld, std::int64_t rows_pad) {
  std::fill(dst, dst + rows_pad * ld, 0u);
  for (std::int64_t r = 0; r < rows; ++r) {
    if (src.col_stride == 1) {  // the row's halves as they are; an odd tail's partner stays zero
      std::memcpy(dst + r * ld, src.row(bh, r0 + r), std::size_t(cols) * sizeof(bfloat16));
      continue;
    }
    for (std::int64_t p = 0; p < pairs_for(cols); ++p) dst[r * ld + p] = row_word(src, bh, r0 + r, p, cols);
  }
}

/// B operand whose columns are rows of src (x^T, k = src's column): dst[p ld + r] = word p of row
/// r0 + r, for p < pairs_for(cols), zeros for r in [rows, ld).
inline void pack_word_columns(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                              std::int64_t cols, std::uint32_t* dst, std::int64_t ld) {
  const std::int64_t pairs = pairs_for(cols);
  for (std::int64_t p = 0; p < pairs; ++p) std::fill(dst + p * ld + rows, dst + (p + 1) * ld, 0u);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t p = 0; p < pairs; ++p) dst[p * ld + r] = row_word(src, bh, r0 + r, p, cols);
}

/// B operand with k = src's row: dst[p ld + c] = [x(2p, c), x(2p + 1, c)] of rows r0.., zeros past
/// `rows` rows and `cols` columns, for p < pair_rows.
inline void pack_row_pairs(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                           std::int64_t cols, std::uint32_t* dst, std::int64_t ld, std::int64_t pair_rows) {
  const std::int64_t cs = src.col_stride;
  std::fill(dst, dst + pair_rows * ld, 0u);
  for (std::int64_t p = 0; p < pair_rows && 2 * p < rows; ++p) {
    const std::uint16_t* lo = reinterpret_cast<const std::uint16_t*>(src.row(bh, r0 + 2 * p));
    std::uint32_t* d = dst + p * ld;
    if (2 * p + 1 < rows) {
      const std::uint16_t* hi = reinterpret_cast<const std::uint16_t*>(src.row(bh, r0 + 2 * p + 1));
      for (std::int64_t c = 0; c < cols; ++c) d[c] = cpu::bf16_pair(lo[c * cs], hi[c * cs]);
    } else {
      for (std::int64_t c = 0; c < cols; ++c) d[c] = lo[c * cs];
    }
  }
}

/// The kB x kB fp32 block x (row-major) rounded once to bfloat16 (nearest even), row by row: an A
/// operand by rows (row stride kB / 2 words).
inline void round_rows(const float* x, std::uint32_t* dst) {
  auto* out = reinterpret_cast<std::uint16_t*>(dst);
  for (std::int64_t e = 0; e < kB * kB; e += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + e), (__m256i)_mm512_cvtneps_pbh(_mm512_loadu_ps(x + e)));
}

/// x rounded as round_rows, its rows interleaved in pairs: dst[p kB + j] = [x(2p, j), x(2p + 1, j)],
/// the words of x^T's row j (an A operand of row stride 1 and pair stride kB). One conversion of
/// two 16-float runs and one permute give 16 words.
inline void round_row_pairs(const float* x, std::uint32_t* dst) {
  alignas(64) std::uint16_t zip[32];
  for (int c = 0; c < 16; ++c) zip[2 * c] = std::uint16_t(c), zip[2 * c + 1] = std::uint16_t(16 + c);
  const __m512i order = _mm512_load_si512(zip);
  for (std::int64_t p = 0; p < kB / 2; ++p)
    for (std::int64_t j = 0; j < kB; j += 16) {
      // cvtne2ps: the second operand's 16 values in the low half
      const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(x + (2 * p + 1) * kB + j),
                                                        _mm512_loadu_ps(x + 2 * p * kB + j));
      _mm512_storeu_si512(dst + p * kB + j, _mm512_permutexvar_epi16(order, both));
    }
}

/// C (M x N fp32, row stride ldc) (+)= A B over `steps` pairs of k: A's word (i, p) at a + i rs +
/// p ps, B's words for pair p at b + p ldb (N of them). M a multiple of 4, N of 64. Each tile sums
/// from zero and is added to C once.
inline void product(std::int64_t M, std::int64_t N, std::int64_t steps, const std::uint32_t* a, std::int64_t rs,
                    std::int64_t ps, const std::uint32_t* b, std::int64_t ldb, float* c, std::int64_t ldc,
                    bool accumulate) {
  for (std::int64_t j = 0; j < N; j += kTileCols)
    for (std::int64_t i = 0; i < M; i += kTileRows) {
      __m512 acc[kTileRows][kTileVecs];
      for (auto& row : acc)
        for (__m512& x : row) x = _mm512_setzero_ps();
      cpu::dpbf16_tile<kTileRows, kTileVecs>(a + i * rs, rs, ps, b + j, ldb, steps, acc);
      WEFT_HOST_UNROLL(4)
      for (int r = 0; r < kTileRows; ++r)
        WEFT_HOST_UNROLL(4)
        for (int v = 0; v < kTileVecs; ++v) {
          float* dst = c + (i + r) * ldc + j + 16 * v;
          _mm512_storeu_ps(dst, accumulate ? _mm512_add_ps(_mm512_loadu_ps(dst), acc[r][v]) : acc[r][v]);
        }
    }
}

/// flash_forward_cpu's block products on vdpbf16ps (FloatForwardProducts' members): K^T (word
/// columns) and V (row pairs) of every key block packed once, each query block by its thread.
struct ForwardProducts {
  const FlashProblem<bfloat16>& fp;
  const std::int64_t e_pairs = pairs_for(fp.s.E), kt_size = e_pairs * kB, v_size = kB / 2 * fp.Evp;
  cpu::LineVector<std::uint32_t> packed =
      cpu::LineVector<std::uint32_t>(std::size_t(fp.s.batches * fp.s.H * fp.key_blocks * (kt_size + v_size)));

  explicit ForwardProducts(const FlashProblem<bfloat16>& problem) : fp(problem) {
    const std::int64_t blocks = fp.s.batches * fp.s.H * fp.key_blocks;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(blocks * 2 * (kt_size + v_size))))
    for (std::int64_t u = 0; u < blocks; ++u) {
      const std::int64_t bhk = u / fp.key_blocks, j0 = u % fp.key_blocks * kB, keys = std::min(kB, fp.s.S - j0);
      std::uint32_t* at = packed.data() + u * (kt_size + v_size);
      pack_word_columns(fp.k, bhk, j0, keys, fp.s.E, at, kB);
      pack_row_pairs(fp.v, bhk, j0, keys, fp.s.Ev, at + kt_size, fp.Evp, kB / 2);
    }
  }

  /// One thread's operands: its query block (rows of words) and the rounded weights.
  struct Thread {
    const ForwardProducts& g;
    cpu::LineVector<std::uint32_t> qs = cpu::LineVector<std::uint32_t>(std::size_t(kB * std::max<std::int64_t>(g.e_pairs, 1))),
                                   ps = cpu::LineVector<std::uint32_t>(std::size_t(kB * kB / 2));

    void load_queries(std::int64_t bh, std::int64_t i0, std::int64_t rows) {
      pack_row_words(g.fp.q, bh, i0, rows, g.fp.s.E, qs.data(), g.e_pairs, kB);
    }
    void scores(std::int64_t blk, float* sc) const {
      product(kB, kB, g.e_pairs, qs.data(), g.e_pairs, 1, g.packed.data() + blk * (g.kt_size + g.v_size), kB, sc, kB,
              false);
    }
    void add_pv(std::int64_t blk, const float* p, float* o) {
      round_rows(p, ps.data());
      const std::uint32_t* v = g.packed.data() + blk * (g.kt_size + g.v_size) + g.kt_size;
      product(kB, g.fp.Evp, kB / 2, ps.data(), kB / 2, 1, v, g.fp.Evp, o, g.fp.Evp, true);
    }
  };
};

/// flash_backward_cpu's block products on vdpbf16ps (FloatBackwardProducts' members). Per query
/// head, packed once: Q and dO as rows of words (q k^T, dO v^T) and as row pairs (dS^T q, p^T dO).
/// Per key block, by its thread: K^T and V^T as word columns, K as row pairs (dS k).
struct BackwardProducts {
  const FlashProblem<bfloat16>& fp;
  const SdpaRows<bfloat16>& dout;
  const std::int64_t Lp = fp.query_blocks * kB, Ep = fp.Ep, Evp = fp.Evp;
  const std::int64_t e_pairs = std::max<std::int64_t>(pairs_for(fp.s.E), 1),
                     ev_pairs = std::max<std::int64_t>(pairs_for(fp.s.Ev), 1), heads = fp.s.batches * fp.s.Hq;
  cpu::LineVector<std::uint32_t> q_rows = cpu::LineVector<std::uint32_t>(std::size_t(heads * Lp * e_pairs)),
                                 do_rows = cpu::LineVector<std::uint32_t>(std::size_t(heads * Lp * ev_pairs)),
                                 q_pairs = cpu::LineVector<std::uint32_t>(std::size_t(heads * Lp / 2 * Ep)),
                                 do_pairs = cpu::LineVector<std::uint32_t>(std::size_t(heads * Lp / 2 * Evp));

  BackwardProducts(const FlashProblem<bfloat16>& problem, const SdpaRows<bfloat16>& grad_out)
      : fp(problem), dout(grad_out) {
    const SdpaShape& s = fp.s;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(heads * Lp * 2 * (Ep + Evp))))
    for (std::int64_t u = 0; u < heads * fp.query_blocks; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      const std::int64_t at = bh * Lp + i0;
      pack_row_words(fp.q, bh, i0, rows, s.E, q_rows.data() + at * e_pairs, e_pairs, kB);
      pack_row_words(dout, bh, i0, rows, s.Ev, do_rows.data() + at * ev_pairs, ev_pairs, kB);
      pack_row_pairs(fp.q, bh, i0, rows, s.E, q_pairs.data() + at / 2 * Ep, Ep, kB / 2);
      pack_row_pairs(dout, bh, i0, rows, s.Ev, do_pairs.data() + at / 2 * Evp, Evp, kB / 2);
    }
  }

  /// One thread's operands: its key block's K^T, V^T and K, and a block pair's rounded weights.
  struct Thread {
    const BackwardProducts& g;
    cpu::LineVector<std::uint32_t> kt = cpu::LineVector<std::uint32_t>(std::size_t(g.e_pairs * kB)),
                                   vt = cpu::LineVector<std::uint32_t>(std::size_t(g.ev_pairs * kB)),
                                   kp = cpu::LineVector<std::uint32_t>(std::size_t(kB / 2 * g.Ep)),
                                   ws = cpu::LineVector<std::uint32_t>(std::size_t(kB * kB / 2));

    void load_keys(std::int64_t, std::int64_t bhk, std::int64_t j0, std::int64_t keys) {
      pack_word_columns(g.fp.k, bhk, j0, keys, g.fp.s.E, kt.data(), kB);
      pack_word_columns(g.fp.v, bhk, j0, keys, g.fp.s.Ev, vt.data(), kB);
      pack_row_pairs(g.fp.k, bhk, j0, keys, g.fp.s.E, kp.data(), g.Ep, kB / 2);
    }
    void scores(std::int64_t at, float* s) const {
      product(kB, kB, pairs_for(g.fp.s.E), g.q_rows.data() + at * g.e_pairs, g.e_pairs, 1, kt.data(), kB, s, kB, false);
    }
    void dp(std::int64_t at, float* dp) const {
      product(kB, kB, pairs_for(g.fp.s.Ev), g.do_rows.data() + at * g.ev_pairs, g.ev_pairs, 1, vt.data(), kB, dp, kB,
              false);
    }
    void add_dv(std::int64_t at, const float* w, float* dv) {
      round_row_pairs(w, ws.data());
      product(kB, g.Evp, kB / 2, ws.data(), 1, kB, g.do_pairs.data() + at / 2 * g.Evp, g.Evp, dv, g.Evp, true);
    }
    void add_dk_dq(std::int64_t at, const float* ds, float* dk, float* dq) {
      round_row_pairs(ds, ws.data());
      product(kB, g.Ep, kB / 2, ws.data(), 1, kB, g.q_pairs.data() + at / 2 * g.Ep, g.Ep, dk, g.Ep, true);
      round_rows(ds, ws.data());
      product(kB, g.Ep, kB / 2, ws.data(), kB / 2, 1, kp.data(), g.Ep, dq, g.Ep, true);
    }
  };
};

}  // namespace dpbf16

#endif  // WEFT_GEMM_DPBF16

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail::cpu::flash

#endif  // !defined(__CUDA_ARCH__)
