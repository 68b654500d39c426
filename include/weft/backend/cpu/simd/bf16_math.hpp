// SPDX-License-Identifier: MIT
/// @file exp, sigmoid and tanh of float packets to bfloat16's precision, and the ops whose packets use them when their result dtype is bfloat16.
///
/// A bfloat16 keeps 8 significant bits. simd::exp / sigmoid / tanh are accurate to ~2 float ulps
/// (2^-22) and sigmoid and tanh divide, which made bfloat16 chains compute-bound: y = a *
/// sigmoid(b) + c * d ran at 61-66% of copy bandwidth on Sapphire Rapids (77-85% with these
/// forms, one-instruction loads and streaming stores; docs/benchmarks.md). The forms have a relative error <= 2^-17 (exp) and <= 2^-14
/// (sigmoid, tanh, silu): over every float input, 2^-17.26, 2^-14.15, 2^-14.49 and 2^-14.15 on
/// AVX-512, less elsewhere (a division instead of a reciprocal estimate);
/// tests/backend/cpu/bf16_math_test.cpp checks every bfloat16 input.
/// Rounded to bfloat16 such a value is within 1 ulp of the correctly rounded result (that needs
/// an error below half an ulp, 2^-9 relative at worst), and is the correctly rounded one for all
/// but 2 (exp), 9 (sigmoid), 2 (tanh) and 76 (silu) of the 65536 bfloat16 inputs on AVX-512.
#pragma once

#include <utility>

#include "weft/backend/cpu/simd/vec.hpp"
#include "weft/expr/functors.hpp"

// Host code only: nvcc's device pass has no SIMD layer (see simd.hpp).
#if !defined(__CUDA_ARCH__)

