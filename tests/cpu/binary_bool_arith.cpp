// SPDX-License-Identifier: MIT
/// @file cpu: + (or) * (and) maximum minimum on bool tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary arithmetic on bool") { run_binary_arith<bool, bool, bool, float>("bool"); }
}
