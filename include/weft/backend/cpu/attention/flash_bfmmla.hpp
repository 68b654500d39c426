// SPDX-License-Identifier: MIT
/// @file bfloat16 flash attention on Arm's BFMMLA (FEAT_BF16): the CPU flash kernels with their block products (q k^T, p v and the backward's five) as BFMMLA in registers.
///
/// The algorithm and its loops are backend/cpu/attention/flash.hpp's (FlashAttention-2 forward and backward,
/// scores in log2 units, lse in double, dominant_ds, dropout): flash_forward_cpu and
/// flash_backward_cpu run here with the block products below in place of block_gemm_panels.
/// Operands are bfloat16; BFMMLA multiplies exactly and sums in fp32 with round to odd
/// (backend/cpu/gemm/bfmmla.hpp states its order of additions, its error bound, twice fp32's, and its
/// flushing of denormal operands and results to zero). Each product sums from zero and is added
/// to its fp32 output once (block_gemm_tile says why). The weights p (after dropout) and dS,
/// computed in fp32, are rounded once to bfloat16 (nearest even) to enter the p v, p^T dO,
/// dS^T q and dS k products, as FlashAttention-2 does on tensor cores and backend/cpu/attention/flash_amx.hpp
/// on AMX tiles; rowmax, rowsum, lse, D and every accumulator (o, dq, dk, dv) stay fp32. The
/// backward pass recomputes the forward's scores bit for bit (the same packed operands through
/// the same product), which the weights' exactness needs (flash_backward_cpu says why).
///
/// Operands. BFMMLA computes C = X Y^T for two operands of the same layout: row panels of 8 rows
/// by k steps of 4 (GemmBfmmlaKernel's a panel: per step 4 registers, register i = [x(2i, k..k+3),
/// x(2i + 1, k..k+3)]). Every product is written as X Y^T with both operands packed that way: q k^T
/// (Q, K by rows, k = e), p v (P by rows, V^T: k = the key), dO v^T (dO, V by rows), p^T dO (P^T,
/// dO^T: k = the query), dS^T q (dS^T, Q^T) and dS k (dS, K^T: k = the key). Q, dO, their
/// transposes, K and V^T are packed once per head (the backward's K, V and K^T once per key
/// block); P, P^T, dS and dS^T are packed, rounding, from the fp32 blocks per block pair.
///
/// Register blocking: GemmBfmmlaKernel::block, 8 x 8 outputs in 16 accumulators (4 x 4 BFMMLA
/// 2 x 2 tiles) fed by 4 X and 4 Y registers a step: 8 loads of 16 bytes per 16 BFMMLA (256
/// multiply-adds), every operand used 4 times from a register. 8 x 12 would need 24
/// accumulators and 10 operand registers, over the 32 vector registers. The block then leaves
/// its accumulators through 16 stores and is unzipped into C's rows (one zip per pair of rows
/// and 4 columns); against the block's steps x 16 BFMMLA that is small from depth 32 on (q k^T
/// at head dim 64: 16 steps, 256 BFMMLA). Flash's kB = 96 blocks (backend/cpu/attention/flash.hpp's NEON
/// size) are 12 x 12 register blocks; a 96 x 64 operand is 12 KiB, L1-resident with its partner.
///
/// Verified under qemu-aarch64 (-cpu max) only, and not timed: this machine has no Arm hardware,
/// so the design rests on the instruction's shape and the register count, not on measurements
/// (the same holds for backend/cpu/gemm/bfmmla.hpp's GEMM).
///
/// Dispatch (weft::nn::sdpa_forward / sdpa_backward, bfloat16 on the CPU): here in every build
/// with FEAT_BF16 (WEFT_GEMM_BFMMLA, e.g. -march=armv8.6-a or armv8.2-a+bf16); BFMMLA needs no
/// permission from the OS. Dropout included: it scales the fp32 weights before they are rounded.
#pragma once

#include <algorithm>
#include <cstdint>

#include "weft/backend/cpu/attention/flash.hpp"
#include "weft/backend/cpu/gemm/bfmmla.hpp"
#include "weft/backend/cpu/line_aligned.hpp"

