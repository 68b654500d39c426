// SPDX-License-Identifier: MIT
/// @file cpu: attention against PyTorch's golden cases (tests/golden/sdpa) stored as float64, float16 and bfloat16.
#include "sdpa_suite.hpp"

TEST_SUITE("cpu") {
TEST_CASE("sdpa: PyTorch golden cases, float64") { CHECK(weft_test::check_goldens_of<double>() == 1); }
TEST_CASE("sdpa: PyTorch golden cases, float16") { CHECK(weft_test::check_goldens_of<weft_test::half>() == 1); }
TEST_CASE("sdpa: PyTorch golden cases, bfloat16") { CHECK(weft_test::check_goldens_of<weft_test::bfloat16>() == 1); }
}
