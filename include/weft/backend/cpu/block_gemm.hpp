// SPDX-License-Identifier: MIT
/// @file A register-blocked GEMM for small cache-resident blocks (attention's tiles): C (+)= A B, A read by broadcasts through any strides, B and C in padded rows.
#pragma once

#include <cstdint>

#include "weft/backend/cpu/simd.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::cpu {

/// Tile shape of block_gemm for lane type T: kRows rows of C by kCols = 2 packets, so that the
/// kRows x 2 accumulators, two B packets and a broadcast fit the register file (32 vector
/// registers with AVX-512: 12 x 2 + 3; 16 otherwise: 6 x 2 + 3).
template <class T>
struct BlockGemmTile {
  static constexpr int kLanes = simd::native_lanes<T>;
  static constexpr int kRows = simd::kBytes >= 64 ? 12 : 6;
  static constexpr int kCols = 2 * kLanes;
};

/// C[kRows x kCols] (+)= A[kRows x K] B[K x kCols]: A(r, k) = a[r ar + k ak], B row k at b + k ldb,
/// C row r at c + r ldc. One broadcast of A per row and two B packets per k feed 2 kRows FMAs.
template <class T, bool kAccumulate>
inline __attribute__((always_inline)) void block_gemm_tile(const T* a, std::int64_t ar, std::int64_t ak, const T* b, std::int64_t ldb,
                                      T* c, std::int64_t ldc, std::int64_t K) {
  constexpr int R = BlockGemmTile<T>::kRows, W = BlockGemmTile<T>::kLanes;
  using V = simd::Vec<T, W>;
  V acc[R][2];
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    acc[r][0] = kAccumulate ? V::load(c + r * ldc) : V::broadcast(T(0));
    acc[r][1] = kAccumulate ? V::load(c + r * ldc + W) : V::broadcast(T(0));
  }
  for (std::int64_t k = 0; k < K; ++k) {
    const V b0 = V::load(b + k * ldb), b1 = V::load(b + k * ldb + W);
    const T* ak_ = a + k * ak;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
      // A vector-plus-scalar splat: GCC folds it into one broadcast load (vbroadcastss m32).
      const V x{typename V::Raw{} + ak_[r * ar]};
      acc[r][0] = acc[r][0] + x * b0;
      acc[r][1] = acc[r][1] + x * b1;
    }
  }
#pragma GCC unroll 16
  for (int r = 0; r < R; ++r) {
    acc[r][0].store(c + r * ldc);
    acc[r][1].store(c + r * ldc + W);
  }
}

/// C (M x N) (+)= A (M x K) B (K x N) with M a multiple of kRows and N of kCols (callers pad
/// their blocks): A(r, k) = a[r ar + k ak], B and C row-major with row strides ldb and ldc.
template <class T, bool kAccumulate>
void block_gemm(std::int64_t M, std::int64_t N, std::int64_t K, const T* a, std::int64_t ar, std::int64_t ak,
                const T* b, std::int64_t ldb, T* c, std::int64_t ldc) {
  constexpr int R = BlockGemmTile<T>::kRows, NC = BlockGemmTile<T>::kCols;
  for (std::int64_t j = 0; j < N; j += NC)  // a K x kCols panel of B stays in L1 across the row tiles
    for (std::int64_t i = 0; i < M; i += R)
      block_gemm_tile<T, kAccumulate>(a + i * ar, ar, ak, b + j, ldb, c + i * ldc + j, ldc, K);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
