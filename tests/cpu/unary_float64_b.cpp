// SPDX-License-Identifier: MIT
/// @file cpu: rsqrt sin cos tanh sigmoid on float64 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary rsqrt sin cos tanh sigmoid on float64") { run_unary_float_ops<double, kUnarySecond>(); }
}
