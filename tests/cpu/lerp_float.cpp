// SPDX-License-Identifier: MIT
/// @file cpu: lerp on float32 and float64 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("lerp on float32") { run_lerp<float>("float32"); }
TEST_CASE("lerp on float64") { run_lerp<double>("float64"); }
}
