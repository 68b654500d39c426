// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes float16 with float32: + *; mixed dtypes float16 with float32: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed float16, float32 -> float32: + *") { run_binary_mixed<half, float, float, float, 1>("float16,float32"); }
TEST_CASE("mixed float16, float32 -> float32: / < maximum") { run_binary_mixed<half, float, float, float, 2>("float16,float32"); }
}
