// SPDX-License-Identifier: MIT
/// @file The cuda suite for foreach kernels in 16-bit floats: out = p - lr * g and p -= lr * g over
/// random lists of half and bfloat16 CUDA tensors, against double-precision references (bodies in
/// foreach_suite.hpp; float and double: foreach_test.cu).
#include <doctest/doctest.h>

#include "backend/cuda/foreach_suite.hpp"
#include "cuda_support.hpp"

using namespace foreach_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("foreach on cuda: out = p - lr * g and p -= lr * g over random 16-bit lists" *
                       doctest::skip(!cuda_available()),
                   T, weft::half, weft::bfloat16) {
  axpy_over_random_lists<OnCuda, T>();
}

}  // TEST_SUITE("cuda")
