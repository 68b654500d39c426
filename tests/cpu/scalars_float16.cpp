// SPDX-License-Identifier: MIT
/// @file cpu: numbers with float16 / bfloat16 tensors: the result keeps the 16-bit dtype.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: 16-bit floating tensors keep their dtype") {
  WEFT_TEST_RNG(rng);
  check_op<half, half>("half * 2.5", rng, {kSmall}, 1, [](const auto& x) { return x * 2.5; },
                       [](double x) { return rel(x * 2.5); });
  check_op<bfloat16, bfloat16>("bfloat16 / 3", rng, {kSmall}, 1, [](const auto& x) { return x / 3; },
                               [](double x) { return rel(x / 3); });
  check_op<half, half>("1.5 / half", rng, {Domain{0.25, 8, true, true}}, 1, [](const auto& x) { return 1.5 / x; },
                       [](double x) { return rel(1.5 / x); });
  check_op<half, half>("half + true", rng, {kSmall}, 1, [](const auto& x) { return x + true; },
                       [](double x) { return rel(x + 1); });
}
}
