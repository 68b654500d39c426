// SPDX-License-Identifier: MIT
/// @file cpu: numbers with bool tensors (bool + 1 is int64, bool * 2.5 is float32), a float number
/// lifting an int32 tensor in maximum(), and an integer power.
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: bool tensors, and category lifting in functions") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("maximum(int32, 0.5)", rng, {Domain{-3, 3}}, 0,
                                [](const auto& x) { return weft::maximum(x, 0.5); },
                                [](double x) { return exact(std::max(x, 0.5)); });
  check_op<std::int64_t, bool>("bool + 1", rng, {Domain{}}, 0, [](const auto& x) { return x + 1; },
                               [](double x) { return exact(x + 1); });
  check_op<float, bool>("bool * 2.5", rng, {Domain{}}, 0, [](const auto& x) { return x * 2.5; },
                        [](double x) { return exact(x * 2.5); });
  check_op<std::int32_t, std::int32_t>("pow(int32, 3)", rng, {Domain{-20, 20}}, 0,
                                       [](const auto& x) { return weft::pow(x, 3); },
                                       [](double x) { return exact(x * x * x); });
}
}
