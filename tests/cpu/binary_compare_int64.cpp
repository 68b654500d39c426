// SPDX-License-Identifier: MIT
/// @file cpu: < <= > on two int64 tensors; >= == != on two int64 tensors (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("comparisons < <= > on int64") { run_binary_compare<std::int64_t, std::int64_t, 1>("int64"); }
TEST_CASE("comparisons >= == != on int64") { run_binary_compare<std::int64_t, std::int64_t, 2>("int64"); }
}
