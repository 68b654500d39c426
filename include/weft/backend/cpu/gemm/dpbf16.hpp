// SPDX-License-Identifier: MIT
/// @file The CPU bfloat16 GEMM kernel on AVX512-BF16's pair dot product (vdpbf16ps) for gemm_packed, and the register tile that flash attention's block products share.
///
/// VDPBF16PS zmm: for each of 16 fp32 lanes i, acc_i += a(2i+1) b(2i+1), then acc_i += a(2i) b(2i)
/// (Intel SDM pseudocode): every product exact in fp32 (8-bit x 8-bit significands), each sum
/// rounded to nearest even, so a k-deep dot product errs by at most (k - 1) 2^-24 sum |a b|
/// before the final rounding, the AMX bound (backend/cpu/gemm/amx.hpp). Bfloat16 denormal operands and a
/// denormal accumulator read as zero and denormal results are flushed to zero, whatever MXCSR says
/// (tests/backend/cpu/matmul_bf16_test.cpp checks it on the machine at hand).
///
/// Layout (the pairs the instruction reads). A b operand is rows of 32-bit words [b(2p, j),
/// b(2p + 1, j)] (low half first), four zmm loads per 64 columns. An a operand is read one 32-bit
/// word [a(i, 2p), a(i, 2p + 1)] at a time and broadcast to the 16 lanes (the instruction's
/// {1to16} memory operand), so the tile reads it through any word strides, across rows and
/// across pairs (`dpbf16_tile`): the GEMM's a panels hold each row's 16 words of a 32-k step
/// together (a row's 32 bf16 as they are), flash attention reads rows (pairs along a row) and rows
/// interleaved in pairs (backend/cpu/attention/flash_dpbf16.hpp). k is padded with zeros to whole steps.
///
/// Why (measured on Zen 4 with a loop of independent instructions, bench-free, one core): zmm
/// VDPBF16PS issues at the rate of zmm VFMADD231PS (0.83-0.89 ns each under load, ratio 1.9-2.1x
/// in bfloat16 multiply-adds), twice the fp32 FMA rate where bfloat16 otherwise converts to float.
/// On Sapphire Rapids the instruction issues once per 2 cycles, half the fp32 rate of its two FMA
/// units: a packed vdpbf16ps GEMM ran 2048^3 at 0.92x cast + SGEMM + round there (143 against 156
/// GFLOP/s). So builds for AMX (Sapphire Rapids and later) leave this kernel out: they run tiles,
/// or float where Linux refuses tile data.
///
/// Register tile: kRows = 6 rows x 4 zmm (64 columns) = 24 accumulators, 4 b registers and the
/// broadcast word: 29 of the 32 zmm registers; per pair 4 loads and 6 broadcasts feed 24
/// instructions. Output blocks of 96 x 256 per thread, k in slices of 16 steps (512 k): a b panel
/// slice is 64 KiB, the block's 16 a panels 192 KiB of L2. 8-step slices (32 KiB, within L1) ran
/// slower on Zen 5 (2 threads: 4096^3 at 0.88-0.91x, 512^3 at 0.95x; 4 and 32 steps no better):
/// each slice writes and rereads the block's partial sums.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/backend/cpu/gemm/packed.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/core/dtype.hpp"

// 1 where this translation unit runs bfloat16 products on vdpbf16ps: compiled for AVX512-BF16
// (with the AVX512-BW/VL the packing uses) and not for AMX (see above) by a host compiler (nvcc's
// passes keep the portable path). Zen 4 and later, Cooper Lake.
#if defined(__AVX512BF16__) && defined(__AVX512BW__) && defined(__AVX512VL__) && \
    !(defined(__AMX_TILE__) && defined(__AMX_BF16__)) && !defined(__CUDACC__)
#define WEFT_GEMM_DPBF16 1
#else
#define WEFT_GEMM_DPBF16 0
#endif

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

#if WEFT_GEMM_DPBF16
#include <immintrin.h>
#endif

namespace weft::detail::cpu {

/// Whether this translation unit is built with the vdpbf16ps GEMM (it always runs where built:
/// AVX512-BF16 needs no permission from the OS).
inline constexpr bool kGemmDpbf16 = WEFT_GEMM_DPBF16;

#if WEFT_GEMM_DPBF16

/// acc[r][v] += sum over `pairs` pairs p of a(r, p) . b(p, 16 v + lane), in pair order: a(r, p)
/// is the 32-bit word at a + r rs + p ps, b(p, .) the NV zmm at b + p ldb (all in 32-bit words).
/// The order of additions depends on nothing but the operands' values, so the same operands give
/// the same bits in any tile and any caller.
template <int R, int NV>
inline __attribute__((always_inline)) void dpbf16_tile(const std::uint32_t* a, std::int64_t rs, std::int64_t ps,
                                                       const std::uint32_t* b, std::int64_t ldb, std::int64_t pairs,
                                                       __m512 (&acc)[R][NV]) {
  const std::uint32_t* rows[R];
  WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r) rows[r] = a + r * rs;
  for (std::int64_t p = 0; p < pairs; ++p, b += ldb) {
    __m512bh bv[NV];
    WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) bv[v] = (__m512bh)_mm512_loadu_si512(b + 16 * v);
    WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      const __m512bh x = (__m512bh)_mm512_set1_epi32(int(rows[r][p * ps]));  // the {1to16} operand
      WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbf16_ps(acc[r][v], x, bv[v]);
    }
  }
}

/// The word holding the pair (lo, hi) as vdpbf16ps reads it: lo (element 2p) in the low half.
inline std::uint32_t bf16_pair(std::uint16_t lo, std::uint16_t hi) { return std::uint32_t(lo) | std::uint32_t(hi) << 16; }

