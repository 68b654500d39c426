// SPDX-License-Identifier: MIT
/// @file Portable SIMD packets (Vec, Mask) on GCC vector extensions, and the CPU backend's vectorized math.
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

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#if defined(__SSE2__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <arm_neon.h>
#endif

// Packet functions are small or sit in hot loops: always inlined, so their
// constants hoist out of the caller's loop instead of being rebuilt per call.
#define WEFT_SIMD_INLINE inline __attribute__((always_inline))

namespace weft::detail::simd {

// ---------------------------------------------------------------------------
// Target
// ---------------------------------------------------------------------------

/// The vector ISA of the build: its widest register in bytes, and its name.
struct Isa {
  int bytes;
  const char* name;
};
inline constexpr Isa kIsa =
#if defined(__AVX512F__)
    {64, "avx512"};
#elif defined(__AVX2__)
    {32, "avx2"};
#elif defined(__AVX__)
    {32, "avx"};
#elif defined(__SSE2__)
    {16, "sse2"};
#elif defined(__ARM_NEON)
    {16, "neon"};
#else
    {16, "generic"};
#endif
inline constexpr int kBytes = kIsa.bytes;
inline constexpr const char* kIsaName = kIsa.name;

/// Lanes of T in one native register.
template <class T>
inline constexpr int native_lanes = kBytes / int(sizeof(T));

// 1 where float packets round to bfloat16 with Arm's BFCVTN (FEAT_BF16: -march=armv8.6-a, or
// armv8.2-a+bf16 and later with +bf16, -mcpu=neoverse-v1 / -n2 / -v2). Not under nvcc: its front
// end is untested with arm_neon.h's __bf16 vectors, and no aarch64 CUDA toolchain is at hand.
#if defined(__ARM_NEON) && defined(__aarch64__) && defined(__ARM_FEATURE_BF16_VECTOR_ARITHMETIC) && \
    !defined(__CUDACC__)
#define WEFT_SIMD_NEON_BF16 1
#else
#define WEFT_SIMD_NEON_BF16 0
#endif

/// How float packets are rounded to bfloat16: one AVX512-BF16 instruction per packet when the
/// build enables it (with AVX512VL for the 4- and 8-lane forms, AVX512DQ for the subnormal test), Arm's BFCVTN / BFCVTN2 where the
/// build has FEAT_BF16, else integer code. All give the same bits (store_float).
#if defined(__AVX512BF16__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
inline constexpr const char* kBfloat16Conversion = "avx512-bf16";
#elif WEFT_SIMD_NEON_BF16
inline constexpr const char* kBfloat16Conversion = "neon-bf16";
#else
inline constexpr const char* kBfloat16Conversion = "integer";
#endif

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

// Alignment of a vector of `bytes`: natural up to one native register, one
// register beyond. A natural 32- or 64-byte alignment on a narrower target makes
// GCC print an ABI note (-Wpsabi) wherever such a Vec is passed by value, and
// no pragma silences it; the narrower alignment costs nothing.
constexpr int vector_align(int bytes) { return bytes > kBytes ? kBytes : bytes; }

// A GCC vector of N lanes of any arithmetic T. GCC ignores vector_size on an
// alias-declaration of a dependent type; the typedef form keeps it.
template <class T, int N>
struct raw_vec {
  typedef T type __attribute__((vector_size(N * sizeof(T)), aligned(vector_align(N * sizeof(T)))));
};
template <class T, int N>
using raw_t = typename raw_vec<T, N>::type;

// A raw vector wrapped in a struct. Helpers return these rather than raw vectors:
// GCC warns (-Wpsabi) about returning a vector wider than the target's registers.
template <class T, int N>
struct Lanes {
  raw_t<T, N> raw;
};

}  // namespace detail

// ---------------------------------------------------------------------------
// Vec and Mask
// ---------------------------------------------------------------------------

/// N lanes of T (float, double, int32, int64) in one GCC vector; N a power of two, 8 to 128 bytes.
template <class T, int N>
struct Vec {
  static_assert(is_lane_type_v<T>, "Vec lanes are float, double, int32_t or int64_t");
  static_assert(N >= 2 && (N & (N - 1)) == 0 && N * sizeof(T) <= 128, "Vec is 2+ lanes, a power of two, <= 128 bytes");

  typedef T Raw __attribute__((vector_size(N * sizeof(T)), aligned(detail::vector_align(N * sizeof(T)))));
  Raw raw;

  static constexpr int size = N;

  /// Unaligned load of N values.
  WEFT_SIMD_INLINE static Vec load(const T* p) {
    Vec v;
    std::memcpy(&v.raw, p, sizeof(Raw));
    return v;
  }
  /// x in every lane. Written as x - 0 (exact for every x, -0 and NaN included) so that the
  /// compiler emits one splat: a lane-by-lane loop became N masked inserts on AVX-512 (GCC 12),
  /// which made every number in a kernel cost ~16 instructions per packet.
  WEFT_SIMD_INLINE static Vec broadcast(T x) {
    Vec v;
    v.raw = x - Raw{};
    return v;
  }
  /// Unaligned store of N values.
  WEFT_SIMD_INLINE void store(T* p) const { std::memcpy(p, &raw, sizeof(Raw)); }
  /// Non-temporal store, bypassing the cache; p aligned to N * sizeof(T). Stores of a width
  /// the ISA has no streaming store for (8 bytes; any width on NEON) are plain stores. Follow a
  /// run of streams by stream_fence().
  void stream(T* p) const;
  WEFT_SIMD_INLINE T operator[](int i) const { return raw[i]; }
};

/// Per-lane truth for Vec<T, N>: all ones or all zeros in a signed integer lane as wide as T.
template <class T, int N>
struct Mask {
  using Lane = detail::lane_int_t<T>;
  typedef Lane Raw __attribute__((vector_size(N * sizeof(T)), aligned(detail::vector_align(N * sizeof(T)))));
  Raw raw;

  static constexpr int size = N;

  WEFT_SIMD_INLINE bool operator[](int i) const { return raw[i] != 0; }
};