namespace weft::detail::simd {
namespace detail {

template <class... A>
void round_fraction_native(A...) = delete;
template <class... A>
void scale_pow2_native(A...) = delete;
template <class... A>
void reciprocal_native(A...) = delete;

// AVX-512 has each step of 2^t in one instruction: vreduceps gives f = t - round(t) (0 for
// +-inf), vscalefps x 2^floor(k), rounded once also into subnormals and to 0 / inf beyond the
// float range (no clamp), and vrcp14ps 1/d within 2^-14 relative. The all-lanes masked forms,
// as sqrt512_ps in simd.hpp: GCC 12's unmasked ones trip -Wuninitialized.
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512DQ__)
#define WEFT_BF16_MATH_NATIVE(lanes, F, prefix, M)                                                       \
  inline __attribute__((always_inline)) Vec<float, lanes> round_fraction_native(Vec<float, lanes> t) {   \
    return {(Vec<float, lanes>::Raw)prefix##_mask_reduce_ps((F)t.raw, M(-1), (F)t.raw, 0)};            \
  }                                                                                                      \
  inline __attribute__((always_inline)) Vec<float, lanes> scale_pow2_native(Vec<float, lanes> x,         \
                                                                           Vec<float, lanes> k) {        \
    return {(Vec<float, lanes>::Raw)prefix##_mask_scalef_ps((F)x.raw, M(-1), (F)x.raw, (F)k.raw)};     \
  }                                                                                                      \
  inline __attribute__((always_inline)) Vec<float, lanes> reciprocal_native(Vec<float, lanes> d) {       \
    return {(Vec<float, lanes>::Raw)prefix##_mask_rcp14_ps((F)d.raw, M(-1), (F)d.raw)};                \
  }
WEFT_BF16_MATH_NATIVE(4, __m128, _mm, __mmask8)
WEFT_BF16_MATH_NATIVE(8, __m256, _mm256, __mmask8)
WEFT_BF16_MATH_NATIVE(16, __m512, _mm512, __mmask16)
#undef WEFT_BF16_MATH_NATIVE
#endif

// 2^f on |f| <= 1/2: minimax of degree 4 for relative error (2^-18.5 with these float coefficients).
inline constexpr float kExp2Bf16[] = {9.999992847e-01f, 6.931217909e-01f, 2.402474433e-01f, 5.591785908e-02f,
                                      9.570102207e-03f};

// 2^t = 2^k 2^f, k = round(t) and f = t - k, both exact: relative error 2^-18.5 plus one rounding.
template <int N>
inline __attribute__((always_inline)) Vec<float, N> exp2_bf16(Vec<float, N> t) {
  if constexpr (requires { round_fraction_native(t); }) {
    const Vec<float, N> f = round_fraction_native(t);
    return scale_pow2_native(horner_array(f, kExp2Bf16, std::make_index_sequence<5>{}), t - f);
  } else {
    // Outside [-151, 129] the result rounds to 0 or inf; the clamp keeps k in mul_pow2's range.
    t = clamp_keep_nan(t, -151.0f, 129.0f);
    auto [k, k_int] = round_nearest(t);
    return mul_pow2(horner_array(t - k, kExp2Bf16, std::make_index_sequence<5>{}), k_int);
  }
}

// 1/d: vrcp14ps (2^-14 relative) where AVX-512 has it, else a correctly rounded division.
template <int N>
inline __attribute__((always_inline)) Vec<float, N> reciprocal_bf16(Vec<float, N> d) {
  if constexpr (requires { reciprocal_native(d); }) return reciprocal_native(d);
  else return 1.0f / d;
}

}  // namespace detail

/// exp(x) = 2^(x log2 e) to bfloat16's precision: relative error <= 2^-17 (2^-18.5 from the
/// polynomial, up to 2^-17.3 from rounding x log2 e, whose magnitude is below 150 wherever the
/// result is a nonzero finite float); subnormal results round once, in every build.
template <int N>
inline __attribute__((always_inline)) Vec<float, N> exp_bf16(Vec<float, N> x) {
  return detail::exp2_bf16(x * detail::FloatTraits<float>::kLog2e);
}

/// sigmoid(x) = 1 / (1 + exp(-x)) to bfloat16's precision: (x < 0 ? e : 1) / (1 + e) with
/// e = exp(-|x|) <= 1 as in simd::sigmoid, the division a reciprocal estimate on AVX-512
/// (2^-14; with e's error, 2^-14.15 measured over every float), elsewhere a correctly rounded one.
template <int N>
inline __attribute__((always_inline)) Vec<float, N> sigmoid_bf16(Vec<float, N> x) {
  const Vec<float, N> e = detail::exp2_bf16(abs(x) * -detail::FloatTraits<float>::kLog2e);
  const Vec<float, N> r = detail::reciprocal_bf16(e + 1.0f);
  return select(cmp_lt(x, 0.0f), e * r, r);
}

/// tanh(x) to bfloat16's precision: |x| < 0.375: x + x^3 P(x^2), P minimax of degree 1 (2^-17.5
/// relative); else sign(x) (1 - e) / (1 + e) with e = exp(-2|x|) <= 0.48, where 1 - e loses
/// nothing and e's error is amplified at most 1.2x: 2^-14.49 measured over every float with the
/// reciprocal estimate of AVX-512.
template <int N>
inline __attribute__((always_inline)) Vec<float, N> tanh_bf16(Vec<float, N> x) {
  const Vec<float, N> ax = abs(x);
  const Vec<float, N> e = detail::exp2_bf16(ax * (-2.0f * detail::FloatTraits<float>::kLog2e));
  const Vec<float, N> large = detail::copysign((1.0f - e) * detail::reciprocal_bf16(e + 1.0f), x);
  const Vec<float, N> z = x * x;
  const Vec<float, N> small = x + x * (z * detail::horner(z, -3.329087794e-01f, 1.233909205e-01f));
  return select(cmp_lt(ax, 0.375f), small, large);
}

}  // namespace weft::detail::simd

namespace weft::detail::cpu {

/// The packet form of an op whose result dtype is bfloat16, where simd has one to bfloat16's
/// precision (PacketTarget::apply picks it). Evaluated alone, as an eager framework runs it, the
/// op's value would be rounded to bfloat16 (2^-9 relative); these forms err 2^5 below that, so a
/// fused chain stays at least as accurate as the eager one, and a result stored to bfloat16 is
/// within 1 ulp of the correctly rounded value. Keyed on the op's dtype, not the destination's:
/// a bfloat16 sigmoid assigned to a float32 tensor carries the same 2^-14. half keeps the float
/// forms: with 11 significant bits its half ulp is 2^-12 relative at worst, only 2^2 above 2^-14,
/// and a large share of results would round off by an ulp.
template <int L>
simd::Vec<float, L> bfloat16_precision(functors::Exp, simd::Vec<float, L> x) {
  return simd::exp_bf16(x);
}
template <int L>
simd::Vec<float, L> bfloat16_precision(functors::Sigmoid, simd::Vec<float, L> x) {
  return simd::sigmoid_bf16(x);
}
template <int L>
simd::Vec<float, L> bfloat16_precision(functors::Silu, simd::Vec<float, L> x) {
  return x * simd::sigmoid_bf16(x);  // silu(x) = x * sigmoid(x)
}
template <int L>
simd::Vec<float, L> bfloat16_precision(functors::Tanh, simd::Vec<float, L> x) {
  return simd::tanh_bf16(x);
}

}  // namespace weft::detail::cpu

#endif  // !defined(__CUDA_ARCH__)
