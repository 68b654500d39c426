// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused foreach kernels on a GPU: an AdamW step over mixed dtypes with a
/// ScalarList (bodies in foreach_suite.hpp; one-element operands, swaps and long lists:
/// foreach_lists_test.cu).
#include <doctest/doctest.h>

#include <cstddef>

#include "backend/cuda/foreach_suite.hpp"
#include "cuda_support.hpp"

using namespace foreach_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("foreach on cuda: a fused AdamW step over bf16, float and half lists with a ScalarList" *
          doctest::skip(!cuda_available())) {
  for (std::size_t length : {1, 2, 37, 1000}) {
    CAPTURE(length);
    adamw_mixed_dtypes<OnCuda>(length);
  }
}

}  // TEST_SUITE("cuda")