namespace detail {

template <class T, int N>
using int_vec_t = Vec<lane_int_t<T>, N>;

template <class T, int N>
WEFT_SIMD_INLINE Vec<lane_int_t<T>, N> to_bits(Vec<T, N> v) {
  return {(typename Vec<lane_int_t<T>, N>::Raw)v.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> from_bits(Vec<lane_int_t<T>, N> v) {
  return {(typename Vec<T, N>::Raw)v.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Lanes<lane_uint_t<T>, N> to_ubits(Vec<T, N> v) {
  return {(raw_t<lane_uint_t<T>, N>)v.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> from_ubits(const raw_t<lane_uint_t<T>, N>& u) {
  return {(typename Vec<T, N>::Raw)u};
}

template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N / 2> lower_half(Vec<T, N> v) {
  Vec<T, N / 2> r;
  std::memcpy(&r.raw, &v.raw, sizeof(r.raw));
  return r;
}
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N / 2> upper_half(Vec<T, N> v) {
  Vec<T, N / 2> r;
  std::memcpy(&r.raw, reinterpret_cast<const char*>(&v.raw) + sizeof(r.raw), sizeof(r.raw));
  return r;
}
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, 2 * N> concat(Vec<T, N> lo, Vec<T, N> hi) {
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

// Each ISA section below adds overloads of these; the deleted templates make
// `requires { f(args); }` a plain "no" where a target has none.
template <class... A>
void stream_native(A...) = delete;
template <class... A>
void load_half_native(A...) = delete;
template <class... A>
void narrow_native(A...) = delete;
template <class... A>
void load_u16_zero_extended(A...) = delete;
template <class... A>
void sqrt_native(A...) = delete;

// Non-temporal stores of one register, each width the ISA has (an AVX-512 build also streams
// the 32- and 16-byte packets of a row's tail, and a 16-bit destination's 32-byte packets):
// _mm{W}_stream_ps / _pd / _si{W} for the four lane types.
#define WEFT_STREAM_NATIVE(prefix, F, D, I, si, bytes)                                                      \
  WEFT_SIMD_INLINE void stream_native(float* p, Vec<float, bytes / 4> v) { prefix##_stream_ps(p, (F)v.raw); }     \
  WEFT_SIMD_INLINE void stream_native(double* p, Vec<double, bytes / 8> v) { prefix##_stream_pd(p, (D)v.raw); }   \
  WEFT_SIMD_INLINE void stream_native(std::int32_t* p, Vec<std::int32_t, bytes / 4> v) {                          \
    prefix##_stream_##si(reinterpret_cast<I*>(p), (I)v.raw);                                                     \
  }                                                                                                               \
  WEFT_SIMD_INLINE void stream_native(std::int64_t* p, Vec<std::int64_t, bytes / 8> v) {                          \
    prefix##_stream_##si(reinterpret_cast<I*>(p), (I)v.raw);                                                     \
  }
#if defined(__AVX512F__)
WEFT_STREAM_NATIVE(_mm512, __m512, __m512d, __m512i, si512, 64)
#endif
#if defined(__AVX__)
WEFT_STREAM_NATIVE(_mm256, __m256, __m256d, __m256i, si256, 32)
#endif
#if defined(__SSE2__)
WEFT_STREAM_NATIVE(_mm, __m128, __m128d, __m128i, si128, 16)
#endif
#undef WEFT_STREAM_NATIVE

}  // namespace detail

template <class T, int N>
WEFT_SIMD_INLINE void Vec<T, N>::stream(T* p) const {
  constexpr int kNative = native_lanes<T>;
  if constexpr (requires { detail::stream_native(p, *this); }) {
    detail::stream_native(p, *this);
  } else if constexpr (N > kNative) {
    // A register at a time: a vector wider than the target is several registers.
    for (int i = 0; i < N; i += kNative) {
      Vec<T, kNative> part;
      std::memcpy(&part.raw, reinterpret_cast<const char*>(&raw) + i * sizeof(T), sizeof(part.raw));
      part.stream(p + i);
    }
  } else {
    store(p);
  }
}

/// Orders earlier non-temporal stores before later stores (sfence on x86; nothing elsewhere).
WEFT_SIMD_INLINE void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

/// Makes the compiler hold v in a register from here on (an empty asm that reads and writes it):
/// a loaded packet that several FMAs use is then loaded once, not folded into each FMA as a
/// memory operand. GCC 12 folds a register GEMM tile's 4 B packets into its 16 FMAs, 16 loads and
/// 4 broadcasts per step where 4 and 4 suffice; on Zen 5 (two zmm loads a cycle) that bound one
/// core at 122 GFLOP/s against 285 with the packets held (bench/peak: 287). Native packets only.
template <class V>
WEFT_SIMD_INLINE void hold_in_register(V& v) {
#if defined(__SSE2__)
  __asm__("" : "+v"(v.raw));
#elif defined(__aarch64__)
  __asm__("" : "+w"(v.raw));
#else
  (void)v;
#endif
}

// ---------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------

// Lane-wise a op b, Vec op scalar and scalar op Vec (the scalar converts to T), and op=.
#define WEFT_SIMD_BINARY_OP(op, constraint)                                                         \
  template <class T, int N>                                                                         \
    requires(constraint)                                                                            \
  WEFT_SIMD_INLINE Vec<T, N> operator op(Vec<T, N> a, Vec<T, N> b) {                                \
    return {a.raw op b.raw};                                                                        \
  }                                                                                                 \
  template <class T, int N>                                                                         \
    requires(constraint)                                                                            \
  WEFT_SIMD_INLINE Vec<T, N> operator op(Vec<T, N> a, std::type_identity_t<T> b) {                  \
    return {a.raw op b};                                                                            \
  }                                                                                                 \
  template <class T, int N>                                                                         \
    requires(constraint)                                                                            \
  WEFT_SIMD_INLINE Vec<T, N> operator op(std::type_identity_t<T> a, Vec<T, N> b) {                  \
    return {a op b.raw};                                                                            \
  }                                                                                                 \
  template <class T, int N>                                                                         \
    requires(constraint)                                                                            \
  WEFT_SIMD_INLINE Vec<T, N>& operator op##=(Vec<T, N>& a, Vec<T, N> b) {                           \
    a.raw = a.raw op b.raw;                                                                         \
    return a;                                                                                       \
  }                                                                                                 \
  template <class T, int N>                                                                         \
    requires(constraint)                                                                            \
  WEFT_SIMD_INLINE Vec<T, N>& operator op##=(Vec<T, N>& a, std::type_identity_t<T> b) {             \
    a.raw = a.raw op b;                                                                             \
    return a;                                                                                       \
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
WEFT_SIMD_INLINE Vec<T, N> operator-(Vec<T, N> a) {
  return {-a.raw};
}
template <class T, int N>
  requires std::is_integral_v<T>
WEFT_SIMD_INLINE Vec<T, N> operator~(Vec<T, N> a) {
  return {~a.raw};
}
/// Shifts of every lane by s bits; >> is arithmetic (the lanes are signed).
template <class T, int N>
  requires std::is_integral_v<T>
WEFT_SIMD_INLINE Vec<T, N> operator<<(Vec<T, N> a, int s) {
  return {a.raw << s};
}
template <class T, int N>
  requires std::is_integral_v<T>
WEFT_SIMD_INLINE Vec<T, N> operator>>(Vec<T, N> a, int s) {
  return {a.raw >> s};
}

/// a b + c rounded once (a fused multiply-add) where the ISA has one for this width (x86 FMA3,
/// AVX-512, aarch64 NEON), else a b + c rounded twice. Spelled out rather than left to the
/// compiler: g++ contracts `c + a * b` into an FMA from -O2 on and not at -Og or -O0, so one GEMM
/// tile compiled in a -Og file and in the -O3 weft_kernels library rounded differently (a
/// prepacked Linear lost the bits of the unpacked call). Where the ISA has no FMA there is nothing
/// to contract, and the plain expression rounds alike at every level.
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> mul_add(Vec<T, N> a, Vec<T, N> b, Vec<T, N> c) {
  using Raw = typename Vec<T, N>::Raw;
  [[maybe_unused]] constexpr std::size_t bytes = sizeof(Raw);
  [[maybe_unused]] constexpr bool f32 = std::is_same_v<T, float>, f64 = std::is_same_v<T, double>;
#if defined(__AVX512F__)
  if constexpr (bytes == 64 && f32) return {(Raw)_mm512_fmadd_ps((__m512)a.raw, (__m512)b.raw, (__m512)c.raw)};
  if constexpr (bytes == 64 && f64) return {(Raw)_mm512_fmadd_pd((__m512d)a.raw, (__m512d)b.raw, (__m512d)c.raw)};
#endif
#if defined(__FMA__)
  if constexpr (bytes == 32 && f32) return {(Raw)_mm256_fmadd_ps((__m256)a.raw, (__m256)b.raw, (__m256)c.raw)};
  if constexpr (bytes == 32 && f64) return {(Raw)_mm256_fmadd_pd((__m256d)a.raw, (__m256d)b.raw, (__m256d)c.raw)};
  if constexpr (bytes == 16 && f32) return {(Raw)_mm_fmadd_ps((__m128)a.raw, (__m128)b.raw, (__m128)c.raw)};
  if constexpr (bytes == 16 && f64) return {(Raw)_mm_fmadd_pd((__m128d)a.raw, (__m128d)b.raw, (__m128d)c.raw)};
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
  if constexpr (bytes == 16 && f32) return {(Raw)vfmaq_f32((float32x4_t)c.raw, (float32x4_t)a.raw, (float32x4_t)b.raw)};
  if constexpr (bytes == 16 && f64) return {(Raw)vfmaq_f64((float64x2_t)c.raw, (float64x2_t)a.raw, (float64x2_t)b.raw)};
#endif
  return {a.raw * b.raw + c.raw};
}

// ---------------------------------------------------------------------------
// Comparisons, masks, select, conversion
// ---------------------------------------------------------------------------

// C++ comparison semantics per lane: every comparison with a NaN is false except cmp_ne.
#define WEFT_SIMD_COMPARE(name, op)                                                                 \
  template <class T, int N>                                                                         \
  WEFT_SIMD_INLINE Mask<T, N> name(Vec<T, N> a, Vec<T, N> b) {                                      \
    return {(typename Mask<T, N>::Raw)(a.raw op b.raw)};                                            \
  }                                                                                                 \
  template <class T, int N>                                                                         \
  WEFT_SIMD_INLINE Mask<T, N> name(Vec<T, N> a, std::type_identity_t<T> b) {                        \
    return {(typename Mask<T, N>::Raw)(a.raw op b)};                                                \
  }

WEFT_SIMD_COMPARE(cmp_lt, <)
WEFT_SIMD_COMPARE(cmp_le, <=)
WEFT_SIMD_COMPARE(cmp_gt, >)
WEFT_SIMD_COMPARE(cmp_ge, >=)
WEFT_SIMD_COMPARE(cmp_eq, ==)
WEFT_SIMD_COMPARE(cmp_ne, !=)
#undef WEFT_SIMD_COMPARE

/// Lanes of a where m is set, else lanes of b (m all ones or zeros per lane). The vector ?: is one
/// blend instruction (vblendmps / vblendvps); the and / andnot / or it replaced were two on
/// AVX-512 (a vpternlog pair) and three elsewhere.
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> select(Mask<T, N> m, Vec<T, N> a, Vec<T, N> b) {
  return {m.raw ? a.raw : b.raw};
}

template <class T, int N>
WEFT_SIMD_INLINE Mask<T, N> mask_and(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw & b.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Mask<T, N> mask_or(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw | b.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Mask<T, N> mask_xor(Mask<T, N> a, Mask<T, N> b) {
  return {a.raw ^ b.raw};
}
template <class T, int N>
WEFT_SIMD_INLINE Mask<T, N> mask_not(Mask<T, N> a) {
  return {~a.raw};
}

/// The same lanes as a mask over U (lanes widen by sign extension, narrow by truncation).
template <class U, class T, int N>
WEFT_SIMD_INLINE Mask<U, N> mask_cast(Mask<T, N> m) {
  if constexpr (sizeof(U) == sizeof(T)) {
    return {(typename Mask<U, N>::Raw)m.raw};
  } else {
    return {__builtin_convertvector(m.raw, typename Mask<U, N>::Raw)};
  }
}

/// 1 where m is set, 0 elsewhere, as Vec<U, N> (U defaults to the mask's own lane type).
template <class U = void, class T, int N>
WEFT_SIMD_INLINE Vec<std::conditional_t<std::is_void_v<U>, T, U>, N> mask_to_ones(Mask<T, N> m) {
  using R = std::conditional_t<std::is_void_v<U>, T, U>;
  auto mr = mask_cast<R>(m);
  auto ones = detail::to_bits(Vec<R, N>::broadcast(R(1)));
  return {(typename Vec<R, N>::Raw)(mr.raw & ones.raw)};
}

/// True if any / every lane of m is set.
template <class T, int N>
WEFT_SIMD_INLINE bool mask_any(Mask<T, N> m) {
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
WEFT_SIMD_INLINE bool mask_all(Mask<T, N> m) {
  return !mask_any(mask_not(m));
}

/// Lane-wise value conversion (C++ rules: float to int truncates toward zero).
template <class U, class T, int N>
WEFT_SIMD_INLINE Vec<U, N> convert(Vec<T, N> v) {
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
WEFT_SIMD_INLINE T reduce_add(Vec<T, N> v) {
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

// N 16-bit lanes zero-extended to 32 bits in one instruction (vpmovzxwd) where the ISA has it.
// GCC 12 lowers __builtin_convertvector of 8 or 16 lanes to 128-bit pieces put back together
// (6 instructions for 16 lanes on AVX-512; bfloat16's a * sigmoid(b) + c * d loads 4 packets).
// The all-lanes masked AVX-512 form: the unmasked one trips -Wuninitialized in GCC 12's headers.
#if defined(__SSE4_1__)
WEFT_SIMD_INLINE Lanes<std::uint32_t, 4> load_u16_zero_extended(const void* p, lanes_t<4>) {
  return {(raw_t<std::uint32_t, 4>)_mm_cvtepu16_epi32(_mm_loadl_epi64(static_cast<const __m128i*>(p)))};
}
#endif
#if defined(__AVX2__)
WEFT_SIMD_INLINE Lanes<std::uint32_t, 8> load_u16_zero_extended(const void* p, lanes_t<8>) {
  return {(raw_t<std::uint32_t, 8>)_mm256_cvtepu16_epi32(_mm_loadu_si128(static_cast<const __m128i*>(p)))};
}
#endif
#if defined(__AVX512F__)
WEFT_SIMD_INLINE Lanes<std::uint32_t, 16> load_u16_zero_extended(const void* p, lanes_t<16>) {
  return {(raw_t<std::uint32_t, 16>)_mm512_maskz_cvtepu16_epi32(__mmask16(0xffff),
                                                               _mm256_loadu_si256(static_cast<const __m256i*>(p)))};
}
#endif

template <int N>
WEFT_SIMD_INLINE Lanes<std::uint32_t, N> load_u16_widened(const void* p) {
  if constexpr (requires { load_u16_zero_extended(p, lanes_t<N>{}); }) {
    return load_u16_zero_extended(p, lanes_t<N>{});
  } else {
    raw_t<std::uint16_t, N> h;
    std::memcpy(&h, p, sizeof(h));
    return {__builtin_convertvector(h, raw_t<std::uint32_t, N>)};
  }
}
template <int N>
WEFT_SIMD_INLINE Lanes<std::uint16_t, N> narrow_u32(const raw_t<std::uint32_t, N>& v) {
  return {__builtin_convertvector(v, raw_t<std::uint16_t, N>)};
}
// The low 2N bytes of an intrinsic's result register as N 16-bit lanes.
template <int N, class Reg>
WEFT_SIMD_INLINE Lanes<std::uint16_t, N> low_u16(const Reg& r) {
  static_assert(sizeof(Reg) >= 2 * N);
  Lanes<std::uint16_t, N> h;
  std::memcpy(&h.raw, &r, sizeof(h.raw));
  return h;
}
template <int N>
WEFT_SIMD_INLINE Lanes<std::uint16_t, 2 * N> concat_u16(const Lanes<std::uint16_t, N>& lo,
                                                         const Lanes<std::uint16_t, N>& hi) {
  Lanes<std::uint16_t, 2 * N> r;
  std::memcpy(&r.raw, &lo.raw, sizeof(lo.raw));
  std::memcpy(reinterpret_cast<char*>(&r.raw) + sizeof(lo.raw), &hi.raw, sizeof(hi.raw));
  return r;
}

// binary16 bits (in 32-bit lanes) to float: shift the exponent and mantissa
// into place and rebias (127 - 15); subnormals are mantissa * 2^-24; inf and
// NaN keep their mantissa bits (signaling NaNs stay signaling).
template <int N>
WEFT_SIMD_INLINE Vec<float, N> half_bits_to_float(const raw_t<std::uint32_t, N>& h) {
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
  bits = (bits & (U)~is_sub) | (to_ubits(sub).raw & (U)is_sub);
  return from_ubits<float, N>(bits | sign);
}

// float to binary16 bits, round to nearest even, the same steps as
// weft::detail::float_to_half_bits: rebias and round in the integer domain for
// normal results, let a float add of 0.5 round subnormal ones, saturate to inf
// from 65520 up, and quiet every NaN to sign | 0x7e00.
template <int N>
WEFT_SIMD_INLINE Lanes<std::uint32_t, N> float_to_half_bits(Vec<float, N> v) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U x = to_ubits(v).raw;
  U sign = (x >> 16) & 0x8000u;
  U ax = x & 0x7fffffffu;
  U normal = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13;
  U sub = to_ubits(from_ubits<float, N>(ax) + 0.5f).raw - 0x3f000000u;
  I sax = (I)ax;
  I is_sub = sax < 0x38800000;
  I is_inf = sax >= 0x477ff000;
  I is_nan = sax > 0x7f800000;
  U bits = (normal & (U)~is_sub) | (sub & (U)is_sub);
  bits = (bits & (U)~is_inf) | (0x7c00u & (U)is_inf);
  bits |= 0x0200u & (U)is_nan;
  return {bits | sign};
}

// bfloat16 is the top half of a binary32: round to nearest even on bit 16,
// and quiet NaNs by setting bit 6 of the result (as weft::detail::float_to_bfloat16_bits).
template <int N>
WEFT_SIMD_INLINE Lanes<std::uint32_t, N> float_to_bfloat16_bits(Vec<float, N> v) {
  using U = raw_t<std::uint32_t, N>;
  using I = raw_t<std::int32_t, N>;
  U x = to_ubits(v).raw;
  U rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  U quiet = (x >> 16) | 0x40u;
  I is_nan = (I)(x & 0x7fffffffu) > 0x7f800000;
  return {(rounded & (U)~is_nan) | (quiet & (U)is_nan)};
}

template <int N>
WEFT_SIMD_INLINE Vec<float, N> load_half_portable(const weft::half* p) {
  return half_bits_to_float<N>(load_u16_widened<N>(p).raw);
}

// F16C converts in one instruction. It quiets signaling NaNs on the way in and
// keeps NaN payloads on the way out, where weft::half keeps the signaling bit
// and drops payloads; the selects below restore those bits exactly.
#if defined(__F16C__)
template <int N>
WEFT_SIMD_INLINE Vec<float, N> restore_signaling_nans(Vec<float, N> f, const weft::half* p) {
  using U = raw_t<std::uint32_t, N>;
  U quiet_from_half = (load_u16_widened<N>(p).raw << 13) & 0x00400000u;
  U bits = to_ubits(f).raw;
  U fixed = (bits & ~0x00400000u) | quiet_from_half;
  return from_ubits<float, N>(f.raw != f.raw ? fixed : bits);
}
// The NaN selects of restore_signaling_nans and canonicalize_nans_for_half are vector ?: (a
// blend under a mask register on AVX-512). As and / andnot / or of the comparison's all-ones
// lanes, GCC 12 built those lanes with vpternlogd $0xff on a register last written at the end of
// the previous packet: a false dependency that chained the packets of a float16 kernel (the
// tanh kernel 2.0 ns per element in cache against 0.6 without it, Sapphire Rapids).
template <int N>
WEFT_SIMD_INLINE Vec<float, N> canonicalize_nans_for_half(Vec<float, N> v) {
  using I = raw_t<std::int32_t, N>;
  I quiet = ((I)v.raw & std::numeric_limits<std::int32_t>::min()) | 0x7fc00000;
  return {(typename Vec<float, N>::Raw)(v.raw != v.raw ? quiet : (I)v.raw)};
}
WEFT_SIMD_INLINE Vec<float, 4> load_half_native(const weft::half* p, lanes_t<4>) {
  Vec<float, 4> f{(Vec<float, 4>::Raw)_mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)))};
  return restore_signaling_nans(f, p);
}
WEFT_SIMD_INLINE Vec<float, 8> load_half_native(const weft::half* p, lanes_t<8>) {
  Vec<float, 8> f{(Vec<float, 8>::Raw)_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))};
  return restore_signaling_nans(f, p);
}
WEFT_SIMD_INLINE Lanes<std::uint16_t, 4> narrow_native(std::type_identity<weft::half>, Vec<float, 4> v) {
  return low_u16<4>(_mm_cvtps_ph((__m128)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT));
}
WEFT_SIMD_INLINE Lanes<std::uint16_t, 8> narrow_native(std::type_identity<weft::half>, Vec<float, 8> v) {
  return low_u16<8>(_mm256_cvtps_ph((__m256)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT));
}
#endif
#if defined(__AVX512F__)
// The all-lanes masked forms: the unmasked ones trip -Wuninitialized in GCC 12's headers.
WEFT_SIMD_INLINE Vec<float, 16> load_half_native(const weft::half* p, lanes_t<16>) {
  __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  Vec<float, 16> f{(Vec<float, 16>::Raw)_mm512_mask_cvtph_ps(_mm512_setzero_ps(), __mmask16(0xffff), h)};
  return restore_signaling_nans(f, p);
}
WEFT_SIMD_INLINE Lanes<std::uint16_t, 16> narrow_native(std::type_identity<weft::half>, Vec<float, 16> v) {
  return low_u16<16>(_mm512_mask_cvtps_ph(_mm256_setzero_si256(), __mmask16(0xffff),
                                          (__m512)canonicalize_nans_for_half(v).raw, _MM_FROUND_TO_NEAREST_INT));
}
#endif

// The bits of N floats rounded to H (binary16 or bfloat16) by integer code.
template <class H, int N>
WEFT_SIMD_INLINE Lanes<std::uint16_t, N> narrow_portable(Vec<float, N> v) {
  if constexpr (std::is_same_v<H, weft::half>) return narrow_u32<N>(float_to_half_bits(v).raw);
  else return narrow_u32<N>(float_to_bfloat16_bits(v).raw);
}

// AVX512-BF16's vcvtneps2bf16 rounds to nearest even and quiets NaNs by setting bit 6, exactly as
// float_to_bfloat16_bits, but reads subnormal floats as zero (Sapphire Rapids: 0x007fffff gives
// 0x0000 where the rounding is 0x0080). A packet holding a subnormal, rare outside tests, takes
// the integer path, so the bits never depend on the build. The test is one vfpclassps (class
// 0x20: denormal) into a mask register.
#if defined(__AVX512BF16__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define WEFT_BFLOAT16_NARROW_NATIVE(lanes, F, fpclass_mask, cvtneps_pbh)                                    \
  WEFT_SIMD_INLINE Lanes<std::uint16_t, lanes> narrow_native(std::type_identity<weft::bfloat16>,           \
                                                             Vec<float, lanes> v) {                        \
    if (fpclass_mask((F)v.raw, 0x20)) [[unlikely]]                                                         \
      return narrow_portable<weft::bfloat16>(v);                                                           \
    return low_u16<lanes>(cvtneps_pbh((F)v.raw));                                                          \
  }
WEFT_BFLOAT16_NARROW_NATIVE(4, __m128, _mm_fpclass_ps_mask, _mm_cvtneps_pbh)
WEFT_BFLOAT16_NARROW_NATIVE(8, __m256, _mm256_fpclass_ps_mask, _mm256_cvtneps_pbh)
WEFT_BFLOAT16_NARROW_NATIVE(16, __m512, _mm512_fpclass_ps_mask, _mm512_cvtneps_pbh)
#undef WEFT_BFLOAT16_NARROW_NATIVE
#endif

// Arm's BFCVTN converts by FPConvertBF (Arm ARM pseudocode): rounding by FPCR.RMode, subnormal
// inputs and results flushed when FPCR.FZ (or FEAT_AFP's FIZ / AH) is set, the default NaN when
// FPCR.DN is set, else a NaN keeps its sign and payload with the quiet bit set. Under Linux's
// FPCR at process start (0: nearest even, IEEE subnormals, NaN propagation, no traps) that is
// float_to_bfloat16_bits for every input, subnormals and NaNs included, unlike vcvtneps2bf16. A
// program may change FPCR (fesetround; -ffast-math links crtfastmath, which sets FZ): then, or
// with a trap enabled, each packet takes the integer path. One MRS and one test per packet.
#if WEFT_SIMD_NEON_BF16
// FPCR bits that change BFCVTN's result or let it trap: FIZ (0), AH (1), the trap enables IOE,
// DZE, OFE, UFE, IXE (8-12) and IDE (15), RMode (22-23), FZ (24), DN (25).
inline constexpr std::uint64_t kFpcrBfcvtMask = 0x3u | 0x1f00u | 0x8000u | 0x3c00000u;
WEFT_SIMD_INLINE bool fpcr_is_bfcvt_exact() { return (__builtin_aarch64_get_fpcr64() & kFpcrBfcvtMask) == 0; }
WEFT_SIMD_INLINE Lanes<std::uint16_t, 4> narrow_native(std::type_identity<weft::bfloat16>, Vec<float, 4> v) {
  if (!fpcr_is_bfcvt_exact()) [[unlikely]]
    return narrow_portable<weft::bfloat16>(v);
  return low_u16<4>(vreinterpret_u16_bf16(vcvt_bf16_f32((float32x4_t)v.raw)));
}
WEFT_SIMD_INLINE Lanes<std::uint16_t, 8> narrow_native(std::type_identity<weft::bfloat16>, Vec<float, 8> v) {
  if (!fpcr_is_bfcvt_exact()) [[unlikely]]
    return narrow_portable<weft::bfloat16>(v);
  const bfloat16x8_t lo = vcvtq_low_bf16_f32((float32x4_t)lower_half(v).raw);      // BFCVTN
  const bfloat16x8_t both = vcvtq_high_bf16_f32(lo, (float32x4_t)upper_half(v).raw);  // BFCVTN2
  return low_u16<8>(vreinterpretq_u16_bf16(both));
}
#endif

}  // namespace detail

/// N binary16 values, widened to float exactly (bit-identical to float(weft::half)).
template <int N>
WEFT_SIMD_INLINE Vec<float, N> load_float(const weft::half* p) {
  if constexpr (requires { detail::load_half_native(p, detail::lanes_t<N>{}); }) {
    return detail::load_half_native(p, detail::lanes_t<N>{});
  } else if constexpr (N > native_lanes<float>) {
    return detail::concat(load_float<N / 2>(p), load_float<N / 2>(p + N / 2));
  } else {
    return detail::load_half_portable<N>(p);
  }
}

/// N bfloat16 values, widened to float exactly: a bfloat16 is the top half of a float.
template <int N>
WEFT_SIMD_INLINE Vec<float, N> load_float(const weft::bfloat16* p) {
  return detail::from_ubits<float, N>(detail::load_u16_widened<N>(p).raw << 16);
}

namespace detail {

// The bits of N floats rounded to H: the ISA's conversion where it has one for N lanes, a
// register at a time above the native width, else integer code.
template <class H, int N>
WEFT_SIMD_INLINE Lanes<std::uint16_t, N> narrow(Vec<float, N> v) {
  if constexpr (requires { narrow_native(std::type_identity<H>{}, v); })
    return narrow_native(std::type_identity<H>{}, v);
  else if constexpr (N > native_lanes<float>) return concat_u16(narrow<H>(lower_half(v)), narrow<H>(upper_half(v)));
  else return narrow_portable<H>(v);
}

}  // namespace detail

/// N floats rounded to H, binary16 or bfloat16 (bit-identical to H(float)).
template <int N, class H>
  requires weft::is_16bit_float_v<H>
WEFT_SIMD_INLINE void store_float(H* p, Vec<float, N> v) {
  const auto h = detail::narrow<H>(v);
  std::memcpy(static_cast<void*>(p), &h.raw, sizeof(h.raw));
}

/// store_float with a non-temporal store (Vec::stream, as N/2 int32 lanes): p aligned to 2N
/// bytes. Follow a run of streams by stream_fence().
template <int N, class H>
  requires weft::is_16bit_float_v<H>
WEFT_SIMD_INLINE void stream_float(H* p, Vec<float, N> v) {
  if constexpr (N >= 4) {
    using Pairs = Vec<std::int32_t, N / 2>;
    Pairs{(typename Pairs::Raw)detail::narrow<H>(v).raw}.stream(reinterpret_cast<std::int32_t*>(p));
  } else {
    store_float(p, v);
  }
}

// ---------------------------------------------------------------------------
// Math: float and double lanes (abs, min, max also for int32 / int64)
// ---------------------------------------------------------------------------

namespace detail {

template <class T>
struct FloatTraits;

template <>
struct FloatTraits<float> {
  static constexpr int kMantBits = 23;
  static constexpr int kExpBias = 127;
  static constexpr std::uint32_t kMantMask = 0x007fffffu;
  static constexpr std::uint32_t kSqrtHalfBits = 0x3f3504f3u;  // sqrt(1/2)
  static constexpr float kTwoPowMant = 0x1p+23f;
  static constexpr float kRoundMagic = 0x1.8p+23f;  // 1.5 * 2^23
  static constexpr float kLog2e = 0x1.715476p+0f;
  // ln2 = kLn2Hi + kLn2Lo; kLn2Hi has 9 significant bits, so k * kLn2Hi is exact for |k| < 2^15.
  static constexpr float kLn2Hi = 0x1.63p-1f;
  static constexpr float kLn2Lo = -0x1.bd0106p-13f;
  static constexpr float kMinNormal = 0x1p-126f;
  static constexpr float kSubnormalScale = 0x1p+23f;
  static constexpr int kSubnormalScaleLog2 = 23;
};

template <>
struct FloatTraits<double> {
  static constexpr int kMantBits = 52;
  static constexpr int kExpBias = 1023;
  static constexpr std::uint64_t kMantMask = 0x000fffffffffffffull;
  static constexpr std::uint64_t kSqrtHalfBits = 0x3fe6a09e667f3bcdull;
  static constexpr double kTwoPowMant = 0x1p+52;
  static constexpr double kRoundMagic = 0x1.8p+52;
  static constexpr double kLog2e = 0x1.71547652b82fep+0;
  // kLn2Hi has 29 significant bits, so k * kLn2Hi is exact for |k| < 2^24.
  static constexpr double kLn2Hi = 0x1.62e42ffp-1;
  static constexpr double kLn2Lo = -0x1.718432a1b0e26p-35;
  static constexpr double kMinNormal = 0x1p-1022;
  static constexpr double kSubnormalScale = 0x1p+54;
  static constexpr int kSubnormalScaleLog2 = 54;
};

template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> splat(T x) {
  return Vec<T, N>::broadcast(x);
}

// c0 + x (c1 + x (c2 + ...)), Horner's rule.
template <class T, int N, class C>
WEFT_SIMD_INLINE Vec<T, N> horner(Vec<T, N>, C c0) {
  return splat<T, N>(T(c0));
}
template <class T, int N, class C, class... Cs>
WEFT_SIMD_INLINE Vec<T, N> horner(Vec<T, N> x, C c0, Cs... cs) {
  return horner(x, cs...) * x + T(c0);
}

template <class T, int N, class C, std::size_t K, std::size_t... Is>
WEFT_SIMD_INLINE Vec<T, N> horner_array(Vec<T, N> x, const C (&c)[K], std::index_sequence<Is...>) {
  return horner(x, c[Is]...);
}

/// A minimax polynomial of x (Horner's rule, lowest order first) in T's precision: the float
/// coefficients for float lanes, the double ones for double lanes.
template <class T, int N, std::size_t F, std::size_t D>
WEFT_SIMD_INLINE Vec<T, N> minimax(Vec<T, N> x, const float (&f)[F], const double (&d)[D]) {
  if constexpr (std::is_same_v<T, float>) return horner_array(x, f, std::make_index_sequence<F>{});
  else return horner_array(x, d, std::make_index_sequence<D>{});
}

template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> copysign(Vec<T, N> magnitude, Vec<T, N> sign) {
  using I = lane_int_t<T>;
  constexpr I kSign = std::numeric_limits<I>::min();
  return from_bits<T, N>((to_bits(magnitude) & ~kSign) | (to_bits(sign) & kSign));
}

// x limited to [lo, hi]; a NaN passes through (both comparisons are false).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> clamp_keep_nan(Vec<T, N> x, T lo, T hi) {
  x = select(cmp_lt(x, lo), splat<T, N>(lo), x);
  return select(cmp_gt(x, hi), splat<T, N>(hi), x);
}

template <class T, int N>
struct Rounded {
  Vec<T, N> k;             // the integer, as T
  int_vec_t<T, N> k_int;   // the same integer in an integer lane
};

// k = y rounded to nearest even, |y| < 2^(p - 2): adding 1.5 * 2^p leaves k in the low mantissa bits.
template <class T, int N>
WEFT_SIMD_INLINE Rounded<T, N> round_nearest(Vec<T, N> y) {
  constexpr T kMagic = FloatTraits<T>::kRoundMagic;
  Vec<T, N> t = y + kMagic;
  return {t - kMagic, to_bits(t) - std::bit_cast<lane_int_t<T>>(kMagic)};
}

// x * 2^k for |k| <= 2 (emax - 1): each factor 2^(k/2) is normal, so only the last product rounds
// (a subnormal result rounds once, correctly).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> mul_pow2(Vec<T, N> x, int_vec_t<T, N> k) {
  using Tr = FloatTraits<T>;
  using I = lane_int_t<T>;
  int_vec_t<T, N> k1 = k >> 1;
  int_vec_t<T, N> k2 = k - k1;
  Vec<T, N> s1 = from_bits<T, N>((k1 + I(Tr::kExpBias)) << Tr::kMantBits);
  Vec<T, N> s2 = from_bits<T, N>((k2 + I(Tr::kExpBias)) << Tr::kMantBits);
  return x * s1 * s2;
}

// exp(r) on |r| <= ln2/2: 1 + r + r^2 P(r), P minimax for relative error (2^-28 float, 2^-56 double).
inline constexpr float kExpReducedF[] = {4.999999404e-01f, 1.666651517e-01f, 4.166845605e-02f, 8.369418792e-03f,
                                         1.381314476e-03f};
inline constexpr double kExpReducedD[] = {5.00000000000001110e-01, 1.66666666666666741e-01, 4.16666666665101229e-02,
                                          8.33333333332129424e-03, 1.38888889514111706e-03, 1.98412698893518386e-04,
                                          2.48014833047790866e-05, 2.75572392444585326e-06, 2.76341565695036390e-07,
                                          2.51112039763078908e-08};
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> exp_reduced(Vec<T, N> r) {
  return (r + r * r * minimax(r, kExpReducedF, kExpReducedD)) + T(1);
}

// expm1(r) on |r| <= ln2/2: r + r^2/2 + r^3 Q(r), Q minimax for relative error (2^-31 float, 2^-60 double).
inline constexpr float kExpm1ReducedF[] = {1.666666567e-01f, 4.166647419e-02f, 8.333423175e-03f, 1.393414102e-03f,
                                           1.982408867e-04f};
inline constexpr double kExpm1ReducedD[] = {1.66666666666666741e-01, 4.16666666666666713e-02, 8.33333333332128903e-03,
                                            1.38888888888799513e-03, 1.98412698893666271e-04, 2.48015873367754219e-05,
                                            2.75572392280559217e-06, 2.75572612664610185e-07, 2.51112100377814246e-08,
                                            2.09192481672728133e-09};
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> expm1_reduced(Vec<T, N> r) {
  return r + r * r * (r * minimax(r, kExpm1ReducedF, kExpm1ReducedD) + T(0.5));
}

template <class T, int N>
struct LogSplit {
  Vec<T, N> k;  // exponent, as T
  Vec<T, N> f;  // m - 1, m in [sqrt(1/2), sqrt(2))
};

// x = 2^k m for positive normal x. Subtracting sqrt(1/2)'s bits moves the exponent
// boundary to sqrt(1/2); k is read with a 2^(w-2) offset so the shift is logical, and
// becomes T through the 2^p trick (no int64 -> double conversion, which AVX2 lacks).
template <class T, int N>
WEFT_SIMD_INLINE LogSplit<T, N> log_split(Vec<T, N> x) {
  using Tr = FloatTraits<T>;
  using U = lane_uint_t<T>;
  constexpr int kWidth = 8 * sizeof(T);
  constexpr U kOffset = U(1) << (kWidth - 2 - Tr::kMantBits);
  raw_t<U, N> d = to_ubits(x).raw - Tr::kSqrtHalfBits;
  Vec<T, N> m = from_ubits<T, N>((d & Tr::kMantMask) + Tr::kSqrtHalfBits);
  raw_t<U, N> k_biased = (d + (U(1) << (kWidth - 2))) >> Tr::kMantBits;
  Vec<T, N> k = from_ubits<T, N>(k_biased | std::bit_cast<U>(Tr::kTwoPowMant)) - (Tr::kTwoPowMant + T(kOffset));
  return {k, m - T(1)};
}

// k ln2 + log(1 + f) + c for |f| <= sqrt(2) - 1 and a small correction c.
// float: log(1+f) = f - f^2/2 + f^3 P(f), P minimax degree 7 (2^-27 relative).
// double: s = f / (2 + f), log(1+f) = 2 atanh(s) = f - (f^2/2 - s (f^2/2 + R(s^2))),
//         R(z) = z L(z), L minimax degree 6 (2^-57 absolute in R).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> log_reduced(Vec<T, N> k, Vec<T, N> f, Vec<T, N> c) {
  using Tr = FloatTraits<T>;
  if constexpr (std::is_same_v<T, float>) {
    Vec<T, N> p = horner(f, 3.333333135e-01f, -2.500082850e-01f, 2.000123262e-01f, -1.662313044e-01f,
                         1.420144141e-01f, -1.316222548e-01f, 1.276499182e-01f, -7.633193582e-02f);
    Vec<T, N> y = f + f * f * (f * p - 0.5f);
    return k * Tr::kLn2Hi + (y + (k * Tr::kLn2Lo + c));
  } else {
    Vec<T, N> s = f / (f + 2.0);
    Vec<T, N> z = s * s;
    Vec<T, N> r = z * horner(z, 6.66666666666671293e-01, 3.99999999994900490e-01, 2.85714287374266018e-01,
                             2.22221981370717636e-01, 1.81836258447739457e-01, 1.53116807157894691e-01,
                             1.48261077844977107e-01);
    Vec<T, N> hfsq = 0.5 * f * f;
    return k * Tr::kLn2Hi + (f - (hfsq - (s * (hfsq + r) + (k * Tr::kLn2Lo + c))));
  }
}

template <class T, int N>
struct QuarterTurns {
  Vec<T, N> r;             // x - j pi/2, |r| <= pi/4 (plus rounding)
  int_vec_t<T, N> j;
};

// x = j pi/2 + r, Cody-Waite with pi/2 = C1 + C2 + C3 (27 + 25 + 53 significant bits),
// so j C1 and j C2 are exact for |j| < 2^26, i.e. |x| < 1e8.
template <int N>
WEFT_SIMD_INLINE QuarterTurns<double, N> reduce_quarter_turns(Vec<double, N> x) {
  constexpr double kC1 = 0x1.921fb54p+0;
  constexpr double kC2 = 0x1.10b461p-30;
  constexpr double kC3 = 0x1.a62633145c06ep-58;
  auto [j, j_int] = round_nearest(x * 0x1.45f306dc9c883p-1);  // x * 2/pi
  return {((x - j * kC1) - j * kC2) - j * kC3, j_int};
}

// sin(x) from x = j pi/2 + r and q = j (q = j + 1 gives cos):
// q even: +-sin(r), q odd: +-cos(r), negated when bit 1 of q is set.
// sin(r) = r + r^3 S(r^2), cos(r) = 1 - r^2/2 + r^4 C(r^2) on |r| <= pi/4, S and C minimax
// (float degree 3: 2^-35 / 2^-39 relative; double degree 6: 2^-64 / 2^-69).
inline constexpr float kSinF[] = {-1.666666716e-01f, 8.333331905e-03f, -1.984008559e-04f, 2.724381147e-06f};
inline constexpr double kSinD[] = {-1.66666666666666657e-01, 8.33333333333333322e-03, -1.98412698412684562e-04,
                                   2.75573192217702830e-06,  -2.50521069867532146e-08, 1.60586365822314619e-10,
                                   -7.59207691030735658e-13};
inline constexpr float kCosF[] = {4.166666791e-02f, -1.388888806e-03f, 2.480059993e-05f, -2.729585162e-07f};
inline constexpr double kCosD[] = {4.16666666666666644e-02,  -1.38888888888888894e-03, 2.48015873015865325e-05,
                                   -2.75573192227543130e-07, 2.08767562104080776e-09,  -1.14705192378310191e-11,
                                   4.74886257735895265e-14};
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> sin_quadrant(Vec<T, N> r, int_vec_t<T, N> q) {
  Vec<T, N> z = r * r;
  Vec<T, N> s = r + r * z * minimax(z, kSinF, kSinD);
  Vec<T, N> c = z * (z * minimax(z, kCosF, kCosD) - T(0.5)) + T(1);
  Mask<T, N> odd{cmp_ne(q & 1, 0).raw};
  Vec<T, N> y = select(odd, c, s);
  return from_bits<T, N>(to_bits(y) ^ ((q & 2) << (8 * int(sizeof(T)) - 2)));
}

// Beyond this |x| the reduction's j C1 is no longer exact; such vectors go lane by lane to std::sin / std::cos.
template <class T>
inline constexpr T kSinCosVectorLimit = T(1e8);

template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> sin_or_cos(Vec<T, N> x, int quarter) {
  if constexpr (std::is_same_v<T, float> && N * sizeof(double) > 64) {
    // Keep the double vectors at most 64 bytes (one AVX-512 register).
    return concat(sin_or_cos(lower_half(x), quarter), sin_or_cos(upper_half(x), quarter));
  } else {
    Vec<T, N> ax = from_bits<T, N>(to_bits(x) & std::numeric_limits<lane_int_t<T>>::max());
    if (mask_any(cmp_gt(ax, kSinCosVectorLimit<T>))) {
      return map_lanes(x, [quarter](T v) { return quarter ? std::cos(v) : std::sin(v); });
    }
    if constexpr (std::is_same_v<T, float>) {
      // float reduces in double: r carries double precision, far below a float ulp.
      auto red = reduce_quarter_turns(convert<double>(x));
      return sin_quadrant(convert<float>(red.r), convert<std::int32_t>(red.j) + quarter);
    } else {
      auto red = reduce_quarter_turns(x);
      return sin_quadrant(red.r, red.j + std::int64_t(quarter));
    }
  }
}

}  // namespace detail

// |x|; for integers, the minimum value maps to itself (two's complement wrap).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> abs(Vec<T, N> x) {
  using I = detail::lane_int_t<T>;
  if constexpr (std::is_floating_point_v<T>) {
    return detail::from_bits<T, N>(detail::to_bits(x) & std::numeric_limits<I>::max());
  } else {
    Vec<T, N> s = x >> (8 * int(sizeof(T)) - 1);
    return (x ^ s) - s;
  }
}

// min / max as torch.minimum / torch.maximum: a NaN in either lane gives NaN;
// of +0 and -0, min is -0 and max is +0 (IEEE 754-2019 minimum / maximum).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> min(Vec<T, N> a, Vec<T, N> b) {
  Vec<T, N> r = select(cmp_lt(a, b), a, b);
  if constexpr (std::is_floating_point_v<T>) {
    r = select(cmp_eq(a, b), detail::from_bits<T, N>(detail::to_bits(a) | detail::to_bits(b)), r);
    r = select(cmp_ne(a, a), a, r);  // b NaN already gave b
  }
  return r;
}
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> max(Vec<T, N> a, Vec<T, N> b) {
  Vec<T, N> r = select(cmp_gt(a, b), a, b);
  if constexpr (std::is_floating_point_v<T>) {
    r = select(cmp_eq(a, b), detail::from_bits<T, N>(detail::to_bits(a) & detail::to_bits(b)), r);
    r = select(cmp_ne(a, a), a, r);
  }
  return r;
}

/// Smallest / largest lane (NaN if any lane is NaN), reduced pairwise.
template <class T, int N>
WEFT_SIMD_INLINE T reduce_min(Vec<T, N> v) {
  if constexpr (N == 2) {
    return min(v, Vec<T, N>{(typename Vec<T, N>::Raw){v.raw[1], v.raw[0]}}).raw[0];
  } else {
    return reduce_min(min(detail::lower_half(v), detail::upper_half(v)));
  }
}
template <class T, int N>
WEFT_SIMD_INLINE T reduce_max(Vec<T, N> v) {
  if constexpr (N == 2) {
    return max(v, Vec<T, N>{(typename Vec<T, N>::Raw){v.raw[1], v.raw[0]}}).raw[0];
  } else {
    return reduce_max(max(detail::lower_half(v), detail::upper_half(v)));
  }
}

// sign(x) = (x > 0) - (x < 0), as torch.sign: sign(NaN) = 0 and sign(-0) = +0
// (ATen's sign kernel is this expression; see pytorch/pytorch#41245).
template <class T, int N>
WEFT_SIMD_INLINE Vec<T, N> sign(Vec<T, N> x) {
  return mask_to_ones(cmp_gt(x, T(0))) - mask_to_ones(cmp_lt(x, T(0)));
}

namespace detail {
// sqrt_native for float and double lanes at one width: the intrinsic on the raw vector.
#define WEFT_SQRT_NATIVE(lanes, F, D, sqrt_ps, sqrt_pd)                                                 \
  WEFT_SIMD_INLINE Vec<float, lanes> sqrt_native(Vec<float, lanes> x) {                                \
    return {(Vec<float, lanes>::Raw)sqrt_ps((F)x.raw)};                                       \
  }                                                                                                   \
  WEFT_SIMD_INLINE Vec<double, lanes / 2> sqrt_native(Vec<double, lanes / 2> x) {                      \
    return {(Vec<double, lanes / 2>::Raw)sqrt_pd((D)x.raw)};                                  \
  }
#if defined(__SSE2__)
WEFT_SQRT_NATIVE(4, __m128, __m128d, _mm_sqrt_ps, _mm_sqrt_pd)
#endif
#if defined(__AVX__)
WEFT_SQRT_NATIVE(8, __m256, __m256d, _mm256_sqrt_ps, _mm256_sqrt_pd)
#endif
#if defined(__AVX512F__)
// GCC 12's unmasked forms start from _mm512_undefined_*(), which -Wuninitialized flags
// once inlined; the all-lanes masked forms compile to the same instruction.
WEFT_SIMD_INLINE __m512 sqrt512_ps(__m512 x) { return _mm512_mask_sqrt_ps(x, __mmask16(0xffff), x); }
WEFT_SIMD_INLINE __m512d sqrt512_pd(__m512d x) { return _mm512_mask_sqrt_pd(x, __mmask8(0xff), x); }
WEFT_SQRT_NATIVE(16, __m512, __m512d, sqrt512_ps, sqrt512_pd)
#endif
#if defined(__ARM_NEON) && defined(__aarch64__)
WEFT_SQRT_NATIVE(4, float32x4_t, float64x2_t, vsqrtq_f32, vsqrtq_f64)
#endif
#undef WEFT_SQRT_NATIVE
}  // namespace detail

// sqrt(x), correctly rounded: the ISA's square root per register, std::sqrt per lane where there is none.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> sqrt(Vec<T, N> x) {
  if constexpr (requires { detail::sqrt_native(x); }) {
    return detail::sqrt_native(x);
  } else if constexpr (N * sizeof(T) > 16) {
    return detail::concat(sqrt(detail::lower_half(x)), sqrt(detail::upper_half(x)));
  } else {
    return detail::map_lanes(x, [](T v) { return std::sqrt(v); });
  }
}

