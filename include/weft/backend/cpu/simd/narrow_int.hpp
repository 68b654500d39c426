// SPDX-License-Identifier: MIT
/// @file int8, uint8 and int16 elements as int32 packet lanes: widening loads, narrowing stores and the wrap of a lane to its dtype's width.
///
/// A kernel computes on narrow integers in int32 lanes (a packet of them has the lane count of an
/// int32 packet, as bool's does). Each op's result and each cast is wrapped to the dtype's w bits
/// (wrap_to: two shifts, or a mask for uint8; PacketTarget in packet.hpp), so a lane always holds
/// a value of its dtype, as in PyTorch, whose kernels compute in 8- and 16-bit lanes: a comparison
/// or a maximum after an overflowing add sees the wrapped sum.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/backend/cpu/simd/vec.hpp"

#if !defined(__CUDA_ARCH__)

// As in vec.hpp: packet functions are always inlined.
#define WEFT_SIMD_INLINE inline __attribute__((always_inline))

namespace weft::detail::simd {

/// Each lane reduced modulo 2^w into I's range, w = 8 * sizeof(I) (two's complement): the value the
/// lane holds as an I. uint8 keeps the low 8 bits; int8 and int16 also copy bit w - 1 upwards.
template <class I, int N>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE Vec<std::int32_t, N> wrap_to(Vec<std::int32_t, N> v) {
  if constexpr (std::is_unsigned_v<I>) {
    return v & 0xff;
  } else {
    constexpr int kShift = 32 - 8 * int(sizeof(I));
    return (v << kShift) >> kShift;
  }
}

namespace detail {

// Each ISA section below adds overloads of these for the lane counts it has one instruction
// sequence for; the deleted templates make `requires { f(args); }` a plain "no" elsewhere.
template <class... A>
void widen_native(A...) = delete;
template <class... A>
void narrow_store_native(A...) = delete;

// An intrinsic's register (SSE, AVX, AVX-512 or NEON) as a Vec of int32 lanes.
template <class R>
WEFT_SIMD_INLINE Vec<std::int32_t, sizeof(R) / 4> int32_lanes(const R& r) {
  return {(typename Vec<std::int32_t, sizeof(R) / 4>::Raw)r};
}

// Loads of 4 bytes and of 8 bytes into the low bytes of an SSE register.
#if defined(__SSE2__)
WEFT_SIMD_INLINE __m128i load_low32(const void* p) {
  std::int32_t w;
  std::memcpy(&w, p, 4);
  return _mm_cvtsi32_si128(w);
}
WEFT_SIMD_INLINE __m128i load_low64(const void* p) { return _mm_loadl_epi64(static_cast<const __m128i*>(p)); }
#endif

// Widening, 4 lanes: pmovsxbd / pmovzxbd / pmovsxwd (SSE4.1); SSE2 has no extension instruction:
// each element is interleaved with itself up to 32 bits and shifted back, arithmetically for the
// signed types (the element's sign fills the top), or interleaved with zeros for uint8.
#if defined(__SSE4_1__)
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int8_t* p, lanes_t<4>) {
  return int32_lanes(_mm_cvtepi8_epi32(load_low32(p)));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::uint8_t* p, lanes_t<4>) {
  return int32_lanes(_mm_cvtepu8_epi32(load_low32(p)));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int16_t* p, lanes_t<4>) {
  return int32_lanes(_mm_cvtepi16_epi32(load_low64(p)));
}
#elif defined(__SSE2__)
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int8_t* p, lanes_t<4>) {
  const __m128i b = load_low32(p);
  const __m128i w = _mm_unpacklo_epi8(b, b);
  return int32_lanes(_mm_srai_epi32(_mm_unpacklo_epi16(w, w), 24));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::uint8_t* p, lanes_t<4>) {
  const __m128i zero = _mm_setzero_si128();
  return int32_lanes(_mm_unpacklo_epi16(_mm_unpacklo_epi8(load_low32(p), zero), zero));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int16_t* p, lanes_t<4>) {
  const __m128i h = load_low64(p);
  return int32_lanes(_mm_srai_epi32(_mm_unpacklo_epi16(h, h), 16));
}
#endif
// 8 lanes: vpmovsxbd / vpmovzxbd / vpmovsxwd on a ymm.
#if defined(__AVX2__)
WEFT_SIMD_INLINE Vec<std::int32_t, 8> widen_native(const std::int8_t* p, lanes_t<8>) {
  return int32_lanes(_mm256_cvtepi8_epi32(load_low64(p)));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 8> widen_native(const std::uint8_t* p, lanes_t<8>) {
  return int32_lanes(_mm256_cvtepu8_epi32(load_low64(p)));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 8> widen_native(const std::int16_t* p, lanes_t<8>) {
  return int32_lanes(_mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
#endif
// 16 lanes on a zmm; the all-lanes masked forms, as load_u16_zero_extended (GCC 12's headers).
#if defined(__AVX512F__)
WEFT_SIMD_INLINE Vec<std::int32_t, 16> widen_native(const std::int8_t* p, lanes_t<16>) {
  return int32_lanes(_mm512_maskz_cvtepi8_epi32(__mmask16(0xffff), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 16> widen_native(const std::uint8_t* p, lanes_t<16>) {
  return int32_lanes(_mm512_maskz_cvtepu8_epi32(__mmask16(0xffff), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 16> widen_native(const std::int16_t* p, lanes_t<16>) {
  return int32_lanes(
      _mm512_maskz_cvtepi16_epi32(__mmask16(0xffff), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))));
}
#endif
// NEON: sxtl / uxtl, 8 to 16 bits, then 16 to 32 (4 bytes enter as the low half of a d register).
#if defined(__ARM_NEON) && defined(__aarch64__)
WEFT_SIMD_INLINE std::uint64_t load_u32_bits(const void* p) {
  std::uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int8_t* p, lanes_t<4>) {
  return int32_lanes(vmovl_s16(vget_low_s16(vmovl_s8(vcreate_s8(load_u32_bits(p))))));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::uint8_t* p, lanes_t<4>) {
  return int32_lanes(vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(vcreate_u8(load_u32_bits(p)))))));
}
WEFT_SIMD_INLINE Vec<std::int32_t, 4> widen_native(const std::int16_t* p, lanes_t<4>) {
  return int32_lanes(vmovl_s16(vld1_s16(p)));
}
#endif

// Narrowing stores of lanes already wrapped to I (saturating packs are then exact).
// SSE2, 4 lanes: packssdw to 16 bits, then packsswb (int8) or packuswb (uint8) to 8.
#if defined(__SSE2__)
template <class I>
WEFT_SIMD_INLINE void store_packed(I* p, __m128i words) {
  if constexpr (sizeof(I) == 2) {
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), words);
  } else {
    const __m128i bytes = std::is_unsigned_v<I> ? _mm_packus_epi16(words, words) : _mm_packs_epi16(words, words);
    const std::int32_t w = _mm_cvtsi128_si32(bytes);
    std::memcpy(p, &w, 4);
  }
}
template <class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE void narrow_store_native(I* p, Vec<std::int32_t, 4> wrapped) {
  const __m128i w = (__m128i)wrapped.raw;
  store_packed(p, _mm_packs_epi32(w, w));
}
#endif
// AVX2, 8 lanes: the two halves packed into 8 words in order, then to bytes.
#if defined(__AVX2__)
template <class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE void narrow_store_native(I* p, Vec<std::int32_t, 8> wrapped) {
  const __m256i w = (__m256i)wrapped.raw;
  const __m128i words = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
  if constexpr (sizeof(I) == 2) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), words);
  } else {
    const __m128i bytes = std::is_unsigned_v<I> ? _mm_packus_epi16(words, words) : _mm_packs_epi16(words, words);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(p), bytes);
  }
}
#endif
// AVX-512, 16 lanes: vpmovdb / vpmovdw keep the low bits of each lane.
#if defined(__AVX512F__)
template <class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE void narrow_store_native(I* p, Vec<std::int32_t, 16> wrapped) {
  const __m512i w = (__m512i)wrapped.raw;
  if constexpr (sizeof(I) == 2)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_maskz_cvtepi32_epi16(__mmask16(0xffff), w));
  else
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm512_maskz_cvtepi32_epi8(__mmask16(0xffff), w));
}
#endif
// NEON, 4 lanes: xtn keeps the low half of each lane, 32 to 16 bits, then 16 to 8.
#if defined(__ARM_NEON) && defined(__aarch64__)
template <class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE void narrow_store_native(I* p, Vec<std::int32_t, 4> wrapped) {
  const int16x4_t words = vmovn_s32((int32x4_t)wrapped.raw);
  if constexpr (sizeof(I) == 2) {
    vst1_s16(reinterpret_cast<std::int16_t*>(p), words);
  } else {
    const std::uint32_t w = vget_lane_u32(vreinterpret_u32_s8(vmovn_s16(vcombine_s16(words, words))), 0);
    std::memcpy(p, &w, 4);
  }
}
#endif

}  // namespace detail

