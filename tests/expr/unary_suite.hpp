// SPDX-License-Identifier: MIT
/// @file The unary-op checks, instantiated per dtype by unary_*.cpp (one dtype per translation
/// unit: ~0.5 s of -O2 per op keeps each under the compile-time budget).
///
/// ulps (see pointwise_check.hpp for the model): 1 for correctly rounded operations (sqrt,
/// reciprocal, negation; 0.5 ulp, doubled); 2 for rsqrt (two correctly rounded steps); 4 for the
/// transcendental functions: the SIMD layer's polynomials are accurate to 2^-27..2^-35 (float)
/// relative, below one ulp, and their reconstruction adds at most 2-3 roundings, while the scalar
/// tail uses libm (< 1-2 ulp). A real defect (a wrong coefficient, a lost range-reduction term, a
/// missed special case) is off by far more than 4 ulp.
#pragma once

#include "pointwise_check.hpp"

namespace weft_test {

constexpr double kPi = 3.14159265358979323846;

// Exact values in double.
inline double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double ref_gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

/// Domain of an op's inputs for dtype T: `fl` for floating types, `in` for integers (bool is 0/1).
template <class T>
Domain pick(Domain fl, Domain in) {
  if constexpr (is_float_type_v<T>) {
    fl.nan_chance = 0.02;  // NaN in, NaN out (checked for every float-valued op)
    return fl;
  } else {
    return in;
  }
}

/// Which float-valued ops a test case runs, as a bit mask over the list below (a test case per
/// group keeps failures and replays small).
/// Bits: 0 exp, 1 log, 2 log1p, 3 expm1, 4 sqrt, 5 rsqrt, 6 sin, 7 cos, 8 tanh, 9 sigmoid,
/// 10 gelu, 11 silu, 12 erf, 13 reciprocal.
inline constexpr unsigned kUnaryFirst = 0x001F, kUnarySecond = 0x03E0, kUnaryThird = 0x3C00;
/// A subset that still reaches every kind of SIMD code path (the exp and log families, sqrt,
/// range-reduced sin, sigmoid, gelu's erf, division), in two halves.
inline constexpr unsigned kUnarySubsetA = 0x0053, kUnarySubsetB = 0x2600;
/// gelu and silu (bits 10, 11) refuse integer and bool inputs, as in PyTorch (a static_assert), so
/// the masks of non-floating dtypes leave them out: kUnaryThirdInt is erf and reciprocal, and
/// kUnarySubsetBInt has erf (the polynomial gelu reaches) in gelu's place: sigmoid erf reciprocal.
inline constexpr unsigned kUnaryFloatingOnly = 0x0C00;
inline constexpr unsigned kUnaryThirdInt = kUnaryThird & ~kUnaryFloatingOnly;                       // 0x3000
inline constexpr unsigned kUnarySubsetBInt = (kUnarySubsetB & ~kUnaryFloatingOnly) | (1u << 12);  // 0x3200

/// Float-valued unary ops (exp, log, ...): the result is T for floating T, float32 otherwise.
template <class T, unsigned mask>
void run_unary_float_ops() {
  static_assert(is_float_type_v<T> || (mask & kUnaryFloatingOnly) == 0,
                "gelu and silu need a floating input (as in PyTorch): use kUnaryThirdInt / kUnarySubsetBInt");
  using R = weft::to_floating_t<T>;
  Rng rng = named_rng(type_name<T>(), int(mask));
  INFO("dtype ", std::string(type_name<T>()), "; replay with WEFT_TEST_SEED=", seed());
  auto check = [&](const char* name, Domain fl, Domain in, double ulps, auto make, auto ref) {
    check_op<R, T>((std::string(name) + "(" + type_name<T>() + ")").c_str(), rng, {pick<T>(fl, in)}, ulps, make, ref);
  };
  Domain logmag{1e-4, 8, true, true};  // |x| log-uniform, both signs
  // bfloat16's exp, sigmoid, tanh and silu packets take the forms to bfloat16's precision
  // (backend/cpu/simd/bf16_math.hpp): relative error 2^-17 (exp) and 2^-14, in float ulps (2^-23).
  constexpr bool kBf16Forms = std::is_same_v<T, bfloat16>;
  if constexpr ((mask >> 0) & 1)
    check("exp", {-10, 10}, {-10, 10}, kBf16Forms ? 64 : 4, [](const auto& x) { return weft::exp(x); }, [](double x) { return rel(std::exp(x)); });
  if constexpr ((mask >> 1) & 1)
    check("log", {0.01, 100, true, false}, {1, 1000}, 4, [](const auto& x) { return weft::log(x); },
          [](double x) { return rel(std::log(x)); });
  if constexpr ((mask >> 2) & 1)
    check("log1p", {1e-5, 0.9, true, true}, {0, 1000}, 4, [](const auto& x) { return weft::log1p(x); },
          [](double x) { return rel(std::log1p(x)); });
  if constexpr ((mask >> 3) & 1)
    check("expm1", logmag, {-10, 10}, 4, [](const auto& x) { return weft::expm1(x); }, [](double x) { return rel(std::expm1(x)); });
  if constexpr ((mask >> 4) & 1)
    check("sqrt", {0, 100, false, true, 0.05}, {0, 1000}, 1, [](const auto& x) { return weft::sqrt(x); },
          [](double x) { return rel(std::sqrt(x)); });
  if constexpr ((mask >> 5) & 1)
    check("rsqrt", {0.01, 100, true, false}, {1, 1000}, 2, [](const auto& x) { return weft::rsqrt(x); },
          [](double x) { return rel(1.0 / std::sqrt(x)); });
  if constexpr ((mask >> 6) & 1)
    check("sin", {-20, 20}, {-1000, 1000}, 4, [](const auto& x) { return weft::sin(x); }, [](double x) { return rel(std::sin(x)); });
  if constexpr ((mask >> 7) & 1)
    check("cos", {-20, 20}, {-1000, 1000}, 4, [](const auto& x) { return weft::cos(x); }, [](double x) { return rel(std::cos(x)); });
  if constexpr ((mask >> 8) & 1)
    check("tanh", {-8, 8}, {-10, 10}, kBf16Forms ? 512 : 4, [](const auto& x) { return weft::tanh(x); }, [](double x) { return rel(std::tanh(x)); });
  if constexpr ((mask >> 9) & 1)
    check("sigmoid", {-20, 20}, {-30, 30}, kBf16Forms ? 512 : 4, [](const auto& x) { return weft::sigmoid(x); },
          [](double x) { return rel(ref_sigmoid(x)); });
  // gelu(x) = x/2 (1 + erf(x/sqrt2)): for x < 0 the bracket cancels, its error scales with |x|.
  if constexpr ((mask >> 10) & 1)
    check("gelu", {-6, 6}, {-8, 8}, 4, [](const auto& x) { return weft::gelu(x); },
          [](double x) { return RefVal{ref_gelu(x), std::fabs(ref_gelu(x)) + std::fabs(x)}; });
  if constexpr ((mask >> 11) & 1)
    check("silu", {-20, 20}, {-30, 30}, kBf16Forms ? 512 : 4, [](const auto& x) { return weft::silu(x); },
          [](double x) { return rel(x * ref_sigmoid(x)); });
  if constexpr ((mask >> 12) & 1)
    check("erf", {-4, 4}, {-5, 5}, 4, [](const auto& x) { return weft::erf(x); }, [](double x) { return rel(std::erf(x)); });
  if constexpr ((mask >> 13) & 1)
    check("reciprocal", {0.01, 100, true, true}, {-1000, 1000, false, true, 0, 1}, 1,
          [](const auto& x) { return weft::reciprocal(x); }, [](double x) { return rel(1.0 / x); });
}

/// Dtype-preserving unary ops (-x, abs, relu, square, sign): the result is T.
template <class T>
void run_unary_arith_ops() {
  Rng rng = named_rng(type_name<T>(), 2);
  INFO("dtype ", std::string(type_name<T>()), "; replay with WEFT_TEST_SEED=", seed());
  auto check = [&](const char* name, Domain fl, Domain in, double ulps, auto make, auto ref) {
    check_op<T, T>((std::string(name) + "(" + type_name<T>() + ")").c_str(), rng, {pick<T>(fl, in)}, ulps, make, ref);
  };
  Domain wide{-100, 100, false, true, 0.05};
  Domain ints{-1000, 1000, false, true, 0.05};
  check("neg", wide, ints, 0, [](const auto& x) { return -x; }, [](double x) { return exact(-x); });
  check("abs", wide, ints, 0, [](const auto& x) { return weft::abs(x); }, [](double x) { return exact(std::fabs(x)); });
  // relu(NaN) = NaN, like torch.relu
  check("relu", wide, ints, 0, [](const auto& x) { return weft::relu(x); },
        [](double x) { return exact(std::isnan(x) ? x : std::max(x, 0.0)); });
  // square: one correctly rounded product
  check("square", wide, ints, 1, [](const auto& x) { return weft::square(x); }, [](double x) { return rel(x * x); });
  // sign(NaN) = 0, like torch.sign on the CPU
  check("sign", {-10, 10, false, true, 0.2}, {-10, 10, false, true, 0.2}, 0, [](const auto& x) { return weft::sign(x); },
        [](double x) { return exact(std::isnan(x) ? 0.0 : double((x > 0) - (x < 0))); });
}

}  // namespace weft_test
