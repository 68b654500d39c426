// SPDX-License-Identifier: MIT
/// @file The cuda suite for contiguous pointwise kernels at every alignment and tail length, in
/// the integer dtypes and bool (bodies in pointwise_suite.hpp; floats: pointwise_tail_test.cu).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: contiguous integer and bool kernels at every alignment and tail length" *
                       doctest::skip(!cuda_available()),
                   T, std::int32_t, std::int64_t, bool) {
  every_alignment_and_tail<OnCuda, T>();
}

}  // TEST_SUITE("cuda")
