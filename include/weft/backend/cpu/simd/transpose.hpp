// SPDX-License-Identifier: MIT
/// @file Transposes of square tiles of packets: the layout changes between NCHW and channels-last (a convolution's padded source copy, its output blocks written into NCHW).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "weft/backend/cpu/simd/vec.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

// As in vec.hpp: packet functions are always inlined.
#define WEFT_SIMD_INLINE inline __attribute__((always_inline))

namespace weft::detail::simd {

/// Lanes of one side of transpose_tile's square tile for elements of `bytes` bytes: a native
/// packet's (16 floats on AVX-512, 8 on AVX2 and 4 on NEON; 32, 16, 8 two-byte elements).
template <class T>
inline constexpr int kTransposeLanes = native_lanes<T>;

/// Round b of transpose_tile on rows `upper` (row i) and `lower` (row i + b): the lanes of the new
/// row i (`kLower` false) or i + b (true), as a two-source shuffle with constant indices
/// (__builtin_shufflevector: GCC 12 and clang; 0 .. L - 1 index `upper`, L .. 2L - 1 `lower`).
template <int L, int B, bool kLower, class Row, std::size_t... J>
WEFT_SIMD_INLINE Row transpose_pick(Row upper, Row lower, std::index_sequence<J...>) {
  if constexpr (kLower) return __builtin_shufflevector(upper, lower, ((J & B) ? L + int(J) : int(J) + B)...);
  else return __builtin_shufflevector(upper, lower, ((J & B) ? L + int(J) - B : int(J))...);
}

/// Rounds b = B, B / 2, ..., 1 of transpose_tile over its L rows.
template <int L, int B, class Row>
WEFT_SIMD_INLINE void transpose_rounds(Row (&r)[L]) {
#pragma GCC unroll 64
  for (int i = 0; i < L; ++i) {
    if (i & B) continue;
    const Row upper = r[i], lower = r[i + B];
    r[i] = transpose_pick<L, B, false>(upper, lower, std::make_index_sequence<L>{});
    r[i + B] = transpose_pick<L, B, true>(upper, lower, std::make_index_sequence<L>{});
  }
  if constexpr (B > 1) transpose_rounds<L, B / 2>(r);
}

/// out[j out_stride + i] = in[i in_stride + j] for i, j < L = kTransposeLanes<T>: L packet loads,
/// log2 L rounds of L two-source shuffles, L packet stores. Round b swaps, in each pair of rows b
/// apart, the b x b blocks off the diagonal of their 2b x 2b block (rows i and i + b: lanes with
/// bit b set of row i take row i + b's lanes b lower; lanes with bit b clear of row i + b take row
/// i's b higher); after b = L/2, ..., 1 every element has crossed the diagonal. Against a scalar
/// loop (one load and store an element, the stores L elements apart) it moves an element in about
/// a quarter of a cycle (AVX-512 floats: 64 vpermt2ps for 256 elements).
template <class T>
WEFT_SIMD_INLINE void transpose_tile(const T* in, std::int64_t in_stride, T* out, std::int64_t out_stride) {
  constexpr int L = kTransposeLanes<T>;
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint16_t>>;
  static_assert(sizeof(T) == sizeof(Bits), "transpose_tile: 2-, 4- or 8-byte elements");
  typedef Bits Row __attribute__((vector_size(L * sizeof(Bits))));
  Row r[L];
#pragma GCC unroll 64
  for (int i = 0; i < L; ++i) std::memcpy(&r[i], static_cast<const void*>(in + i * in_stride), sizeof(Row));
  if constexpr (L > 1) transpose_rounds<L, L / 2>(r);
#pragma GCC unroll 64
  for (int j = 0; j < L; ++j) std::memcpy(static_cast<void*>(out + j * out_stride), &r[j], sizeof(Row));
}

}  // namespace weft::detail::simd

#undef WEFT_SIMD_INLINE

#endif  // !defined(__CUDA_ARCH__)
