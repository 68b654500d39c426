// SPDX-License-Identifier: MIT
/// @file Portable SIMD packets (Vec, Mask) on GCC vector extensions, and the vectorized math the CPU backend evaluates with.
///
/// A `Vec<T, N>` is N lanes of T in one GCC vector; widths above the target's
/// register split into registers inside the compiler, so one kernel body serves
/// every ISA. Intrinsics appear only where the vector extensions cannot say it
/// (square root, non-temporal stores, F16C half conversion), each beside a
/// portable version. Everything here is host code; nvcc's device pass skips it.
///
/// The math assumes IEEE semantics: compile without -ffast-math (the rounding
/// tricks below, `(y + 1.5 * 2^p) - 1.5 * 2^p`, and the NaN selects rely on it).
/// Contraction of a * b + c into FMA is harmless and welcome.
#pragma once

#include "weft/core/config.hpp"
#include "weft/core/dtype.hpp"

#if !defined(__CUDA_ARCH__)

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace weft::simd {

// ---------------------------------------------------------------------------
// Target
// ---------------------------------------------------------------------------

#if defined(__AVX512F__)
inline constexpr int kBytes = 64;
inline constexpr const char* kIsaName = "avx512";
#elif defined(__AVX2__)
inline constexpr int kBytes = 32;
inline constexpr const char* kIsaName = "avx2";
#elif defined(__AVX__)
inline constexpr int kBytes = 32;
inline constexpr const char* kIsaName = "avx";
#elif defined(__SSE2__)
inline constexpr int kBytes = 16;
inline constexpr const char* kIsaName = "sse2";
#elif defined(__ARM_NEON)
inline constexpr int kBytes = 16;
inline constexpr const char* kIsaName = "neon";
#else
inline constexpr int kBytes = 16;
inline constexpr const char* kIsaName = "generic";
#endif

/// Lanes of T in one native register.
template <class T>
inline constexpr int native_lanes = kBytes / int(sizeof(T));

/// The lane types a Vec holds.
template <class T>
inline constexpr bool is_lane_type_v = std::is_same_v<T, float> || std::is_same_v<T, double> ||
                                       std::is_same_v<T, std::int32_t> || std::is_same_v<T, std::int64_t>;

namespace detail {

// The signed / unsigned integer as wide as a lane of T.
template <class T>
using lane_int_t = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
template <class T>
using lane_uint_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// A GCC vector of N lanes of any arithmetic T. GCC ignores vector_size on an
// alias-declaration of a dependent type; the typedef form keeps it.
template <class T, int N>
struct raw_vec {
  typedef T type __attribute__((vector_size(N * sizeof(T))));
};
template <class T, int N>
using raw_t = typename raw_vec<T, N>::type;

}  // namespace detail

// ---------------------------------------------------------------------------
// Vec and Mask
// ---------------------------------------------------------------------------

/// N lanes of T (float, double, int32, int64) in one GCC vector; N a power of two, 8 to 128 bytes.
template <class T, int N>
struct Vec {
  static_assert(is_lane_type_v<T>, "Vec lanes are float, double, int32_t or int64_t");
  static_assert(N >= 2 && (N & (N - 1)) == 0 && N * sizeof(T) <= 128, "Vec is 2+ lanes, a power of two, <= 128 bytes");

  typedef T Raw __attribute__((vector_size(N * sizeof(T))));
  Raw raw;

  static constexpr int size = N;

  /// Unaligned load of N values.
  static Vec load(const T* p) {
    Vec v;
    std::memcpy(&v.raw, p, sizeof(Raw));
    return v;
  }
  static Vec broadcast(T x) {
    Vec v;
    for (int i = 0; i < N; ++i) v.raw[i] = x;
    return v;
  }
  /// Unaligned store of N values.
  void store(T* p) const { std::memcpy(p, &raw, sizeof(Raw)); }
  /// Non-temporal store, bypassing the cache; p aligned to N * sizeof(T). Stores
  /// narrower than a native register are plain stores. Follow a run of streams by stream_fence().
  void stream(T* p) const;
  T operator[](int i) const { return raw[i]; }
};

/// Per-lane truth for Vec<T, N>: all ones or all zeros in a signed integer lane as wide as T.
template <class T, int N>
struct Mask {
  using Lane = detail::lane_int_t<T>;
  typedef Lane Raw __attribute__((vector_size(N * sizeof(T))));
  Raw raw;

  static constexpr int size = N;

  bool operator[](int i) const { return raw[i] != 0; }
};

namespace detail {

template <class T, int N>
using int_vec_t = Vec<lane_int_t<T>, N>;

template <class T, int N>
Vec<lane_int_t<T>, N> to_bits(Vec<T, N> v) {
  return {(typename Vec<lane_int_t<T>, N>::Raw)v.raw};
}
template <class T, int N>
Vec<T, N> from_bits(Vec<lane_int_t<T>, N> v) {
  return {(typename Vec<T, N>::Raw)v.raw};
}
template <class T, int N>
raw_t<lane_uint_t<T>, N> to_ubits(Vec<T, N> v) {
  return (raw_t<lane_uint_t<T>, N>)v.raw;
}
template <class T, int N>
Vec<T, N> from_ubits(raw_t<lane_uint_t<T>, N> u) {
  return {(typename Vec<T, N>::Raw)u};
}

template <class T, int N>
Vec<T, N / 2> lower_half(Vec<T, N> v) {
  Vec<T, N / 2> r;
  std::memcpy(&r.raw, &v.raw, sizeof(r.raw));
  return r;
}
template <class T, int N>
Vec<T, N / 2> upper_half(Vec<T, N> v) {
  Vec<T, N / 2> r;
  std::memcpy(&r.raw, reinterpret_cast<const char*>(&v.raw) + sizeof(r.raw), sizeof(r.raw));
  return r;
}
template <class T, int N>
Vec<T, 2 * N> concat(Vec<T, N> lo, Vec<T, N> hi) {
  Vec<T, 2 * N> r;
  std::memcpy(&r.raw, &lo.raw, sizeof(lo.raw));
  std::memcpy(reinterpret_cast<char*>(&r.raw) + sizeof(lo.raw), &hi.raw, sizeof(hi.raw));
  return r;
}

// Scalar fallback: f applied lane by lane.
template <class T, int N, class F>
Vec<T, N> map_lanes(Vec<T, N> x, F f) {
  Vec<T, N> r;
  for (int i = 0; i < N; ++i) r.raw[i] = f(x.raw[i]);
  return r;
}
template <class T, int N, class F>
Vec<T, N> map_lanes(Vec<T, N> x, Vec<T, N> y, F f) {
  Vec<T, N> r;
  for (int i = 0; i < N; ++i) r.raw[i] = f(x.raw[i], y.raw[i]);
  return r;
}

// Native-width non-temporal stores; `stream_native(p, v)` exists only where the ISA has one.
#if defined(__AVX512F__)
inline void stream_native(float* p, Vec<float, 16> v) { _mm512_stream_ps(p, (__m512)v.raw); }
inline void stream_native(double* p, Vec<double, 8> v) { _mm512_stream_pd(p, (__m512d)v.raw); }
inline void stream_native(std::int32_t* p, Vec<std::int32_t, 16> v) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), (__m512i)v.raw);
}
inline void stream_native(std::int64_t* p, Vec<std::int64_t, 8> v) {
  _mm512_stream_si512(reinterpret_cast<__m512i*>(p), (__m512i)v.raw);
}
#elif defined(__AVX__)
inline void stream_native(float* p, Vec<float, 8> v) { _mm256_stream_ps(p, (__m256)v.raw); }
inline void stream_native(double* p, Vec<double, 4> v) { _mm256_stream_pd(p, (__m256d)v.raw); }
inline void stream_native(std::int32_t* p, Vec<std::int32_t, 8> v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), (__m256i)v.raw);
}
inline void stream_native(std::int64_t* p, Vec<std::int64_t, 4> v) {
  _mm256_stream_si256(reinterpret_cast<__m256i*>(p), (__m256i)v.raw);
}
#elif defined(__SSE2__)
inline void stream_native(float* p, Vec<float, 4> v) { _mm_stream_ps(p, (__m128)v.raw); }
inline void stream_native(double* p, Vec<double, 2> v) { _mm_stream_pd(p, (__m128d)v.raw); }
inline void stream_native(std::int32_t* p, Vec<std::int32_t, 4> v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), (__m128i)v.raw);
}
inline void stream_native(std::int64_t* p, Vec<std::int64_t, 2> v) {
  _mm_stream_si128(reinterpret_cast<__m128i*>(p), (__m128i)v.raw);
}
#endif