// rsqrt(x) = 1 / sqrt(x), both steps correctly rounded (no hardware estimate).
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> rsqrt(Vec<T, N> x) {
  return T(1) / sqrt(x);
}

// floor(x): round |x| to an integer with the 2^p trick, restore the sign, step down where that
// rounded above x; |x| >= 2^p (and inf, NaN) is already integral and passes through.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> floor(Vec<T, N> x) {
  constexpr T kTwoPowMant = detail::FloatTraits<T>::kTwoPowMant;
  Vec<T, N> ax = abs(x);
  Vec<T, N> r = detail::copysign((ax + kTwoPowMant) - kTwoPowMant, x);
  r = r - mask_to_ones(cmp_gt(r, x));
  return select(cmp_lt(ax, kTwoPowMant), r, x);
}

// ceil(x) = -floor(-x): the signs of zeros follow (ceil(-0.5) = -0).
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> ceil(Vec<T, N> x) {
  return -floor(-x);
}

// trunc(x) = floor(|x|) with x's sign.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> trunc(Vec<T, N> x) {
  return detail::copysign(floor(abs(x)), x);
}

// round_even(x): the nearest integer, ties to even. Adding and subtracting 2^p rounds |x| < 2^p in
// the default rounding mode (nearest, ties to even); larger |x| (and inf, NaN) pass through.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> round_even(Vec<T, N> x) {
  constexpr T kTwoPowMant = detail::FloatTraits<T>::kTwoPowMant;
  Vec<T, N> ax = abs(x);
  return select(cmp_lt(ax, kTwoPowMant), detail::copysign((ax + kTwoPowMant) - kTwoPowMant, x), x);
}

