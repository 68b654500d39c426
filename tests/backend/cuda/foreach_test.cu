// SPDX-License-Identifier: MIT
/// @file The cuda suite for foreach kernels: out = p - lr * g and p -= lr * g over random lists of
/// CUDA tensors of float and double, against double-precision references (bodies in
/// foreach_suite.hpp; the same bodies run block by block on the host in foreach_host_test.cpp;
/// 16-bit floats: foreach_16bit_test.cu).
#include <doctest/doctest.h>

#include "backend/cuda/foreach_suite.hpp"
#include "cuda_support.hpp"

using namespace foreach_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("foreach on cuda: out = p - lr * g and p -= lr * g over random lists" *
                       doctest::skip(!cuda_available()),
                   T, float, double) {
  axpy_over_random_lists<OnCuda, T>();
}

}  // TEST_SUITE("cuda")
