// SPDX-License-Identifier: MIT
/// @file cpu: matmul of float64 tensors and of int32 / int64 tensors (Eigen's GEMM over integers,
/// exact): random shapes, ranks and layouts. Apart from matmul_test.cpp because each dtype
/// compiles its own Eigen GEMM kernels.
#include <weft/dense/matmul.hpp>

#include "matmul_reference.hpp"

using namespace weft_test;


TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("matmul: float64 and integer dtypes (integers are exact)", T, double, std::int32_t, std::int64_t) {
  WEFT_TEST_RNG(rng);
  random_matmuls<T>(rng, 40);
  check_matmul<T>(operand<T>(rng, Shape{5, 40, 33}), operand<T>(rng, Shape{5, 33, 20}));
}

}  // TEST_SUITE
