// SPDX-License-Identifier: MIT
/// @file core: half / bfloat16 conversions (bit-exact, incl. rounding, NaN, inf, subnormals) and
/// PyTorch's type promotion (torch.promote_types for all 7x7 pairs, the wrapped-number rule).
#include "reference.hpp"

#include <bit>

using namespace weft_test;

namespace {

std::uint32_t float_bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float bits_float(std::uint32_t u) { return std::bit_cast<float>(u); }

/// Expected binary16 bits for float f: the independent rounding (round_half), then encoded.
/// NaN: weft quiets it and keeps the sign (payload dropped), like c10::Half.
std::uint16_t expected_half_bits(float f) {
  std::uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  if (std::isnan(f)) return sign | 0x7e00;
  double v = std::fabs(round_half(double(f)));
  if (std::isinf(v)) return sign | 0x7c00;
  if (v == 0) return sign;
  int e;
  std::frexp(v, &e);  // v in [2^(e-1), 2^e)
  if (e - 1 < -14) return sign | std::uint16_t(std::ldexp(v, 24));  // subnormal: m * 2^-24
  std::uint16_t exp_field = std::uint16_t(e - 1 + 15);
  std::uint16_t mant = std::uint16_t(std::ldexp(v, -(e - 1) + 10) - 1024);
  return std::uint16_t(sign | (exp_field << 10) | mant);
}

/// Expected bfloat16 bits for float f (independent rounding, then the top 16 bits of the float).
std::uint16_t expected_bfloat16_bits(float f) {
  if (std::isnan(f)) return std::uint16_t((float_bits(f) >> 16) | 0x40);  // quiet, sign and high payload kept
  double v = round_bfloat16(double(f));
  return std::uint16_t(float_bits(float(v)) >> 16);
}

std::string detail_hex(float f, unsigned got, unsigned want) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "float %a (bits 0x%08x): got 0x%04x, want 0x%04x\n", double(f), float_bits(f), got, want);
  return buf;
}

/// Floats around every boundary between consecutive 16-bit values: each midpoint (an exact tie),
/// one float ulp below and above it, and the 16-bit values themselves.
template <class Decode>
std::vector<float> boundary_floats(Decode decode) {
  std::vector<float> out;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    double v = decode(std::uint16_t(b)), next = decode(std::uint16_t(b + 1));
    if (!std::isfinite(v)) continue;
    out.push_back(float(v));
    if ((b & 0x7fff) == 0x7fff || !std::isfinite(next) || std::signbit(next) != std::signbit(v)) {
      if (!std::isfinite(next) && std::isfinite(v)) {
        // Past the largest finite value: the midpoint to the next binade step rounds to inf.
        double step = v - decode(std::uint16_t(b - 1));
        float mid = float(v + step / 2);
        out.insert(out.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e30f * (v < 0 ? -1 : 1))});
      }
      continue;
    }
    float mid = float((v + next) / 2);  // exact: 16-bit midpoints need at most 12 / 9 bits
    out.insert(out.end(), {mid, std::nextafter(mid, -1e30f), std::nextafter(mid, 1e30f)});
  }
  return out;
}

}  // namespace

TEST_SUITE("core") {

TEST_CASE("dtype: every binary16 bit pattern widens to float exactly") {
  std::int64_t wrong = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    float got = float(half::from_bits(std::uint16_t(b)));
    std::uint32_t e = (b >> 10) & 0x1f, m = b & 0x3ff;
    if (e == 0x1f) {  // inf / NaN: mantissa moves to the top of float's mantissa, sign kept
      std::uint32_t want = (std::uint32_t(b & 0x8000) << 16) | 0x7f800000u | (m << 13);
      wrong += float_bits(got) != want;
    } else {
      double want = half_bits_value(std::uint16_t(b));
      wrong += double(got) != want || std::signbit(got) != bool(b & 0x8000);
    }
  }
  CHECK(wrong == 0);
}

TEST_CASE("dtype: every bfloat16 bit pattern widens to float exactly") {
  std::int64_t wrong = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b)
    wrong += float_bits(float(bfloat16::from_bits(std::uint16_t(b)))) != (b << 16);
  CHECK(wrong == 0);
}

