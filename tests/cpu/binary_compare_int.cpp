// SPDX-License-Identifier: MIT
/// @file cpu: comparisons on int32 and int64 (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons on int32") { run_binary_compare<std::int32_t, std::int32_t>("int32"); }
TEST_CASE("comparisons on int64") { run_binary_compare<std::int64_t, std::int64_t>("int64"); }
}
