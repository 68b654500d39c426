// SPDX-License-Identifier: MIT
/// @file cpu: comparisons on float32 and float64 (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons on float32") { run_binary_compare<float, float>("float32"); }
TEST_CASE("comparisons on float64") { run_binary_compare<double, double>("float64"); }
}
