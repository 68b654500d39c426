// SPDX-License-Identifier: MIT
/// @file cpu: a subset of the float-valued unary ops on int64 (every SIMD code path) (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on int64 (subset)") { run_unary_float_ops<std::int64_t, Part::subset>(); }
}
