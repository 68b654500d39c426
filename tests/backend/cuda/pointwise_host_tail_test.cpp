// SPDX-License-Identifier: MIT
/// @file The cuda suite's pointwise bodies on the CUDA kernel's thread loop run on the host
/// (EmulatedOnHost), continued: every alignment and tail length, fused outputs with shared
/// subexpressions, and a check that the cases reach every instantiation of the thread loop.
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include "backend/cuda/emulated_on_host.hpp"

using namespace pointwise_suite;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda thread loop on the host: every alignment and tail length", T, float, double, weft::half,
                   weft::bfloat16, std::int32_t, std::int64_t, bool) {
  every_alignment_and_tail<EmulatedOnHost, T>();
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: fused outputs with shared subexpressions", P, float,
                   weft::bfloat16) {
  fused_optimizer_step<EmulatedOnHost, P>(optimizer_shapes_host);
}

TEST_CASE("cuda thread loop on the host: the tests reach every instantiation") {
  const auto before = std::vector<std::int64_t>(std::begin(EmulatedOnHost::runs), std::end(EmulatedOnHost::runs));
  every_alignment_and_tail<EmulatedOnHost, weft::half>();
  fused_optimizer_step<EmulatedOnHost, float>({Shape{37, 129}});
  integers_over_random_shapes<EmulatedOnHost, std::int32_t>(24);
  for (int kind = 0; kind < EmulatedOnHost::kinds; ++kind) {
    CAPTURE(kind);
    CHECK(EmulatedOnHost::runs[kind] > before[std::size_t(kind)]);
  }
}

}  // TEST_SUITE("cuda")
