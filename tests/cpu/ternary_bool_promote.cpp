// SPDX-License-Identifier: MIT
/// @file cpu: where on bool, and clamp / where promoting with float operands (random shapes, broadcasting, strided inputs and destinations); see ternary_suite.hpp.
#include "ternary_suite.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("where on bool") { run_where<bool>("bool"); }
TEST_CASE("clamp and where promote with float operands") {
  WEFT_TEST_RNG(rng);
  check_op<float, std::int32_t>("clamp(int32, 1, 2.5) -> float32", rng, {Domain{-5, 5}}, 0,
                                [](const auto& x) { return weft::clamp(x, 1, 2.5); },
                                [](double x) { return exact(std::min(std::max(x, 1.0), 2.5)); });
  Domain d{-8, 8, false, true, 0, 0, 0.02, 0.25};
  check_op<float, bool, half, float>("where(c, float16, float32) -> float32", rng, {Domain{}, d, d}, 0,
                                     [](const auto& c, const auto& a, const auto& b) { return weft::where(c, a, b); },
                                     [](double c, double a, double b) { return exact(c != 0 ? a : b); });
}
}