TEST_CASE("dtype: float -> half rounds to nearest even at every boundary, incl. subnormals and overflow") {
  auto floats = boundary_floats(half_bits_value);
  // Specials and hand-picked edges.
  const float inf = std::numeric_limits<float>::infinity();
  floats.insert(floats.end(), {0.0f, -0.0f, inf, -inf, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 1e10f,
                               0x1p-24f, 0x1p-25f, std::nextafter(0x1p-25f, 1.0f), 0x1.8p-24f, 0x1p-26f,
                               0x1p-14f, std::nextafter(0x1p-14f, 0.0f), 1e-30f, -1e-30f, 0x1p-149f,
                               std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
                               bits_float(0x7f800001u), bits_float(0xffa00000u)});
  WEFT_TEST_RNG(rng);
  for (int i = 0; i < 200000; ++i) floats.push_back(bits_float(std::uint32_t(rng.bits())));  // any float
  for (int i = 0; i < 200000; ++i) floats.push_back(float(rng.uniform(-70000, 70000)));
  std::int64_t wrong = 0;
  std::string first;
  for (float f : floats) {
    std::uint16_t got = half(f).bits, want = expected_half_bits(f);
    if (got != want && wrong++ < 5) first += detail_hex(f, got, want);
  }
  INFO(first);
  CHECK(wrong == 0);
  CHECK(floats.size() > 300000);
  // The round trip half -> float -> half is the identity on every non-NaN pattern.
  std::int64_t trip = 0;
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    half h = half::from_bits(std::uint16_t(b));
    if (std::isnan(float(h))) trip += !std::isnan(float(half(float(h))));
    else trip += half(float(h)).bits != b;
  }
  CHECK(trip == 0);
}

TEST_CASE("dtype: float -> bfloat16 rounds to nearest even at every boundary; NaN stays NaN") {
  auto floats = boundary_floats(bfloat16_bits_value);
  const float inf = std::numeric_limits<float>::infinity();
  floats.insert(floats.end(), {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::max(),
                               bits_float(0x7f7f8000u), bits_float(0x7f7f7fffu), 0x1p-133f, 0x1p-149f,
                               std::numeric_limits<float>::denorm_min(), bits_float(0x00018000u),
                               std::numeric_limits<float>::quiet_NaN(), bits_float(0x7f800001u),
                               bits_float(0xff800001u), bits_float(0x7fff0000u)});
  WEFT_TEST_RNG(rng);
  for (int i = 0; i < 300000; ++i) floats.push_back(bits_float(std::uint32_t(rng.bits())));
  std::int64_t wrong = 0;
  std::string first;
  for (float f : floats) {
    std::uint16_t got = bfloat16(f).bits, want = expected_bfloat16_bits(f);
    if (got != want && wrong++ < 5) first += detail_hex(f, got, want);
    if (std::isnan(f)) wrong += !std::isnan(float(bfloat16(f)));  // never a NaN turned into inf
  }
  INFO(first);
  CHECK(wrong == 0);
}

TEST_CASE("dtype: 16-bit types from double and integers go through float like c10::Half") {
  // half(double) = half(float(double)); integers up to 2^24 are exact in float.
  WEFT_TEST_RNG(rng);
  std::int64_t wrong = 0;
  for (int i = 0; i < 20000; ++i) {
    double d = rng.uniform(-3e4, 3e4);
    wrong += half(d).bits != half(float(d)).bits;
    wrong += bfloat16(d).bits != bfloat16(float(d)).bits;
    std::int32_t n = std::int32_t(rng.integer(-70000, 70000));
    wrong += half(n).bits != expected_half_bits(float(n));
    wrong += bfloat16(n).bits != expected_bfloat16_bits(float(n));
  }
  CHECK(wrong == 0);
  CHECK(half(2049).bits == expected_half_bits(2048.0f));  // 2049 is a tie: even mantissa wins
  CHECK(float(half(2051)) == 2052.0f);
  CHECK(float(bfloat16(257)) == 256.0f);
  CHECK(float(bfloat16(259)) == 260.0f);
}

