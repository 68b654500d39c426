// SPDX-License-Identifier: MIT
/// @file cpu: float-valued unary ops on bool inputs (exp(true), log(false) = -inf, ...); the
/// dtype-preserving ones (-x, abs, ...) are not defined for bool in PyTorch and are not tested.
#include "unary_suite.hpp"

TEST_SUITE("cpu") {
TEST_CASE("unary float-valued ops on bool") { weft_test::run_unary_float_ops<bool>(); }
}
