// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on float32 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on float32") { run_clamp<float>("float32"); }
TEST_CASE("where on float32") { run_where<float>("float32"); }
}
