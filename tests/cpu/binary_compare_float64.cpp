// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two float64 tensors; >= == != on two float64 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on float64") { run_binary_compare<double, double, 1>("float64"); }
TEST_CASE("comparisons >= == != on float64") { run_binary_compare<double, double, 2>("float64"); }
}