template <class T>
concept has_native_stream = requires(T* p, Vec<T, native_lanes<T>> v) { stream_native(p, v); };

}  // namespace detail

template <class T, int N>
void Vec<T, N>::stream(T* p) const {
  constexpr int kNative = native_lanes<T>;
  if constexpr (N >= kNative && detail::has_native_stream<T>) {
    // A register at a time: a vector wider than the target is several registers.
    for (int i = 0; i < N; i += kNative) {
      Vec<T, kNative> part;
      std::memcpy(&part.raw, reinterpret_cast<const char*>(&raw) + i * sizeof(T), sizeof(part.raw));
      detail::stream_native(p + i, part);
    }
  } else {
    store(p);
  }
}

/// Orders earlier non-temporal stores before later stores (sfence on x86; nothing elsewhere).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// ---------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------

// Lane-wise a op b, Vec op scalar and scalar op Vec (the scalar converts to T), and op=.
#define WEFT_SIMD_BINARY_OP(op, constraint)                                                          \
  template <class T, int N>                                                                          \
    requires(constraint)                                                                             \
  Vec<T, N> operator op(Vec<T, N> a, Vec<T, N> b) {                                                  \
    return {a.raw op b.raw};                                                                         \
  }                                                                                                  \
  template <class T, int N>                                                                          \
    requires(constraint)                                                                             \
  Vec<T, N> operator op(Vec<T, N> a, std::type_identity_t<T> b) {                                    \
    return {a.raw op b};                                                                             \
  }                                                                                                  \
  template <class T, int N>                                                                          \
    requires(constraint)                                                                             \
  Vec<T, N> operator op(std::type_identity_t<T> a, Vec<T, N> b) {                                    \
    return {a op b.raw};                                                                             \
  }                                                                                                  \
  template <class T, int N>                                                                          \
    requires(constraint)                                                                             \
  Vec<T, N>& operator op##=(Vec<T, N>& a, Vec<T, N> b) {                                             \
    a.raw = a.raw op b.raw;                                                                          \
    return a;                                                                                        \
  }                                                                                                  \
  template <class T, int N>                                                                          \
    requires(constraint)                                                                             \
  Vec<T, N>& operator op##=(Vec<T, N>& a, std::type_identity_t<T> b) {                               \
    a.raw = a.raw op b;                                                                              \
    return a;                                                                                        \
  }

