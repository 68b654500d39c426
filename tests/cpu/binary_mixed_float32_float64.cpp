// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes float32 with float64: + *; mixed dtypes float32 with float64: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed float32, float64 -> float64: + *") { run_binary_mixed<float, double, double, double, 1>("float32,float64"); }
TEST_CASE("mixed float32, float64 -> float64: / < maximum") { run_binary_mixed<float, double, double, double, 2>("float32,float64"); }
}