// Integer lanes are integral already.
#define WEFT_SIMD_INTEGER_IDENTITY(name)          \
  template <class T, int N>                       \
    requires std::is_integral_v<T>                \
  WEFT_SIMD_INLINE Vec<T, N> name(Vec<T, N> x) {  \
    return x;                                     \
  }
WEFT_SIMD_INTEGER_IDENTITY(floor)
WEFT_SIMD_INTEGER_IDENTITY(ceil)
WEFT_SIMD_INTEGER_IDENTITY(trunc)
WEFT_SIMD_INTEGER_IDENTITY(round_even)
#undef WEFT_SIMD_INTEGER_IDENTITY

// exp(x) = 2^k exp(r), x = k ln2 + r, |r| <= ln2/2 (ln2 in two parts); exp(r) = 1 + r + r^2 P(r),
// P minimax degree 4 (float) / 9 (double); 2^k applied as two factors so subnormal results round once.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> exp(Vec<T, N> x) {
  using Tr = detail::FloatTraits<T>;
  constexpr bool kF32 = std::is_same_v<T, float>;
  // Outside [lo, hi] the result rounds to 0 or inf; the clamp keeps k in mul_pow2's range.
  x = detail::clamp_keep_nan(x, kF32 ? T(-104) : T(-746), kF32 ? T(89) : T(710));
  auto [k, k_int] = detail::round_nearest(x * Tr::kLog2e);
  Vec<T, N> r = (x - k * Tr::kLn2Hi) - k * Tr::kLn2Lo;
  return detail::mul_pow2(detail::exp_reduced(r), k_int);
}

