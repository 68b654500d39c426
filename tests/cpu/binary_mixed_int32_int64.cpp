// SPDX-License-Identifier: MIT
/// @file cpu: mixed dtypes int32 with int64: + *; mixed dtypes int32 with int64: / < maximum (random shapes, broadcasting, strided inputs and destinations); see binary_suite.hpp.
#include "binary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("mixed int32, int64 -> int64: + *") { run_binary_mixed<std::int32_t, std::int64_t, std::int64_t, float, 1>("int32,int64"); }
TEST_CASE("mixed int32, int64 -> int64: / < maximum") { run_binary_mixed<std::int32_t, std::int64_t, std::int64_t, float, 2>("int32,int64"); }
}
