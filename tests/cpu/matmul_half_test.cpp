// SPDX-License-Identifier: MIT
/// @file cpu: matmul of float16 and bfloat16 tensors (multiplied in float, rounded once): random
/// shapes, ranks and layouts. Apart from matmul_test.cpp to keep each file quick to compile.
#include <weft/dense/matmul.hpp>

#include "matmul_reference.hpp"

using namespace weft_test;


TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("matmul: 16-bit floats multiply in float and round once", T, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  random_matmuls<T>(rng, 40);
  check_matmul<T>(operand<T>(rng, Shape{5, 40, 33}), operand<T>(rng, Shape{5, 33, 20}));
}

}  // TEST_SUITE
