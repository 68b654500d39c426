// SPDX-License-Identifier: MIT
/// @file bfloat16 flash attention on AMX-BF16 tiles: the CPU flash kernels' block products (q k^T, p v and the backward's five) as TDPBF16PS, softmax statistics in fp32.
///
/// The algorithm is backend/cpu/attention/flash.hpp's (FlashAttention-2 forward and backward, scores in log2
/// units, lse in double); only the block products change. Operands are bfloat16 tiles, every
/// product exact in fp32 (8 x 8-bit significands) and summed in fp32 (backend/cpu/gemm/amx.hpp states the
/// instruction's order of additions and its denormal flushing). The weights p and dS, computed in
/// fp32, are rounded once to bfloat16 to enter the p v, p^T dO, dS^T q and dS k products, as
/// FlashAttention-2 does on tensor cores; rowmax, rowsum, lse, D and every accumulator (o, dq,
/// dk, dv) stay fp32.
///
/// Tiles. A (16 rows x 32 bf16) is read straight from a row-major block (stride = its row bytes);
/// B (16 k pairs x 16 columns: row p holds [b(2p, j), b(2p + 1, j)] for 16 j, the VNNI pair layout)
/// is packed from a row-major block: for K^T (k = e) each key row's pairs of e go to one tile
/// column (transpose_pairs); for V (k = the key) two key rows interleave (interleave_rows). C is fp32, loaded and stored through its row
/// stride. Register blocking: backend/cpu/gemm/amx_tiles.hpp.
///
/// Backward in the transposed orientation: each block pair computes s^T = k q^T (rows = keys)
/// rather than s = q k^T, so p^T and dS^T come out row-major by key, the A operands of
/// dV += p^T dO and dK += dS^T q, and dq^T += k^T dS^T takes dS^T as B by interleaving pairs of its
/// rows: no block is ever transposed element by element. s^T's elements are the forward's s
/// bit for bit (the same products summed in the same order: the instruction is symmetric in
/// A and B), which the weights' exactness needs (flash_backward_cpu explains why).
///
/// Dispatch (weft::nn::sdpa_forward / sdpa_backward, bfloat16 on the CPU): here where the build
/// targets AMX-BF16 and AVX512-BF16 (WEFT_FLASH_AMX, e.g. -march=native on Sapphire Rapids) and the
/// process may use tiles (cpu::amx_permitted()); without dropout (the dropout mask is drawn per
/// query row: the transposed backward would gather it; dropout runs on the fp32 kernels).
/// Elsewhere in such a build (dropout, tiles refused) bfloat16 attention converts to fp32 and runs
/// backend/cpu/attention/flash.hpp's kernels, at the FMA rate that vdpbf16ps halves on these CPUs
/// (backend/cpu/gemm/dpbf16.hpp); builds for AVX512-BF16 without AMX run backend/cpu/attention/flash_dpbf16.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "weft/backend/cpu/attention/flash.hpp"
#include "weft/backend/cpu/gemm/amx_tiles.hpp"
#include "weft/backend/cpu/line_aligned.hpp"

#if WEFT_GEMM_AMX && defined(__AVX512BF16__)
#define WEFT_FLASH_AMX 1
#else
#define WEFT_FLASH_AMX 0
#endif

