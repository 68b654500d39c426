// SPDX-License-Identifier: MIT
/// @file The cuda suite for bools, comparisons, where, casts and mixed element widths in pointwise
/// kernels: GPU results against a double-precision host reference (bodies in pointwise_suite.hpp).
#include <doctest/doctest.h>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE("pointwise on cuda: bools, comparisons, where, casts, mixed element widths" *
          doctest::skip(!cuda_available())) {
  bools_casts_and_mixed_widths<OnCuda>(50);
}

}  // TEST_SUITE("cuda")