WEFT_SIMD_BINARY_OP(+, true)
WEFT_SIMD_BINARY_OP(-, true)
WEFT_SIMD_BINARY_OP(*, true)
WEFT_SIMD_BINARY_OP(/, true)
WEFT_SIMD_BINARY_OP(&, std::is_integral_v<T>)
WEFT_SIMD_BINARY_OP(|, std::is_integral_v<T>)
WEFT_SIMD_BINARY_OP(^, std::is_integral_v<T>)
#undef WEFT_SIMD_BINARY_OP

template <class T, int N>
Vec<T, N> operator-(Vec<T, N> a) {
  return {-a.raw};
}
template <class T, int N>
  requires std::is_integral_v<T>
Vec<T, N> operator~(Vec<T, N> a) {
  return {~a.raw};
}
/// Shifts of every lane by s bits; >> is arithmetic (the lanes are signed).
template <class T, int N>
  requires std::is_integral_v<T>
Vec<T, N> operator<<(Vec<T, N> a, int s) {
  return {a.raw << s};
}
template <class T, int N>
  requires std::is_integral_v<T>
Vec<T, N> operator>>(Vec<T, N> a, int s) {
  return {a.raw >> s};
}

// ---------------------------------------------------------------------------
// Comparisons, masks, select, conversion
// ---------------------------------------------------------------------------

