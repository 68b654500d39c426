// SPDX-License-Identifier: MIT
/// @file cpu: attention against PyTorch's golden cases (tests/golden/sdpa) stored as float32.
#include "sdpa_suite.hpp"

TEST_SUITE("cpu") {
TEST_CASE("sdpa: PyTorch golden cases, float32") { CHECK(weft_test::check_goldens_of<float>() == 12); }
}
