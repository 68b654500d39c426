// SPDX-License-Identifier: MIT
/// @file cpu: numbers with float32 / float64 tensors (incl. the conversion of the number to float).
#include "scalars_common.hpp"

using namespace weft_test;

TEST_SUITE("cpu") {
TEST_CASE("scalars: float32 and float64 tensors") {
  WEFT_TEST_RNG(rng);
  // 0.1 is not a float: the kernel subtracts float(0.1) (PyTorch converts the number the same way).
  check_op<float, float>("float - 0.1", rng, {kSmall}, 1, [](const auto& x) { return x - 0.1; },
                         [](double x) { return rel(x - as_seen<float>(0.1)); });
  check_op<double, double>("double * 0.1", rng, {kSmall}, 1, [](const auto& x) { return x * 0.1; },
                           [](double x) { return rel(x * 0.1); });
  check_op<float, float>("pow(float, 2)", rng, {kSmall}, 4, [](const auto& x) { return weft::pow(x, 2); },
                         [](double x) { return rel(x * x); });
  check_op<float, float>("pow(2.0, float)", rng, {kSmall}, 4, [](const auto& x) { return weft::pow(2.0, x); },
                         [](double x) { return rel(std::exp2(x)); });
}
}
