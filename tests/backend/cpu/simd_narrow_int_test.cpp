// SPDX-License-Identifier: MIT
/// @file cpu: the narrow-integer packet layer (simd/narrow_int.hpp) at 4 to 32 lanes: widening loads of
/// int8, uint8 and int16 (every int8 / uint8 value, int16 in a sweep with its extremes, from every
/// offset of a register), narrowing stores and wrap_to of random int32 lanes against the low bits
/// computed by masking, and that the build's ISA takes its own instructions at its register width.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <weft/backend/cpu/simd/narrow_int.hpp>

#include "reference.hpp"

namespace simd = weft::detail::simd;
using namespace weft_test;

namespace {

/// v's low 8 * sizeof(I) bits read as an I (two's complement), by masking and subtracting.
template <class I>
std::int64_t low_bits(std::int32_t v) {
  const int bits = 8 * int(sizeof(I));
  const std::int64_t low = std::int64_t(std::uint32_t(v) & ((std::uint32_t(1) << bits) - 1));
  return std::is_signed_v<I> && low >= (std::int64_t(1) << (bits - 1)) ? low - (std::int64_t(1) << bits) : low;
}

/// The values a load test reads: every value of an 8-bit type; for int16 a sweep with both ends.
template <class I>
std::vector<I> every_value() {
  std::vector<I> v;
  const std::int64_t lo = std::numeric_limits<I>::lowest(), hi = std::numeric_limits<I>::max();
  const std::int64_t step = sizeof(I) == 1 ? 1 : 97;
  for (std::int64_t x = lo; x <= hi; x += step) v.push_back(I(x));
  v.push_back(I(hi));
  v.push_back(I(lo));
  v.push_back(I(-1));
  return v;
}

template <class I, int N>
void check_lanes(Rng& rng) {
  INFO(type_name<I>(), ", ", N, " lanes");
  // Loads from every position: the last packet ends at the last value (no read past the end).
  const std::vector<I> values = every_value<I>();
  std::int64_t wrong = 0;
  for (std::size_t at = 0; at + N <= values.size(); ++at) {
    const simd::Vec<std::int32_t, N> v = simd::load_widened<N>(values.data() + at);
    for (int l = 0; l < N; ++l) wrong += v[l] != std::int32_t(values[at + std::size_t(l)]);
  }
  CHECK(wrong == 0);

  // Stores and wraps of int32 lanes of any value: the low bits, and nothing written past N.
  wrong = 0;
  for (int trial = 0; trial < 200; ++trial) {
    alignas(64) std::int32_t lanes[N];
    for (int l = 0; l < N; ++l)
      lanes[l] = trial % 2 ? std::int32_t(rng.bits()) : std::int32_t(rng.integer(-300, 300));
    const auto v = simd::Vec<std::int32_t, N>::load(lanes);
    I out[N + 1];
    std::memset(out, 0x5A, sizeof(out));
    simd::store_narrowed(out, v);
    const simd::Vec<std::int32_t, N> w = simd::wrap_to<I>(v);
    for (int l = 0; l < N; ++l) {
      wrong += std::int64_t(out[l]) != low_bits<I>(lanes[l]);
      wrong += std::int64_t(w[l]) != low_bits<I>(lanes[l]);
    }
    I guard;
    std::memset(&guard, 0x5A, sizeof(guard));
    wrong += std::memcmp(&out[N], &guard, sizeof(I)) != 0;
  }
  CHECK(wrong == 0);
}

template <class I>
void check_type(Rng& rng) {
  check_lanes<I, 4>(rng);
  check_lanes<I, 8>(rng);
  check_lanes<I, 16>(rng);
  check_lanes<I, 32>(rng);
}

/// Whether the build has an instruction sequence of its own for a native register of int32 lanes.
template <class I>
constexpr bool native_paths() {
  constexpr int N = simd::native_lanes<std::int32_t>;
  const I* p = nullptr;
  I* q = nullptr;
  return requires { simd::detail::widen_native(p, simd::detail::lanes_t<N>{}); } &&
         requires { simd::detail::narrow_store_native(q, simd::Vec<std::int32_t, N>{}); };
}

}  // namespace

TEST_SUITE("cpu") {

TEST_CASE("simd narrow ints: widening loads, narrowing stores and wrap_to at 4 to 32 lanes") {
  WEFT_TEST_RNG(rng);
  check_type<std::int8_t>(rng);
  check_type<std::uint8_t>(rng);
  check_type<std::int16_t>(rng);
}

TEST_CASE("simd narrow ints: SSE2, AVX2, AVX-512 and NEON builds take their own instructions") {
  const std::string isa = simd::kIsaName;
  INFO("packet layer: ", isa);
  if (isa == "sse2" || isa == "avx2" || isa == "avx512" || isa == "neon") {
    CHECK(native_paths<std::int8_t>());
    CHECK(native_paths<std::uint8_t>());
    CHECK(native_paths<std::int16_t>());
  }
}

}  // TEST_SUITE