// 2^x = 2^k 2^f with k = round(x), |f| <= 1/2 exact, and 2^f = exp(f ln2), |f ln2| <= ln2/2.
// Attention's softmax uses it with log2(e) folded into the scores' scale.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> exp2(Vec<T, N> x) {
  constexpr bool kF32 = std::is_same_v<T, float>;
  // Outside [lo, hi] the result rounds to 0 or inf; the clamp keeps k in mul_pow2's range.
  x = detail::clamp_keep_nan(x, kF32 ? T(-151) : T(-1076), kF32 ? T(129) : T(1025));
  auto [k, k_int] = detail::round_nearest(x);
  return detail::mul_pow2(detail::exp_reduced((x - k) * T(0.69314718055994530942)), k_int);
}

// 2^x for a softmax weight's exponent x = s - max <= 0 (valid up to x = 127; NaN stays NaN):
// k = round(x) and 2^(x - k) by a degree-6 polynomial (relative error 2e-9 on [-1/2, 1/2]; with
// float rounding 0.95 ulp at most with FMA, 1.2 without, measured on every 7th float of
// (-126, 0]), times 2^k built in the exponent field; x below -126.5 (and -inf, a masked key)
// gives 0. exp2 (1.0 ulp) also handles x > 127 and subnormal results, in twice the
// instructions: attention's row pass took 13 TSC cycles a packet with it, 8 with this (Sapphire
// Rapids), exp2 being the largest part of its softmax. A weight below 2^-126 beside the row's
// max weight of 1 changes nothing at float precision. double keeps exp2.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> exp2_nonpositive(Vec<T, N> x) {
  using V = Vec<T, N>;
  if constexpr (!std::is_same_v<T, float> || sizeof(typename V::Raw) % 4 != 0) {
    return exp2(x);
  } else {
    using Raw = typename V::Raw;
    typedef std::int32_t IRaw __attribute__((vector_size(sizeof(Raw))));
    const Raw floor_x = V::broadcast(-127.0f).raw;
    Raw xr = x.raw < floor_x ? floor_x : x.raw;  // a NaN compares false and stays
    // x + 1.5 2^23 rounds x to an integer k, held in the low mantissa bits (|k| < 2^22).
    const Raw magic = V::broadcast(12582912.0f).raw;
    const Raw shifted = xr + magic;
    const Raw k = shifted - magic;
    const Raw f = xr - k;  // exact, in [-1/2, 1/2]
    Raw p = V::broadcast(1.5356125368e-4f).raw;
    p = p * f + 1.3398815645e-3f;
    p = p * f + 9.6184276044e-3f;
    p = p * f + 5.5503327399e-2f;
    p = p * f + 2.4022647738e-1f;
    p = p * f + 6.9314718246e-1f;
    p = p * f + 1.0f;
    // (k mod 2^9) << 23 plus the bias: the bits of 2^k for k in [-126, 127], 0 for k = -127.
    // Casts between same-size GCC vectors reinterpret the bits (no strict-aliasing punning).
    const IRaw e = ((IRaw)shifted << 23) + (127 << 23);
    V out;
    out.raw = p * (Raw)e;
    return out;
  }
}