#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu::flash {
inline namespace WEFT_BACKEND_ABI {

/// Whether bfloat16 flash attention runs its block products on BFMMLA in this translation unit.
inline constexpr bool flash_bfmmla_available() { return weft::detail::cpu::kGemmBfmmla; }

#if WEFT_GEMM_BFMMLA

namespace bfmmla {

using Kernel = weft::detail::cpu::GemmBfmmlaKernel;
using weft::bfloat16;
inline constexpr std::int64_t kB = FlashProblem<bfloat16>::kB;
static_assert(kB % Kernel::kRows == 0 && FlashTiles<float>::Tile::kCols % Kernel::kRows == 0,
              "flash blocks and padded head dims must be whole 8-row panels");

/// k steps of 4 for a depth of n.
constexpr std::int64_t steps_for(std::int64_t n) { return (n + Kernel::kStep - 1) / Kernel::kStep; }

/// Where element (r, k) of an operand in row panels of `steps` steps lies: panel r / 8, step
/// k / 4, row r % 8 = 2 i + h at 8 i + 4 h of the step, then k % 4 (GemmBfmmlaKernel::pack_a).
constexpr std::int64_t panel_at(std::int64_t r, std::int64_t k, std::int64_t steps) {
  return (r / Kernel::kRows * steps + k / Kernel::kStep) * Kernel::kStepElems + (r % Kernel::kRows) / 2 * 8 +
         (r % 2) * 4 + k % Kernel::kStep;
}

/// Row panels (rows_pad rows by `steps` steps) of X = rows [r0, r0 + n) of src (head bh), `cols`
/// columns (k = the column), or of X^T when `transposed` (rows = src's columns, k = its rows):
/// zeros past n and cols.
inline void pack_panels(const SdpaRows<bfloat16>& src, std::int64_t bh, std::int64_t r0, std::int64_t n,
                        std::int64_t cols, bool transposed, std::int64_t rows_pad, std::int64_t steps,
                        std::uint16_t* dst) {
  std::fill(dst, dst + rows_pad * steps * Kernel::kStep, std::uint16_t(0));
  for (std::int64_t i = 0; i < n; ++i) {
    const bfloat16* row = src.row(bh, r0 + i);
    for (std::int64_t e = 0; e < cols; ++e)
      dst[transposed ? panel_at(e, i, steps) : panel_at(i, e, steps)] = row[e * src.col_stride].bits;
  }
}

/// Row panels of the kB x kB fp32 block x (row-major), or of x^T when `transposed`, each value
/// rounded once to bfloat16 (nearest even, simd::store_float): a panel register (rows r, r + 1
/// by 4 k) is one conversion of 8 values. x's rows r, r + 1 give it directly; for x^T, a 4 x 4
/// transpose (4 loads, 8 TRN) of x's rows k..k + 3 at columns r..r + 3 gives two registers.
inline void round_panels(const float* x, bool transposed, std::uint16_t* dst) {
  using V4 = simd::Vec<float, 4>;
  constexpr std::int64_t steps = kB / Kernel::kStep;
  auto store = [&](std::int64_t r, std::int64_t k, V4 lo, V4 hi) {
    simd::store_float<8>(reinterpret_cast<bfloat16*>(dst + panel_at(r, k, steps)), simd::detail::concat(lo, hi));
  };
  for (std::int64_t k = 0; k < kB; k += Kernel::kStep)
    for (std::int64_t r = 0; r < kB; r += 4) {
      if (!transposed) {
        for (std::int64_t h = 0; h < 4; h += 2)
          store(r + h, k, V4::load(x + (r + h) * kB + k), V4::load(x + (r + h + 1) * kB + k));
        continue;
      }
      // x(k + i, r + j) for i, j < 4; TRN pairs rows 0-1 and 2-3 by 32 bits, then by 64 bits:
      // column j of the 4 x 4 block (x^T's row r + j, k..k + 3).
      const float* a = x + k * kB + r;
      const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + kB), a2 = vld1q_f32(a + 2 * kB), a3 = vld1q_f32(a + 3 * kB);
      const float64x2_t t0 = vreinterpretq_f64_f32(vtrn1q_f32(a0, a1)), t1 = vreinterpretq_f64_f32(vtrn2q_f32(a0, a1)),
                        t2 = vreinterpretq_f64_f32(vtrn1q_f32(a2, a3)), t3 = vreinterpretq_f64_f32(vtrn2q_f32(a2, a3));
      auto column = [&](float64x2_t u) { return V4{(V4::Raw)vreinterpretq_f32_f64(u)}; };
      store(r, k, column(vtrn1q_f64(t0, t2)), column(vtrn1q_f64(t1, t3)));
      store(r + 2, k, column(vtrn2q_f64(t0, t2)), column(vtrn2q_f64(t1, t3)));
    }
}

/// C (M x N fp32, row-major with row stride ldc) (+)= X Y^T, X and Y in row panels of `steps`
/// steps (M / 8 and N / 8 panels). Y's panel stays in L1 while X's pass by. Accumulator (r, q)
/// of a block holds rows 2r, 2r + 1 by columns 2q, 2q + 1 (row-major): row 2r's 4 columns from
/// 2q are the low halves of accumulators q and q + 1 (zip1 as 64-bit pairs), row 2r + 1's the
/// high halves (zip2).
inline void product(std::int64_t M, std::int64_t N, std::int64_t steps, const std::uint16_t* x,
                    const std::uint16_t* y, float* c, std::int64_t ldc, bool accumulate) {
  constexpr std::int64_t R = Kernel::kRows;
  alignas(16) float acc[Kernel::kAccFloats];
  for (std::int64_t j = 0; j < N; j += R)
    for (std::int64_t i = 0; i < M; i += R) {
      Kernel::block(x + i * steps * Kernel::kStep, y + j * steps * Kernel::kStep, steps, acc, true);
      for (int r = 0; r < 4; ++r)
        for (int q = 0; q < 4; q += 2) {
          const float64x2_t a = vreinterpretq_f64_f32(vld1q_f32(acc + 4 * (4 * r + q))),
                            b = vreinterpretq_f64_f32(vld1q_f32(acc + 4 * (4 * r + q + 1)));
          float* top = c + (i + 2 * r) * ldc + j + 2 * q;
          float* bottom = top + ldc;
          float32x4_t t = vreinterpretq_f32_f64(vzip1q_f64(a, b)), u = vreinterpretq_f32_f64(vzip2q_f64(a, b));
          if (accumulate) t = vaddq_f32(vld1q_f32(top), t), u = vaddq_f32(vld1q_f32(bottom), u);
          vst1q_f32(top, t);
          vst1q_f32(bottom, u);
        }
    }
}

/// flash_forward_cpu's block products on BFMMLA (FloatForwardProducts' members): K by rows and
/// V^T of every key block packed once, each query block by its thread.
struct ForwardProducts {
  const FlashProblem<bfloat16>& fp;
  const std::int64_t e_steps = steps_for(fp.s.E), k_size = kB * e_steps * Kernel::kStep, vt_size = fp.Evp * kB;
  cpu::LineVector<std::uint16_t> packed =
      cpu::LineVector<std::uint16_t>(std::size_t(fp.s.batches * fp.s.H * fp.key_blocks * (k_size + vt_size)));

  explicit ForwardProducts(const FlashProblem<bfloat16>& problem) : fp(problem) {
    const std::int64_t blocks = fp.s.batches * fp.s.H * fp.key_blocks;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(blocks * (k_size + vt_size))))
    for (std::int64_t u = 0; u < blocks; ++u) {
      const std::int64_t bhk = u / fp.key_blocks, j0 = u % fp.key_blocks * kB, keys = std::min(kB, fp.s.S - j0);
      std::uint16_t* at = packed.data() + u * (k_size + vt_size);
      pack_panels(fp.k, bhk, j0, keys, fp.s.E, false, kB, e_steps, at);
      pack_panels(fp.v, bhk, j0, keys, fp.s.Ev, true, fp.Evp, kB / Kernel::kStep, at + k_size);
    }
  }

  /// One thread's operands: its query block and the rounded weights.
  struct Thread {
    const ForwardProducts& g;
    cpu::LineVector<std::uint16_t> qs = cpu::LineVector<std::uint16_t>(std::size_t(g.k_size)),
                               ps = cpu::LineVector<std::uint16_t>(std::size_t(kB * kB));

    void load_queries(std::int64_t bh, std::int64_t i0, std::int64_t rows) {
      pack_panels(g.fp.q, bh, i0, rows, g.fp.s.E, false, kB, g.e_steps, qs.data());
    }
    void scores(std::int64_t blk, float* sc) const {
      product(kB, kB, g.e_steps, qs.data(), g.packed.data() + blk * (g.k_size + g.vt_size), sc, kB, false);
    }
    void add_pv(std::int64_t blk, const float* p, float* o) {
      round_panels(p, false, ps.data());
      const std::uint16_t* vt = g.packed.data() + blk * (g.k_size + g.vt_size) + g.k_size;
      product(kB, g.fp.Evp, kB / Kernel::kStep, ps.data(), vt, o, g.fp.Evp, true);
    }
  };
};

