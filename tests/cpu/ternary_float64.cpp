// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on float64 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on float64") { run_clamp<double>("float64"); }
TEST_CASE("where on float64") { run_where<double>("float64"); }
}