#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu::flash {
inline namespace WEFT_BACKEND_ABI {

/// Whether bfloat16 attention runs on AMX tiles in this translation unit and process.
inline bool flash_amx_available() {
#if WEFT_FLASH_AMX
  return weft::detail::cpu::amx_permitted();
#else
  return false;
#endif
}

#if WEFT_FLASH_AMX

namespace amx {

using weft::bfloat16;
using cpu::amx::kTile;
using cpu::amx::PackedB;
using cpu::amx::round_up;
using cpu::amx::tile_gemm;

/// dst = rows [r0, r0 + rows) of src (bh) as a row-major bf16 block of rows_pad x ld, zeros past
/// `rows` and `cols`: the A operand of a block product, and what the B packers below read.
inline void pack_a(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                   std::int64_t cols, std::uint16_t* dst, std::int64_t ld, std::int64_t rows_pad) {
  for (std::int64_t r = 0; r < rows_pad; ++r) {
    std::uint16_t* d = dst + r * ld;
    std::int64_t c = 0;
    if (r < rows) {
      const bfloat16* p = src.row(bh, r0 + r);
      if (src.col_stride == 1) {
        std::memcpy(d, p, std::size_t(cols) * sizeof(bfloat16));
        c = cols;
      } else {
        for (; c < cols; ++c) d[c] = p[c * src.col_stride].bits;
      }
    }
    std::fill(d + c, d + ld, std::uint16_t(0));
  }
}

/// A row-major bf16 block: its first element and its row stride (elements).
struct RowBlock {
  const std::uint16_t* data;
  std::int64_t ld;
};

/// Rows [r0, r0 + rows_pad) of src (bh) as a row-major block `cols` wide (padded): the tensor's own
/// rows where they are such a block (every row present, unit column stride, no column padding,
/// rows on 64-byte cache lines: a tile row across two lines loads at half speed, see
/// line_aligned.hpp), else pack_a's copy in `scratch` (row stride ld).
inline RowBlock row_block(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t rows,
                          std::int64_t cols, std::uint16_t* scratch, std::int64_t ld, std::int64_t rows_pad) {
  const bfloat16* first = rows > 0 ? src.row(bh, r0) : nullptr;
  if (rows == rows_pad && cols == ld && src.col_stride == 1 && src.row_stride * 2 % 64 == 0 &&
      src.row_stride < (std::int64_t(1) << 24) && reinterpret_cast<std::uintptr_t>(first) % 64 == 0)  // 32-bit gathers
    return {reinterpret_cast<const std::uint16_t*>(first), src.row_stride};
  pack_a(src, bh, r0, rows, cols, scratch, ld, rows_pad);
  return {scratch, ld};
}

/// B tiles of x^T for a row-major bf16 block x (rows x n, rows a multiple of 16, n of 32): k = the
/// column, j = the row. Row p of tile (group g, step s) holds [x(16 g + j, 32 s + 2p),
/// x(16 g + j, 32 s + 2p + 1)] for j < 16: one 32-bit pair of a row each, a 16 x 16 transpose of
/// pairs. Layout: group-major, n / 32 tiles a group.
inline void transpose_pairs(RowBlock x, std::int64_t rows, std::int64_t n, std::uint16_t* dst) {
  // A tile row is one gather: the 32-bit pair at column 2p of 16 consecutive rows (byte offsets).
  const __m512i row_offsets = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                 _mm512_set1_epi32(int(x.ld * 2)));
  for (std::int64_t g = 0; g < rows / 16; ++g)
    for (std::int64_t step = 0; step < n / 32; ++step) {
      std::uint16_t* tile = dst + (g * (n / 32) + step) * kTile;
      const std::uint16_t* from = x.data + 16 * g * x.ld + 32 * step;
      WEFT_HOST_UNROLL(16)
      for (std::int64_t p = 0; p < 16; ++p)
        _mm512_storeu_si512(tile + 32 * p, _mm512_i32gather_epi32(row_offsets, from + 2 * p, 1));
    }
}

/// B tiles of a row-major bf16 block x (rows x n, rows a multiple of 32, n of 32) with k = the
/// row, j = the column. Row p of tile (step s, group g) holds [x(32 s + 2p, 16 g + j),
/// x(32 s + 2p + 1, 16 g + j)] for j < 16: rows 2p and 2p + 1 interleaved, one permute per 32
/// columns. Layout: step-major, n / 16 tiles a step.
inline void interleave_rows(RowBlock x, std::int64_t rows, std::int64_t n, std::uint16_t* dst) {
  alignas(64) std::uint16_t lo_idx[32], hi_idx[32];
  for (int c = 0; c < 16; ++c) {
    lo_idx[2 * c] = std::uint16_t(c), lo_idx[2 * c + 1] = std::uint16_t(32 + c);
    hi_idx[2 * c] = std::uint16_t(16 + c), hi_idx[2 * c + 1] = std::uint16_t(48 + c);
  }
  const __m512i lo = _mm512_load_si512(lo_idx), hi = _mm512_load_si512(hi_idx);
  const std::int64_t groups = n / 16;
  for (std::int64_t r = 0; r < rows; r += 2) {
    std::uint16_t* step = dst + (r / 32) * groups * kTile + (r % 32) / 2 * 32;
    for (std::int64_t c = 0; c < n; c += 32) {
      const __m512i a = _mm512_loadu_si512(x.data + r * x.ld + c), b = _mm512_loadu_si512(x.data + (r + 1) * x.ld + c);
      _mm512_storeu_si512(step + (c / 16) * kTile, _mm512_permutex2var_epi16(a, lo, b));
      _mm512_storeu_si512(step + (c / 16 + 1) * kTile, _mm512_permutex2var_epi16(a, hi, b));
    }
  }
}

/// K^T and V tiles of key/value head h, all S keys (padded to whole key blocks of kB), for
/// q k^T (transpose_pairs: k = e) and p v (interleave_rows: k = the key), a block at a time
/// from the tensors' rows or through `scratch` (kB x max(Ep, Evp); row_block).
template <std::int64_t kB>
void pack_keys_values(const FlashProblem<bfloat16>& fp, std::int64_t h, std::int64_t Ep, std::int64_t Evp,
                      std::uint16_t* scratch, std::uint16_t* kt, std::uint16_t* v) {
  for (std::int64_t j0 = 0; j0 < fp.key_blocks * kB; j0 += kB) {
    const std::int64_t keys = std::clamp<std::int64_t>(fp.s.S - j0, 0, kB);
    transpose_pairs(row_block(fp.k, h, j0, keys, fp.s.E, scratch, Ep, kB), kB, Ep, kt + j0 * Ep);
    interleave_rows(row_block(fp.v, h, j0, keys, fp.s.Ev, scratch, Evp, kB), kB, Evp, v + j0 * Evp);
  }
}

/// dst[e] = bf16(x[e] a) for e < n, round to nearest even (16 at a time by vcvtneps2bf16).
inline void round_scaled(const float* x, std::int64_t n, float a, bfloat16* dst) {
  const __m512 av = _mm512_set1_ps(a);
  std::int64_t e = 0;
  for (; e + 16 <= n; e += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + e), (__m256i)_mm512_cvtneps_pbh(_mm512_mul_ps(_mm512_loadu_ps(x + e), av)));
  for (; e < n; ++e) dst[e] = bfloat16(x[e] * a);
}