/// flash_backward_cpu's block products on BFMMLA (FloatBackwardProducts' members). Per query
/// head, packed once: Q and dO by rows (k = e: q k^T, dO v^T) and per query block Q^T and dO^T
/// (k = the query: dS^T q, p^T dO). Per key block, by its thread: K and V by rows and K^T.
struct BackwardProducts {
  const FlashProblem<bfloat16>& fp;
  const SdpaRows<bfloat16>& dout;
  const std::int64_t Lp = fp.query_blocks * kB, Ep = fp.Ep, Evp = fp.Evp;
  const std::int64_t e_steps = steps_for(fp.s.E), ev_steps = steps_for(fp.s.Ev), heads = fp.s.batches * fp.s.Hq;
  cpu::LineVector<std::uint16_t> q_rows = cpu::LineVector<std::uint16_t>(std::size_t(heads * Lp * e_steps * Kernel::kStep)),
                             do_rows = cpu::LineVector<std::uint16_t>(std::size_t(heads * Lp * ev_steps * Kernel::kStep)),
                             q_t = cpu::LineVector<std::uint16_t>(std::size_t(heads * Lp * Ep)),
                             do_t = cpu::LineVector<std::uint16_t>(std::size_t(heads * Lp * Evp));

  BackwardProducts(const FlashProblem<bfloat16>& problem, const SdpaRows<bfloat16>& grad_out)
      : fp(problem), dout(grad_out) {
    const SdpaShape& s = fp.s;
    WEFT_PRAGMA_OMP(omp parallel for schedule(static) num_threads(cpu::threads_for(heads * Lp * (Ep + Evp))))
    for (std::int64_t u = 0; u < heads * fp.query_blocks; ++u) {
      const std::int64_t bh = u / fp.query_blocks, i0 = u % fp.query_blocks * kB, rows = std::min(kB, s.L - i0);
      const std::int64_t at = bh * Lp + i0;
      pack_panels(fp.q, bh, i0, rows, s.E, false, kB, e_steps, q_rows.data() + at * e_steps * Kernel::kStep);
      pack_panels(dout, bh, i0, rows, s.Ev, false, kB, ev_steps, do_rows.data() + at * ev_steps * Kernel::kStep);
      pack_panels(fp.q, bh, i0, rows, s.E, true, Ep, kB / Kernel::kStep, q_t.data() + at * Ep);
      pack_panels(dout, bh, i0, rows, s.Ev, true, Evp, kB / Kernel::kStep, do_t.data() + at * Evp);
    }
  }