// expm1(x) = 2^k (expm1(r) + 1 - 2^-k), x = k ln2 + r; expm1(r) = r + r^2/2 + r^3 Q(r) keeps full
// relative precision near 0 (k = 0 adds nothing to it). 1 - 2^-k is exact for the k that matter.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> expm1(Vec<T, N> x) {
  using Tr = detail::FloatTraits<T>;
  using I = detail::lane_int_t<T>;
  constexpr bool kF32 = std::is_same_v<T, float>;
  // Below lo, expm1 rounds to -1; above hi, to inf.
  Vec<T, N> xc = detail::clamp_keep_nan(x, kF32 ? T(-30) : T(-40), kF32 ? T(89) : T(710));
  auto [k, k_int] = detail::round_nearest(xc * Tr::kLog2e);
  Vec<T, N> r = (xc - k * Tr::kLn2Hi) - k * Tr::kLn2Lo;
  // For k above the cap, 1 - 2^-k rounds to 1 anyway.
  constexpr I kCap = kF32 ? 30 : 60;
  auto kc = select(cmp_gt(k_int, kCap), Vec<I, N>::broadcast(kCap), k_int);
  Vec<T, N> two_pow_neg_k = detail::from_bits<T, N>((I(Tr::kExpBias) - kc) << Tr::kMantBits);
  Vec<T, N> y = detail::mul_pow2(detail::expm1_reduced(r) + (T(1) - two_pow_neg_k), k_int);
  return select(cmp_eq(x, T(0)), x, y);  // keeps the sign of zero
}