/// 2^x for x <= 0 (a weight's exponent s - m): 2^x = 2^k 2^f, k = round(x), f = x - k in
/// [-1/2, 1/2], 2^f by a degree-5 polynomial (a relative minimax fit on [-1/2, 1/2]; measured max
/// relative error 1.9e-7 evaluated in float, about 1.6 ulp), 2^k by vscalefps. x is clamped at
/// -160 first: -inf (a masked key) gives exactly 0, and x in (-160, -126) a denormal. 9 vector
/// operations against simd::exp2_nonpositive's 13: the weight passes are about half of the
/// forward's time once the products run on tiles, and bf16 rounds every weight to 2^-9 anyway.
/// The backward pass recomputes every weight with this same function (flash_backward_cpu says
/// why the weights must match the forward's bit for bit).
inline __m512 exp2_weight(__m512 x) {
  x = _mm512_max_ps(x, _mm512_set1_ps(-160.0f));
  const __m512 k = _mm512_roundscale_ps(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512 f = _mm512_sub_ps(x, k);
  __m512 p = _mm512_set1_ps(1.326470170e-03f);
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(9.671504609e-03f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(5.550733581e-02f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(2.402224243e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(6.931470037e-01f));
  p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, k);
}

/// The lanewise max of v[0, N) as a tree: depth log2 N, where a running max is a chain of N
/// dependent vmaxps (4 cycles each) that the row's exponentials then wait for.
template <int N>
inline __m512 max_tree(const __m512* v) {
  if constexpr (N == 1) return v[0];
  else return _mm512_max_ps(max_tree<N / 2>(v), max_tree<N - N / 2>(v + N / 2));
}

/// One query row's online-softmax step over the NV x 16 scores of a key chunk, held in registers
/// (one pass over memory). x: the row's raw scores q.k, weighed as x c (c > 0), or its scores
/// already scaled and masked when `scaled` (weighed as x); m: its running max (of the weighed
/// scores); l16: its running sum as 16 partial sums (reduced once, at the end); o_row: its fp32
/// output accumulator (Evp floats), rescaled when the max moves. Writes the weights
/// 2^(x c - m) rounded to bf16 to p_row. With c > 0, max(x c) = c max(x) (rounding is monotonic),
/// so the exponent is one fma(x, c, -m) per score: one rounding instead of the two of
/// (x c) - m, and one instruction fewer (flash_backward_amx recomputes the weights the same way).
template <int NV>
inline void online_softmax_row(const float* x, bool scaled, float c, float& m, float* l16, float* o_row,
                               std::int64_t Evp, std::uint16_t* p_row) {
  __m512 v[NV];
  const float weigh = scaled ? 1.0f : c;
  WEFT_HOST_UNROLL(16)
  for (int i = 0; i < NV; ++i) v[i] = _mm512_loadu_ps(x + 16 * i);
  const float m_new = std::max(m, _mm512_reduce_max_ps(max_tree<NV>(v)) * weigh);
  if (m_new == -std::numeric_limits<float>::infinity()) {  // no key seen yet: weights 0
    for (int i = 0; i < NV; i += 2) _mm512_storeu_si512(p_row + 16 * i, _mm512_setzero_si512());
    return;
  }
  const __m512 wv = _mm512_set1_ps(weigh), shift = _mm512_set1_ps(-m_new);
  // 0 when m was -inf; 1 (no call) when the max did not move, most chunks after the first few.
  const float alpha = m_new == m ? 1.0f : std::exp2(m - m_new);
  __m512 sum = _mm512_mul_ps(_mm512_loadu_ps(l16), _mm512_set1_ps(alpha));
  WEFT_HOST_UNROLL(16)
  for (int i = 0; i < NV; ++i) {
    v[i] = exp2_weight(_mm512_fmadd_ps(v[i], wv, shift));
    sum = _mm512_add_ps(sum, v[i]);
  }
  WEFT_HOST_UNROLL(8)
  for (int i = 0; i < NV; i += 2) _mm512_storeu_si512(p_row + 16 * i, (__m512i)_mm512_cvtne2ps_pbh(v[i + 1], v[i]));
  if (alpha != 1.0f) FlashRow<float>::scale(o_row, Evp, alpha);
  _mm512_storeu_ps(l16, sum);
  m = m_new;
}

/// online_softmax_row for n (a multiple of 32, <= 256) scores.
inline void online_softmax_row(std::int64_t n, const float* x, bool scaled, float c, float& m, float* l16, float* o_row,
                               std::int64_t Evp, std::uint16_t* p_row) {
  switch (n / 32) {
    case 1: return online_softmax_row<2>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 2: return online_softmax_row<4>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 3: return online_softmax_row<6>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 4: return online_softmax_row<8>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 5: return online_softmax_row<10>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 6: return online_softmax_row<12>(x, scaled, c, m, l16, o_row, Evp, p_row);
    case 7: return online_softmax_row<14>(x, scaled, c, m, l16, o_row, Evp, p_row);
    default: return online_softmax_row<16>(x, scaled, c, m, l16, o_row, Evp, p_row);
  }
}

}  // namespace amx

/// flash_forward_cpu for bfloat16 on AMX tiles (same outputs and conventions). Needs
/// flash_amx_available() and no dropout. Each query block runs in strips of 32 rows (one row of
/// register blocks) against chunks of 256 keys: a strip's scores (32 x 256 fp32, 32 KiB) come
/// from q k^T, its weights from the softmax pass (during which the next strip's q k^T runs), and
/// p v adds to its output; a causal strip stops at its last visible key.
inline void flash_forward_amx(const FlashProblem<bfloat16>& fp, bfloat16* out, double* lse) {
  namespace cpu = weft::detail::cpu;
  using Row = FlashRow<float>;
  constexpr std::int64_t kB = FlashProblem<bfloat16>::kB, kStrip = 32, kChunk = 2 * kB;
  static_assert(kB % kStrip == 0 && kChunk <= 256, "AMX flash blocks are whole 32 x 32 register blocks, <= 16 packets a row");
  const SdpaShape& s = fp.s;
  const std::int64_t heads = s.batches * s.Hq, kv_heads = s.batches * s.H, units = heads * fp.query_blocks;
  if (units == 0) return;
  const std::int64_t E = s.E, Ev = s.Ev;
  const std::int64_t Ep = amx::round_up(std::max<std::int64_t>(E, 1), 32), Evp = amx::round_up(std::max<std::int64_t>(Ev, 1), 32);
  const std::int64_t e_steps = Ep / 32, Sp = fp.key_blocks * kB;
  // K^T (k = e, columns = keys) and V (k = key, columns = e) of every key/value head, packed once.
  const std::int64_t kt_size = Sp * Ep, v_size = Sp * Evp;
  cpu::LineScratch<std::uint16_t> kt_all(std::size_t(kv_heads * kt_size)), v_all(std::size_t(kv_heads * v_size));
  WEFT_PRAGMA_OMP(omp parallel num_threads(cpu::threads_for(kv_heads * (kt_size + v_size))))
  {
    cpu::LineVector<std::uint16_t> scratch(std::size_t(kB * std::max(Ep, Evp)));
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t h = 0; h < kv_heads; ++h)
      amx::pack_keys_values<kB>(fp, h, Ep, Evp, scratch.data(), kt_all.data() + h * kt_size, v_all.data() + h * v_size);
  }
  const float c = fp.c(), bias_unit = fp.bias_unit();
  const double to_natural = fp.to_natural();
  const int threads = int(std::min<std::int64_t>(units, cpu::threads_for(units * kB * s.S * (E + Ev))));

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
    const cpu::GemmAmxKernel::Thread tiles;
    cpu::LineVector<std::uint16_t> qs(std::size_t(kB * Ep)), p(std::size_t(kStrip * kChunk));
    cpu::LineVector<float> sc(std::size_t(2 * kStrip * kChunk)), o(std::size_t(kB * Evp)), m(kB), l16(std::size_t(kB * 16));
    WEFT_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t u = 0; u < units; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      const std::int64_t bhk = fp.kv_head(bh);
      const amx::RowBlock qb = amx::row_block(fp.q, bh, i0, rows, E, qs.data(), Ep, kB);
      Row::fill(o.data(), kB * Evp, 0.0f);
      Row::fill(m.data(), kB, -std::numeric_limits<float>::infinity());
      Row::fill(l16.data(), kB * 16, 0.0f);
      const amx::PackedB kt{kt_all.data() + bhk * kt_size, e_steps * amx::kTile, amx::kTile};
      const std::int64_t kb_end = fp.key_block_end(i0, rows);
      for (std::int64_t kb = 0; kb < kb_end; kb += kChunk / kB) {
        const std::int64_t j0 = kb * kB, chunk = std::min(kChunk, (kb_end - kb) * kB);
        const amx::PackedB vb{v_all.data() + bhk * v_size + j0 * Evp, amx::kTile, Evp / 16 * amx::kTile};
        // Keys of this chunk the last row of the strip at r0 sees, in whole 32-key steps (a causal
        // diagonal); 0 past the block.
        auto strip_keys = [&](std::int64_t r0) -> std::int64_t {
          if (r0 >= rows) return 0;
          if (!s.causal) return chunk;
          const std::int64_t last = i0 + std::min(rows, r0 + kStrip) - 1 + s.causal_offset;
          return amx::round_up(std::clamp<std::int64_t>(last - j0 + 1, 0, chunk), 32);
        };
        // Columns [j, j_end) of the strip at r0's scores q k^T.
        auto score_columns = [&](std::int64_t r0, float* into, std::int64_t j, std::int64_t j_end) {
          if (j >= j_end) return;
          amx::tile_gemm(kStrip, j_end - j, e_steps, qb.data + r0 * qb.ld, qb.ld, kt.from_column(j0 + j), into + j, kChunk,
                         false);
        };
        float* sc_now = sc.data();
        float* sc_next = sc.data() + kStrip * kChunk;
        std::int64_t keys = strip_keys(0);
        score_columns(0, sc_now, 0, keys);
        for (std::int64_t r0 = 0; r0 < rows; r0 += kStrip) {
          const std::int64_t strip_rows = std::min(kStrip, rows - r0), next_keys = strip_keys(r0 + kStrip);
          // The next strip's q k^T runs a slice of 64 columns after every 8 weight rows of this one:
          // the tile unit's products and the vector units' weights then overlap (bench/amx_tiles:
          // 9-11% off a strip at E = 128), where whole products before or after did not.
          auto next_slice = [&](std::int64_t slice) {
            score_columns(r0 + kStrip, sc_next, std::min(64 * slice, next_keys), std::min(64 * (slice + 1), next_keys));
          };
          if (keys == 0) {
            for (std::int64_t slice = 0; slice < kStrip / 8; ++slice) next_slice(slice);
          } else {
            bool masked[kChunk / kB] = {}, any_masked = false;
            for (std::int64_t b = 0; b * kB < keys; ++b) any_masked |= masked[b] = fp.needs_mask(i0 + r0, j0 + b * kB);
            const bool prescale = any_masked || !(c > 0);  // see online_softmax_row
            for (std::int64_t r = 0; r < kStrip; ++r) {
              float* row = sc_now + r * kChunk;
              std::uint16_t* p_row = p.data() + r * kChunk;
              if (r >= strip_rows) {  // padding rows: no weights
                std::fill(p_row, p_row + keys, std::uint16_t(0));
              } else {
                if (prescale) {
                  Row::scale(row, keys, c);
                  for (std::int64_t b = 0; b * kB < keys; ++b)
                    if (masked[b]) fp.mask_row(row + b * kB, bh, i0 + r0 + r, j0 + b * kB, bias_unit);
                }
                amx::online_softmax_row(keys, row, prescale, c, m[r0 + r], l16.data() + (r0 + r) * 16,
                                        o.data() + (r0 + r) * Evp, Evp, p_row);
              }
              if (r % 8 == 7) next_slice(r / 8);
            }
            amx::tile_gemm(kStrip, Evp, keys / 32, p.data(), kChunk, vb, o.data() + r0 * Evp, Evp, true);
          }
          std::swap(sc_now, sc_next);
          keys = next_keys;
        }
      }
      for (std::int64_t r = 0; r < rows; ++r) {
        const float l = _mm512_reduce_add_ps(_mm512_loadu_ps(l16.data() + r * 16));
        amx::round_scaled(o.data() + r * Evp, Ev, l > 0 ? 1.0f / l : 0.0f, out + (bh * s.L + i0 + r) * Ev);
        lse[bh * s.L + i0 + r] =
            l > 0 ? double(m[r]) * to_natural + std::log(double(l)) : std::numeric_limits<double>::infinity();
      }
    }
  }
}