TEST_CASE("dtype: names, dtype_of, math_t, is_floating_v") {
  using namespace weft;
  CHECK(std::string(dtype_name<float>()) == "float32");
  CHECK(std::string(dtype_name<double>()) == "float64");
  CHECK(std::string(dtype_name<half>()) == "float16");
  CHECK(std::string(dtype_name<bfloat16>()) == "bfloat16");
  CHECK(std::string(dtype_name<std::int8_t>()) == "int8");
  CHECK(std::string(dtype_name<std::uint8_t>()) == "uint8");
  CHECK(std::string(dtype_name<std::int16_t>()) == "int16");
  CHECK(std::string(dtype_name<std::int32_t>()) == "int32");
  CHECK(std::string(dtype_name<std::int64_t>()) == "int64");
  CHECK(std::string(dtype_name<bool>()) == "bool");
  static_assert(dtype_of<half> == DType::float16 && dtype_of<bool> == DType::bool_);
  static_assert(std::is_same_v<math_t<half>, float> && std::is_same_v<math_t<bfloat16>, float>);
  static_assert(std::is_same_v<math_t<std::int32_t>, std::int32_t> && std::is_same_v<math_t<double>, double>);
  static_assert(is_floating_v<half> && is_floating_v<bfloat16> && is_floating_v<float> && !is_floating_v<std::int64_t> &&
                !is_floating_v<bool>);
  static_assert(sizeof(half) == 2 && sizeof(bfloat16) == 2);
  static_assert(!Element<char> && !Element<std::uint32_t> && !Element<std::uint16_t> && Element<bool>);
  static_assert(dtype_of<std::int8_t> == DType::int8 && dtype_of<std::uint8_t> == DType::uint8 &&
                dtype_of<std::int16_t> == DType::int16);
  static_assert(std::is_same_v<math_t<std::int8_t>, std::int8_t> && !is_floating_v<std::uint8_t>);
  static_assert(is_narrow_int_v<std::int8_t> && is_narrow_int_v<std::uint8_t> && is_narrow_int_v<std::int16_t> &&
                !is_narrow_int_v<std::int32_t> && !is_narrow_int_v<bool>);
}

