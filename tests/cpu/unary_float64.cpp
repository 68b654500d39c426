// SPDX-License-Identifier: MIT
/// @file cpu: every unary op on float64 inputs (random shapes, broadcasting, strided inputs and destinations).
#include "unary_suite.hpp"

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on float64") { weft_test::run_unary_float_ops<double>(); }
TEST_CASE("unary dtype-preserving ops on float64") { weft_test::run_unary_arith_ops<double>(); }
}
