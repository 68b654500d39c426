// SPDX-License-Identifier: MIT
/// @file cpu: pow maximum minimum on two float64 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary pow maximum minimum on float64") { run_binary_arith<double, double, double, double, 2>("float64"); }
}
