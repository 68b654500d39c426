// SPDX-License-Identifier: MIT
/// @file The cuda suite for fused statements: several outputs, shared subexpressions, in-place
/// state, swaps (bodies in pointwise_suite.hpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/pointwise_suite.hpp"
#include "cuda_support.hpp"

using namespace pointwise_suite;
using weft::test::cuda_available;

TEST_SUITE("cuda") {

TEST_CASE_TEMPLATE("fuse on cuda: several outputs, shared subexpressions, in-place state" *
                       doctest::skip(!cuda_available()),
                   P, float, weft::bfloat16) {
  fused_optimizer_step<OnCuda, P>(optimizer_shapes_gpu);
}

TEST_CASE("fuse on cuda: two statements that swap two tensors" * doctest::skip(!cuda_available())) {
  fused_swap<OnCuda>();
}

}  // TEST_SUITE("cuda")
