// SPDX-License-Identifier: MIT
/// @file cpu: attention in float32, flash and math backends, forward and backward, against a double-precision reference on random problems and PyTorch's golden cases (tests/golden/sdpa).
#include "sdpa_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {

TEST_CASE("sdpa: random float32 problems against the double reference") {
  WEFT_TEST_RNG(rng);
  for (int iter = 0; iter < 40; ++iter) check_random_case<float>(rng);
}

}

TEST_SUITE("cpu") {
TEST_CASE("sdpa: PyTorch golden cases, float32") { CHECK(check_goldens_of<float>() == 12); }
}
