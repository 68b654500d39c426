// SPDX-License-Identifier: MIT
/// @file cpu: exp log log1p expm1 sqrt on int32; rsqrt sin cos tanh sigmoid on int32; erf reciprocal on int32 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary exp log log1p expm1 sqrt on int32") { run_unary_float_ops<std::int32_t, kUnaryFirst>(); }
TEST_CASE("unary rsqrt sin cos tanh sigmoid on int32") { run_unary_float_ops<std::int32_t, kUnarySecond>(); }
TEST_CASE("unary erf reciprocal on int32") { run_unary_float_ops<std::int32_t, kUnaryThirdInt>(); }
}
