// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on int32 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on int32") { run_clamp<std::int32_t>("int32"); }
TEST_CASE("where on int32") { run_where<std::int32_t>("int32"); }
}
