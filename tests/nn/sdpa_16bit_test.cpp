// SPDX-License-Identifier: MIT
/// @file scaled_dot_product_attention forward and backward in float16 and bfloat16 against float64 references; see sdpa_suite.hpp.
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
// Attention in float16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random float16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<half>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, float16") { CHECK(check_goldens_of<half>() == 1); }
// Attention in bfloat16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference.
TEST_CASE("sdpa: random bfloat16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<bfloat16>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, bfloat16") { CHECK(check_goldens_of<bfloat16>() == 1); }
}
