// SPDX-License-Identifier: MIT
/// @file cpu: attention in float16 and bfloat16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference on random problems.
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE_TEMPLATE("sdpa: random 16-bit problems against the double reference", T, half, bfloat16) {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<T>(rng);
}

}
