// SPDX-License-Identifier: MIT
/// @file Products of small bfloat16 blocks on AMX-BF16 tiles, held in the caller's own buffers: C (fp32) (+)= A (row-major bf16) B (packed in VNNI pairs), what flash attention's block products run on.
///
/// The packed GEMM (amx.hpp) packs whole operands and owns its blocking; attention multiplies
/// blocks it has just computed (scores, weights) that stay in L1/L2, so these helpers read A
/// where it lies and B from tiles the caller packed. Each thread loads the tile configuration first
/// (GemmAmxKernel::Thread, amx.hpp).
#pragma once

#include <cstdint>

#include "weft/backend/cpu/gemm/amx.hpp"

#if WEFT_GEMM_AMX && !defined(__CUDA_ARCH__)

namespace weft::detail::cpu::amx {

inline constexpr std::int64_t kTile = 16 * 32;  // bf16 elements in one A or B tile

constexpr std::int64_t round_up(std::int64_t n, std::int64_t m) { return (n + m - 1) / m * m; }

/// B tiles of a matrix stored as `count` groups of 16 columns by `steps` k steps of 32.
/// Tile (g, s) is at data + g group_stride + s step_stride (elements).
struct PackedB {
  const std::uint16_t* data;
  std::int64_t group_stride, step_stride;
  const std::uint16_t* tile(std::int64_t g, std::int64_t s) const { return data + g * group_stride + s * step_stride; }
  /// The same matrix from column j (a multiple of 16) on.
  PackedB from_column(std::int64_t j) const { return {tile(j / 16, 0), group_stride, step_stride}; }
};

/// C (M x N fp32, row stride ldc) = A (M x 32 steps bf16, row-major with row stride lda) B for a
/// shallow product (1 or 2 k steps: q k^T and v dO^T at head dims <= 64), M and N multiples of
/// 32: each 32-row strip's A tiles stay in tmm4-7 while B streams past one 16-column group at a
/// time (2 C tiles zeroed, 1-2 B loads, 2-4 TDPBF16PS, 2 stores). Tile loads, not the products,
/// bound these blocks: on Sapphire Rapids (one core) a TDPBF16PS alone takes 5.2 ns, and 16.8 ns
/// inside tile_gemm's 2 x 2 block with its 4 loads, which reloads A every step. Here the loads
/// per product halve: a 32 x 256 x 64 product went 20.6 -> 15.0 ns a TDPBF16PS, the forward at
/// E = 64 about 8%. (Keeping A resident over pairs of steps of deeper products too, reloading C
/// between pairs, measured faster in isolation but 5-12% slower in the kernels, whose B and C
/// come from L2.)
inline void tile_gemm_shallow(std::int64_t M, std::int64_t N, std::int64_t steps, const std::uint16_t* a,
                              std::int64_t lda, const PackedB& b, float* c, std::int64_t ldc) {
  const std::int64_t a_bytes = lda * 2, c_bytes = ldc * 4;
  for (std::int64_t i = 0; i < M; i += 32) {
    const std::uint16_t* a0 = a + i * lda;
    const std::uint16_t* a1 = a0 + 16 * lda;
    _tile_loadd(4, a0, a_bytes);
    _tile_loadd(6, a1, a_bytes);
    if (steps == 2) {
      _tile_loadd(5, a0 + 32, a_bytes);
      _tile_loadd(7, a1 + 32, a_bytes);
    }
    float* c0 = c + i * ldc;
    float* c1 = c0 + 16 * ldc;
    for (std::int64_t g = 0; g < N / 16; ++g) {
      _tile_zero(0);
      _tile_zero(1);
      _tile_loadd(2, b.tile(g, 0), 64);
      _tile_dpbf16ps(0, 4, 2);
      _tile_dpbf16ps(1, 6, 2);
      if (steps == 2) {
        _tile_loadd(3, b.tile(g, 1), 64);
        _tile_dpbf16ps(0, 5, 3);
        _tile_dpbf16ps(1, 7, 3);
      }
      _tile_stored(0, c0 + g * 16, c_bytes);
      _tile_stored(1, c1 + g * 16, c_bytes);
    }
  }
}

/// C (M x N fp32, row stride ldc) (+)= A (M x 32 steps bf16, row-major with row stride lda) B,
/// M and N multiples of 32: 2 x 2 C tiles (a 32 x 32 output) per register block, fed by 2 A and
/// 2 B tiles each step, as in the AMX GEMM; tile_gemm_shallow for 1-2 steps without accumulation.
inline void tile_gemm(std::int64_t M, std::int64_t N, std::int64_t steps, const std::uint16_t* a, std::int64_t lda,
                      const PackedB& b, float* c, std::int64_t ldc, bool accumulate) {
  if (steps <= 2 && !accumulate) return tile_gemm_shallow(M, N, steps, a, lda, b, c, ldc);
  const std::int64_t a_bytes = lda * 2, c_bytes = ldc * 4;
  for (std::int64_t i = 0; i < M; i += 32)
    for (std::int64_t j = 0; j < N; j += 32) {
      float* c0 = c + i * ldc + j;
      float* c1 = c0 + 16 * ldc;
      if (accumulate) {
        _tile_loadd(0, c0, c_bytes);
        _tile_loadd(1, c0 + 16, c_bytes);
        _tile_loadd(2, c1, c_bytes);
        _tile_loadd(3, c1 + 16, c_bytes);
      } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
      }
      const std::uint16_t* a0 = a + i * lda;
      const std::uint16_t* a1 = a0 + 16 * lda;
      for (std::int64_t s = 0; s < steps; ++s) {
        _tile_loadd(4, a0 + s * 32, a_bytes);
        _tile_loadd(6, b.tile(j / 16, s), 64);
        _tile_loadd(7, b.tile(j / 16 + 1, s), 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_loadd(5, a1 + s * 32, a_bytes);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
      }
      _tile_stored(0, c0, c_bytes);
      _tile_stored(1, c0 + 16, c_bytes);
      _tile_stored(2, c1, c_bytes);
      _tile_stored(3, c1 + 16, c_bytes);
    }
}

}  // namespace weft::detail::cpu::amx

#endif
