// SPDX-License-Identifier: MIT
/// @file cpu: exp log sqrt sin on int64; sigmoid erf reciprocal on int64 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary exp log sqrt sin on int64") { run_unary_float_ops<std::int64_t, kUnarySubsetA>(); }
TEST_CASE("unary sigmoid erf reciprocal on int64") { run_unary_float_ops<std::int64_t, kUnarySubsetBInt>(); }
}
