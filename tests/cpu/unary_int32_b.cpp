// SPDX-License-Identifier: MIT
/// @file cpu: float-valued unary ops on int32, second half (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on int32 (cos .. reciprocal)") { run_unary_float_ops<std::int32_t, Part::second>(); }
}
