// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on bfloat16 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on bfloat16") { run_clamp<bfloat16>("bfloat16"); }
TEST_CASE("where on bfloat16") { run_where<bfloat16>("bfloat16"); }
}