/// Row jr of a transposed score block (key j = j0 + jr against queries [i0, i0 + kB), scaled):
/// adds the mask times `unit` and sets queries that do not see the key (above the causal
/// diagonal; every query for a key past S) to -inf. FlashProblem::mask_row's transpose; queries
/// past L need nothing (their lse is +inf: weight 0).
inline void mask_key_row(const FlashProblem<bfloat16>& fp, float* row, std::int64_t bh, std::int64_t j,
                         std::int64_t i0, float unit) {
  constexpr std::int64_t kB = FlashProblem<bfloat16>::kB;
  const SdpaShape& s = fp.s;
  // Query i sees key j when j <= i + causal_offset.
  const std::int64_t first = j >= s.S ? kB : s.causal ? std::clamp<std::int64_t>(j - s.causal_offset - i0, 0, kB) : 0;
  std::fill(row, row + first, -std::numeric_limits<float>::infinity());
  if (fp.bias.data)
    for (std::int64_t c = first; c < std::min(kB, s.L - i0); ++c) row[c] += fp.bias.row(bh, i0 + c)[j * fp.bias.col_stride] * unit;
}

/// flash_backward_cpu for bfloat16 on AMX tiles (same inputs, outputs and conventions), in the
/// transposed orientation (see the file comment). Needs flash_amx_available() and no dropout.
/// Per (key/value head, key block) unit, over every query head of its group and every query
/// block that sees it:
///   s^T = k q^T;  p^T = 2^(s^T c - lse log2 e);  dP^T = v dO^T;  dS^T = p^T (dP^T - D)
///   (dO . (v - out) in double for weights above kDominantWeight, as flash_backward_cpu);
///   dV += p^T dO;  dK += dS^T q;  dq^T += k^T dS^T   (dK and dq times scale at the end).
inline void flash_backward_amx(const FlashProblem<bfloat16>& fp, const SdpaRows<bfloat16>& out,
                               const SdpaRows<bfloat16>& dout, const double* lse, bfloat16* dq, bfloat16* dk,
                               bfloat16* dv) {
  namespace cpu = weft::detail::cpu;
  constexpr std::int64_t kB = FlashProblem<bfloat16>::kB;
  const SdpaShape& s = fp.s;
  const std::int64_t heads = s.batches * s.Hq, kv_heads = s.batches * s.H, units = kv_heads * fp.key_blocks;
  const std::int64_t E = s.E, Ev = s.Ev, Lp = fp.query_blocks * kB;
  const std::int64_t Ep = amx::round_up(std::max<std::int64_t>(E, 1), 32), Evp = amx::round_up(std::max<std::int64_t>(Ev, 1), 32);
  const float c = fp.c(), bias_unit = fp.bias_unit(), scale = float(s.scale);
  const float inf = std::numeric_limits<float>::infinity();

  // Per query: the shift lse / (natural per log2 unit) as hi + lo in float (flash_backward_cpu),
  // +inf past L (weight 0), and D = rowsum(dO out). Per query head, every query block's q and dO
  // as tiles: transposed pairs (k = e: the B of s^T = k q^T and dP^T = v dO^T) and interleaved
  // rows (k = the query: the B of dK += dS^T q and dV += p^T dO).
  cpu::LineVector<float> hi(std::size_t(heads * Lp), inf), lo(std::size_t(heads * Lp), 0.0f), D(std::size_t(heads * Lp), 0.0f);
  const std::int64_t q_size = Lp * Ep, do_size = Lp * Evp;
  cpu::LineScratch<std::uint16_t> q_t(std::size_t(heads * q_size)), q_i(q_t.size()), do_t(std::size_t(heads * do_size)),
      do_i(do_t.size());
  WEFT_PRAGMA_OMP(omp parallel num_threads(cpu::threads_for(heads * Lp * (Ep + Evp))))
  {
    cpu::LineVector<std::uint16_t> scratch(std::size_t(kB * std::max(Ep, Evp)));
    WEFT_PRAGMA_OMP(omp for schedule(static))
    for (std::int64_t u = 0; u < heads * fp.query_blocks; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      const std::int64_t at = bh * Lp + i0;
      const amx::RowBlock qr = amx::row_block(fp.q, bh, i0, rows, E, scratch.data(), Ep, kB);
      amx::transpose_pairs(qr, kB, Ep, q_t.data() + at * Ep);
      amx::interleave_rows(qr, kB, Ep, q_i.data() + at * Ep);
      const amx::RowBlock dor = amx::row_block(dout, bh, i0, rows, Ev, scratch.data(), Evp, kB);
      amx::transpose_pairs(dor, kB, Evp, do_t.data() + at * Evp);
      amx::interleave_rows(dor, kB, Evp, do_i.data() + at * Evp);
      for (std::int64_t r = 0; r < rows; ++r) {
        const double shift = lse[bh * s.L + i0 + r] / fp.to_natural();
        hi[std::size_t(at + r)] = float(shift);
        lo[std::size_t(at + r)] = std::isinf(shift) ? 0.0f : float(shift - double(float(shift)));
        D[std::size_t(at + r)] =
            float(row_dot(out.row(bh, i0 + r), out.col_stride, dout.row(bh, i0 + r), dout.col_stride, Ev));
      }
    }
  }
  const int threads =
      int(std::max<std::int64_t>(1, std::min<std::int64_t>(units, cpu::threads_for(units * kB * s.L * (E + Ev)))));
  // One dq^T accumulator per thread ((batch Hq, Ep, Lp) fp32), summed in a fixed order at the end.
  const std::int64_t dq_size = heads * Ep * Lp;
  cpu::LineVector<float> dq_acc(std::size_t(threads * dq_size), 0.0f);

  WEFT_PRAGMA_OMP(omp parallel num_threads(threads))
  {
    float* dq_mine = thread_slice(dq_acc, dq_size);
    const cpu::GemmAmxKernel::Thread tiles;
    cpu::LineVector<std::uint16_t> kr(std::size_t(kB * Ep)), vr(std::size_t(kB * Evp)), ktr(std::size_t(Ep * kB)),
        pt(std::size_t(kB * kB)), dst(std::size_t(kB * kB)), ds_i(std::size_t(kB * kB));
    cpu::LineVector<float> st(std::size_t(kB * kB)), dpt(std::size_t(kB * kB)), dk_acc(std::size_t(kB * Ep)),
        dv_acc(std::size_t(kB * Evp));
    for (const std::int64_t u : dealt_units(units, [&](std::int64_t unit) { return fp.queries_seeing(unit); })) {
      const std::int64_t bhk = u / fp.key_blocks, kb = u % fp.key_blocks, j0 = kb * kB;
      const std::int64_t keys = std::min(kB, s.S - j0);
      amx::pack_a(fp.k, bhk, j0, keys, E, kr.data(), Ep, kB);
      amx::pack_a(fp.v, bhk, j0, keys, Ev, vr.data(), Evp, kB);
      for (std::int64_t j = 0; j < kB; ++j)  // k^T, row-major (Ep x kB): the A of dq^T += k^T dS^T
        for (std::int64_t e = 0; e < Ep; ++e) ktr[std::size_t(e * kB + j)] = kr[std::size_t(j * Ep + e)];
      std::fill(dk_acc.begin(), dk_acc.end(), 0.0f);
      std::fill(dv_acc.begin(), dv_acc.end(), 0.0f);
      for (std::int64_t g = 0; g < s.group; ++g) {
        const std::int64_t bh = bhk / s.H * s.Hq + bhk % s.H * s.group + g;
        for (std::int64_t qb = fp.query_block_begin(kb); qb < fp.query_blocks; ++qb) {
          const std::int64_t i0 = qb * kB, at = bh * Lp + i0;
          const amx::PackedB qt{q_t.data() + at * Ep, Ep / 32 * amx::kTile, amx::kTile};
          const amx::PackedB dot{do_t.data() + at * Evp, Evp / 32 * amx::kTile, amx::kTile};
          amx::tile_gemm(kB, kB, Ep / 32, kr.data(), Ep, qt, st.data(), kB, false);
          amx::tile_gemm(kB, kB, Evp / 32, vr.data(), Evp, dot, dpt.data(), kB, false);
          const bool masked = fp.needs_mask(i0, j0), prescale = masked || !(c > 0);
          for (std::int64_t jr = 0; jr < kB; ++jr) {
            float* x = st.data() + jr * kB;
            float* dp = dpt.data() + jr * kB;
            if (prescale) {
              FlashRow<float>::scale(x, kB, c);
              if (masked) mask_key_row(fp, x, bh, j0 + jr, i0, bias_unit);
            }
            // The forward's exponent fma(x, c, -m), here fma(x, c, -hi) - lo (online_softmax_row).
            const __m512 cv = _mm512_set1_ps(prescale ? 1.0f : c);
            for (std::int64_t q = 0; q < kB; q += 32) {
              __m512 p[2], ds[2];
              for (int h = 0; h < 2; ++h) {
                const std::size_t at_q = std::size_t(at + q + 16 * h);
                const __m512 t = _mm512_fmadd_ps(_mm512_loadu_ps(x + q + 16 * h), cv, _mm512_sub_ps(_mm512_setzero_ps(), _mm512_loadu_ps(&hi[at_q])));
                p[h] = amx::exp2_weight(_mm512_sub_ps(t, _mm512_loadu_ps(&lo[at_q])));
                ds[h] = _mm512_mul_ps(p[h], _mm512_sub_ps(_mm512_loadu_ps(dp + q + 16 * h), _mm512_loadu_ps(&D[at_q])));
                // Dominant weights: dS = p dO . (v - out) in double (dominant_ds says why).
                if (__mmask16 dominant = _mm512_cmp_ps_mask(p[h], _mm512_set1_ps(float(kDominantWeight)), _CMP_GT_OQ)) {
                  alignas(64) float pw[16], dw[16];
                  _mm512_store_ps(pw, p[h]);
                  _mm512_store_ps(dw, ds[h]);
                  for (; dominant; dominant &= dominant - 1) {
                    const int lane = __builtin_ctz(dominant);
                    const std::int64_t i = i0 + q + 16 * h + lane;
                    if (i < s.L && j0 + jr < s.S)
                      dw[lane] = float(double(pw[lane]) * dominant_dp_minus_d(fp, out, dout, bh, i, j0 + jr, 1.0));
                  }
                  ds[h] = _mm512_load_ps(dw);
                }
              }
              _mm512_storeu_si512(pt.data() + jr * kB + q, (__m512i)_mm512_cvtne2ps_pbh(p[1], p[0]));
              _mm512_storeu_si512(dst.data() + jr * kB + q, (__m512i)_mm512_cvtne2ps_pbh(ds[1], ds[0]));
            }
          }
          amx::interleave_rows({dst.data(), kB}, kB, kB, ds_i.data());
          const amx::PackedB doi{do_i.data() + at * Evp, amx::kTile, Evp / 16 * amx::kTile};
          const amx::PackedB qi{q_i.data() + at * Ep, amx::kTile, Ep / 16 * amx::kTile};
          const amx::PackedB dsi{ds_i.data(), amx::kTile, kB / 16 * amx::kTile};
          amx::tile_gemm(kB, Evp, kB / 32, pt.data(), kB, doi, dv_acc.data(), Evp, true);
          amx::tile_gemm(kB, Ep, kB / 32, dst.data(), kB, qi, dk_acc.data(), Ep, true);
          amx::tile_gemm(Ep, kB, kB / 32, ktr.data(), kB, dsi, dq_mine + bh * Ep * Lp + i0, Lp, true);
        }
      }
      for (std::int64_t r = 0; r < keys; ++r) {
        amx::round_scaled(dk_acc.data() + r * Ep, E, scale, dk + (bhk * s.S + j0 + r) * E);
        amx::round_scaled(dv_acc.data() + r * Evp, Ev, 1.0f, dv + (bhk * s.S + j0 + r) * Ev);
      }
    }
  }
  // dq^T's accumulators: element (bh, e, i).
  sum_thread_slices(dq_acc, threads, dq_size, heads, s.L, E, scale,
                    [=](std::int64_t bh, std::int64_t i, std::int64_t e) { return (bh * Ep + e) * Lp + i; }, dq);
}

#endif  // WEFT_FLASH_AMX

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail::cpu::flash

#endif  // !defined(__CUDA_ARCH__)
