// SPDX-License-Identifier: MIT
/// @file cpu: every unary op on int64 inputs (random shapes, broadcasting, strided inputs and destinations).
#include "unary_suite.hpp"

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on int64") { weft_test::run_unary_float_ops<std::int64_t>(); }
TEST_CASE("unary dtype-preserving ops on int64") { weft_test::run_unary_arith_ops<std::int64_t>(); }
}
