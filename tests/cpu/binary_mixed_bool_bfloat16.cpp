// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes bool with bfloat16: + *; mixed dtypes bool with bfloat16: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed bool, bfloat16 -> bfloat16: + *") { run_binary_mixed<bool, bfloat16, bfloat16, bfloat16, 1>("bool,bfloat16"); }
TEST_CASE("mixed bool, bfloat16 -> bfloat16: / < maximum") { run_binary_mixed<bool, bfloat16, bfloat16, bfloat16, 2>("bool,bfloat16"); }
}
