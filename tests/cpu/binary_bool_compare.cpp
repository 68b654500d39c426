// SPDX-License-Identifier: MIT
/// @file cpu: comparisons on bool tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons on bool") { run_binary_compare<bool, bool>("bool"); }
}
