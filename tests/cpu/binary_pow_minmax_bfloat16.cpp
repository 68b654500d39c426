// SPDX-License-Identifier: MIT
/// @file cpu: pow maximum minimum on two bfloat16 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary pow maximum minimum on bfloat16") { run_binary_arith<bfloat16, bfloat16, bfloat16, bfloat16, 2>("bfloat16"); }
}
