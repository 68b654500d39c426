// SPDX-License-Identifier: MIT
/// @file cpu: cast<U>(x) from float64 to every dtype, bit-exact (random shapes, strided inputs and destinations).
#include "cast_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("cast from float64 to every dtype") { run_casts_from<double>(); }
}