// log(x) = k ln2 + log(m), x = 2^k m, m in [sqrt(1/2), sqrt(2)) (subnormals scaled up first);
// log(m) = log1p(m - 1) by a minimax polynomial (float) or the atanh series shape (double), see log_reduced.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> log(Vec<T, N> x) {
  using Tr = detail::FloatTraits<T>;
  using V = Vec<T, N>;
  auto tiny = cmp_lt(x, Tr::kMinNormal);
  auto [k, f] = detail::log_split(select(tiny, x * Tr::kSubnormalScale, x));
  k = k - select(tiny, V::broadcast(T(Tr::kSubnormalScaleLog2)), V::broadcast(T(0)));
  V y = detail::log_reduced(k, f, V::broadcast(T(0)));
  constexpr T kInf = std::numeric_limits<T>::infinity();
  y = select(cmp_eq(x, kInf), x, y);
  y = select(mask_not(cmp_ge(x, T(0))), V::broadcast(std::numeric_limits<T>::quiet_NaN()), y);  // x < 0, NaN
  return select(cmp_eq(x, T(0)), V::broadcast(-kInf), y);
}

// log1p(x) = log(u) + (x - (u - 1)) / u with u = 1 + x rounded: the quotient restores what rounding u lost.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> log1p(Vec<T, N> x) {
  using V = Vec<T, N>;
  V u = x + T(1);
  V c = (x - (u - T(1))) / u;
  auto [k, f] = detail::log_split(u);
  V y = detail::log_reduced(k, f, c);
  constexpr T kInf = std::numeric_limits<T>::infinity();
  y = select(cmp_eq(x, kInf), x, y);
  y = select(mask_not(cmp_ge(x, T(-1))), V::broadcast(std::numeric_limits<T>::quiet_NaN()), y);
  y = select(cmp_eq(x, T(-1)), V::broadcast(-kInf), y);
  return select(cmp_eq(x, T(0)), x, y);  // keeps the sign of zero
}

