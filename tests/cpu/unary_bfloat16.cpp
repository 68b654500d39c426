// SPDX-License-Identifier: MIT
/// @file cpu: exp log sqrt sin on bfloat16; sigmoid gelu reciprocal on bfloat16 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary exp log sqrt sin on bfloat16") { run_unary_float_ops<bfloat16, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid gelu reciprocal on bfloat16") { run_unary_float_ops<bfloat16, kUnarySubsetB>(); }
}
