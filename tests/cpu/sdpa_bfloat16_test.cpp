// SPDX-License-Identifier: MIT
/// @file cpu: attention in bfloat16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference on random problems and PyTorch's golden case (tests/golden/sdpa).
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sdpa: random bfloat16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<bfloat16>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, bfloat16") { CHECK(check_goldens_of<bfloat16>() == 1); }

}
