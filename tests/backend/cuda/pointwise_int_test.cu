// SPDX-License-Identifier: MIT
/// @file The cuda suite for int8, uint8, int16, int32 and int64 pointwise kernels over random shapes,
/// broadcasts and views: exact against the host reference, wrapped to the narrow widths (bodies in
/// pointwise_suite.hpp).
#include <doctest/doctest.h>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("pointwise on cuda: integer arithmetic is exact over random shapes and views" *
                       doctest::skip(!cuda_available()),
                   T, std::int8_t, std::uint8_t, std::int16_t, std::int32_t, std::int64_t) {
  integers_over_random_shapes<OnCuda, T>(50);
}

}  // TEST_SUITE("cuda")