// C++ comparison semantics per lane: every comparison with a NaN is false except cmp_ne.
#define WEFT_SIMD_COMPARE(name, op)                                               \
  template <class T, int N>                                                       \
  Mask<T, N> name(Vec<T, N> a, Vec<T, N> b) {                                     \
    return {(typename Mask<T, N>::Raw)(a.raw op b.raw)};                          \
  }                                                                               \
  template <class T, int N>                                                       \
  Mask<T, N> name(Vec<T, N> a, std::type_identity_t<T> b) {                       \
    return {(typename Mask<T, N>::Raw)(a.raw op b)};                              \
  }

WEFT_SIMD_COMPARE(cmp_lt, <)
WEFT_SIMD_COMPARE(cmp_le, <=)
WEFT_SIMD_COMPARE(cmp_gt, >)
WEFT_SIMD_COMPARE(cmp_ge, >=)
WEFT_SIMD_COMPARE(cmp_eq, ==)
WEFT_SIMD_COMPARE(cmp_ne, !=)
#undef WEFT_SIMD_COMPARE

/// Lanes of a where m is set, else lanes of b (a bitwise blend: m must be all ones or zeros per lane).
template <class T, int N>
Vec<T, N> select(Mask<T, N> m, Vec<T, N> a, Vec<T, N> b) {
  using I = typename Mask<T, N>::Raw;
  return {(typename Vec<T, N>::Raw)((((I)a.raw) & m.raw) | (((I)b.raw) & ~m.raw))};
}

template <class T, int N>
Mask<T, N> mask_and(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw & b.raw};
}
template <class T, int N>
Mask<T, N> mask_or(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw | b.raw};
}
template <class T, int N>
Mask<T, N> mask_xor(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw ^ b.raw};
}
template <class T, int N>
Mask<T, N> mask_not(Mask<T, N> a) {
  return {~a.raw};
}

/// The same lanes as a mask over U (lanes widen by sign extension, narrow by truncation).
template <class U, class T, int N>
Mask<U, N> mask_cast(Mask<T, N> m) {
  if constexpr (sizeof(U) == sizeof(T)) {
    return {(typename Mask<U, N>::Raw)m.raw};
  } else {
    return {__builtin_convertvector(m.raw, typename Mask<U, N>::Raw)};
  }
}

/// 1 where m is set, 0 elsewhere, as Vec<U, N> (U defaults to the mask's own lane type).
template <class U = void, class T, int N>
Vec<std::conditional_t<std::is_void_v<U>, T, U>, N> mask_to_ones(Mask<T, N> m) {
  using R = std::conditional_t<std::is_void_v<U>, T, U>;
  auto mr = mask_cast<R>(m);
  auto ones = detail::to_bits(Vec<R, N>::broadcast(R(1)));
  return {(typename Vec<R, N>::Raw)(mr.raw & ones.raw)};
}

/// True if any / every lane of m is set.
template <class T, int N>
bool mask_any(Mask<T, N> m) {
  if constexpr (sizeof(m.raw) == 8) {
    std::uint64_t u;
    std::memcpy(&u, &m.raw, 8);
    return u != 0;
  } else {
    typename Mask<T, N / 2>::Raw lo, hi;
    std::memcpy(&lo, &m.raw, sizeof(lo));
    std::memcpy(&hi, reinterpret_cast<const char*>(&m.raw) + sizeof(lo), sizeof(hi));
    return mask_any(Mask<T, N / 2>{lo | hi});
  }
}
template <class T, int N>
bool mask_all(Mask<T, N> m) {
  return !mask_any(mask_not(m));
}

/// Lane-wise value conversion (C++ rules: float to int truncates toward zero).
template <class U, class T, int N>
Vec<U, N> convert(Vec<T, N> v) {
  if constexpr (std::is_same_v<U, T>) {
    return v;
  } else {
    return {__builtin_convertvector(v.raw, typename Vec<U, N>::Raw)};
  }
}