/// N int8, uint8 or int16 values as int32 lanes (sign- or zero-extended): the ISA's extension for N
/// lanes where it has one, a register at a time above the native width, else a vector conversion.
template <int N, class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE Vec<std::int32_t, N> load_widened(const I* p) {
  if constexpr (requires { detail::widen_native(p, detail::lanes_t<N>{}); }) {
    return detail::widen_native(p, detail::lanes_t<N>{});
  } else if constexpr (N > native_lanes<std::int32_t>) {
    return detail::concat(load_widened<N / 2>(p), load_widened<N / 2>(p + N / 2));
  } else {
    detail::raw_t<I, N> narrow;
    std::memcpy(&narrow, p, sizeof(narrow));
    return {__builtin_convertvector(narrow, typename Vec<std::int32_t, N>::Raw)};
  }
}

/// Stores the N lanes of v as I, each lane wrapped to I (its low 8 * sizeof(I) bits).
template <int N, class I>
  requires weft::is_narrow_int_v<I>
WEFT_SIMD_INLINE void store_narrowed(I* p, Vec<std::int32_t, N> v) {
  if constexpr (requires { detail::narrow_store_native(p, v); }) {
    detail::narrow_store_native(p, wrap_to<I>(v));
  } else if constexpr (N > native_lanes<std::int32_t>) {
    store_narrowed(p, detail::lower_half(v));
    store_narrowed(p + N / 2, detail::upper_half(v));
  } else {
    const auto narrow = __builtin_convertvector(v.raw, detail::raw_t<I, N>);  // truncation: the low bits
    std::memcpy(p, &narrow, sizeof(narrow));
  }
}

}  // namespace weft::detail::simd

#undef WEFT_SIMD_INLINE

#endif  // !defined(__CUDA_ARCH__)
