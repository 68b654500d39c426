// SPDX-License-Identifier: MIT
/// @file cpu: pow maximum minimum on two int64 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("binary pow maximum minimum on int64") { run_binary_arith<std::int64_t, std::int64_t, std::int64_t, float, 2>("int64"); }
}
