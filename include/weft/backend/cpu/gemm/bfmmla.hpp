// SPDX-License-Identifier: MIT
/// @file The CPU bfloat16 GEMM kernel on Arm's BFMMLA (FEAT_BF16 matrix multiply-accumulate) for gemm_packed.
///
/// BFMMLA Vd.4S, Vn.8H, Vm.8H: the 2 x 2 fp32 matrix in d += (the 2 x 4 bf16 matrix in n) times
/// (the 2 x 4 bf16 matrix in m) transposed: d[i][j] += sum_q n[i][q] m[j][q], rows of n and m
/// 4 k apart. Numerics (Arm ARM pseudocode BFMatMulAdd -> BFDotAdd, without FEAT_EBF16 or with
/// FPCR.EBF = 0; QEMU's bfdotadd models the same, and qemu 7.2 -cpu max gives these results):
///   d = RO(d + RO(p0 + p1)) per pair of k, q = 0-1 then 2-3, with p = n[i][q] m[j][q] exact in
///   fp32 (8-bit x 8-bit significands), RO() rounding to fp32 by round to odd (an inexact result
///   gets bit 0 set: 2^24 + 1 gives 2^24 + 2, round to nearest even would give 2^24), FPCR's
///   rounding mode ignored; denormal inputs (bf16 operands, the fp32 accumulator) read as zero and
///   denormal results flushed to zero, whatever FPCR.FZ says; any NaN gives the default NaN.
/// Round to odd errs by less than one ulp where nearest even errs by half: each addition's error
/// is below 2^-23 of its result, so the bound is (k - 1) 2^-23 sum |a b| (twice the AMX / fp32 one)
/// before the final rounding to bfloat16 (nearest even, simd::store_float).
///
/// Layout. A step is 4 k. An a panel holds 8 rows: per step 4 registers of 8 bf16, register r =
/// [a(2r, k0..k0+3), a(2r+1, k0..k0+3)]; a b panel 8 columns: register c = [b(k0..k0+3, 2c),
/// b(k0..k0+3, 2c+1)]; k padded with zeros to a multiple of 4 (odd k included), rows and columns
/// to 8. The register block is 8 x 8 outputs in 4 x 4 accumulators (16 of the 32 vector
/// registers) fed by 4 a and 4 b registers: 8 loads of 16 bytes per 16 BFMMLA, 256 multiply-adds.
/// Why this shape (not measured on Arm hardware; none here): 8 x 12 would need 24 accumulators +
/// 4 + 6 operands, over 32 registers; 8 x 8 keeps every operand in a register with the loads at
/// half the BFMMLA count, within the 2-3 loads a cycle of Neoverse V1 / N2 / V2. 128 x 128 output
/// blocks per thread (more blocks than 256 x 256 for many-core Graviton and Grace), k in slices
/// of 128 steps (512 k): a b panel slice is 8 KiB of L1 (64 KiB on those cores), the block's 16 a
/// panels 128 KiB of L2 (1 MiB or more).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/backend/cpu/gemm/packed.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/core/dtype.hpp"

