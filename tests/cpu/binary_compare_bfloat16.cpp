// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two bfloat16 tensors; >= == != on two bfloat16 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on bfloat16") { run_binary_compare<bfloat16, bfloat16, 1>("bfloat16"); }
TEST_CASE("comparisons >= == != on bfloat16") { run_binary_compare<bfloat16, bfloat16, 2>("bfloat16"); }
}
