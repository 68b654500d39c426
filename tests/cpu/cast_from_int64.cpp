// SPDX-License-Identifier: MIT
/// @file cpu: cast<U>(x) from int64 to float32 float64 float16 bfloat16, bit-exact; cast<U>(x) from int64 to int32 int64 bool, bit-exact (random shapes, broadcasting, strided inputs and destinations); see cast_suite.hpp.
#include "cast_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("cast from int64 to the floating dtypes") { run_casts_from<std::int64_t, true>(); }
TEST_CASE("cast from int64 to int32, int64, bool") { run_casts_from<std::int64_t, false>(); }
}
