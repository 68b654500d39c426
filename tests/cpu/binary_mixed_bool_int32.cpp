// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes bool with int32: + *; mixed dtypes bool with int32: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed bool, int32 -> int32: + *") { run_binary_mixed<bool, std::int32_t, std::int32_t, float, 1>("bool,int32"); }
TEST_CASE("mixed bool, int32 -> int32: / < maximum") { run_binary_mixed<bool, std::int32_t, std::int32_t, float, 2>("bool,int32"); }
}
