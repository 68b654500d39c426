// SPDX-License-Identifier: MIT
/// @file cpu: numbers with int32 / int64 tensors: integer numbers keep the dtype, floating ones
/// make float32, division is true division.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: integer tensors") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("int32 * 2.5", rng, {kInts}, 1, [](const auto& x) { return x * 2.5; },
                                [](double x) { return rel(x * 2.5); });
  check_op<std::int32_t, std::int32_t>("int32 + 3", rng, {kInts}, 0, [](const auto& x) { return x + 3; },
                                       [](double x) { return exact(x + 3); });
  check_op<std::int64_t, std::int64_t>("2 - int64", rng, {kInts}, 0, [](const auto& x) { return 2 - x; },
                                       [](double x) { return exact(2 - x); });
  check_op<float, std::int32_t>("int32 / 2 (true division)", rng, {kInts}, 1, [](const auto& x) { return x / 2; },
                                [](double x) { return rel(x / 2); });
}
}
