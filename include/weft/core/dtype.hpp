// SPDX-License-Identifier: MIT
/// @file Element types (half, bfloat16), their math types and PyTorch's type promotion.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "weft/core/config.hpp"

namespace weft {

namespace detail {

template <class To, class From>
WEFT_HOST_DEVICE inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast needs equal sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// IEEE binary16 from binary32, round to nearest even.
WEFT_HOST_DEVICE inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x = bit_cast<std::uint32_t>(f);
  std::uint32_t sign = (x >> 16) & 0x8000u;
  std::uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return std::uint16_t(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u : 0u));
  if (ax >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (ax < 0x38800000u) {
    // Below 2^-14 the result is subnormal: adding 0.5 puts the value's
    // 2^-24 units in the low mantissa bits, and the float add rounds them.
    float shifted = bit_cast<float>(ax) + 0.5f;
    return std::uint16_t(sign | (bit_cast<std::uint32_t>(shifted) - 0x3f000000u));
  }
  std::uint32_t odd = (ax >> 13) & 1u;
  ax += 0xc8000fffu + odd;  // rebias exponent (127 -> 15) and round half to even
  return std::uint16_t(sign | (ax >> 13));
}

WEFT_HOST_DEVICE inline float half_bits_to_float(std::uint16_t h) {
  std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16;
  std::uint32_t em = h & 0x7fffu;
  if (em >= 0x7c00u) return bit_cast<float>(sign | 0x7f800000u | ((em & 0x3ffu) << 13));
  if (em < 0x400u) {  // subnormal: em * 2^-24
    float v = float(em) * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return bit_cast<float>(sign | ((em << 13) + 0x38000000u));
}

// bfloat16 is the top half of a binary32; round to nearest even, keep NaNs quiet.
WEFT_HOST_DEVICE inline std::uint16_t float_to_bfloat16_bits(float f) {
  std::uint32_t x = bit_cast<std::uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return std::uint16_t((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return std::uint16_t(x >> 16);
}

WEFT_HOST_DEVICE inline float bfloat16_bits_to_float(std::uint16_t b) {
  return bit_cast<float>(std::uint32_t(b) << 16);
}

}  // namespace detail

namespace detail {

/// What half and bfloat16 share: 16 bits of storage, conversion from float (rounded to nearest
/// even by Codec::encode), double and integers, and implicit conversion to float, in which their
/// arithmetic happens. Self is the format's own type, so each stays a distinct dtype.
template <class Self, class Codec>
struct Float16Storage {
  std::uint16_t bits = 0;
  Float16Storage() = default;
  WEFT_HOST_DEVICE Float16Storage(float f) : bits(Codec::encode(f)) {}
  WEFT_HOST_DEVICE Float16Storage(double d) : Float16Storage(float(d)) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  WEFT_HOST_DEVICE Float16Storage(I i) : Float16Storage(float(i)) {}
  WEFT_HOST_DEVICE operator float() const { return Codec::decode(bits); }
  WEFT_HOST_DEVICE static Self from_bits(std::uint16_t b) {
    Self h;
    h.bits = b;
    return h;
  }
};

struct HalfCodec {
  WEFT_HOST_DEVICE static std::uint16_t encode(float f) { return float_to_half_bits(f); }
  WEFT_HOST_DEVICE static float decode(std::uint16_t b) { return half_bits_to_float(b); }
};
struct Bfloat16Codec {
  WEFT_HOST_DEVICE static std::uint16_t encode(float f) { return float_to_bfloat16_bits(f); }
  WEFT_HOST_DEVICE static float decode(std::uint16_t b) { return bfloat16_bits_to_float(b); }
};

}  // namespace detail

/// IEEE binary16 (5-bit exponent, 10-bit mantissa). Arithmetic happens in float.
struct half : detail::Float16Storage<half, detail::HalfCodec> {
  using Float16Storage::Float16Storage;
};

/// bfloat16 (8-bit exponent, 7-bit mantissa). Arithmetic happens in float.
struct bfloat16 : detail::Float16Storage<bfloat16, detail::Bfloat16Codec> {
  using Float16Storage::Float16Storage;
};

/// Runtime tag of an element type, for messages and type-erased storage.
enum class DType : std::uint8_t { bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64 };

template <class T>
concept Element = std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, half> ||
                  std::is_same_v<T, bfloat16> || std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> ||
                  std::is_same_v<T, std::int16_t> || std::is_same_v<T, std::int32_t> ||
                  std::is_same_v<T, std::int64_t> || std::is_same_v<T, bool>;

/// The integers narrower than 32 bits (int8, uint8, int16). Their arithmetic wraps to their width
/// (two's complement, as in PyTorch); CPU packets carry them in int32 lanes.
template <class T>
inline constexpr bool is_narrow_int_v =
    std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t> || std::is_same_v<T, std::int16_t>;

template <class T>
inline constexpr bool is_floating_v =
    std::is_floating_point_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <class T>
inline constexpr bool is_16bit_float_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

template <Element T>
inline constexpr DType dtype_of = std::is_same_v<T, bool>           ? DType::bool_
                                  : std::is_same_v<T, std::uint8_t> ? DType::uint8
                                  : std::is_same_v<T, std::int8_t>  ? DType::int8
                                  : std::is_same_v<T, std::int16_t> ? DType::int16
                                  : std::is_same_v<T, std::int32_t> ? DType::int32
                                  : std::is_same_v<T, std::int64_t> ? DType::int64
                                  : std::is_same_v<T, half>         ? DType::float16
                                  : std::is_same_v<T, bfloat16>     ? DType::bfloat16
                                  : std::is_same_v<T, float>        ? DType::float32
                                                                    : DType::float64;

constexpr const char* dtype_name(DType d) {
  switch (d) {
    case DType::bool_: return "bool";
    case DType::uint8: return "uint8";
    case DType::int8: return "int8";
    case DType::int16: return "int16";
    case DType::int32: return "int32";
    case DType::int64: return "int64";
    case DType::float16: return "float16";
    case DType::bfloat16: return "bfloat16";
    case DType::float32: return "float32";
    case DType::float64: return "float64";
  }
  return "?";
}

template <Element T>
constexpr const char* dtype_name() {
  return dtype_name(dtype_of<T>);
}

/// The type arithmetic on T happens in: float for the 16-bit floats.
template <class T>
using math_t = std::conditional_t<is_16bit_float_v<T>, float, T>;

namespace detail {

// PyTorch's category order: bool < integer < floating; integers by width, floats by width, where
// two types that hold each other's values in neither direction meet at the next wider one:
// uint8 and int8 at int16, half and bfloat16 at float.
template <class T>
constexpr int promotion_rank() {
  if constexpr (std::is_same_v<T, bool>) return 0;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return 1;
  else if constexpr (std::is_same_v<T, std::int8_t>) return 2;
  else if constexpr (std::is_same_v<T, std::int16_t>) return 3;
  else if constexpr (std::is_same_v<T, std::int32_t>) return 4;
  else if constexpr (std::is_same_v<T, std::int64_t>) return 5;
  else if constexpr (is_16bit_float_v<T>) return 6;
  else if constexpr (std::is_same_v<T, float>) return 7;
  else return 8;
}

template <class A, class B>
struct promote2 {
  using type = std::conditional_t<(promotion_rank<A>() >= promotion_rank<B>()), A, B>;
};
template <class A>
struct promote2<A, A> {
  using type = A;
};
template <>
struct promote2<std::uint8_t, std::int8_t> {
  using type = std::int16_t;
};
template <>
struct promote2<std::int8_t, std::uint8_t> {
  using type = std::int16_t;
};
template <>
struct promote2<half, bfloat16> {
  using type = float;
};
template <>
struct promote2<bfloat16, half> {
  using type = float;
};

template <class... Ts>
struct promote;
template <class A>
struct promote<A> {
  using type = A;
};
template <class A, class B, class... Rest>
struct promote<A, B, Rest...> {
  using type = typename promote<typename promote2<A, B>::type, Rest...>::type;
};

}  // namespace detail

/// Result dtype of combining tensors of dtypes Ts (torch.promote_types).
template <class... Ts>
using promote_t = typename detail::promote<Ts...>::type;

/// Integers and bool become float (PyTorch's default dtype) under float-valued ops.
template <class T>
using to_floating_t = std::conditional_t<is_floating_v<T>, T, float>;

/// Dtype of a tensor of dtype T combined with a C++ number of type S
/// (PyTorch's wrapped-number rule: the scalar only wins across categories).
template <class T, class S>
using promote_with_scalar_t =
    std::conditional_t<std::is_same_v<S, bool> || std::is_same_v<T, S>, T,
                       std::conditional_t<std::is_floating_point_v<S>, to_floating_t<T>,
                                          std::conditional_t<std::is_same_v<T, bool>, std::int64_t, T>>>;

/// A dtype's kind, in torch.can_cast's order: bool < integer < floating.
template <class T>
inline constexpr int dtype_kind_v = std::is_same_v<T, bool> ? 0 : is_floating_v<T> ? 2 : 1;

/// torch.can_cast(From, To): a value of dtype From may be written into a tensor of dtype To
/// unless that lowers its kind (floating -> integer or bool, integer -> bool).
template <class From, class To>
inline constexpr bool can_cast_v = dtype_kind_v<From> <= dtype_kind_v<To>;

}  // namespace weft
