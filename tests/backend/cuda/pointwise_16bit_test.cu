// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused pointwise kernels in 16-bit floats: the float chain of
/// pointwise_test.cu over random shapes, broadcasts and views in half and bfloat16 (computed in
/// float); GPU results against a double-precision host reference (bodies in pointwise_suite.hpp).
#include <doctest/doctest.h>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: a * sigmoid(b) + c in 16-bit floats over random shapes, broadcasts and views" *
                       doctest::skip(!cuda_available()),
                   T, weft::half, weft::bfloat16) {
  chain_over_random_shapes<OnCuda, T>(70);
}

}  // TEST_SUITE("cuda")
