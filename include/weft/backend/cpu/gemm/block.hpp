// SPDX-License-Identifier: MIT
/// @file A register-blocked GEMM for small cache-resident blocks (attention's tiles): C (+)= A B, A read by broadcasts through any strides, B and C in padded rows.
#pragma once

#include <cstdint>

#include "weft/backend/cpu/simd/vec.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Tile shape of block_gemm_panels for lane type T: kRows rows of C by kVecs packets, so that the
/// kRows x kVecs accumulators, the kVecs B packets and a broadcast fit the register file.
/// AVX-512 (32 registers): 4 x 4, 16 FMAs per 4 broadcast loads + 4 loads (float, development
/// machine, one core, 128 x 128 x 64 blocks: 165-170 GFLOP/s; 5 x 4, 8 x 3 and 12 x 2 measured
/// within 5% of it once the broadcasts are pure loads, see below). 16 registers: 6 x 2.
template <class T>
struct BlockGemmTile {
  static constexpr int kLanes = simd::native_lanes<T>;
  static constexpr int kRows = simd::kBytes >= 64 ? 4 : 6;
  static constexpr int kVecs = simd::kBytes >= 64 ? 4 : 2;
  static constexpr int kCols = kVecs * kLanes;
};

/// C[kRows x kCols] (+)= A[kRows x K] B[K x kCols]: A(r, k) = a[r ar + k ak], B row k at b + k ldb,
/// C row r at c + r ldc. One broadcast of A per row and kVecs B packets per k feed kRows kVecs FMAs.
template <class T, bool kAccumulate>
inline __attribute__((always_inline)) void block_gemm_tile(const T* a, std::int64_t ar, std::int64_t ak, const T* b,
                                                           std::int64_t ldb, T* c, std::int64_t ldc, std::int64_t K) {
  constexpr int R = BlockGemmTile<T>::kRows, NV = BlockGemmTile<T>::kVecs, W = BlockGemmTile<T>::kLanes;
  using V = simd::Vec<T, W>;
  // The products of this call sum from 0 and are added to C once at the end (C + sum_k a b
  // rather than (C + a0 b0) + a1 b1 + ...): callers that accumulate many calls into one C (the
  // flash backward's dV and dK over query blocks, the packed GEMM over k slices) then add
  // partial sums of similar size, a blocked summation whose rounding error grows with the number
  // of calls, not of terms (flash's fp32 dv: 13 -> 9 of 200 random cases above 2x torch's fp32
  // math error, bench/sdpa_accuracy.py). Same loads and adds as loading C first.
  V acc[R][NV];
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) acc[r][v] = V::broadcast(T(0));
  for (std::int64_t k = 0; k < K; ++k) {
    V bk[NV];
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) {
      bk[v] = V::load(b + k * ldb + v * W);
      simd::hold_in_register(bk[v]);  // loaded once for the kRows FMAs that use it
    }
    const T* ak_ = a + k * ak;
WEFT_HOST_UNROLL(8)
    for (int r = 0; r < R; ++r) {
      // x - (+0) is x for every x (also -0), so GCC folds this splat into one broadcast load
      // (vbroadcastss m32: a load port). Raw{} + x is not an identity (-0 + 0 = +0): it costs an
      // add and a register broadcast on the shuffle port, which the FMAs share (110 vs 170 GFLOP/s).
      const V x{ak_[r * ar] - typename V::Raw{}};
WEFT_HOST_UNROLL(4)
      for (int v = 0; v < NV; ++v) acc[r][v] = simd::mul_add(x, bk[v], acc[r][v]);
    }
  }
WEFT_HOST_UNROLL(8)
  for (int r = 0; r < R; ++r)
WEFT_HOST_UNROLL(4)
    for (int v = 0; v < NV; ++v) {
      if constexpr (kAccumulate) acc[r][v] = V::load(c + r * ldc + v * W) + acc[r][v];
      acc[r][v].store(c + r * ldc + v * W);
    }
}

/// C (M x N) (+)= A (M x K) B (K x N) with M a multiple of kRows and N of kCols (callers pad
/// their blocks): A(r, k) = a[r ar + k ak]; B packed in column panels: columns
/// [p kCols, (p + 1) kCols) are one contiguous K x kCols panel at b + p K kCols, so that
/// B(k, j) = b[(j / kCols K + k) kCols + j % kCols]; C row-major with row stride ldc. The panel that stays
/// in L1 across the row tiles is then one run of K kCols elements. A row-major B of 128 floats a
/// row (512 bytes) puts the panel's 128 rows x 4 lines on half of L1's 64 sets, 16 lines a set
/// for 12 ways: it thrashed at depth 128 (attention at head dim 128: 95 -> 150 GFLOP/s per core
/// measured on Sapphire Rapids; no change at depth 64, whose 8 lines a set fit).
template <class T, bool kAccumulate>
void block_gemm_panels(std::int64_t M, std::int64_t N, std::int64_t K, const T* a, std::int64_t ar, std::int64_t ak,
                       const T* b, T* c, std::int64_t ldc) {
  constexpr int R = BlockGemmTile<T>::kRows, NC = BlockGemmTile<T>::kCols;
  for (std::int64_t j = 0; j < N; j += NC)
    for (std::int64_t i = 0; i < M; i += R)
      block_gemm_tile<T, kAccumulate>(a + i * ar, ar, ak, b + j * K, NC, c + i * ldc + j, ldc, K);
}

// In a program that links weft_kernels (WEFT_LINKED_KERNELS, core/config.hpp), the library's
// copies (src/kernels.cpp: WEFT_BLOCK_GEMM_INSTANCES(, float)), called rather than instantiated
// here: otherwise the linker may keep this file's, compiled with this file's optimization (a -O0
// test file's in the sanitizer build, whose library is at -O1: a tenth of its suite's time).
#define WEFT_BLOCK_GEMM_INSTANCES(EXTERN, T)                                                                  \
  EXTERN template void block_gemm_panels<T, false>(std::int64_t, std::int64_t, std::int64_t, const T*,        \
                                                   std::int64_t, std::int64_t, const T*, T*, std::int64_t);   \
  EXTERN template void block_gemm_panels<T, true>(std::int64_t, std::int64_t, std::int64_t, const T*,         \
                                                  std::int64_t, std::int64_t, const T*, T*, std::int64_t);
#if WEFT_LINKED_KERNELS
WEFT_BLOCK_GEMM_INSTANCES(extern, float)
WEFT_BLOCK_GEMM_INSTANCES(extern, double)
#endif

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