// ---------------------------------------------------------------------------
// Reductions
// ---------------------------------------------------------------------------

/// Sum of the lanes, added pairwise (halves first), not left to right.
template <class T, int N>
T reduce_add(Vec<T, N> v) {
  if constexpr (N == 2) {
    return v.raw[0] + v.raw[1];
  } else {
    return reduce_add(detail::lower_half(v) + detail::upper_half(v));
  }
}

// ---------------------------------------------------------------------------
// 16-bit floats: load as float, store from float
// ---------------------------------------------------------------------------

namespace detail {

template <int N>
struct lanes_t {};

template <int N>
raw_t<std::uint32_t, N> load_u16_widened(const void* p) {
  raw_t<std::uint16_t, N> h;
  std::memcpy(&h, p, sizeof(h));
  return __builtin_convertvector(h, raw_t<std::uint32_t, N>);
}
template <int N>
void store_u32_narrowed(void* p, raw_t<std::uint32_t, N> v) {
  auto h = __builtin_convertvector(v, raw_t<std::uint16_t, N>);
  std::memcpy(p, &h, sizeof(h));
}

// binary16 bits (in 32-bit lanes) to float: shift the exponent and mantissa
// into place and rebias (127 - 15); subnormals are mantissa * 2^-24; inf and
// NaN keep their mantissa bits (signaling NaNs stay signaling).
template <int N>
Vec<float, N> half_bits_to_float(raw_t<std::uint32_t, N> h) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U sign = (h & 0x8000u) << 16;
  U em = h & 0x7fffu;
  U normal = (em << 13) + 0x38000000u;
  U special = (em << 13) + 0x70000000u;
  Vec<float, N> sub = Vec<float, N>{__builtin_convertvector((I)em, typename Vec<float, N>::Raw)} * 0x1p-24f;
  I is_sub = (I)em < 0x400;
  I is_special = (I)em >= 0x7c00;
  U bits = (normal & (U)~is_special) | (special & (U)is_special);
  bits = (bits & (U)~is_sub) | (to_ubits(sub) & (U)is_sub);
  return from_ubits<float, N>(bits | sign);
}

// float to binary16 bits, round to nearest even, the same steps as
// weft::detail::float_to_half_bits: rebias and round in the integer domain for
// normal results, let a float add of 0.5 round subnormal ones, saturate to inf
// from 65520 up, and quiet every NaN to sign | 0x7e00.
template <int N>
raw_t<std::uint32_t, N> float_to_half_bits(Vec<float, N> v) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U x = to_ubits(v);
  U sign = (x >> 16) & 0x8000u;
  U ax = x & 0x7fffffffu;
  U normal = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
  U sub = to_ubits(from_ubits<float, N>(ax) + 0.5f) - 0x3f000000u;
  I sax = (I)ax;
  I is_sub = sax < 0x38800000;
  I is_inf = sax >= 0x477ff000;
  I is_nan = sax > 0x7f800000;
  U bits = (normal & (U)~is_sub) | (sub & (U)is_sub);
  bits = (bits & (U)~is_inf) | (0x7c00u & (U)is_inf);
  bits |= 0x0200u & (U)is_nan;
  return bits | sign;
}

// bfloat16 is the top half of a binary32: round to nearest even on bit 16,
// and quiet NaNs by setting bit 6 of the result (as weft::detail::float_to_bfloat16_bits).
template <int N>
raw_t<std::uint32_t, N> float_to_bfloat16_bits(Vec<float, N> v) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U x = to_ubits(v);
  U rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  U quiet = (x >> 16) | 0x40u;
  I is_nan = (I)(x & 0x7fffffffu) > 0x7f800000;
  return (rounded & (U)~is_nan) | (quiet & (U)is_nan);
}

