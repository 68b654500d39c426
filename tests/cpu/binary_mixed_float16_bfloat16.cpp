// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes float16 with bfloat16: + *; mixed dtypes float16 with bfloat16: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed float16, bfloat16 -> float32: + *") { run_binary_mixed<half, bfloat16, float, float, 1>("float16,bfloat16"); }
TEST_CASE("mixed float16, bfloat16 -> float32: / < maximum") { run_binary_mixed<half, bfloat16, float, float, 2>("float16,bfloat16"); }
}
