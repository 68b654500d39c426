// SPDX-License-Identifier: MIT
/// @file cpu: cast<U>(x) from int32 to every dtype, bit-exact (random shapes, strided inputs and destinations).
#include "cast_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("cast from int32 to every dtype") { run_casts_from<std::int32_t>(); }
}
