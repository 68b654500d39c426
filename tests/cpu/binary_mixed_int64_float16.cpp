// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes int64 with float16: + *; mixed dtypes int64 with float16: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed int64, float16 -> float16: + *") { run_binary_mixed<std::int64_t, half, half, half, 1>("int64,float16"); }
TEST_CASE("mixed int64, float16 -> float16: / < maximum") { run_binary_mixed<std::int64_t, half, half, half, 2>("int64,float16"); }
}
