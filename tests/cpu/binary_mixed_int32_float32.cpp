// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes int32 with float32: + *; mixed dtypes int32 with float32: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed int32, float32 -> float32: + *") { run_binary_mixed<std::int32_t, float, float, float, 1>("int32,float32"); }
TEST_CASE("mixed int32, float32 -> float32: / < maximum") { run_binary_mixed<std::int32_t, float, float, float, 2>("int32,float32"); }
}
