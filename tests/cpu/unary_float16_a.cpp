// SPDX-License-Identifier: MIT
/// @file cpu: float-valued unary ops on float16, first half (random shapes, broadcasting, strided inputs and destinations); see unary_suite.hpp.
#include "unary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on float16 (exp .. sin)") { run_unary_float_ops<half, Part::first>(); }
}
