// SPDX-License-Identifier: MIT
/// @file cpu: lerp on float16 and bfloat16 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("lerp on float16") { run_lerp<half>("float16"); }
TEST_CASE("lerp on bfloat16") { run_lerp<bfloat16>("bfloat16"); }
}
