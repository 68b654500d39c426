// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes bool with bfloat16: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed bool, bfloat16 -> bfloat16: / < maximum") { run_binary_mixed<bool, bfloat16, bfloat16, bfloat16, 2>("bool,bfloat16"); }
}
