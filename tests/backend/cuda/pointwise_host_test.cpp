// SPDX-License-Identifier: MIT
/// @file The cuda suite's pointwise bodies (pointwise_suite.hpp) on the CUDA kernel's thread loop run
/// on the host (EmulatedOnHost): the float chain, integer arithmetic, bools and casts, a swap. The
/// index math, the vector path and the shared-subexpression cache are checked on every machine that
/// builds the cuda suite, GPU or not; g++ compiles it. Tails and fused outputs: pointwise_host_tail_test.cpp.
#include <doctest/doctest.h>

#include <cstdint>

#include "backend/cuda/emulated_on_host.hpp"

using namespace pointwise_suite;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("cuda thread loop on the host: a * sigmoid(b) + c over random shapes, broadcasts and views", T,
                   float, double, weft::half, weft::bfloat16) {
  chain_over_random_shapes<EmulatedOnHost, T>(40);
}

TEST_CASE_TEMPLATE("cuda thread loop on the host: integer arithmetic over random shapes and views", T, std::int8_t,
                   std::uint8_t, std::int16_t, std::int32_t, std::int64_t) {
  integers_over_random_shapes<EmulatedOnHost, T>(24);
}

TEST_CASE("cuda thread loop on the host: bools, comparisons, where, casts, mixed element widths") {
  bools_casts_and_mixed_widths<EmulatedOnHost>(24);
}

TEST_CASE("cuda thread loop on the host: two statements that swap two tensors") { fused_swap<EmulatedOnHost>(); }

}  // TEST_SUITE("cuda")
