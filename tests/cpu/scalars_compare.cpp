// SPDX-License-Identifier: MIT
/// @file cpu: comparisons with a number: computed in the promoted type (int32 < 2.5 compares in
/// float32), the result is bool.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: comparisons with numbers") {
  WEFT_TEST_RNG(rng);
  check_op<bool, std::int32_t>("int32 < 2.5", rng, {Domain{-5, 5}}, 0, [](const auto& x) { return x < 2.5; },
                               [](double x) { return exact(x < 2.5); });
  check_op<bool, float>("float == 1", rng, {Domain{-2, 2, false, true, 0, 0, 0.02, 0.5}}, 0,
                        [](const auto& x) { return x == 1; }, [](double x) { return exact(x == 1); });
  check_op<bool, weft::half>("2 >= half", rng, {Domain{-4, 4, false, true, 0, 0, 0.02, 0.5}}, 0,
                             [](const auto& x) { return 2 >= x; }, [](double x) { return exact(2 >= x); });
}
}