// 1 where this translation unit runs bfloat16 GEMMs on BFMMLA: an aarch64 host compiler with
// FEAT_BF16 (the same condition as simd.hpp's BFCVTN stores).
#if WEFT_SIMD_NEON_BF16
#define WEFT_GEMM_BFMMLA 1
#else
#define WEFT_GEMM_BFMMLA 0
#endif

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Whether this translation unit is built with the BFMMLA GEMM (it then always runs: FEAT_BF16
/// needs no permission from the OS).
inline constexpr bool kGemmBfmmla = WEFT_GEMM_BFMMLA;

#if WEFT_GEMM_BFMMLA

/// The BFMMLA kernel of gemm_packed (see there for the members, and the file comment).
struct GemmBfmmlaKernel {
  using Elem = weft::bfloat16;
  using Packed = std::uint16_t;
  using Acc = float;
  static constexpr std::int64_t kRows = 8, kCols = 8, kStep = 4;
  static constexpr std::int64_t kStepElems = 8 * 4, kAccFloats = 8 * 8;
  static constexpr std::int64_t kStepElemsA = kStepElems, kStepElemsB = kStepElems;
  static constexpr std::int64_t kBlockRows = 128, kBlockCols = 128, kSliceSteps = 128;

  struct Thread {};

  /// acc (16 accumulators of 4 floats, acc + 4 (4 r + c) holding rows 2r, 2r+1 x columns 2c,
  /// 2c+1, row-major) = (zero if `first`, else acc) + the `steps` steps of an a and a b panel.
  static void block(const std::uint16_t* a, const std::uint16_t* b, std::int64_t steps, float* acc, bool first) {
    float32x4_t d[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) d[r][c] = first ? vdupq_n_f32(0.0f) : vld1q_f32(acc + 4 * (4 * r + c));
    for (std::int64_t s = 0; s < steps; ++s, a += kStepElems, b += kStepElems) {
      bfloat16x8_t x[4], y[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        x[q] = vreinterpretq_bf16_u16(vld1q_u16(a + 8 * q));
        y[q] = vreinterpretq_bf16_u16(vld1q_u16(b + 8 * q));
      }
#pragma GCC unroll 4
      for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) d[r][c] = vbfmmlaq_f32(d[r][c], x[r], y[c]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < 4; ++c) vst1q_f32(acc + 4 * (4 * r + c), d[r][c]);
  }

  /// Packs a row panel: rows i0.. i0 + 7 of a, step s at dst + 32 s, row i0 + 2r + h's 4 k at
  /// 8 r + 4 h; zeros past n rows and k columns.
  static void pack_a(const weft::bfloat16* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t i0,
                     std::int64_t steps, std::uint16_t* dst) {
    std::memset(dst, 0, std::size_t(steps * kStepElems) * sizeof(std::uint16_t));
    for (std::int64_t ri = 0; ri < kRows && i0 + ri < n; ++ri) {
      const weft::bfloat16* row = a + (i0 + ri) * lda;
      std::uint16_t* d = dst + 8 * (ri / 2) + 4 * (ri % 2);
      for (std::int64_t kk = 0; kk < k; ++kk) d[kk / 4 * kStepElems + kk % 4] = row[kk].bits;
    }
  }

  /// Packs a column panel: columns j0.. j0 + 7 of b, step s at dst + 32 s, column j0 + 2c + h's
  /// 4 k at 8 c + 4 h; zeros past k rows and m columns.
  static void pack_b(const weft::bfloat16* b, std::int64_t ldb, std::int64_t k, std::int64_t m, std::int64_t j0,
                     std::int64_t steps, std::uint16_t* dst) {
    std::memset(dst, 0, std::size_t(steps * kStepElems) * sizeof(std::uint16_t));
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const weft::bfloat16* row = b + kk * ldb + j0;
      std::uint16_t* d = dst + kk / 4 * kStepElems + kk % 4;
      for (std::int64_t jj = 0; jj < cols; ++jj) d[8 * (jj / 2) + 4 * (jj % 2)] = row[jj].bits;
    }
  }

  /// Rounds the register block at acc (rows i0.., columns j0..) into c, within n x m: once to
  /// bfloat16, round to nearest even (simd::store_float: BFCVTN, exact at the default FPCR); or
  /// copies the fp32 sums where c is float (GemmFloatBlocks).
  template <class Out>
  static void store(const float* acc, Out* c, std::int64_t ldc, std::int64_t i0, std::int64_t j0, std::int64_t n,
                    std::int64_t m) {
    // Row-major 8 x 8: row 2r + h, columns 2c, 2c+1 are lanes 2h, 2h+1 of accumulator (r, c).
    alignas(16) float rows[kRows * kCols];
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        const float32x4_t v = vld1q_f32(acc + 4 * (4 * r + c));
        vst1_f32(rows + (2 * r) * kCols + 2 * c, vget_low_f32(v));
        vst1_f32(rows + (2 * r + 1) * kCols + 2 * c, vget_high_f32(v));
      }
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t ri = 0; ri < kRows && i0 + ri < n; ++ri) {
      Out* dst = c + (i0 + ri) * ldc + j0;
      if constexpr (std::is_same_v<Out, float>) {
        std::memcpy(dst, rows + ri * kCols, std::size_t(cols) * sizeof(float));
      } else if (cols == kCols) {
        simd::store_float<8>(dst, simd::Vec<float, 8>::load(rows + ri * kCols));
      } else {
        for (std::int64_t l = 0; l < cols; ++l) dst[l] = weft::bfloat16(rows[ri * kCols + l]);
      }
    }
  }
};

#endif  // WEFT_GEMM_BFMMLA

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
