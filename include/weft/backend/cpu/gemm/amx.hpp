// SPDX-License-Identifier: MIT
/// @file The CPU bfloat16 GEMM kernel on AMX-BF16 tiles (TDPBF16PS) for gemm_packed, and whether this process may use tiles (amx_permitted).
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
/// multiple of 32 and rows / columns to 32 with zeros (backend/cpu/gemm/packed.hpp, the driver shared with the
/// Arm BFMMLA kernel): a in panels of 32 rows, b in panels of 32 columns, each 32-k step of a
/// panel two tiles (2 KiB) back to back. The register block is 2 x 2 C tiles (tmm0-3, a 32 x 32
/// output) fed by 2 A tiles (tmm4-5) and 2 B tiles (tmm6-7): 4 tile loads per 4 TDPBF16PS.
/// 256 x 256 output blocks per OpenMP thread (each configures its tiles and releases them at the
/// end); k in 16-step slices: a slice of a b panel (32 KiB) stays in L1 while the block's 8 a
/// panels stream from L2 (256 KiB), partial sums between slices in an fp32 scratch block (tile
/// stores and loads).
///
/// Dispatch (weft::matmul, bfloat16 on the CPU): this GEMM where the build targets AMX-BF16
/// (`__AMX_TILE__`, `__AMX_BF16__`, e.g. -march=native on Sapphire Rapids; not under nvcc) and
/// Linux lets the process use tile data (arch_prctl(ARCH_REQ_XCOMP_PERM, XTILEDATA), asked once
/// per process); where Linux refuses, cast to float + Eigen's SGEMM + one rounding (not
/// backend/cpu/gemm/dpbf16.hpp's vdpbf16ps GEMM, which runs at half the FMA rate on these CPUs
/// and which builds for AMX leave out). bf16_gemm_path() (backend/cpu/gemm/bf16.hpp) says which path runs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/backend/cpu/gemm/packed.hpp"
#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/core/dtype.hpp"

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

#if WEFT_GEMM_AMX

/// The tile configuration (palette 1): tmm0-7 all 16 rows of 64 bytes.
struct alignas(64) AmxTileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  std::uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

/// Mask of the first `count` (clamped to 0..32) lanes.
inline __mmask32 amx_lanes(std::int64_t count) {
  return count >= 32 ? ~__mmask32(0) : count <= 0 ? __mmask32(0) : __mmask32((1u << count) - 1);
}

/// The AMX kernel of gemm_packed (see there for the members): a 32 x 32 register block (2 x 2
/// tiles), 256 x 256 output blocks per thread, k in slices of 16 steps of 32 (a 512 x 32 b panel
/// slice is 32 KiB, within L1's 48 KiB). Needs amx_permitted().
struct GemmAmxKernel {
  using Elem = weft::bfloat16;
  using Packed = std::uint16_t;
  using Acc = float;
  static constexpr std::int64_t kRows = 32, kCols = 32, kStep = 32;
  static constexpr std::int64_t kTileElems = 16 * 32;  // bf16 in one A or B tile (1 KiB)
  static constexpr std::int64_t kStepElems = 2 * kTileElems, kAccFloats = 4 * 256;
  static constexpr std::int64_t kStepElemsA = kStepElems, kStepElemsB = kStepElems;
  static constexpr std::int64_t kBlockRows = 256, kBlockCols = 256, kSliceSteps = 16;

  /// Each thread loads the tile configuration before its blocks and releases the tiles after.
  struct Thread {
    Thread() {
      const AmxTileConfig config;
      _tile_loadconfig(&config);
    }
    ~Thread() { _tile_release(); }
    Thread(const Thread&) = delete;
    Thread& operator=(const Thread&) = delete;
  };

  /// c (4 fp32 tiles, 1 KiB each: rows 0-15 / 16-31 x columns 0-15 / 16-31) = (zero if `first`,
  /// else c) + the `steps` 32-k steps of a packed a panel (2 tiles a step) times a packed b panel.
  static void block(const std::uint16_t* a, const std::uint16_t* b, std::int64_t steps, float* c, bool first) {
    constexpr std::int64_t T = kTileElems;
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

  /// Packs a row panel: rows i0.. i0 + 31 of a as `steps` pairs of A tiles (row r of the step at
  /// dst + step * 1024 + r * 32), zeros past n rows and k columns.
  static void pack_a(const weft::bfloat16* a, std::int64_t lda, std::int64_t n, std::int64_t k, std::int64_t i0,
                     std::int64_t steps, std::uint16_t* dst) {
    for (std::int64_t s = 0; s < steps; ++s)
      for (std::int64_t r = 0; r < kRows; ++r) {
        const std::int64_t i = i0 + r, k0 = s * 32;
        const __m512i v = i < n ? _mm512_maskz_loadu_epi16(amx_lanes(k - k0), a + i * lda + k0) : _mm512_setzero_si512();
        _mm512_storeu_si512(dst + s * 2 * kTileElems + r * 32, v);
      }
  }

  /// Packs a column panel: columns j0.. j0 + 31 of b as `steps` pairs of B tiles (columns 0-15,
  /// then 16-31; row p of a tile holds the pairs [b(2p, j), b(2p + 1, j)]), zeros past k rows
  /// and m columns.
  static void pack_b(const weft::bfloat16* b, std::int64_t ldb, std::int64_t k, std::int64_t m, std::int64_t j0,
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
        std::uint16_t* d = dst + s * 2 * kTileElems + p * 32;
        _mm512_storeu_si512(d, _mm512_permutex2var_epi16(x, lo, y));
        _mm512_storeu_si512(d + kTileElems, _mm512_permutex2var_epi16(x, hi, y));
      }
  }

  /// Rounds the 2 x 2 tiles at acc (rows i0.., columns j0..) into c, within n x m: once to
  /// bfloat16, round to nearest even, as weft::bfloat16(float); or copies the fp32 sums where c
  /// is float (GemmFloatBlocks).
  template <class Out>
  static void store(const float* acc, Out* c, std::int64_t ldc, std::int64_t i0, std::int64_t j0, std::int64_t n,
                    std::int64_t m) {
    for (int q = 0; q < 4; ++q)
      for (std::int64_t r = 0; r < 16; ++r) {
        const std::int64_t i = i0 + q / 2 * 16 + r, j = j0 + q % 2 * 16;
        const std::int64_t lanes = std::min<std::int64_t>(16, m - j);
        if (i >= n || lanes <= 0) continue;
        const float* src = acc + q * 256 + r * 16;
        Out* dst = c + i * ldc + j;
        if constexpr (std::is_same_v<Out, float>) {
          std::memcpy(dst, src, std::size_t(lanes) * sizeof(float));
        } else if (lanes == 16) {
          simd::store_float<16>(dst, simd::Vec<float, 16>{(simd::Vec<float, 16>::Raw)_mm512_loadu_ps(src)});
        } else {
          for (std::int64_t l = 0; l < lanes; ++l) dst[l] = weft::bfloat16(src[l]);
        }
      }
  }
};

#endif  // WEFT_GEMM_AMX

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
