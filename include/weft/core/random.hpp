// SPDX-License-Identifier: MIT
/// @file Counter-based random numbers (Philox4x32-10): the value of element i depends only on (seed, i).
#pragma once

#include <cmath>
#include <cstdint>

#include "weft/core/config.hpp"

namespace weft::detail::random {

/// Four 32-bit words of Philox4x32-10 (Salmon et al., SC'11) for counter `index` and key `seed`.
struct Philox4x32 {
  std::uint32_t w[4];

  WEFT_HOST_DEVICE Philox4x32(std::uint64_t seed, std::uint64_t index) {
    std::uint32_t c0 = std::uint32_t(index), c1 = std::uint32_t(index >> 32), c2 = 0, c3 = 0;
    std::uint32_t k0 = std::uint32_t(seed), k1 = std::uint32_t(seed >> 32);
    for (int round = 0; round < 10; ++round) {
      // One round: two 32x32->64 multiplies mix the counter; the key is bumped by the Weyl constants.
      std::uint64_t p0 = std::uint64_t(0xD2511F53u) * c0, p1 = std::uint64_t(0xCD9E8D57u) * c2;
      std::uint32_t n0 = std::uint32_t(p1 >> 32) ^ c1 ^ k0, n2 = std::uint32_t(p0 >> 32) ^ c3 ^ k1;
      c1 = std::uint32_t(p1);
      c3 = std::uint32_t(p0);
      c0 = n0;
      c2 = n2;
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    w[0] = c0, w[1] = c1, w[2] = c2, w[3] = c3;
  }
};

/// Uniform in [0, 1) with 24 random bits.
WEFT_HOST_DEVICE inline float uniform_float(std::uint64_t seed, std::uint64_t index) {
  return float(Philox4x32(seed, index).w[0] >> 8) * 0x1p-24f;
}

/// Uniform in [0, 1) with 53 random bits.
WEFT_HOST_DEVICE inline double uniform_double(std::uint64_t seed, std::uint64_t index) {
  Philox4x32 r(seed, index);
  std::uint64_t bits = (std::uint64_t(r.w[0]) << 21) ^ (std::uint64_t(r.w[1]) >> 11) ^ (std::uint64_t(r.w[1]) << 21);
  return double(bits & ((std::uint64_t(1) << 53) - 1)) * 0x1p-53;
}

/// Standard normal by Box-Muller: sqrt(-2 ln u1) cos(2 pi u2), u1 in (0, 1].
WEFT_HOST_DEVICE inline double normal_double(std::uint64_t seed, std::uint64_t index) {
  Philox4x32 r(seed, index);
  double u1 = (double(r.w[0]) + 1.0) * 0x1p-32, u2 = double(r.w[1]) * 0x1p-32;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586476925 * u2);
}

/// Uniform integer in [low, high) (high > low), for counter `index`.
WEFT_HOST_DEVICE inline std::int64_t uniform_int(std::uint64_t seed, std::uint64_t index, std::int64_t low,
                                                 std::int64_t high) {
  Philox4x32 r(seed, index);
  std::uint64_t bits = (std::uint64_t(r.w[0]) << 32) | r.w[1];
  return low + std::int64_t(bits % std::uint64_t(high - low));
}

}  // namespace weft::detail::random
