// SPDX-License-Identifier: MIT
/// @file cpu: exp log sqrt sin on bool; sigmoid erf reciprocal on bool (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary exp log sqrt sin on bool") { run_unary_float_ops<bool, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid erf reciprocal on bool") { run_unary_float_ops<bool, kUnarySubsetBInt>(); }
}