/// The vdpbf16ps kernel of gemm_packed (see there for the members, and the file comment). A step
/// is 32 k (16 pairs): an a panel's step holds its 6 rows' 16 words each (row r at 16 r: one
/// masked 64-byte copy of the row to pack), a b panel's step 16 rows of 64 words.
struct GemmDpbf16Kernel {
  using Elem = weft::bfloat16;
  using Packed = std::uint32_t;
  using Acc = float;
  static constexpr int kVecs = 4;
  static constexpr std::int64_t kPairs = 16;  // pairs of k in a step
  static constexpr std::int64_t kRows = 6, kCols = 16 * kVecs, kStep = 2 * kPairs;
  static constexpr std::int64_t kStepElemsA = kRows * kPairs, kStepElemsB = kPairs * kCols, kAccFloats = kRows * kCols;
  static constexpr std::int64_t kBlockRows = 16 * kRows, kBlockCols = 4 * kCols, kSliceSteps = 16;

  struct Thread {};

  /// acc (kRows x kCols fp32, row-major) = (zero if `first`, else acc) + the `steps` steps of an
  /// a and a b panel. The steps are summed from zero and added to acc once, as every packed
  /// kernel's slices are.
  static void block(const std::uint32_t* a, const std::uint32_t* b, std::int64_t steps, float* acc, bool first) {
    __m512 sum[kRows][kVecs];
    WEFT_HOST_UNROLL(8)
    for (int r = 0; r < kRows; ++r)
      WEFT_HOST_UNROLL(4)
      for (int v = 0; v < kVecs; ++v) sum[r][v] = _mm512_setzero_ps();
    for (std::int64_t s = 0; s < steps; ++s, a += kStepElemsA, b += kStepElemsB)
      dpbf16_tile<kRows, kVecs>(a, kPairs, 1, b, kCols, kPairs, sum);
    WEFT_HOST_UNROLL(8)
    for (int r = 0; r < kRows; ++r)
      WEFT_HOST_UNROLL(4)
      for (int v = 0; v < kVecs; ++v) {
        float* dst = acc + r * kCols + 16 * v;
        _mm512_storeu_ps(dst, first ? sum[r][v] : _mm512_add_ps(_mm512_loadu_ps(dst), sum[r][v]));
      }
  }

  /// Packs a row panel: rows i0.. i0 + 5 of a, step s's row r at dst + 96 s + 16 r (32 bf16 of
  /// the row); zeros past n rows and k columns (an odd k's last word gets a zero partner).
  static void pack_a(const weft::bfloat16* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t i0,
                     std::int64_t steps, std::uint32_t* dst) {
    for (std::int64_t s = 0; s < steps; ++s)
      for (std::int64_t r = 0; r < kRows; ++r) {
        const std::int64_t i = i0 + r, k0 = s * kStep, left = std::clamp<std::int64_t>(k - k0, 0, kStep);
        const __mmask32 lanes = left == kStep ? ~__mmask32(0) : __mmask32((1u << left) - 1);
        const __m512i v = i < n ? _mm512_maskz_loadu_epi16(lanes, a + i * lda + k0) : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + s * kStepElemsA + r * kPairs, v);
      }
  }

  /// Packs a column panel: columns j0.. j0 + 63 of b, step s's pair q at dst + 1024 s + 64 q (rows
  /// 2p and 2p + 1 interleaved, p = 16 s + q); zeros past k rows and m columns.
  static void pack_b(const weft::bfloat16* b, std::int64_t ldb, std::int64_t k, std::int64_t m, std::int64_t j0,
                     std::int64_t steps, std::uint32_t* dst) {
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t p = 0; p < steps * kPairs; ++p)
      for (std::int64_t v = 0; v < kVecs; ++v) {
        const std::int64_t lanes = std::clamp<std::int64_t>(cols - 16 * v, 0, 16);
        const __mmask16 mask = lanes == 16 ? __mmask16(0xffff) : __mmask16((1u << lanes) - 1);
        const weft::bfloat16* lo = b + 2 * p * ldb + j0 + 16 * v;
        const __m512i x = 2 * p < k ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, lo)) : _mm512_setzero_si512();
        const __m512i y = 2 * p + 1 < k ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mask, lo + ldb))
                                        : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + p * kCols + 16 * v, _mm512_or_si512(x, _mm512_slli_epi32(y, 16)));
      }
  }

  /// Rounds the register block at acc (rows i0.., columns j0..) into c, within n x m: once to
  /// bfloat16, round to nearest even, as weft::bfloat16(float); or copies the fp32 sums where c
  /// is float (GemmFloatBlocks).
  template <class Out>
  static void store(const float* acc, Out* c, std::int64_t ldc, std::int64_t i0, std::int64_t j0, std::int64_t n,
                    std::int64_t m) {
    const std::int64_t cols = std::min(kCols, m - j0);
    for (std::int64_t r = 0; r < kRows && i0 + r < n; ++r) {
      const float* src = acc + r * kCols;
      Out* dst = c + (i0 + r) * ldc + j0;
      if constexpr (std::is_same_v<Out, float>) {
        std::memcpy(dst, src, std::size_t(cols) * sizeof(float));
      } else {
        std::int64_t j = 0;
        for (; j + 16 <= cols; j += 16) simd::store_float<16>(dst + j, simd::Vec<float, 16>::load(src + j));
        for (; j < cols; ++j) dst[j] = weft::bfloat16(src[j]);
      }
    }
  }
};

#endif  // WEFT_GEMM_DPBF16

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
