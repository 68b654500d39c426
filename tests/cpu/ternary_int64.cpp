// SPDX-License-Identifier: MIT
/// @file cpu: clamp and where on int64 (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("clamp on int64") { run_clamp<std::int64_t>("int64"); }
TEST_CASE("where on int64") { run_where<std::int64_t>("int64"); }
}
