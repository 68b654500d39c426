// SPDX-License-Identifier: MIT
/// @file matmul on every floating and integer dtype and on float16 against double references.
#include <weft/ops/matmul.hpp>
#include "matmul_reference.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// Matmul of float64 tensors and of int32 / int64 tensors (Eigen's GEMM over integers, exact): random shapes, ranks and layouts.
TEST_CASE_TEMPLATE("matmul: float64 and integer dtypes (integers are exact)", T, double, std::int32_t, std::int64_t) {
  WEFT_TEST_RNG(rng);
  random_matmuls<T>(rng, 40);
  check_matmul<T>(operand<T>(rng, Shape{5, 40, 33}), operand<T>(rng, Shape{5, 33, 20}));
}
// Matmul of float16 and bfloat16 tensors (multiplied in float, rounded once): random shapes, ranks and layouts.
TEST_CASE_TEMPLATE("matmul: 16-bit floats multiply in float and round once", T, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  random_matmuls<T>(rng, 40);
  check_matmul<T>(operand<T>(rng, Shape{5, 40, 33}), operand<T>(rng, Shape{5, 33, 20}));
}
}
