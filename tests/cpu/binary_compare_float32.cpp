// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two float32 tensors; >= == != on two float32 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on float32") { run_binary_compare<float, float, 1>("float32"); }
TEST_CASE("comparisons >= == != on float32") { run_binary_compare<float, float, 2>("float32"); }
}
