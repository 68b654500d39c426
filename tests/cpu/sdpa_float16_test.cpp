// SPDX-License-Identifier: MIT
/// @file cpu: attention in float16 (float accumulation), flash and math backends, forward and backward, against a double-precision reference on random problems and PyTorch's golden case (tests/golden/sdpa).
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sdpa: random float16 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 20; ++iter) check_random_case<half>(rng);
}

TEST_CASE("sdpa: PyTorch golden case, float16") { CHECK(check_goldens_of<half>() == 1); }

}
