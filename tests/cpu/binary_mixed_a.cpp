// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes: int32 with float32, float16 with bfloat16 (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed int32, float32 -> float32") { run_binary_mixed<std::int32_t, float, float, float>("int32,float32"); }
TEST_CASE("mixed float16, bfloat16 -> float32") { run_binary_mixed<half, bfloat16, float, float>("float16,bfloat16"); }
}