// sin(x): x = j pi/2 + r (Cody-Waite in double, also for float lanes), then +-sin(r) or +-cos(r)
// by j mod 4, minimax polynomials on |r| <= pi/4. |x| > 1e8 goes lane by lane to std::sin.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> sin(Vec<T, N> x) {
  return select(cmp_eq(x, T(0)), x, detail::sin_or_cos(x, 0));  // sin(-0) = -0
}

// cos(x) = sin(x + pi/2): the same reduction with the quadrant advanced by one.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> cos(Vec<T, N> x) {
  return detail::sin_or_cos(x, 1);
}

// tanh(x) = expm1(2x) / (expm1(2x) + 2); |x| capped where tanh rounds to +-1 (10 float, 20 double).
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> tanh(Vec<T, N> x) {
  constexpr T kCap = std::is_same_v<T, float> ? T(10) : T(20);
  Vec<T, N> e = expm1(detail::clamp_keep_nan(x, -kCap, kCap) * T(2));
  return e / (e + T(2));
}

// sigmoid(x) = 1 / (1 + exp(-x)), computed as (x < 0 ? e : 1) / (1 + e) with e = exp(-|x|) <= 1:
// neither tail overflows and the negative tail keeps full relative precision down to subnormals.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> sigmoid(Vec<T, N> x) {
  Vec<T, N> e = exp(-abs(x));
  return select(cmp_lt(x, T(0)), e, Vec<T, N>::broadcast(T(1))) / (e + T(1));
}

// erf(x): float: |x| < 1: x + x Q(x^2), Q minimax degree 6 (2^-29 relative; the leading x stays exact);
//         1 <= |x|: 1 - exp(-x^2) E(|x| - 2.5), E minimax degree 8 on [1, 3.93] (2^-28 absolute),
//         |x| clamped at 3.93 where erf rounds to 1.
// double: std::erf lane by lane.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> erf(Vec<T, N> x) {
  if constexpr (std::is_same_v<T, float>) {
    Vec<T, N> ax = abs(x);
    Vec<T, N> small = x + x * detail::horner(x * x, 1.283791661e-01f, -3.761262596e-01f, 1.128358543e-01f,
                                             -2.685381286e-02f, 5.188327748e-03f, -8.010193706e-04f,
                                             7.853861462e-05f);
    Vec<T, N> t = detail::clamp_keep_nan(ax, 1.0f, 3.93f);
    Vec<T, N> e = detail::horner(t - 2.5f, 2.108076066e-01f, -7.434218377e-02f, 2.491462417e-02f,
                                 -8.132254705e-03f, 2.302501816e-03f, -6.611178978e-04f, 5.433242768e-04f,
                                 2.250650723e-04f, 1.068436395e-04f);
    Vec<T, N> large = detail::copysign(1.0f - exp(-(t * t)) * e, x);
    return select(cmp_lt(ax, 1.0f), small, large);
  } else {
    return detail::map_lanes(x, [](T v) { return std::erf(v); });
  }
}

// pow(x, y) with C's special cases (pow(x, 0) = 1, pow(1, y) = 1, odd integer y keeps the sign of x, ...).
// float: exp(y log|x|) evaluated in double (error < 2^-44 before the final rounding), then the sign and
// special-case fix-ups. double: std::pow lane by lane.
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> pow(Vec<T, N> x, Vec<T, N> y) {
  if constexpr (std::is_same_v<T, float> && N * sizeof(double) > 64) {
    return detail::concat(pow(detail::lower_half(x), detail::lower_half(y)),
                          pow(detail::upper_half(x), detail::upper_half(y)));
  } else if constexpr (std::is_same_v<T, float>) {
    using D = Vec<double, N>;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    D xd = convert<double>(x);
    D yd = convert<double>(y);
    D ax = abs(xd);
    D r = exp(yd * log(ax));
    auto y_int = cmp_eq(floor(yd), yd);
    auto y_odd = mask_and(y_int, cmp_ne(floor(yd * 0.5), yd * 0.5));
    Mask<double, N> x_sign{(typename Mask<double, N>::Raw)(detail::to_bits(xd).raw < 0)};
    r = select(mask_and(x_sign, y_odd), -r, r);
    auto no_real_power = mask_and(mask_and(cmp_lt(xd, 0.0), cmp_gt(xd, -kInf)), mask_not(y_int));
    r = select(no_real_power, D::broadcast(std::numeric_limits<double>::quiet_NaN()), r);
    auto one = mask_or(cmp_eq(yd, 0.0), cmp_eq(xd, 1.0));
    one = mask_or(one, mask_and(cmp_eq(ax, 1.0), cmp_eq(abs(yd), kInf)));  // pow(-1, +-inf) = 1
    return convert<float>(select(one, D::broadcast(1.0), r));
  } else {
    return detail::map_lanes(x, y, [](T a, T b) { return std::pow(a, b); });
  }
}
template <class T, int N>
  requires std::is_floating_point_v<T>
WEFT_SIMD_INLINE Vec<T, N> pow(Vec<T, N> x, std::type_identity_t<T> y) {
  return pow(x, Vec<T, N>::broadcast(y));
}

}  // namespace weft::detail::simd

#undef WEFT_SIMD_INLINE

#endif  // !defined(__CUDA_ARCH__)
