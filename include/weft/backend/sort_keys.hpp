// SPDX-License-Identifier: MIT
/// @file Radix-sort keys: every dtype mapped to an unsigned integer of its width whose order is the sort order (NaN last, -0.0 = 0.0), shared by the CPU and CUDA sort executors.
#pragma once

#include <cstdint>
#include <type_traits>

#include "weft/core/dtype.hpp"

namespace weft::detail {

/// The unsigned integer that a sort of T orders: as wide as T (bool: one byte).
template <class T>
using radix_key_t =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

/// The bits of +infinity of a floating dtype: a magnitude above them is a NaN.
template <class T>
inline constexpr radix_key_t<T> kInfinityBits = std::is_same_v<T, float>    ? radix_key_t<T>(0x7f800000u)
                                                : std::is_same_v<T, double> ? radix_key_t<T>(0x7ff0000000000000ull)
                                                : std::is_same_v<T, half>   ? radix_key_t<T>(0x7c00u)
                                                                            : radix_key_t<T>(0x7f80u);

/// key(v) = an unsigned integer with key(a) < key(b) exactly when a sorts before b ascending, and
/// key(a) == key(b) when they tie:
///   bool, unsigned: the value; signed: the two's complement bits with the sign bit flipped
///   (INT_MIN -> 0, -1 -> 0x7f..f, 0 -> 0x80..0);
///   floating: sign-magnitude made monotone, negatives -> ~bits (a larger magnitude, a smaller
///   key), non-negatives -> bits | sign bit; -0.0 -> the key of 0.0 (they compare equal, so a
///   stable sort keeps their order); every NaN -> all ones, above +inf (torch sorts NaN last,
///   whatever its sign or payload).
/// Descending order is the complement, ~key(v): equal keys stay equal, so stability holds, and
/// NaN (all ones) becomes 0, first, as in torch.
template <class T>
WEFT_HOST_DEVICE inline radix_key_t<T> radix_key(T v) {
  using K = radix_key_t<T>;
  constexpr K kSign = K(K(1) << (8 * sizeof(K) - 1));
  if constexpr (std::is_same_v<T, bool>) {
    return K(v);
  } else if constexpr (std::is_integral_v<T>) {
    return std::is_signed_v<T> ? K(K(v) ^ kSign) : K(v);
  } else {
    K bits;
    if constexpr (is_16bit_float_v<T>) bits = v.bits;
    else bits = bit_cast<K>(v);
    const K magnitude = K(bits & K(~kSign));
    if (magnitude > kInfinityBits<T>) return K(~K(0));
    if (magnitude == 0) return kSign;
    return (bits & kSign) ? K(~bits) : K(bits | kSign);
  }
}

/// The key a sort in `descending` order compares ascending: key(v), or its complement.
template <class T>
WEFT_HOST_DEVICE inline radix_key_t<T> radix_key(T v, bool descending) {
  const radix_key_t<T> key = radix_key(v);
  return descending ? radix_key_t<T>(~key) : key;
}

}  // namespace weft::detail
