// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two int32 tensors; >= == != on two int32 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on int32") { run_binary_compare<std::int32_t, std::int32_t, 1>("int32"); }
TEST_CASE("comparisons >= == != on int32") { run_binary_compare<std::int32_t, std::int32_t, 2>("int32"); }
}
