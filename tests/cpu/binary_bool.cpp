// SPDX-License-Identifier: MIT
/// @file cpu: + (or) * (and) maximum minimum and the comparisons on bool tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary arithmetic on bool") { run_binary_arith<bool, bool, bool, float>("bool"); }
TEST_CASE("comparisons on bool") { run_binary_compare<bool, bool>("bool"); }
}
