// SPDX-License-Identifier: MIT
/// @file cpu: exp log log1p expm1 sqrt on float64; rsqrt sin cos tanh sigmoid on float64; gelu silu erf reciprocal on float64 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary exp log log1p expm1 sqrt on float64") { run_unary_float_ops<double, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on float64") { run_unary_float_ops<double, kUnarySecond>(); }
TEST_CASE("unary gelu silu erf reciprocal on float64") { run_unary_float_ops<double, kUnaryThird>(); }
}
