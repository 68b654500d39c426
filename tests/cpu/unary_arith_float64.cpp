// SPDX-License-Identifier: MIT
/// @file cpu: -x abs relu square sign on float64 (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary dtype-preserving ops on float64") { run_unary_arith_ops<double>(); }
}