// torch.promote_types for every pair (PyTorch 2.x): rows/columns in the order
// bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64.
namespace {
using Types = std::tuple<bool, std::uint8_t, std::int8_t, std::int16_t, std::int32_t, std::int64_t, half, bfloat16,
                         float, double>;
constexpr std::size_t kTypes = std::tuple_size_v<Types>;
// clang-format off
constexpr int kPromote[kTypes][kTypes] = {
    //        b  u8 i8 i16 i32 i64 f16 bf16 f32 f64
    /*b   */ {0, 1, 2, 3,  4,  5,  6,  7,   8,  9},
    /*u8  */ {1, 1, 3, 3,  4,  5,  6,  7,   8,  9},
    /*i8  */ {2, 3, 2, 3,  4,  5,  6,  7,   8,  9},
    /*i16 */ {3, 3, 3, 3,  4,  5,  6,  7,   8,  9},
    /*i32 */ {4, 4, 4, 4,  4,  5,  6,  7,   8,  9},
    /*i64 */ {5, 5, 5, 5,  5,  5,  6,  7,   8,  9},
    /*f16 */ {6, 6, 6, 6,  6,  6,  6,  8,   8,  9},
    /*bf16*/ {7, 7, 7, 7,  7,  7,  8,  7,   8,  9},
    /*f32 */ {8, 8, 8, 8,  8,  8,  8,  8,   8,  9},
    /*f64 */ {9, 9, 9, 9,  9,  9,  9,  9,   9,  9},
};
// clang-format on
template <class T, std::size_t... K>
constexpr int index_in_types(std::index_sequence<K...>) {
  return ((std::is_same_v<T, std::tuple_element_t<K, Types>> ? int(K) : 0) + ...);
}
template <class T>
constexpr int index_of() {
  return index_in_types<T>(std::make_index_sequence<kTypes>{});
}
template <std::size_t I, std::size_t J>
constexpr bool promote_matches() {
  using A = std::tuple_element_t<I, Types>;
  using B = std::tuple_element_t<J, Types>;
  return index_of<weft::promote_t<A, B>>() == kPromote[I][J];
}
template <std::size_t... K>
constexpr int count_matches(std::index_sequence<K...>) {
  return (int(promote_matches<K / kTypes, K % kTypes>()) + ...);
}

// Type promotion is decided at compile time, so it is checked at compile time: this file does
// not compile when a rule below breaks (no test case that could only pass).

// promote_t matches torch.promote_types for all 100 pairs.
static_assert(count_matches(std::make_index_sequence<kTypes * kTypes>{}) == kTypes * kTypes,
              "weft::promote_t differs from torch.promote_types");
// Three or more types fold pairwise (also symmetric and associative on this lattice).
static_assert(std::is_same_v<weft::promote_t<half, bfloat16, std::int64_t>, float>);
static_assert(std::is_same_v<weft::promote_t<bool, std::int32_t, half>, half>);
static_assert(std::is_same_v<weft::promote_t<bool, bool, bool>, bool>);
static_assert(std::is_same_v<weft::promote_t<std::int32_t, bfloat16, double>, double>);

// The wrapped-number rule (tensor op C++ number).
using weft::promote_with_scalar_t;
// A number only lifts the category: bool < integer < floating.
static_assert(std::is_same_v<promote_with_scalar_t<half, double>, half>);       // half * 2.5 stays half
static_assert(std::is_same_v<promote_with_scalar_t<bfloat16, double>, bfloat16>);
static_assert(std::is_same_v<promote_with_scalar_t<float, double>, float>);
static_assert(std::is_same_v<promote_with_scalar_t<std::int32_t, double>, float>);  // int * 2.5 is float32
static_assert(std::is_same_v<promote_with_scalar_t<std::int64_t, double>, float>);
static_assert(std::is_same_v<promote_with_scalar_t<bool, double>, float>);
static_assert(std::is_same_v<promote_with_scalar_t<std::int32_t, std::int64_t>, std::int32_t>);  // int32 + 5 stays int32
static_assert(std::is_same_v<promote_with_scalar_t<std::uint8_t, std::int64_t>, std::uint8_t>);  // uint8 + 300 stays uint8
static_assert(std::is_same_v<promote_with_scalar_t<std::int8_t, double>, float>);
static_assert(std::is_same_v<promote_with_scalar_t<half, std::int64_t>, half>);
static_assert(std::is_same_v<promote_with_scalar_t<bool, std::int64_t>, std::int64_t>);  // bool + 1 is int64
static_assert(std::is_same_v<promote_with_scalar_t<bool, bool>, bool>);
static_assert(std::is_same_v<promote_with_scalar_t<std::int32_t, bool>, std::int32_t>);
static_assert(std::is_same_v<promote_with_scalar_t<double, bool>, double>);

// The same through expressions: C++ int / float / bool literals become Scalar<int64/double/bool>.
// (Declared only: decltype does not evaluate them.)
extern const weft::Tensor<half> h;
extern const weft::Tensor<std::int32_t> i;
extern const weft::Tensor<bool> b;
extern const weft::Tensor<bfloat16> bf;
static_assert(std::is_same_v<decltype(h * 2.5)::value_type, half>);
static_assert(std::is_same_v<decltype(h * 2.5f)::value_type, half>);
static_assert(std::is_same_v<decltype(i * 2.5)::value_type, float>);
static_assert(std::is_same_v<decltype(i * 2)::value_type, std::int32_t>);
static_assert(std::is_same_v<decltype(i * std::int64_t(2))::value_type, std::int32_t>);
static_assert(std::is_same_v<decltype(b + 1)::value_type, std::int64_t>);
static_assert(std::is_same_v<decltype(b + true)::value_type, bool>);
static_assert(std::is_same_v<decltype(2.0 - bf)::value_type, bfloat16>);
static_assert(std::is_same_v<decltype(weft::clamp(i, 1, 2.5))::value_type, float>);  // numbers promote together
static_assert(std::is_same_v<decltype(weft::where(b, i, 2.5))::value_type, float>);
static_assert(std::is_same_v<decltype(weft::where(b, i, 2))::value_type, std::int32_t>);
static_assert(std::is_same_v<decltype(h + bf)::value_type, float>);
static_assert(std::is_same_v<decltype(i / i)::value_type, float>);  // true division
static_assert(std::is_same_v<decltype(h / 2)::value_type, half>);
static_assert(std::is_same_v<decltype(weft::exp(i))::value_type, float>);
static_assert(std::is_same_v<decltype(i < 2.5)::value_type, bool>);
// Tensors promote among themselves first; then numbers may lift the category.
static_assert(std::is_same_v<decltype((b + i) * 0.5)::value_type, float>);
static_assert(std::is_same_v<decltype(h * i + 1.5)::value_type, half>);
// 0-dim tensors promote like any tensor in weft (a documented difference from PyTorch).

}  // namespace

}  // TEST_SUITE