template <int N>
Vec<float, N> load_half_portable(const weft::half* p) {
  return half_bits_to_float<N>(load_u16_widened<N>(p));
}
template <int N>
void store_half_portable(weft::half* p, Vec<float, N> v) {
  store_u32_narrowed<N>(p, float_to_half_bits(v));
}

// F16C converts in one instruction. It quiets signaling NaNs on the way in and
// keeps NaN payloads on the way out, where weft::half keeps the signaling bit
// and drops payloads; the selects below restore those bits exactly.
#if defined(__F16C__)
template <int N>
Vec<float, N> restore_signaling_nans(Vec<float, N> f, const weft::half* p) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U quiet_from_half = (load_u16_widened<N>(p) << 13) & 0x00400000u;
  U bits = to_ubits(f);
  I nan = (I)(f.raw != f.raw);
  U fixed = (bits & ~0x00400000u) | quiet_from_half;
  return from_ubits<float, N>((bits & (U)~nan) | (fixed & (U)nan));
}
template <int N>
Vec<float, N> canonicalize_nans_for_half(Vec<float, N> v) {
  using I = raw_t<std::int32_t, N>;
  I nan = (I)(v.raw != v.raw);
  I quiet = ((I)v.raw & (I)0x80000000u) | 0x7fc00000;
  return {(typename Vec<float, N>::Raw)((((I)v.raw) & ~nan) | (quiet & nan))};
}
inline Vec<float, 4> load_half_native(const weft::half* p, lanes_t<4>) {
  Vec<float, 4> f{(Vec<float, 4>::Raw)_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
  return restore_signaling_nans(f, p);
}
inline Vec<float, 8> load_half_native(const weft::half* p, lanes_t<8>) {
  Vec<float, 8> f{(Vec<float, 8>::Raw)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  return restore_signaling_nans(f, p);
}
inline void store_half_native(weft::half* p, Vec<float, 4> v) {
  __m128i h = _mm_cvtps_ph((__m128)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(p), h);
}
inline void store_half_native(weft::half* p, Vec<float, 8> v) {
  __m128i h = _mm256_cvtps_ph((__m256)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
}
#endif
#if defined(__AVX512F__)
inline Vec<float, 16> load_half_native(const weft::half* p, lanes_t<16>) {
  Vec<float, 16> f{(Vec<float, 16>::Raw)_mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)))};
  return restore_signaling_nans(f, p);
}
inline void store_half_native(weft::half* p, Vec<float, 16> v) {
  __m256i h = _mm512_cvtps_ph((__m512)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
}
#endif

}  // namespace detail

/// N binary16 values, widened to float exactly (bit-identical to float(weft::half)).
template <int N>
Vec<float, N> load_float(const weft::half* p) {
  if constexpr (requires { detail::load_half_native(p, detail::lanes_t<N>{}); }) {
    return detail::load_half_native(p, detail::lanes_t<N>{});
  } else if constexpr (N > native_lanes<float>) {
    return detail::concat(load_float<N / 2>(p), load_float<N / 2>(p + N / 2));
  } else {
    return detail::load_half_portable<N>(p);
  }
}

/// N bfloat16 values, widened to float exactly.
template <int N>
Vec<float, N> load_float(const weft::bfloat16* p) {
  return detail::from_ubits<float, N>(detail::load_u16_widened<N>(p) << 16);
}

/// N floats rounded to binary16 (bit-identical to weft::half(float)).
template <int N>
void store_float(weft::half* p, Vec<float, N> v) {
  if constexpr (requires { detail::store_half_native(p, v); }) {
    detail::store_half_native(p, v);
  } else if constexpr (N > native_lanes<float>) {
    store_float(p, detail::lower_half(v));
    store_float(p + N / 2, detail::upper_half(v));
  } else {
    detail::store_half_portable<N>(p, v);
  }
}

/// N floats rounded to bfloat16 (bit-identical to weft::bfloat16(float)).
template <int N>
void store_float(weft::bfloat16* p, Vec<float, N> v) {
  detail::store_u32_narrowed<N>(p, detail::float_to_bfloat16_bits(v));
}

}  // namespace weft::simd

#endif  // !defined(__CUDA_ARCH__)