  /// One thread's operands: its key block's K, V and K^T, and a block pair's rounded weights.
  struct Thread {
    const BackwardProducts& g;
    cpu::LineVector<std::uint16_t> kr = cpu::LineVector<std::uint16_t>(std::size_t(kB * g.e_steps * Kernel::kStep)),
                               vr = cpu::LineVector<std::uint16_t>(std::size_t(kB * g.ev_steps * Kernel::kStep)),
                               kt = cpu::LineVector<std::uint16_t>(std::size_t(g.Ep * kB)),
                               ws = cpu::LineVector<std::uint16_t>(std::size_t(kB * kB));

    void load_keys(std::int64_t, std::int64_t bhk, std::int64_t j0, std::int64_t keys) {
      pack_panels(g.fp.k, bhk, j0, keys, g.fp.s.E, false, kB, g.e_steps, kr.data());
      pack_panels(g.fp.v, bhk, j0, keys, g.fp.s.Ev, false, kB, g.ev_steps, vr.data());
      pack_panels(g.fp.k, bhk, j0, keys, g.fp.s.E, true, g.Ep, kB / Kernel::kStep, kt.data());
    }
    void scores(std::int64_t at, float* s) const {
      product(kB, kB, g.e_steps, g.q_rows.data() + at * g.e_steps * Kernel::kStep, kr.data(), s, kB, false);
    }
    void dp(std::int64_t at, float* dp) const {
      product(kB, kB, g.ev_steps, g.do_rows.data() + at * g.ev_steps * Kernel::kStep, vr.data(), dp, kB, false);
    }
    void add_dv(std::int64_t at, const float* w, float* dv) {
      round_panels(w, true, ws.data());
      product(kB, g.Evp, kB / Kernel::kStep, ws.data(), g.do_t.data() + at * g.Evp, dv, g.Evp, true);
    }
    void add_dk_dq(std::int64_t at, const float* ds, float* dk, float* dq) {
      round_panels(ds, true, ws.data());
      product(kB, g.Ep, kB / Kernel::kStep, ws.data(), g.q_t.data() + at * g.Ep, dk, g.Ep, true);
      round_panels(ds, false, ws.data());
      product(kB, g.Ep, kB / Kernel::kStep, ws.data(), kt.data(), dq, g.Ep, true);
    }
  };
};

}  // namespace bfmmla

#endif  // WEFT_GEMM_BFMMLA

}  // namespace WEFT_BACKEND_ABI
}  // namespace weft::detail::cpu::flash

#endif  // !defined(__CUDA_ARCH__)
