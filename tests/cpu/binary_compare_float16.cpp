// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two float16 tensors; >= == != on two float16 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on float16") { run_binary_compare<half, half, 1>("float16"); }
TEST_CASE("comparisons >= == != on float16") { run_binary_compare<half, half, 2>("float16"); }
}
