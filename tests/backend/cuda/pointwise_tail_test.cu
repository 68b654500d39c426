// SPDX-License-Identifier: MIT
/// @file The cuda suite for contiguous pointwise kernels at every alignment and tail length, in
/// the floating dtypes (bodies in pointwise_suite.hpp; integers and bool: pointwise_tail_int_test.cu).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: contiguous kernels at every alignment and tail length" *
                       doctest::skip(!cuda_available()),
                   T, float, double, weft::half, weft::bfloat16) {
  every_alignment_and_tail<OnCuda, T>();
}

}  // TEST_SUITE("cuda")
