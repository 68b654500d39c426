// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on float16 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on float16") { run_clamp<half>("float16"); }
TEST_CASE("where on float16") { run_where<half>("float16"); }
}
